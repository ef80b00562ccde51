#!/usr/bin/env bash
# Prints the multilingual text the tokenizer tests and benchmarks use: the KJV Bible (from the
# fetched assets), every fortune file of the installed languages (skipping *.dat, *.u8 and
# links), and every vim tutor.
set -euo pipefail
assets=$1
cat "$assets/text/kjv.txt"
find /usr/share/games/fortunes -type f ! -name '*.dat' ! -name '*.u8' | sort | xargs cat
find /usr/share/vim/vim90/tutor -type f -name 'tutor*' | sort | xargs cat
