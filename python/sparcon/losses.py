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

from sparcon import _errors
from sparcon._function_alias import function_alias
from sparcon.activations import entmax15, sparsemax

_ops = torch.ops.sparcon

_REDUCTIONS = ("elementwise_mean", "mean", "sum", "none")


def _fy_number(X: torch.Tensor, target: torch.Tensor, map_name: str, parameter: float,
               ignore_index: int) -> torch.Tensor:
    return _ops.fenchel_young_loss(X, target, map_name, parameter, ignore_index)


def _fy_tensor(X: torch.Tensor, target: torch.Tensor, map_name: str, parameter: torch.Tensor,
               ignore_index: int, name: str) -> torch.Tensor:
    if parameter.numel() == 1:
        return _ops.fenchel_young_loss(X, target, map_name, float(parameter.reshape(())), ignore_index)
    # One alpha per row: (n,) or (n, 1); no gradient with respect to alpha, as in entmax.
    n = X.shape[0] if X.dim() > 0 else 0
    if parameter.numel() != n:
        raise ValueError(f"sparcon.{map_name}_loss: {name} of shape {list(parameter.shape)} must be a "
                         f"scalar or hold one value per row of X ({n})")
    per_row = parameter.detach().reshape(-1).to(X.device)
    if not per_row.is_floating_point():
        per_row = per_row.to(X.dtype)
    return _ops.fenchel_young_loss_per_row(X, target, map_name, per_row, ignore_index)


def _fy(X, target, map_name, parameter, ignore_index, name):
    if isinstance(parameter, torch.Tensor):
        return _errors.call(_fy_tensor, X, target, map_name, parameter, int(ignore_index), name)
    return _errors.call(_fy_number, X, target, map_name, float(parameter), int(ignore_index))


def _support(P: torch.Tensor) -> torch.Tensor:
    """The number of entries with p > 0 in each row: (n, 1) int64, as entmax returns it."""
    return (P > 0).sum(dim=-1, keepdim=True)


def _return_support(return_support_size, return_support):
    return bool(return_support_size) or bool(return_support)


def sparsemax_loss(X, target, k=None, return_support_size=False, *, ignore_index=-100, return_support=False):
    """sparsemax loss: sparse alternative to cross-entropy.

        loss_i = (1 - ||p_i||^2)/2 + <p_i - e_{y_i}, x_i>,   p_i = sparsemax(x_i)

    Parameters
    ----------
    X : torch.Tensor, shape (n_samples, n_classes), the scores.
    target : torch.LongTensor, shape (n_samples,), 0 <= target < n_classes (or ignore_index).
    k : int or None, accepted for compatibility and ignored (sparcon is exact).
    return_support_size : bool, also return the support sizes of p, shape (n_samples, 1), int64.
    ignore_index : int (keyword only), rows with this target get loss 0.
    return_support : bool (keyword only), the same as return_support_size (sparcon's former name).

    Returns
    -------
    losses : torch.Tensor, shape (n_samples,) [, support_size (n_samples, 1)].
    """
    loss = _fy(X, target, "sparsemax", 0.0, ignore_index, "alpha")
    if _return_support(return_support_size, return_support):
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
    return _fy(X, target, "sparsemax", 0.0, ignore_index, "alpha")


def entmax15_loss(X, target, k=None, return_support_size=False, *, ignore_index=-100, return_support=False):
    """1.5-entmax loss: sparse alternative to cross-entropy.

        loss_i = (1 - sum_j p_ij^1.5)/0.75 + <p_i - e_{y_i}, x_i>,   p_i = entmax15(x_i)

    Parameters
    ----------
    X : torch.Tensor, shape (n_samples, n_classes).
    target : torch.LongTensor, shape (n_samples,).
    k : int or None, accepted for compatibility and ignored (sparcon is exact).
    return_support_size : bool, also return the support sizes of p, shape (n_samples, 1), int64.
    ignore_index : int (keyword only), rows with this target get loss 0.
    return_support : bool (keyword only), the same as return_support_size (sparcon's former name).

    Returns
    -------
    losses : torch.Tensor, shape (n_samples,) [, support_size (n_samples, 1)].
    """
    loss = _fy(X, target, "entmax15", 0.0, ignore_index, "alpha")
    if _return_support(return_support_size, return_support):
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
    """The reduction shared by the loss modules. Each subclass has ``loss(X, target)`` (entmax's
    method: the per-row losses, with the support sizes when return_support_size) and the
    TorchScript-compatible ``_rows(X, target)`` (the per-row losses) and ``_support_of(X)``."""

    __constants__ = ["reduction", "return_support_size"]

    def __init__(self, ignore_index=-100, reduction="elementwise_mean", return_support_size=False):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"sparcon.{type(self).__name__}: reduction = {reduction!r} must be one of "
                             + ", ".join(repr(r) for r in _REDUCTIONS))
        super().__init__()
        self.reduction = reduction
        self.ignore_index = ignore_index
        self.return_support_size = bool(return_support_size)
        self.return_support = self.return_support_size  # sparcon's former name, same meaning

    def _rows(self, X: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("sparcon._GenericLoss: a subclass defines _rows")

    def _support_of(self, X: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("sparcon._GenericLoss: only SparsemaxLoss and Entmax15Loss return support sizes")

    def forward(self, X: torch.Tensor, target: torch.Tensor):
        """X (n, d) scores, target (n,) classes -> the reduced loss (a scalar, or (n,) for "none"),
        and the support sizes (n, 1) with return_support_size."""
        if torch.jit.is_scripting():
            loss = self._rows(X, target)
        else:
            loss = _errors.call(self._rows, X, target)
        if self.reduction == "sum":
            loss = loss.sum()
        elif self.reduction == "elementwise_mean" or self.reduction == "mean":
            size = (target != int(self.ignore_index)).sum().to(loss.dtype)
            loss = loss.sum() / size
        if self.return_support_size:
            return loss, self._support_of(X)
        return loss


class SparsemaxLoss(_GenericLoss):
    """Sparsemax loss ``(1 - ||p||^2)/2 + <p - e_y, x>`` (p = sparsemax(x)) reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none" [, support sizes (n, 1)]."""

    def __init__(self, k=None, ignore_index=-100, reduction="elementwise_mean", return_support_size=False, *,
                 return_support=False):
        super().__init__(ignore_index, reduction, _return_support(return_support_size, return_support))
        self.k = k

    def loss(self, X, target):
        return sparsemax_loss(X, target, self.k, self.return_support_size, ignore_index=self.ignore_index)

    def _rows(self, X: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return _ops.fenchel_young_loss(X, target, "sparsemax", 0.0, int(self.ignore_index))

    def _support_of(self, X: torch.Tensor) -> torch.Tensor:
        return _support(_ops.sparsemax(X.detach(), -1))


class Entmax15Loss(_GenericLoss):
    """1.5-entmax loss ``(1 - sum p^1.5)/0.75 + <p - e_y, x>`` (p = entmax15(x)) reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none" [, support sizes (n, 1)]."""

    def __init__(self, k=100, ignore_index=-100, reduction="elementwise_mean", return_support_size=False, *,
                 return_support=False):
        super().__init__(ignore_index, reduction, _return_support(return_support_size, return_support))
        self.k = k

    def loss(self, X, target):
        return entmax15_loss(X, target, self.k, self.return_support_size, ignore_index=self.ignore_index)

    def _rows(self, X: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return _ops.fenchel_young_loss(X, target, "entmax15", 0.0, int(self.ignore_index))

    def _support_of(self, X: torch.Tensor) -> torch.Tensor:
        return _support(_ops.entmax15(X.detach(), -1))


class SparsemaxBisectLoss(_GenericLoss):
    """Sparsemax loss ``(1 - ||p||^2)/2 + <p - e_y, x>`` (exact; n_iter ignored) reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none"."""

    def __init__(self, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.n_iter = n_iter

    def loss(self, X, target):
        return sparsemax_bisect_loss(X, target, self.n_iter, ignore_index=self.ignore_index)

    def _rows(self, X: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return _ops.fenchel_young_loss(X, target, "sparsemax", 0.0, int(self.ignore_index))


class EntmaxBisectLoss(_GenericLoss):
    """alpha-entmax loss ``(1 - sum p^alpha)/(alpha(alpha-1)) + <p - e_y, x>`` reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none". alpha: a number or a tensor
    (scalar, or one value per row), resolved when the module is scripted."""

    def __init__(self, alpha=1.5, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.alpha = alpha
        self.n_iter = n_iter

    def loss(self, X, target):
        return entmax_bisect_loss(X, target, self.alpha, self.n_iter, ignore_index=self.ignore_index)

    def _rows(self, X: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        alpha = self.alpha
        if isinstance(alpha, torch.Tensor):
            return _fy_tensor(X, target, "entmax", alpha, int(self.ignore_index), "alpha")
        return _fy_number(X, target, "entmax", float(alpha), int(self.ignore_index))


class NormmaxBisectLoss(_GenericLoss):
    """alpha-normmax loss ``1 - ||p||_alpha + <p - e_y, x>`` reduced over rows;
    X (n, d), target (n,) -> scalar, or (n,) with reduction="none". alpha: a number or a tensor
    (scalar, or one value per row), resolved when the module is scripted."""

    def __init__(self, alpha=2, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.alpha = alpha
        self.n_iter = n_iter

    def loss(self, X, target):
        return normmax_bisect_loss(X, target, self.alpha, self.n_iter, ignore_index=self.ignore_index)

    def _rows(self, X: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        alpha = self.alpha
        if isinstance(alpha, torch.Tensor):
            return _fy_tensor(X, target, "normmax", alpha, int(self.ignore_index), "alpha")
        return _fy_number(X, target, "normmax", float(alpha), int(self.ignore_index))


SparsemaxLossFunction = function_alias("SparsemaxLossFunction", sparsemax_loss, __name__)
Entmax15LossFunction = function_alias("Entmax15LossFunction", entmax15_loss, __name__)
SparsemaxBisectLossFunction = function_alias("SparsemaxBisectLossFunction", sparsemax_bisect_loss, __name__)
EntmaxBisectLossFunction = function_alias("EntmaxBisectLossFunction", entmax_bisect_loss, __name__)
NormmaxBisectLossFunction = function_alias("NormmaxBisectLossFunction", normmax_bisect_loss, __name__)
