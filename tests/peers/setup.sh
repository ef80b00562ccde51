# Sourced by the tests that run a peer from the peers' environment (scripts/install-peers.sh):
#   . tests/peers/setup.sh; peer_setup NAME PYTHON MODULES
# makes a scratch directory (removed on exit) the working directory, defines fail, and fails
# (never skips) when PYTHON cannot import MODULES (comma-separated, the first named in the
# message).
fail() { echo "FAIL: $*" >&2; exit 1; }
peer_setup() {  # name, python, modules
  peer_dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-$1-XXXXXX")
  trap 'rm -rf "$peer_dir"' EXIT
  cd "$peer_dir"
  "$2" -c "import $3" 2>/dev/null \
    || fail "no ${3%%,*} in '$2' (scripts/install-peers.sh installs it)"
}
