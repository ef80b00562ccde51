#!/usr/bin/env bash
# The Python package as every Python package installs. `make python` (scripts/install-python.sh:
# `pip wheel` of the repository, pyproject.toml with scikit-build-core, BUILD/venv's pinned
# backend, no build isolation, so nothing is fetched; then `pip install` of the wheel) into a
# fresh virtual environment that holds only numpy and pytest (scripts/requirements/
# python-test.lock, hash-checked); the package's own tests (python/tests) pass there against
# the installed wheel, not the build tree; its version is trail's; and, with no environment
# active, the same command installs into a site folder /usr/bin/python3 imports from. PyTorch is
# not in the fresh environment, so its one test module reports itself skipped (python_api runs
# it against the build tree).
#   python_wheel_test.sh SOURCE BUILD TRAIL
set -euo pipefail
src=$1; build=$2; trail=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/trail-wheel-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
venv=$build/venv
"$venv/bin/python" -c "import scikit_build_core, pybind11" 2>/dev/null \
  || fail "no scikit-build-core or pybind11 in $venv (scripts/install-deps.sh installs them)"

echo "-- make python (pip wheel, then pip install) into a fresh virtual environment"
/usr/bin/python3 -m venv "$dir/env"  # as users make one: with pip
VIRTUAL_ENV=$dir/env "$venv/bin/uv" pip install --quiet --require-hashes \
  -r "$src/scripts/requirements/python-test.lock" || fail "the test environment's packages"
t0=$(date +%s)
VIRTUAL_ENV=$dir/env "$src/scripts/install-python.sh" "$build" > "$dir/install.log" 2>&1 \
  || { tail -40 "$dir/install.log"; fail "make python into a fresh virtual environment"; }
wheel=$(ls "$build"/dist/trail-*.whl)
echo "$(cat "$dir/install.log") ($(($(date +%s) - t0)) s; the wheel $(du -k "$wheel" | cut -f1) KiB)"
cd "$dir"
where=$("$dir/env/bin/python" -c 'import trail, os; print(os.path.dirname(trail.__file__))')
[[ $where == "$dir/env/"*site-packages/trail ]] || fail "trail imported from $where, not the wheel"
version=$("$dir/env/bin/python" -c 'import trail; print(trail.__version__)')
[ "$version" = "$("$trail" --version | awk '{print $NF}')" ] \
  || fail "the wheel's version $version is not trail's ($("$trail" --version))"
echo "trail $version from $where"

echo "-- the package's tests against the wheel"
TRAIL_BIN=$trail TRAIL_ASSETS=$build/assets TRAIL_SOURCE=$src PYTHONDONTWRITEBYTECODE=1 \
  "$dir/env/bin/python" -m pytest -q -p no:cacheprovider -rs "$src/python/tests" \
  || fail "the package's tests against the installed wheel"

echo "-- make python without a virtual environment: a site folder for /usr/bin/python3"
env -u VIRTUAL_ENV TRAIL_PYTHON_SITE="$dir/site" "$src/scripts/install-python.sh" "$build" > site.log \
  || fail "make python into TRAIL_PYTHON_SITE"
got=$(cd / && env -i PATH="$PATH" PYTHONPATH="$dir/site" /usr/bin/python3 -c 'import trail; print(trail.__file__)')
[ "$got" = "$dir/site/trail/__init__.py" ] || fail "import trail gave $got"
echo "$(cat site.log)"
