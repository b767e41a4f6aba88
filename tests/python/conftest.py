"""Puts the repository's python/ directory first on sys.path so that `import sparcon` finds the
in-tree package (and the libsparcon_torch.so built next to it) from any working directory."""
import os
import sys

_PYTHON_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)

import torch  # noqa: E402

torch.set_num_threads(min(2, torch.get_num_threads()))
