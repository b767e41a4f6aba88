"""pytest plugin of scripts/test.sh's pip check (-p sparcon_installed_check): the Python tests
must run against the pip-installed sparcon and its library, not the checkout's python/sparcon.

pytest imports a -p plugin before any conftest.py, so sparcon is imported here, from sys.path as
the environment gives it (tests/python/conftest.py later puts the checkout's python/ first, too
late: every `import sparcon` gets this module). Run without SPARCON_LIBRARY. The check runs at
the start and again at the end of the session."""
import os
import sys
import sysconfig

import pytest
import torch

import sparcon

_CHECKOUT_PACKAGE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "..", "..", "python", "sparcon"))
_INSTALLED = sparcon


def _check_installed():
    module = sys.modules.get("sparcon")
    package = os.path.dirname(os.path.abspath(module.__file__))
    site = os.path.abspath(sysconfig.get_paths()["platlib"])
    library = os.path.join(package, "libsparcon_torch.so")
    loaded = {os.path.abspath(path) for path in torch.ops.loaded_libraries}
    problems = []
    if module is not _INSTALLED:
        problems.append(f"sparcon was imported again, from {package}")
    if os.path.commonpath([package, site]) != site:
        problems.append(f"sparcon imported from {package}, not from this environment's {site}")
    if os.path.isdir(_CHECKOUT_PACKAGE) and os.path.samefile(package, _CHECKOUT_PACKAGE):
        problems.append(f"sparcon imported from the checkout ({package})")
    if "SPARCON_LIBRARY" in os.environ:
        problems.append("SPARCON_LIBRARY is set")
    if library not in loaded:
        problems.append(f"{library} not loaded (loaded: {sorted(loaded)})")
    if problems:
        raise pytest.UsageError("sparcon_installed_check: " + "; ".join(problems))
    return package, library


def pytest_sessionstart(session):
    package, library = _check_installed()
    session.config.pluginmanager.get_plugin("terminalreporter").write_line(
        f"sparcon_installed_check: testing the installed sparcon {package} with {library}")


def pytest_sessionfinish(session, exitstatus):
    _check_installed()
