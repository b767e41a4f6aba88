"""Exact sparsemax and 1.5-entmax (the ``entmax.activations`` API).

Both solve, along ``dim``, ``p = argmax_{p in simplex} <p, x> + H^T_alpha(p)`` with the Tsallis
entropy ``H^T_alpha(p) = (1 - sum_i p_i^alpha) / (alpha (alpha - 1))``:

    sparsemax(x) = [x - tau]_+            (alpha = 2, Euclidean projection onto the simplex)
    entmax15(x)  = [x/2 - tau]_+^2        (alpha = 1.5)

with ``tau`` the exact threshold that makes ``sum p = 1``. The ``k`` argument of ``entmax``
(partial sort size) is accepted and ignored: sparcon's threshold is exact without sorting.

The modules script (``torch.jit.script(Sparsemax())``): their forward calls the registered
operators directly when scripted, and ``return_support_size`` is a constant of the scripted
module (set it before scripting).
"""
import torch
import torch.nn as nn

from sparcon import _errors

_ops = torch.ops.sparcon


def _support_size(P: torch.Tensor, dim: int) -> torch.Tensor:
    """The number of entries with p > 0 along dim: int64, P's shape with size 1 along dim."""
    return (P > 0).sum(dim=dim, keepdim=True)


def _with_support(P, dim, return_support_size):
    if not return_support_size:
        return P
    # Same shape as P with size 1 along dim (keepdim), int64, as entmax returns it.
    return P, _support_size(P, dim)


def sparsemax(X, dim=-1, k=None, return_support_size=False):
    """sparsemax: normalizing sparse transform (a la softmax).

    Solves the projection

        min_p ||x - p||_2   s.t.   p >= 0, sum(p) == 1,

    whose solution is ``p = [x - tau]_+`` with the exact threshold ``tau``.

    Parameters
    ----------
    X : torch.Tensor, any shape (float64, float32, float16, bfloat16).
    dim : int, the dimension along which to normalise.
    k : int or None, accepted for compatibility with ``entmax`` and ignored (sparcon is exact).
    return_support_size : bool, also return the number of non-zeros along ``dim``.

    Returns
    -------
    P : torch.Tensor, same shape and dtype as X, ``P.sum(dim) == 1``.
    support_size : (if return_support_size) int64 tensor, X's shape with size 1 along ``dim``.
    """
    return _with_support(_errors.call(_ops.sparsemax, X, dim), dim, return_support_size)


def entmax15(X, dim=-1, k=None, return_support_size=False):
    """1.5-entmax: normalizing sparse transform (a la softmax).

    Solves

        max_p <x, p> - H_1.5(p)   s.t.   p >= 0, sum(p) == 1,

    with ``H_1.5`` the Tsallis entropy at alpha = 1.5; the solution is ``p = [x/2 - tau]_+^2``
    with the exact threshold ``tau``.

    Parameters
    ----------
    X : torch.Tensor, any shape.
    dim : int, the dimension along which to normalise.
    k : int or None, accepted for compatibility with ``entmax`` and ignored (sparcon is exact).
    return_support_size : bool, also return the number of non-zeros along ``dim``.

    Returns
    -------
    P : torch.Tensor, same shape and dtype as X, ``P.sum(dim) == 1``.
    support_size : (if return_support_size) int64 tensor, X's shape with size 1 along ``dim``.
    """
    return _with_support(_errors.call(_ops.entmax15, X, dim), dim, return_support_size)


def _threshold_from_support(P, dim, tau):
    """tau where the row has a support, +inf where it has none (a row of only -inf)."""
    return torch.where(_support_size(P, dim) > 0, tau, torch.full_like(tau, float("inf")))


def _sparsemax_threshold_and_support(X, dim=-1, k=None):
    """entmax's sparsemax building block: the threshold and the support size along ``dim``.

    ``tau`` is such that ``sum_i [X_i - tau]_+ = 1`` (so ``sparsemax(X) = [X - tau]_+``), from
    sparcon's exact support S: ``tau = (sum_{i in S} X_i - 1) / |S|``. ``k`` is ignored.

    Returns
    -------
    tau : X's shape with size 1 along ``dim`` (X's dtype); +inf for a row with no finite entry.
    support_size : int64, the same shape: the number of entries with p > 0.
    """
    P = _errors.call(_ops.sparsemax, X, dim)
    support = _support_size(P, dim)
    inside = torch.where(P > 0, X, torch.zeros_like(X)).sum(dim=dim, keepdim=True)
    tau = (inside - 1) / support.to(X.dtype)
    return _threshold_from_support(P, dim, tau), support


def _entmax_threshold_and_support(X, dim=-1, k=None):
    """entmax's 1.5-entmax building block, on X already halved (entmax's Entmax15Function calls
    it on ``(X - max) / 2``): the threshold and the support size along ``dim``.

    ``tau`` is such that ``sum_i [X_i - tau]_+^2 = 1`` (so ``entmax15(2 X) = [X - tau]_+^2``),
    from sparcon's exact support S: ``tau = mean_S - sqrt((1 - ss_S) / |S|)`` with ``ss_S`` the
    sum of squared deviations from ``mean_S`` on S. ``k`` is ignored.

    Returns
    -------
    tau : X's shape with size 1 along ``dim``; +inf for a row with no finite entry.
    support_size : int64, the same shape: the number of entries with p > 0.
    """
    P = _errors.call(_ops.entmax15, 2 * X, dim)
    support = _support_size(P, dim)
    count = support.to(X.dtype)
    zeros = torch.zeros_like(X)
    mean = torch.where(P > 0, X, zeros).sum(dim=dim, keepdim=True) / count
    ss = torch.where(P > 0, (X - mean) ** 2, zeros).sum(dim=dim, keepdim=True)
    tau = mean - torch.sqrt(torch.clamp((1 - ss) / count, min=0))
    return _threshold_from_support(P, dim, tau), support


class Sparsemax(nn.Module):
    """Module form of :func:`sparsemax`: ``P = [X - tau]_+`` along ``dim``; X any shape -> same shape
    (and the support size, X's shape with size 1 along ``dim``, with return_support_size)."""

    __constants__ = ["return_support_size"]

    def __init__(self, dim=-1, k=None, return_support_size=False):
        super().__init__()
        self.dim = dim
        self.k = k
        self.return_support_size = return_support_size

    def forward(self, X: torch.Tensor):
        if torch.jit.is_scripting():
            P = _ops.sparsemax(X, self.dim)
        else:
            P = _errors.call(_ops.sparsemax, X, self.dim)
        if self.return_support_size:
            return P, _support_size(P, self.dim)
        return P


class Entmax15(nn.Module):
    """Module form of :func:`entmax15`: ``P = [X/2 - tau]_+^2`` along ``dim``; X any shape -> same shape
    (and the support size, X's shape with size 1 along ``dim``, with return_support_size)."""

    __constants__ = ["return_support_size"]

    def __init__(self, dim=-1, k=None, return_support_size=False):
        super().__init__()
        self.dim = dim
        self.k = k
        self.return_support_size = return_support_size

    def forward(self, X: torch.Tensor):
        if torch.jit.is_scripting():
            P = _ops.entmax15(X, self.dim)
        else:
            P = _errors.call(_ops.entmax15, X, self.dim)
        if self.return_support_size:
            return P, _support_size(P, self.dim)
        return P


class SparsemaxFunction:
    """entmax's ``SparsemaxFunction``: ``SparsemaxFunction.apply(X, dim=-1, k=None)`` returns
    ``(P, support_size)`` as entmax's current version does, P = :func:`sparsemax` (X, dim).
    Not a torch.autograd.Function (no forward/backward to subclass): the op has its own autograd."""

    @staticmethod
    def apply(X, dim=-1, k=None):
        return sparsemax(X, dim, k, return_support_size=True)


class Entmax15Function:
    """entmax's ``Entmax15Function``: ``Entmax15Function.apply(X, dim=0, k=None)`` returns
    ``(P, support_size)`` as entmax's current version does, P = :func:`entmax15` (X, dim); note
    entmax's dim default of 0 here (the function :func:`entmax15` defaults to -1).
    Not a torch.autograd.Function (no forward/backward to subclass): the op has its own autograd."""

    @staticmethod
    def apply(X, dim=0, k=None):
        return entmax15(X, dim, k, return_support_size=True)
