"""Fenchel-Young losses of the sparse maps (the ``entmax.losses`` API).

For scores x (a row of X, shape (n, d)) and a target class y:

    loss(x, y) = Omega(p) + <p - e_y, x>,   p = map(x),   d loss / dx = p - e_y

with ``Omega`` the (negated) regulariser of the map: Tsallis ``(1 - sum p^alpha)/(alpha(alpha-1))``
for entmax (alpha = 2 sparsemax, 1.5 entmax15), ``1 - ||p||_alpha`` for normmax. The loss is
>= 0 and 0 exactly when ``p = e_y``. The functions return the per-row losses, shape (n,);
rows whose target equals ``ignore_index`` get loss 0 and no gradient. The modules reduce:
"none" (n,), "sum", or "elementwise_mean" / "mean" (the sum over the rows whose target is not
``ignore_index`` divided by their number, as in entmax; NaN when every row is ignored).
"""
import torch
import torch.nn as nn

from sparcon._function_alias import function_alias
from sparcon.activations import entmax15, sparsemax

_ops = torch.ops.sparcon

_REDUCTIONS = ("elementwise_mean", "mean", "sum", "none")


def _fy(X, target, map_name, parameter, ignore_index, name):
    if not isinstance(parameter, torch.Tensor):
        return _ops.fenchel_young_loss(X, target, map_name, float(parameter), int(ignore_index))
    if parameter.numel() == 1:
        return _ops.fenchel_young_loss(X, target, map_name, float(parameter.reshape(())), int(ignore_index))
    # One alpha per row: (n,) or (n, 1); no gradient with respect to alpha, as in entmax.
    n = X.shape[0] if X.dim() > 0 else 0
    if parameter.numel() != n:
        raise ValueError(f"sparcon.{map_name}_loss: {name} of shape {list(parameter.shape)} must be a "
                         f"scalar or hold one value per row of X ({n})")
    per_row = parameter.detach().reshape(-1).to(X.device)
    if not per_row.is_floating_point():
        per_row = per_row.to(X.dtype)
    return _ops.fenchel_young_loss_per_row(X, target, map_name, per_row, int(ignore_index))


def _support(P):
    return (P != 0).sum(dim=-1, keepdim=True)


def sparsemax_loss(X, target, k=None, return_support=False, *, ignore_index=-100):
    """sparsemax loss: sparse alternative to cross-entropy.

        loss_i = (1 - ||p_i||^2)/2 + <p_i - e_{y_i}, x_i>,   p_i = sparsemax(x_i)

    Parameters
    ----------
    X : torch.Tensor, shape (n_samples, n_classes), the scores.
    target : torch.LongTensor, shape (n_samples,), 0 <= target < n_classes (or ignore_index).
    k : int or None, accepted for compatibility and ignored (sparcon is exact).
    return_support : bool, also return the support sizes of p, shape (n_samples, 1).
    ignore_index : int (keyword only), rows with this target get loss 0.

    Returns
    -------
    losses : torch.Tensor, shape (n_samples,).
    """
    loss = _ops.fenchel_young_loss(X, target, "sparsemax", 0.0, int(ignore_index))
    if return_support:
        return loss, _support(sparsemax(X.detach(), dim=-1))
    return loss


def sparsemax_bisect_loss(X, target, n_iter=50, *, ignore_index=-100):
    """sparsemax loss (entmax computes it by bisection; sparcon exactly).

        loss_i = (1 - ||p_i||^2)/2 + <p_i - e_{y_i}, x_i>,   p_i = sparsemax(x_i)

    Parameters
    ----------
    X : torch.Tensor, shape (n_samples, n_classes).
    target : torch.LongTensor, shape (n_samples,).
    n_iter : int, ignored.
    ignore_index : int (keyword only), rows with this target get loss 0.

    Returns
    -------
    losses : torch.Tensor, shape (n_samples,).
    """
    return _ops.fenchel_young_loss(X, target, "sparsemax", 0.0, int(ignore_index))


def entmax15_loss(X, target, k=None, return_support=False, *, ignore_index=-100):
    """1.5-entmax loss: sparse alternative to cross-entropy.

        loss_i = (1 - sum_j p_ij^1.5)/0.75 + <p_i - e_{y_i}, x_i>,   p_i = entmax15(x_i)

    Parameters
    ----------
    X : torch.Tensor, shape (n_samples, n_classes).
    target : torch.LongTensor, shape (n_samples,).
    k : int or None, accepted for compatibility and ignored (sparcon is exact).
    return_support : bool, also return the support sizes of p, shape (n_samples, 1).
    ignore_index : int (keyword only), rows with this target get loss 0.

    Returns
    -------
    losses : torch.Tensor, shape (n_samples,).
    """
    loss = _ops.fenchel_young_loss(X, target, "entmax15", 0.0, int(ignore_index))
    if return_support:
        return loss, _support(entmax15(X.detach(), dim=-1))
    return loss


def entmax_bisect_loss(X, target, alpha=1.5, n_iter=50, *, ignore_index=-100):
    """alpha-entmax loss: sparse alternative to cross-entropy, any alpha > 0 (alpha = 1:
    cross-entropy ``logsumexp(x) - x_y``).

        loss_i = (1 - sum_j p_ij^alpha)/(alpha (alpha - 1)) + <p_i - e_{y_i}, x_i>,
        p_i = entmax_alpha(x_i)

    Parameters
    ----------
    X : torch.Tensor, shape (n_samples, n_classes).
    target : torch.LongTensor, shape (n_samples,).
    alpha : float or torch.Tensor (scalar, (n_samples,) or (n_samples, 1)); no gradient to alpha.
    n_iter : int, ignored (sparcon is exact).
    ignore_index : int (keyword only), rows with this target get loss 0.

    Returns
    -------
    losses : torch.Tensor, shape (n_samples,).
    """
    return _fy(X, target, "entmax", alpha, ignore_index, "alpha")


def normmax_bisect_loss(X, target, alpha=2, n_iter=50, *, ignore_index=-100):
    """alpha-normmax loss, alpha > 1.

        loss_i = 1 - ||p_i||_alpha + <p_i - e_{y_i}, x_i>,   p_i = normmax_alpha(x_i)

    Parameters
    ----------
    X : torch.Tensor, shape (n_samples, n_classes).
    target : torch.LongTensor, shape (n_samples,).
    alpha : float or torch.Tensor (scalar, (n_samples,) or (n_samples, 1)); no gradient to alpha.
    n_iter : int, ignored (sparcon is exact).
    ignore_index : int (keyword only), rows with this target get loss 0.

    Returns
    -------
    losses : torch.Tensor, shape (n_samples,).
    """
    return _fy(X, target, "normmax", alpha, ignore_index, "alpha")


class _GenericLoss(nn.Module):
    def __init__(self, ignore_index=-100, reduction="elementwise_mean", return_support=False):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"sparcon.{type(self).__name__}: reduction = {reduction!r} must be one of "
                             + ", ".join(repr(r) for r in _REDUCTIONS))
        super().__init__()
        self.reduction = reduction
        self.ignore_index = ignore_index
        self.return_support = return_support

    def forward(self, X, target):
        """X (n, d) scores, target (n,) classes -> the reduced loss (a scalar, or (n,) for "none")."""
        loss = self.loss(X, target)
        support = None
        if isinstance(loss, tuple):
            loss, support = loss
        if self.reduction == "sum":
            loss = loss.sum()
        elif self.reduction in ("elementwise_mean", "mean"):
            size = (target != self.ignore_index).sum().to(loss.dtype)
            loss = loss.sum() / size
        if self.return_support:
            return loss, support
        return loss


class SparsemaxLoss(_GenericLoss):
    """Sparsemax loss ``(1 - ||p||^2)/2 + <p - e_y, x>`` (p = sparsemax(x)) reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none"."""

    def __init__(self, k=None, ignore_index=-100, reduction="elementwise_mean", return_support=False):
        super().__init__(ignore_index, reduction, return_support)
        self.k = k

    def loss(self, X, target):
        return sparsemax_loss(X, target, self.k, self.return_support, ignore_index=self.ignore_index)


class Entmax15Loss(_GenericLoss):
    """1.5-entmax loss ``(1 - sum p^1.5)/0.75 + <p - e_y, x>`` (p = entmax15(x)) reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none"."""

    def __init__(self, k=100, ignore_index=-100, reduction="elementwise_mean", return_support=False):
        super().__init__(ignore_index, reduction, return_support)
        self.k = k

    def loss(self, X, target):
        return entmax15_loss(X, target, self.k, self.return_support, ignore_index=self.ignore_index)


class SparsemaxBisectLoss(_GenericLoss):
    """Sparsemax loss ``(1 - ||p||^2)/2 + <p - e_y, x>`` (exact; n_iter ignored) reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none"."""

    def __init__(self, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.n_iter = n_iter

    def loss(self, X, target):
        return sparsemax_bisect_loss(X, target, self.n_iter, ignore_index=self.ignore_index)


class EntmaxBisectLoss(_GenericLoss):
    """alpha-entmax loss ``(1 - sum p^alpha)/(alpha(alpha-1)) + <p - e_y, x>`` reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none"."""

    def __init__(self, alpha=1.5, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.alpha = alpha
        self.n_iter = n_iter

    def loss(self, X, target):
        return entmax_bisect_loss(X, target, self.alpha, self.n_iter, ignore_index=self.ignore_index)


class NormmaxBisectLoss(_GenericLoss):
    """alpha-normmax loss ``1 - ||p||_alpha + <p - e_y, x>`` reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none"."""

    def __init__(self, alpha=2, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.alpha = alpha
        self.n_iter = n_iter

    def loss(self, X, target):
        return normmax_bisect_loss(X, target, self.alpha, self.n_iter, ignore_index=self.ignore_index)


SparsemaxLossFunction = function_alias("SparsemaxLossFunction", sparsemax_loss, __name__)
Entmax15LossFunction = function_alias("Entmax15LossFunction", entmax15_loss, __name__)
SparsemaxBisectLossFunction = function_alias("SparsemaxBisectLossFunction", sparsemax_bisect_loss, __name__)
EntmaxBisectLossFunction = function_alias("EntmaxBisectLossFunction", entmax_bisect_loss, __name__)
NormmaxBisectLossFunction = function_alias("NormmaxBisectLossFunction", normmax_bisect_loss, __name__)
