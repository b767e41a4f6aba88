#!/usr/bin/env bash
# Builds and runs every test: the Release suite, its torch-layer tests (label "torch": the C++
# torch tests, TorchScript, the Python suite) a second time with SPARCON_BACKEND=generic (the
# device-generic ATen kernels on CPU tensors), then the suite under AddressSanitizer and
# UndefinedBehaviorSanitizer (preset "sanitize"), then the pip path. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
jobs=$(nproc)

for preset in release sanitize; do
  echo "==> $preset: configure, build, test"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
  if [ "$preset" = release ]; then
    echo "==> release: the torch-layer tests again on the device-generic kernels (SPARCON_BACKEND=generic)"
    SPARCON_BACKEND=generic ctest --preset release -L torch -j "$jobs"
  fi
done

# The pip path (pyproject.toml, setup.py): a fresh venv over Debian's torch, this checkout
# installed into it with `pip install --no-build-isolation` (nothing fetched: --no-index), and
# the Python tests run from outside the tree against the installed copy (the plugin
# tests/install/python/sparcon_installed_check.py checks that sparcon and its library are the
# venv's, not python/sparcon).
# test_distributed.py's worker processes load the CMake build's library by path, so it runs in
# the ctest suite only.
echo "==> pip: install into a fresh venv, test the installed copy"
venv=build/pip-venv
rm -rf "$venv" build/pip-test && mkdir -p build/pip-test
/usr/bin/python3 -m venv --system-site-packages "$venv"
start=$SECONDS
MAX_JOBS=$jobs "$venv/bin/python" -m pip install -q --no-build-isolation --no-index "$repo"
echo "pip: built and installed in $((SECONDS - start)) s"
(cd build/pip-test && env -u SPARCON_LIBRARY PYTHONPATH="$repo/tests/install/python" \
  "$repo/$venv/bin/python" -m pytest -q -p no:cacheprovider -p sparcon_installed_check \
  --ignore="$repo/tests/python/test_distributed.py" "$repo/tests/python")
