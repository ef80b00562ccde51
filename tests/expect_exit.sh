#!/usr/bin/env bash
# Runs a command and checks its documented exit code and message: a crash, a different failure or
# a missing message fails the test (ctest's WILL_FAIL and PASS_REGULAR_EXPRESSION cannot tell).
# Usage: expect_exit.sh CODE REGEX [--not REGEX] -- COMMAND [ARGS...]   (REGEX: grep -E, on
# stdout and stderr together)
set -uo pipefail
code=$1; want=$2; shift 2
avoid=""
if [ "$1" = --not ]; then avoid=$2; shift 2; fi
[ "$1" = -- ] && shift
out=$("$@" 2>&1); got=$?
echo "$out"
[ "$got" = "$code" ] || { echo "FAIL: exit code $got, expected $code" >&2; exit 1; }
grep -Eq -- "$want" <<<"$out" || { echo "FAIL: no match for '$want'" >&2; exit 1; }
if [ -n "$avoid" ] && grep -Eq -- "$avoid" <<<"$out"; then
  echo "FAIL: output matches '$avoid'" >&2; exit 1
fi
echo "exit $got and message as documented"
