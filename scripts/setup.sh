#!/usr/bin/env bash
# Installs the Debian packages sparcon needs to build, test and benchmark. Idempotent: it
# installs only what is missing (apt-get as root, or through sudo when not root).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libhwy-dev          # Google Highway: portable SIMD with runtime dispatch
  libeigen3-dev       # Eigen: the small dense solves of the ridge regression
  libgtest-dev        # GoogleTest
  libbenchmark-dev    # Google Benchmark
  python3             # bench/run_*.py (standard library only)
  libtorch-dev        # LibTorch: the ops and modules of torch/ (layer 2)
  python3-torch       # the Python package (python/sparcon) runs on Debian's torch
  python3-pytest      # its tests
  python3-pip python3-venv python3-setuptools python3-wheel  # pip install of the package (pyproject.toml)
  nlohmann-json3-dev  # JSON: the corpus files of the text-classification example
  libcli11-dev        # command lines of the examples
  libpng-dev          # PNG images embedded in the reports of the experiment kit (examples/kit)
  libopenblas0-serial # an optimised BLAS for LibTorch (Debian's default libblas.so.3 is the reference one, 8x slower here)
  zlib1g-dev dataset-fashion-mnist  # the VQA example (examples/vqa): gzip reading, Fashion-MNIST's IDX files in /usr/share/datasets/fashion-mnist
)

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm fetches the corpus of the text-classification example; Node.js and npm usually come with
# the machine, Debian's npm otherwise.
if ! command -v npm >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends npm
fi

# The Python package: Debian's interpreter finds python/ of this checkout through a .pth file,
# so that `/usr/bin/python3 -c "import sparcon"` works from any directory once the build has
# put libsparcon_torch.so into python/sparcon/ (cmake --build --preset release).
repo=$(cd "$(dirname "$0")/.." && pwd)
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
echo "$repo/python" | "${as_root[@]}" tee "$site/sparcon.pth" >/dev/null
echo "setup: /usr/bin/python3 imports sparcon from $repo/python"

# The SpamAssassin corpus of the main job (a git-ignored cache, checksummed).
bash "$repo/scripts/fetch_data.sh"
