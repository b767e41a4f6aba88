"""alpha-entmax, sparsemax, alpha-normmax and budget-sparsemax (the ``entmax.root_finding`` API).

``entmax`` computes these by a fixed number of bisection steps; sparcon returns the exact
answer (threshold solved to machine precision), so ``n_iter`` and ``ensure_sum_one`` are accepted
and ignored. Along ``dim``, for a row x:

    entmax_bisect:   p = [(alpha - 1) x - tau]_+^(1/(alpha-1)),  sum p = 1   (alpha > 0;
                     alpha = 1 is softmax, alpha < 1 dense)
    sparsemax_bisect: p = [x - tau]_+,  sum p = 1
    normmax_bisect:  p = argmax_{p in simplex} <p, x> - ||p||_alpha   (alpha > 1)
    budget_bisect:   p = clip(x - tau, 0, 1),  sum p = budget   (0 < budget <= d)
"""
import torch
import torch.nn as nn

from sparcon._function_alias import function_alias

_ops = torch.ops.sparcon


def _as_alpha_tensor(alpha, X):
    if not alpha.is_floating_point():
        alpha = alpha.to(X.dtype)
    return alpha


def _per_row(fn, fn_tensor, X, param, dim):
    """fn(X, float, dim) for a number (or a one-element tensor) ``param``, else
    fn_tensor(X, tensor, dim) with one value per row (a tensor broadcastable to X with size 1
    along dim). There is no gradient with respect to the parameter (as in entmax)."""
    if not isinstance(param, torch.Tensor):
        return fn(X, float(param), dim)
    if param.numel() == 1:
        return fn(X, float(param.reshape(())), dim)
    return fn_tensor(X, _as_alpha_tensor(param.detach(), X).to(X.device), dim)


def entmax_bisect(X, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True):
    """alpha-entmax: normalizing sparse transform (a la softmax), exact.

    Solves

        max_p <x, p> + H^T_alpha(p)   s.t.   p >= 0, sum(p) == 1,
        H^T_alpha(p) = (1 - sum_i p_i^alpha) / (alpha (alpha - 1)),

    whose solution is ``p = [(alpha - 1) x - tau]_+^(1/(alpha-1))``. alpha = 2 is sparsemax,
    alpha = 1 softmax (computed as softmax, unlike entmax's bisection), 0 < alpha < 1 dense.

    Differentiable with respect to X and to a tensor alpha.

    Parameters
    ----------
    X : torch.Tensor, any shape.
    alpha : float or torch.Tensor, > 0. A tensor must broadcast to X's shape with size 1 along
        ``dim`` (one alpha per row), e.g. shape (n, 1) for X (n, d) and dim = -1.
    dim : int, the dimension along which to normalise.
    n_iter : int, ignored (sparcon is exact).
    ensure_sum_one : bool, ignored (the exact result sums to one to rounding).

    Returns
    -------
    P : torch.Tensor, same shape and dtype as X, ``P.sum(dim) == 1``.
    """
    if isinstance(alpha, torch.Tensor):
        return _ops.entmax_tensor_alpha(X, _as_alpha_tensor(alpha, X), dim)
    return _ops.entmax(X, float(alpha), dim)


def sparsemax_bisect(X, dim=-1, n_iter=50, ensure_sum_one=True):
    """sparsemax: ``min_p ||x - p||_2 s.t. p >= 0, sum(p) == 1``, i.e. ``p = [x - tau]_+``, exact.

    Parameters
    ----------
    X : torch.Tensor, any shape.
    dim : int, the dimension along which to normalise (any dim, unlike entmax's note).
    n_iter, ensure_sum_one : ignored (sparcon is exact).

    Returns
    -------
    P : torch.Tensor, same shape and dtype as X, ``P.sum(dim) == 1``.
    """
    return _ops.sparsemax(X, dim)


def normmax_bisect(X, alpha=2, dim=-1, n_iter=50):
    """alpha-normmax: ``max_p <x, p> - ||p||_alpha s.t. p >= 0, sum(p) == 1``, exact.

    The solution is ``p proportional to [x - tau]_+^(1/(alpha-1))`` with ``tau`` such that
    ``sum [x - tau]_+^(alpha/(alpha-1)) = 1``, then normalised to sum 1.

    Differentiable with respect to X (not alpha, as in entmax).

    Parameters
    ----------
    X : torch.Tensor, any shape.
    alpha : float or torch.Tensor, > 1; a tensor broadcasts to X with size 1 along ``dim``.
    dim : int, the dimension along which to normalise.
    n_iter : int, ignored (sparcon is exact).

    Returns
    -------
    P : torch.Tensor, same shape and dtype as X, ``P.sum(dim) == 1``.
    """
    return _per_row(_ops.normmax, _ops.normmax_tensor_alpha, X, alpha, dim)


def budget_bisect(X, budget=2, dim=-1, n_iter=50):
    """budget-sparsemax: ``max_p <x, p> - 1/2 ||p||^2 s.t. 0 <= p <= 1, sum(p) == budget``, exact.

    The projection onto the capped simplex: ``p = clip(x - tau, 0, 1)`` with ``sum p = budget``.

    Differentiable with respect to X: ``g - mean_A(g)`` on the active set ``A = {0 < p < 1}``.

    Parameters
    ----------
    X : torch.Tensor, any shape.
    budget : float or torch.Tensor, 0 < budget <= X.shape[dim]; a tensor broadcasts to X with
        size 1 along ``dim``.
    dim : int, the dimension along which to project.
    n_iter : int, ignored (sparcon is exact).

    Returns
    -------
    P : torch.Tensor, same shape and dtype as X, ``P.sum(dim) == budget``.
    """
    return _per_row(_ops.budget, _ops.budget_tensor, X, budget, dim)


class SparsemaxBisect(nn.Module):
    """Module form of :func:`sparsemax_bisect`: ``P = [X - tau]_+`` along ``dim``, any shape."""

    def __init__(self, dim=-1, n_iter=None):
        super().__init__()
        self.dim = dim
        self.n_iter = n_iter

    def forward(self, X):
        return sparsemax_bisect(X, dim=self.dim, n_iter=self.n_iter)


class EntmaxBisect(nn.Module):
    """Module form of :func:`entmax_bisect`: ``P = [(alpha-1) X - tau]_+^(1/(alpha-1))`` along ``dim``.

    ``alpha`` is a float or a tensor (e.g. an ``nn.Parameter`` of shape broadcastable to X with
    size 1 along ``dim``), differentiable.
    """

    def __init__(self, alpha=1.5, dim=-1, n_iter=50):
        super().__init__()
        self.dim = dim
        self.n_iter = n_iter
        self.alpha = alpha

    def forward(self, X):
        return entmax_bisect(X, alpha=self.alpha, dim=self.dim, n_iter=self.n_iter)


class NormmaxBisect(nn.Module):
    """Module form of :func:`normmax_bisect`: ``argmax_{p in simplex} <p, X> - ||p||_alpha`` along ``dim``."""

    def __init__(self, alpha=2, dim=-1, n_iter=50):
        super().__init__()
        self.dim = dim
        self.n_iter = n_iter
        self.alpha = alpha

    def forward(self, X):
        return normmax_bisect(X, alpha=self.alpha, dim=self.dim, n_iter=self.n_iter)


class BudgetBisect(nn.Module):
    """Module form of :func:`budget_bisect`: ``P = clip(X - tau, 0, 1)``, ``sum P = budget`` along ``dim``."""

    def __init__(self, budget=2, dim=-1, n_iter=50):
        super().__init__()
        self.dim = dim
        self.n_iter = n_iter
        self.budget = budget

    def forward(self, X):
        return budget_bisect(X, budget=self.budget, dim=self.dim, n_iter=self.n_iter)


EntmaxBisectFunction = function_alias("EntmaxBisectFunction", entmax_bisect, __name__)
SparsemaxBisectFunction = function_alias("SparsemaxBisectFunction", sparsemax_bisect, __name__)
NormmaxBisectFunction = function_alias("NormmaxBisectFunction", normmax_bisect, __name__)
BudgetBisectFunction = function_alias("BudgetBisectFunction", budget_bisect, __name__)
