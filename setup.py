"""Builds libsparcon_torch.so into the Python package, against the torch that is installed.

Run by `pip install --no-build-isolation .` (pyproject.toml). The library is the CMake build's
sparcon_torch with the core linked in, compiled with torch.utils.cpp_extension:

- sources: the core library's (add_library(sparcon ...) in CMakeLists.txt) and the torch
  layer's (add_library(sparcon_torch ...) in torch/CMakeLists.txt), read from those files so
  that the two builds cannot drift apart;
- include paths: include/, src/ and the repository root (the core's; src/ is where Highway's
  foreach_target.h finds HWY_TARGET_INCLUDE "discrete/simd_kernels.cc" when it re-includes the
  kernels once per SIMD target), torch/include and torch/src (the torch layer's), Eigen's;
- Highway (libhwy-dev): the kernels are compiled for every target Highway enables with the
  default flags (no -march) and HWY_DYNAMIC_DISPATCH picks the best at run time, exactly as in
  the CMake build; HWY_SHARED_DEFINE as Highway's CMake package sets it for the shared libhwy;
- C++20, -O3 -DNDEBUG (CMake's Release) and the definitions Torch's CMake package gives its
  users; no debug information (Python's CFLAGS carry -g) and no libtorch_python.

The library is named libsparcon_torch.so (no Python ABI suffix: it is not a Python module but
the library that sparcon/__init__.py loads with torch.ops.load_library).
"""
import os
import re

from setuptools import setup
import torch
from torch.utils.cpp_extension import BuildExtension, CppExtension

ROOT = os.path.dirname(os.path.abspath(__file__))


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def _cmake_sources(cmake_file, target, prefix):
    """The source files of add_library(<target> ...) in cmake_file, relative to the root."""
    match = re.search(r"add_library\(\s*" + target + r"\s+(?:STATIC\s+|SHARED\s+)?([^)]*)\)", _read(cmake_file))
    if not match:
        raise RuntimeError(f"setup.py: no add_library({target} ...) in {cmake_file}")
    sources = [os.path.join(prefix, s) for s in match.group(1).split() if s.endswith(".cc")]
    missing = [s for s in sources if not os.path.isfile(os.path.join(ROOT, s))]
    if not sources or missing:
        raise RuntimeError(f"setup.py: sources of {target} in {cmake_file} not found: {missing or 'none'}")
    return sources


def _version():
    match = re.search(r"project\(\s*sparcon\s+VERSION\s+([0-9.]+)", _read("CMakeLists.txt"))
    if not match:
        raise RuntimeError("setup.py: no project(sparcon VERSION ...) in CMakeLists.txt")
    return match.group(1)


def _definitions():
    """What the CMake build defines: Highway's HWY_SHARED_DEFINE, and the definitions Torch's
    CMake package adds (the features of the torch build; glog's and gflags' when c10 uses them)."""
    names = ["HWY_SHARED_DEFINE", "NDEBUG"]
    dist = torch.distributed
    if dist.is_available():
        names.append("USE_DISTRIBUTED")
        if dist.is_gloo_available():
            names.append("USE_C10D_GLOO")
        if dist.rpc.is_available():
            names.append("USE_RPC")
            if hasattr(torch._C._distributed_rpc, "_TensorPipeRpcBackendOptionsBase"):
                names.append("USE_TENSORPIPE")
    macros = os.path.join(os.path.dirname(torch.__file__), "include", "c10", "macros", "cmake_macros.h")
    c10_macros = open(macros, encoding="utf-8").read() if os.path.isfile(macros) else ""
    definitions = [(name, None) for name in names]
    if "#define C10_USE_GLOG" in c10_macros:
        definitions.append(("GLOG_CUSTOM_PREFIX_SUPPORT", None))
    if "#define C10_USE_GFLAGS" in c10_macros:
        definitions.append(("GFLAGS_IS_A_DLL", "0"))
    return definitions


def _eigen_include():
    for candidate in (os.environ.get("EIGEN3_INCLUDE_DIR"), "/usr/include/eigen3", "/usr/local/include/eigen3"):
        if candidate and os.path.isfile(os.path.join(candidate, "Eigen", "Core")):
            return candidate
    raise RuntimeError("setup.py: Eigen not found (Debian: apt-get install libeigen3-dev; "
                       "or set EIGEN3_INCLUDE_DIR)")


def _extension():
    # The torch layer's sources first: the slowest to compile, they start before the core's.
    sources = (_cmake_sources("torch/CMakeLists.txt", "sparcon_torch", "torch")
               + _cmake_sources("CMakeLists.txt", "sparcon", ""))
    extension = CppExtension(
        "sparcon.libsparcon_torch",
        sources,
        # Absolute: torch's ninja backend compiles from the build directory.
        include_dirs=[os.path.join(ROOT, d) for d in ("include", "src", "", "torch/include", "torch/src")]
        + [_eigen_include()],
        define_macros=_definitions(),
        libraries=["hwy"],
        extra_compile_args=["-std=c++20", "-O3", "-g0", "-fno-wrapv", "-Wall", "-Wextra"],
    )
    # The operators need libtorch only; torch_python would tie the library to one interpreter.
    extension.libraries = [lib for lib in extension.libraries if lib != "torch_python"]
    return extension


class _BuildLibrary(BuildExtension):
    """BuildExtension for a library, not a Python module: without the flags that make
    torch/torch.h include torch/extension.h (Python and pybind11 headers, which Debian's
    python3-torch does not need and does not ship) and name a Python module."""

    _MODULE_FLAGS = ("-DTORCH_API_INCLUDE_EXTENSION_H", "-DPYBIND11_", "-DTORCH_EXTENSION_NAME=")

    def _add_compile_flag(self, extension, flag):
        if not flag.startswith(self._MODULE_FLAGS):
            super()._add_compile_flag(extension, flag)


BUILD_BASE = os.path.join("build", "setuptools")
os.makedirs(os.path.join(ROOT, BUILD_BASE), exist_ok=True)
setup(
    version=_version(),
    ext_modules=[_extension()],
    cmdclass={"build_ext": _BuildLibrary.with_options(no_python_abi_suffix=True)},
    # Intermediate files under build/setuptools/ (git-ignored), apart from the CMake builds.
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
)
