"""sparcon: exact sparse (alpha-entmax) maps, their losses and continuous attention.

The operators live in the compiled library ``libsparcon_torch.so`` (LibTorch, autograd included)
and are registered as ``torch.ops.sparcon.*``; this package is a thin layer over them. It loads
the library once, from the environment variable ``SPARCON_LIBRARY`` if set, else from
``libsparcon_torch.so`` next to this file.

The public API of the ``entmax`` package (1.3) is here with the same names, signatures and
defaults, so ``import sparcon as entmax`` works: the functions, modules and losses (with
``return_support_size``), budget_bisect's budget = 0 (P = 0, zero gradient) and budget above the
row length (P = 1), the names of its autograd ``Function`` classes (``SparsemaxFunction.apply``
and ``Entmax15Function.apply`` return ``(P, support_size)`` and Entmax15Function's dim defaults
to 0, as in entmax), and the private helpers ``activations._sparsemax_threshold_and_support`` /
``_entmax_threshold_and_support`` that entmax's tests import. Errors are ``SparconError``
(a ValueError and a RuntimeError) or, for a dim out of range, ``SparconIndexError`` (also an
IndexError): callers of either package catch them. Where ``entmax`` approximates (bisection,
``n_iter``), sparcon computes the exact answer and ignores the accuracy knobs. Every module
scripts (``torch.jit.script``), saves and loads, also from C++ (``torch::jit::load``).

Discrete maps (any ``dim``; x of any shape, P the same shape):
    sparsemax, entmax15, sparsemax_bisect, entmax_bisect, normmax_bisect, budget_bisect
    Sparsemax, Entmax15, SparsemaxBisect, EntmaxBisect, NormmaxBisect, BudgetBisect
Fenchel-Young losses (X (n, d), target (n,) -> (n,)):
    sparsemax_loss, entmax15_loss, sparsemax_bisect_loss, entmax_bisect_loss, normmax_bisect_loss
    SparsemaxLoss, Entmax15Loss, SparsemaxBisectLoss, EntmaxBisectLoss, NormmaxBisectLoss
Continuous attention (1D sequences, 2D images):
    continuous_expectation, ridge_matrix, continuous_attention, density_from_moments,
    value_model, query_continuous_attention, disc_cont_attention (one density per query),
    default_basis_1d, default_basis_2d,
    ContinuousAttention, ContinuousAttention1D, ContinuousAttention2D

Differences from ``entmax`` that remain. On inputs where entmax is inexact, crashes or returns NaN:
- exact thresholds: ``n_iter``, ``ensure_sum_one`` and the ``k`` hint are accepted and ignored;
- ``entmax_bisect`` accepts any alpha > 0; alpha = 1 is computed as softmax (entmax's bisection
  fails there) and the gradient with respect to a tensor alpha at exactly 1 is the limit;
- entries equal to -inf get probability 0 and contribute 0 to losses (no 0 * inf NaN); a row
  that is entirely -inf maps to all zeros (the threshold helpers give tau = +inf, support 0);
- a tensor ``alpha`` / ``budget`` for normmax_bisect / budget_bisect and a per-row alpha for
  the losses are supported (one op call for all rows), with no gradient to them, as in entmax;
- the losses also accept a keyword-only ``ignore_index`` (rows with that target get loss 0),
  and the modules mask any ``ignore_index`` (entmax masks only ignore_index >= 0); the loss
  functions and SparsemaxLoss / Entmax15Loss also take ``return_support`` (sparcon's former
  name of ``return_support_size``) as a keyword;
- bad arguments raise a ValueError naming the argument (a SparconError from the ops) where
  entmax asserts (AssertionError: a target of the wrong length, a reduction not in its list)
  or returns NaN or garbage silently: alpha <= 0, normmax alpha <= 1, a negative budget;
- the ``<Name>Function`` classes are not torch.autograd.Function subclasses: ``apply`` calls the
  op, which has its own autograd (no forward/backward to subclass or call with a ctx).
And in general:
- CPU tensors run the C++ core (Highway SIMD); tensors on any other device (CUDA, meta) run the
  device-generic kernels, written with ATen operations (the environment variable
  SPARCON_BACKEND=generic sends CPU tensors there too), 2D continuous densities with alpha != 1
  included. entmax's test_amp.py (CUDA autocast) was not run here (no GPU);
- second derivatives (``create_graph=True``): the backward of softmax, sparsemax, entmax15 and
  entmax with a number alpha is differentiable; for normmax, budget and a tensor alpha a
  double backward raises ValueError (entmax builds it from torch operations);
- ``return_support_size`` counts the entries with p > 0; entmax15 counts those at or above the
  threshold, one more per entry that sits exactly on it (p = 0);
- a scripted module fixes its return_support_size / reduction / alpha-or-budget kind when it
  is scripted, takes lengths as a tensor, and (torch 1.13) raises torch.jit.Error with the
  same message instead of the exception class.
"""
import os as _os

import torch as _torch

__version__ = "0.1.0"

_LIBRARY = "libsparcon_torch.so"


def _library_path():
    """SPARCON_LIBRARY if set, else the library next to this file: where `pip install` puts it
    (site-packages/sparcon/) and where the CMake build copies it in a checkout (python/sparcon/)."""
    env = _os.environ.get("SPARCON_LIBRARY")
    if env:
        return env
    return _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), _LIBRARY)


def _already_loaded():
    try:
        _torch.ops.sparcon.sparsemax  # noqa: B018 (attribute lookup resolves the operator)
        return True
    except (RuntimeError, AttributeError):
        return False


def _build_hint():
    """How to (re)build the library, for this copy of the package."""
    package = _os.path.dirname(_os.path.abspath(__file__))
    checkout = _os.path.dirname(_os.path.dirname(package))
    if _os.path.isfile(_os.path.join(checkout, "pyproject.toml")) and \
            _os.path.isdir(_os.path.join(checkout, "torch", "src")):  # python/sparcon of a checkout
        return (f"`cmake --preset release && cmake --build --preset release` in {checkout} (target "
                f"sparcon_torch writes {_os.path.join(package, _LIBRARY)}), or install the package "
                f"with `pip install --no-build-isolation {checkout}`")
    return ("reinstall sparcon from its source tree with "
            "`pip install --no-build-isolation --force-reinstall <checkout>`")


def _load_library():
    """Registers torch.ops.sparcon.* once per process, from the library of _library_path()."""
    if _already_loaded():
        return
    path = _library_path()
    if not _os.path.isfile(path):
        source = ("SPARCON_LIBRARY" if _os.environ.get("SPARCON_LIBRARY") else "next to " + __file__)
        raise ImportError(
            f"sparcon: the compiled library was not found at {path} ({source}). Build it: "
            f"{_build_hint()}; or point the environment variable SPARCON_LIBRARY at an existing "
            f"{_LIBRARY}.")
    try:
        _torch.ops.load_library(path)
    except OSError as exc:
        raise ImportError(
            f"sparcon: could not load {path}: {exc}. It must be built against the installed torch "
            f"({_torch.__version__}, {_os.path.dirname(_torch.__file__)}): {_build_hint()}.") from exc


_load_library()

from sparcon._errors import SparconError, SparconIndexError  # noqa: E402
from sparcon.activations import Entmax15, Sparsemax, entmax15, sparsemax  # noqa: E402
from sparcon.root_finding import (  # noqa: E402
    BudgetBisect,
    EntmaxBisect,
    NormmaxBisect,
    SparsemaxBisect,
    budget_bisect,
    entmax_bisect,
    normmax_bisect,
    sparsemax_bisect,
)
from sparcon.losses import (  # noqa: E402
    Entmax15Loss,
    EntmaxBisectLoss,
    NormmaxBisectLoss,
    SparsemaxBisectLoss,
    SparsemaxLoss,
    entmax15_loss,
    entmax_bisect_loss,
    normmax_bisect_loss,
    sparsemax_bisect_loss,
    sparsemax_loss,
)
from sparcon.continuous import (  # noqa: E402
    continuous_attention,
    continuous_expectation,
    default_basis_1d,
    default_basis_2d,
    density_from_moments,
    disc_cont_attention,
    query_continuous_attention,
    ridge_matrix,
    value_model,
)
from sparcon.attention import (  # noqa: E402
    ContinuousAttention,
    ContinuousAttention1D,
    ContinuousAttention2D,
)

__all__ = [
    "sparsemax", "entmax15", "Sparsemax", "Entmax15",
    "sparsemax_bisect", "entmax_bisect", "normmax_bisect", "budget_bisect",
    "SparsemaxBisect", "EntmaxBisect", "NormmaxBisect", "BudgetBisect",
    "sparsemax_loss", "entmax15_loss", "sparsemax_bisect_loss", "entmax_bisect_loss",
    "normmax_bisect_loss",
    "SparsemaxLoss", "Entmax15Loss", "SparsemaxBisectLoss", "EntmaxBisectLoss", "NormmaxBisectLoss",
    "continuous_expectation", "ridge_matrix", "continuous_attention", "density_from_moments",
    "value_model", "query_continuous_attention", "disc_cont_attention",
    "default_basis_1d", "default_basis_2d",
    "ContinuousAttention", "ContinuousAttention1D", "ContinuousAttention2D",
    "SparconError", "SparconIndexError",
]
