#!/usr/bin/env bash
# Compares the discrete maps' speed between two checkouts of sparcon in one process (driver.cc):
#
#   bench/compare_builds/compare.sh BASE_DIR NEW_DIR [fwd|bwd|dalpha] [SCALE] [MAP ...]
#
# e.g. `git worktree add /tmp/base HEAD~1` then `bench/compare_builds/compare.sh /tmp/base .`.
# Each checkout's core is built in its build/perf (Release, no torch, examples or tests) and linked
# with shim.cc into a shared object; per map (default sparsemax entmax15) and shape (rows of 16 to
# 4096, 1M-0.5M floats each) six processes of the driver run, three with each build loaded first,
# and the line gives the median and range of their paired medians of base time / new time (> 1:
# the new checkout is faster). Needs g++, and what scripts/setup.sh installs.
set -euo pipefail
base=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
op=${3:-fwd}
scale=${4:-1}
shift $(( $# < 4 ? $# : 4 ))
maps=("$@")
[ ${#maps[@]} -gt 0 ] || maps=(sparsemax entmax15)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for side in base new; do
  dir=${!side}
  if [ ! -f "$dir/build/perf/build.ninja" ]; then
    cmake -S "$dir" -B "$dir/build/perf" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARCON_BUILD_TORCH=OFF \
      -DSPARCON_BUILD_EXAMPLES=OFF -DSPARCON_BUILD_TESTS=OFF -DSPARCON_BUILD_BENCHMARKS=OFF >/dev/null
  fi
  cmake --build "$dir/build/perf" --target sparcon >/dev/null
  g++ -O2 -std=c++20 -fPIC -shared -I"$dir/include" "$here/shim.cc" \
    -Wl,--whole-archive "$dir/build/perf/libsparcon.a" -Wl,--no-whole-archive -lhwy -lpthread \
    -o "$work/$side.so"
done
g++ -O2 -std=c++20 "$here/driver.cc" -ldl -o "$work/driver"

for map in "${maps[@]}"; do
  for shape in "65536 16" "32768 32" "8192 64" "4096 128" "1024 512" "128 4096"; do
    ratios=()
    for i in 1 2 3 4 5 6; do
      if [ $((i % 2)) -eq 1 ]; then
        line=$("$work/driver" "$work/base.so" "$work/new.so" "$map" $shape 16 "$op" "$scale")
        ratios+=("$(sed 's/.*paired median \([0-9.]*\).*/\1/' <<<"$line")")
      else  # the new build loaded first: its paired median is new / base
        line=$("$work/driver" "$work/new.so" "$work/base.so" "$map" $shape 16 "$op" "$scale")
        ratios+=("1/$(sed 's/.*paired median \([0-9.]*\).*/\1/' <<<"$line")")
      fi
    done
    python3 - "$map" "$op" "${shape/ /x}" "$scale" "${ratios[@]}" <<'PY'
import statistics, sys
m, op, shape, scale, *rs = sys.argv[1:]
r = [eval(v) for v in rs]
print(f"{m:10s} {op} {shape:9s} scale {scale}: base/new median {statistics.median(r):.3f}, "
      f"range {min(r):.3f}-{max(r):.3f} (6 processes)")
PY
  done
done
