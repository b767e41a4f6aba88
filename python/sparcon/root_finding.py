"""alpha-entmax, sparsemax, alpha-normmax and budget-sparsemax (the ``entmax.root_finding`` API).

``entmax`` computes these by a fixed number of bisection steps; sparcon returns the exact
answer (threshold solved to machine precision), so ``n_iter`` and ``ensure_sum_one`` are accepted
and ignored. Along ``dim``, for a row x of length d:

    entmax_bisect:   p = [(alpha - 1) x - tau]_+^(1/(alpha-1)),  sum p = 1   (alpha > 0;
                     alpha = 1 is softmax, alpha < 1 dense)
    sparsemax_bisect: p = [x - tau]_+,  sum p = 1
    normmax_bisect:  p = argmax_{p in simplex} <p, x> - ||p||_alpha   (alpha > 1)
    budget_bisect:   p = clip(x - tau, 0, 1),  sum p = budget   (0 < budget <= d; as entmax,
                     budget = 0 gives p = 0 with a zero gradient and a budget above d gives
                     p = 1, the budget capped at d)

The modules script (``torch.jit.script(EntmaxBisect(alpha=...))``): a number or a tensor
alpha / budget (an ``nn.Parameter`` included) is resolved when the module is scripted.
"""
import torch
import torch.nn as nn

from sparcon import _errors
from sparcon._function_alias import function_alias

_ops = torch.ops.sparcon


def _as_alpha_tensor(alpha: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    if not alpha.is_floating_point():
        alpha = alpha.to(X.dtype)
    return alpha


def _entmax_number(X: torch.Tensor, alpha: float, dim: int) -> torch.Tensor:
    return _ops.entmax(X, alpha, dim)


def _entmax_tensor(X: torch.Tensor, alpha: torch.Tensor, dim: int) -> torch.Tensor:
    """One alpha per row, differentiable (a tensor broadcastable to X with size 1 along dim)."""
    return _ops.entmax_tensor_alpha(X, _as_alpha_tensor(alpha, X), dim)


def _per_row(param: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """A per-row parameter without gradient (as in entmax), floating, on X's device."""
    return _as_alpha_tensor(param.detach(), X).to(X.device)


def _normmax_number(X: torch.Tensor, alpha: float, dim: int) -> torch.Tensor:
    return _ops.normmax(X, alpha, dim)


def _normmax_tensor(X: torch.Tensor, alpha: torch.Tensor, dim: int) -> torch.Tensor:
    if alpha.numel() == 1:
        return _ops.normmax(X, float(alpha.reshape(())), dim)
    return _ops.normmax_tensor_alpha(X, _per_row(alpha, X), dim)


def _row_length(X: torch.Tensor, dim: int) -> float:
    """X.shape[dim] as a float, or -1 when dim is out of range (the op then names dim)."""
    if -X.dim() <= dim < X.dim():
        return float(X.size(dim))
    return -1.0


def _budget_number(X: torch.Tensor, budget: float, dim: int) -> torch.Tensor:
    d = _row_length(X, dim)
    if d >= 1:
        if budget == 0.0:
            # entmax's answer: p = 0 with a zero gradient (the op with any valid budget, times 0,
            # keeps p connected to X; NaN rows stay NaN).
            return _ops.budget(X, 1.0, dim) * 0.0
        if budget > d:
            budget = d  # the cap p = 1 everywhere, as entmax's bisection ends
    return _ops.budget(X, budget, dim)


def _budget_tensor(X: torch.Tensor, budget: torch.Tensor, dim: int) -> torch.Tensor:
    if budget.numel() == 1:
        return _budget_number(X, float(budget.reshape(())), dim)
    b = _per_row(budget, X)
    d = _row_length(X, dim)
    if d >= 1:
        b = torch.where(b > d, torch.full_like(b, d), b)
        zero = b == 0
        if bool(zero.any()):
            P = _ops.budget_tensor(X, torch.where(zero, torch.ones_like(b), b), dim)
            return torch.where(zero, P * 0.0, P)
    return _ops.budget_tensor(X, b, dim)


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
        return _errors.call(_entmax_tensor, X, alpha, dim)
    return _errors.call(_entmax_number, X, float(alpha), dim)


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
    return _errors.call(_ops.sparsemax, X, dim)


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
    if isinstance(alpha, torch.Tensor):
        return _errors.call(_normmax_tensor, X, alpha, dim)
    return _errors.call(_normmax_number, X, float(alpha), dim)


def budget_bisect(X, budget=2, dim=-1, n_iter=50):
    """budget-sparsemax: ``max_p <x, p> - 1/2 ||p||^2 s.t. 0 <= p <= 1, sum(p) == budget``, exact.

    The projection onto the capped simplex: ``p = clip(x - tau, 0, 1)`` with ``sum p = budget``.

    Differentiable with respect to X: ``g - mean_A(g)`` on the active set ``A = {0 < p < 1}``.

    Parameters
    ----------
    X : torch.Tensor, any shape.
    budget : float or torch.Tensor, >= 0; a tensor broadcasts to X with size 1 along ``dim``.
        As in entmax, a budget of 0 gives P = 0 (zero gradient) and a budget above
        X.shape[dim] is capped there (P = 1).
    dim : int, the dimension along which to project.
    n_iter : int, ignored (sparcon is exact).

    Returns
    -------
    P : torch.Tensor, same shape and dtype as X, ``P.sum(dim) == min(budget, X.shape[dim])``.
    """
    if isinstance(budget, torch.Tensor):
        return _errors.call(_budget_tensor, X, budget, dim)
    return _errors.call(_budget_number, X, float(budget), dim)


class SparsemaxBisect(nn.Module):
    """Module form of :func:`sparsemax_bisect`: ``P = [X - tau]_+`` along ``dim``, any shape."""

    def __init__(self, dim=-1, n_iter=None):
        super().__init__()
        self.dim = dim
        self.n_iter = n_iter

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if torch.jit.is_scripting():
            return _ops.sparsemax(X, self.dim)
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

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_scripting():
            return entmax_bisect(X, alpha=self.alpha, dim=self.dim, n_iter=self.n_iter)
        alpha = self.alpha
        if isinstance(alpha, torch.Tensor):
            return _entmax_tensor(X, alpha, self.dim)
        return _entmax_number(X, float(alpha), self.dim)


class NormmaxBisect(nn.Module):
    """Module form of :func:`normmax_bisect`: ``argmax_{p in simplex} <p, X> - ||p||_alpha`` along ``dim``."""

    def __init__(self, alpha=2, dim=-1, n_iter=50):
        super().__init__()
        self.dim = dim
        self.n_iter = n_iter
        self.alpha = alpha

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_scripting():
            return normmax_bisect(X, alpha=self.alpha, dim=self.dim, n_iter=self.n_iter)
        alpha = self.alpha
        if isinstance(alpha, torch.Tensor):
            return _normmax_tensor(X, alpha, self.dim)
        return _normmax_number(X, float(alpha), self.dim)


class BudgetBisect(nn.Module):
    """Module form of :func:`budget_bisect`: ``P = clip(X - tau, 0, 1)``, ``sum P = budget`` along ``dim``."""

    def __init__(self, budget=2, dim=-1, n_iter=50):
        super().__init__()
        self.dim = dim
        self.n_iter = n_iter
        self.budget = budget

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_scripting():
            return budget_bisect(X, budget=self.budget, dim=self.dim, n_iter=self.n_iter)
        budget = self.budget
        if isinstance(budget, torch.Tensor):
            return _budget_tensor(X, budget, self.dim)
        return _budget_number(X, float(budget), self.dim)


EntmaxBisectFunction = function_alias("EntmaxBisectFunction", entmax_bisect, __name__)
SparsemaxBisectFunction = function_alias("SparsemaxBisectFunction", sparsemax_bisect, __name__)
NormmaxBisectFunction = function_alias("NormmaxBisectFunction", normmax_bisect, __name__)
BudgetBisectFunction = function_alias("BudgetBisectFunction", budget_bisect, __name__)
