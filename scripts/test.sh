#!/usr/bin/env bash
# Builds and runs every test: the Release suite, then the same suite under AddressSanitizer
# and UndefinedBehaviorSanitizer (preset "sanitize"). Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

for preset in release sanitize; do
  echo "==> $preset: configure, build, test"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
done
