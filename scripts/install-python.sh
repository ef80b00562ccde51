#!/usr/bin/env bash
# Installs the trail Python package built in BUILD/python/trail (by `make build`) into a
# site-packages directory, offline: the active virtual environment's when one is active, else
# the user site of Debian's /usr/bin/python3 (the interpreter the module is built for).
# TRAIL_PYTHON_SITE=DIR installs into DIR instead.
#   scripts/install-python.sh [BUILD]
set -euo pipefail
build=${1:-build}
pkg="$build/python/trail"
if ! ls "$pkg"/_trail*.so > /dev/null 2>&1; then
  echo "no built package in $pkg: run 'make build' first (it needs pybind11-dev and python3-dev," \
       "which scripts/install-deps.sh installs)" >&2
  exit 1
fi
python=/usr/bin/python3
if [ -n "${VIRTUAL_ENV:-}" ]; then python="$VIRTUAL_ENV/bin/python"; fi
site=${TRAIL_PYTHON_SITE:-$("$python" -c '
import site, sys, sysconfig
in_venv = sys.prefix != sys.base_prefix
print(sysconfig.get_path("purelib") if in_venv else site.getusersitepackages())')}
mkdir -p "$site"
rm -rf "$site/trail.tmp"
cp -r "$pkg" "$site/trail.tmp"
rm -rf "$site/trail.tmp/__pycache__"
rm -rf "$site/trail"
mv "$site/trail.tmp" "$site/trail"
version=$(cd / && PYTHONPATH="$site" "$python" -c 'import trail; print(trail.__version__)')
echo "installed trail $version into $site (import trail with $python)"
