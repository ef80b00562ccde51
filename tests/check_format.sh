#!/usr/bin/env bash
# Every C++ source of the project is formatted as .clang-format says (clang-format-14, the
# version Debian 12 ships): prints the files that are not, and how to fix them.
#   tests/check_format.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: check_format.sh SOURCE_DIR}
cd "$src" || exit 1
files=$(find src bench fuzz python -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' | sort)
bad=$(for f in $files; do
  clang-format-14 --style=file --dry-run --Werror "$f" > /dev/null 2>&1 || echo "$f"
done)
if [ -n "$bad" ]; then
  echo "not formatted as .clang-format says:"
  echo "$bad" | sed 's/^/  /'
  echo "fix: clang-format-14 -i FILE..."
  exit 1
fi
echo "format: $(echo "$files" | wc -l) files formatted as .clang-format says"
