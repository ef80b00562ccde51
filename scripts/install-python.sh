#!/usr/bin/env bash
# `make python`: builds the trail Python package as a wheel with pip (pyproject.toml,
# scikit-build-core) and installs it, like any Python package:
#   - into the active virtual environment when one is active (its pip; numpy comes with it if
#     missing);
#   - else into the user site of Debian's /usr/bin/python3 (the interpreter the module is built
#     for), or into TRAIL_PYTHON_SITE=DIR when set (pip install --target, no dependencies).
# The wheel is built by BUILD/venv's pip with the build backend pinned in
# scripts/requirements/python-build.txt (no build isolation: nothing is fetched), in
# BUILD/wheel-build (a rerun rebuilds only what changed), and kept as BUILD/dist/trail-*.whl.
#   scripts/install-python.sh [BUILD]
set -euo pipefail
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
venv=$build/venv
if ! "$venv/bin/python" -c "import scikit_build_core, pybind11" 2>/dev/null; then
  echo "no scikit-build-core or pybind11 in $venv: run scripts/install-deps.sh $build first" >&2
  exit 1
fi
mkdir -p "$build/dist"
rm -f "$build"/dist/trail-*.whl
"$venv/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-build-isolation \
  --no-deps --config-settings build-dir="$(cd "$build" && pwd)/wheel-build" -w "$build/dist" "$src"
wheel=$(ls "$build"/dist/trail-*.whl)

if [ -n "${VIRTUAL_ENV:-}" ] && [ -z "${TRAIL_PYTHON_SITE:-}" ]; then
  python=$VIRTUAL_ENV/bin/python
  # The wheel replaced whatever trail was there; its dependencies (numpy) only installed when
  # missing (--force-reinstall alone would fetch them again too).
  "$python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  "$python" -m pip install --quiet --disable-pip-version-check "$wheel"
else
  python=/usr/bin/python3
  site=${TRAIL_PYTHON_SITE:-$("$python" -c 'import site; print(site.getusersitepackages())')}
  mkdir -p "$site"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target "$site" "$wheel"
  export PYTHONPATH=$site
fi
version=$(cd / && "$python" -c 'import trail; print(trail.__version__)')
echo "installed $(basename "$wheel") (trail $version) for $python"
