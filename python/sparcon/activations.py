"""Exact sparsemax and 1.5-entmax (the ``entmax.activations`` API).

Both solve, along ``dim``, ``p = argmax_{p in simplex} <p, x> + H^T_alpha(p)`` with the Tsallis
entropy ``H^T_alpha(p) = (1 - sum_i p_i^alpha) / (alpha (alpha - 1))``:

    sparsemax(x) = [x - tau]_+            (alpha = 2, Euclidean projection onto the simplex)
    entmax15(x)  = [x/2 - tau]_+^2        (alpha = 1.5)

with ``tau`` the exact threshold that makes ``sum p = 1``. The ``k`` argument of ``entmax``
(partial sort size) is accepted and ignored: sparcon's threshold is exact without sorting.
"""
import torch
import torch.nn as nn

from sparcon._function_alias import function_alias

_ops = torch.ops.sparcon


def _with_support(P, dim, return_support_size):
    if not return_support_size:
        return P
    # Same shape as P with size 1 along dim (keepdim), int64, as entmax returns it.
    return P, (P != 0).sum(dim=dim, keepdim=True)


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
    return _with_support(_ops.sparsemax(X, dim), dim, return_support_size)


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
    return _with_support(_ops.entmax15(X, dim), dim, return_support_size)


class Sparsemax(nn.Module):
    """Module form of :func:`sparsemax`: ``P = [X - tau]_+`` along ``dim``; X any shape -> same shape."""

    def __init__(self, dim=-1, k=None, return_support_size=False):
        super().__init__()
        self.dim = dim
        self.k = k
        self.return_support_size = return_support_size

    def forward(self, X):
        return sparsemax(X, dim=self.dim, k=self.k, return_support_size=self.return_support_size)


class Entmax15(nn.Module):
    """Module form of :func:`entmax15`: ``P = [X/2 - tau]_+^2`` along ``dim``; X any shape -> same shape."""

    def __init__(self, dim=-1, k=None, return_support_size=False):
        super().__init__()
        self.dim = dim
        self.k = k
        self.return_support_size = return_support_size

    def forward(self, X):
        return entmax15(X, dim=self.dim, k=self.k, return_support_size=self.return_support_size)


SparsemaxFunction = function_alias("SparsemaxFunction", sparsemax, __name__)
Entmax15Function = function_alias("Entmax15Function", entmax15, __name__)
