"""Every nn.Module of the sparcon package in the configurations a TorchScript user meets: the maps
(number, tensor and nn.Parameter alpha / budget, support sizes), the losses (each reduction,
ignore_index, per-row alpha, support sizes) and ContinuousAttention in both modes and
dimensions, with and without lengths, queries and heads.

Used by tests/python/test_torchscript.py (script, save, load, same outputs and gradients in
Python) and by save_scripted.py --package (the same modules saved for run_scripted.cc, which
loads them with torch::jit::load and checks outputs and gradients from C++).

CASES maps a name to make() -> (module, inputs): the module in double precision, built from a
fixed seed, and its forward's positional inputs (tensors, or None for an absent optional one).
"""
import torch

import sparcon

D64 = torch.float64


def _x(*shape, seed=0, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=D64) * scale


def _target(n, d, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, d, (n,), generator=g)


def _map(module, shape=(3, 4, 6), seed=0):
    return lambda: (module(), (_x(*shape, seed=seed),))


def _loss(module, n=6, d=5, ignore=False, seed=2):
    def make():
        y = _target(n, d, seed)
        kwargs = {"ignore_index": int(y[0])} if ignore else {}
        return module(**kwargs), (_x(n, d, seed=seed), y)
    return make


def _attention(dims, mode, heads=1, queries=False, lengths=False, alpha=2.0, seed=3, base=False):
    def make():
        torch.manual_seed(seed)
        options = dict(alpha=alpha, mode=mode, heads=heads, query_features=3 if queries else None)
        if base:  # the base class, dims given
            module = sparcon.ContinuousAttention(4, dims=dims, basis_size=8, grid_side=3, variance=0.01,
                                                 **options).double()
            values = _x(2, 7, 4, seed=seed, scale=1.0) if dims == 1 else _x(2, 3, 4, 4, seed=seed, scale=1.0)
        elif dims == 1:
            module = sparcon.ContinuousAttention1D(4, basis_size=8, **options).double()
            values = _x(2, 7, 4, seed=seed, scale=1.0)
        else:
            module = sparcon.ContinuousAttention2D(4, grid_side=3, variance=0.01, **options).double()
            values = _x(2, 3, 4, 4, seed=seed, scale=1.0)
        length = torch.tensor([7, 4]) if lengths else None
        query = _x(2, 3, 3, seed=seed + 1, scale=1.0) if queries else None
        return module, (values, length, query)
    return make


def _parameter(*shape, low, high, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.nn.Parameter(low + (high - low) * torch.rand(*shape, generator=g, dtype=D64))


CASES = {
    # maps
    "Sparsemax": _map(lambda: sparcon.Sparsemax(dim=1)),
    "Sparsemax_support": _map(lambda: sparcon.Sparsemax(dim=-1, return_support_size=True)),
    "Entmax15": _map(lambda: sparcon.Entmax15(dim=0, k=3)),
    "Entmax15_support": _map(lambda: sparcon.Entmax15(dim=2, return_support_size=True)),
    "SparsemaxBisect": _map(lambda: sparcon.SparsemaxBisect(dim=1)),
    "EntmaxBisect_number": _map(lambda: sparcon.EntmaxBisect(alpha=1.3, dim=-1)),
    "EntmaxBisect_int": _map(lambda: sparcon.EntmaxBisect(alpha=2, dim=0)),
    "EntmaxBisect_parameter": _map(lambda: sparcon.EntmaxBisect(
        alpha=torch.nn.Parameter(torch.tensor(1.4, dtype=D64)))),
    "EntmaxBisect_per_row_parameter": _map(lambda: sparcon.EntmaxBisect(
        alpha=_parameter(3, 4, 1, low=1.1, high=2.5, seed=4))),
    "NormmaxBisect_int": _map(lambda: sparcon.NormmaxBisect()),
    "NormmaxBisect_per_row": _map(lambda: sparcon.NormmaxBisect(
        alpha=torch.linspace(1.5, 3.0, 6, dtype=D64).reshape(1, 1, 6), dim=1)),
    "BudgetBisect": _map(lambda: sparcon.BudgetBisect(budget=2.5)),
    "BudgetBisect_zero": _map(lambda: sparcon.BudgetBisect(budget=0)),
    "BudgetBisect_above_length": _map(lambda: sparcon.BudgetBisect(budget=9, dim=1)),
    "BudgetBisect_per_row": _map(lambda: sparcon.BudgetBisect(
        budget=torch.tensor([[[0.0], [1.0], [2.0], [9.0]]] * 3, dtype=D64))),
    # losses
    "SparsemaxLoss": _loss(lambda **kw: sparcon.SparsemaxLoss(**kw)),
    "SparsemaxLoss_sum_ignore": _loss(lambda **kw: sparcon.SparsemaxLoss(reduction="sum", **kw), ignore=True),
    "SparsemaxLoss_support": _loss(lambda **kw: sparcon.SparsemaxLoss(reduction="none", return_support_size=True,
                                                                      **kw)),
    "Entmax15Loss": _loss(lambda **kw: sparcon.Entmax15Loss(**kw)),
    "Entmax15Loss_mean_ignore_support": _loss(lambda **kw: sparcon.Entmax15Loss(
        reduction="mean", return_support_size=True, **kw), ignore=True),
    "SparsemaxBisectLoss_none": _loss(lambda **kw: sparcon.SparsemaxBisectLoss(reduction="none", **kw)),
    "EntmaxBisectLoss": _loss(lambda **kw: sparcon.EntmaxBisectLoss(alpha=1.25, **kw)),
    "EntmaxBisectLoss_per_row": _loss(lambda **kw: sparcon.EntmaxBisectLoss(
        alpha=torch.linspace(1.1, 2.5, 6, dtype=D64), reduction="sum", **kw)),
    "NormmaxBisectLoss": _loss(lambda **kw: sparcon.NormmaxBisectLoss(alpha=3, **kw), ignore=True),
    "NormmaxBisectLoss_tensor": _loss(lambda **kw: sparcon.NormmaxBisectLoss(
        alpha=torch.tensor(2.5, dtype=D64), reduction="none", **kw)),
}

for _dims in (1, 2):
    for _mode in ("cont", "disc+cont"):
        _tag = f"ContinuousAttention{_dims}D_{_mode.replace('+', '_')}"
        CASES[_tag] = _attention(_dims, _mode, alpha=1.0 if _dims == 2 else 2.0)
        CASES[_tag + "_queries_heads"] = _attention(_dims, _mode, heads=2, queries=True, alpha=2.0)
        if _dims == 1:
            CASES[_tag + "_lengths"] = _attention(1, _mode, lengths=True, alpha=1.5)
            CASES[_tag + "_lengths_queries"] = _attention(1, _mode, queries=True, lengths=True, alpha=1.0)
CASES["ContinuousAttention_dims2_disc_cont_heads"] = _attention(2, "disc+cont", heads=2, alpha=1.5, base=True)


def outputs_of(result):
    """A forward's result as a tuple of tensors."""
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def output_weights(outputs, seed=7):
    """Random weights w for the floating outputs (None for integer ones, e.g. support sizes):
    the checks differentiate sum(output * w), which reaches every entry (a plain sum would
    not reach the maps, whose rows sum to a constant)."""
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(o.shape, generator=g, dtype=o.dtype) if o.is_floating_point() else None
                 for o in outputs)


def run(module, inputs, weights=None):
    """Forward and backward of sum(output * w): (outputs, weights, input grads, parameter grads).
    Inputs are cloned; floating ones require grad (None grads become empty tensors)."""
    xs = tuple(None if t is None else (t.detach().clone().requires_grad_() if t.is_floating_point() else t.clone())
               for t in inputs)
    module.zero_grad(set_to_none=True)
    outputs = outputs_of(module(*xs))
    if weights is None:
        weights = output_weights(outputs)
    total = sum((o * w).sum() for o, w in zip(outputs, weights) if w is not None)
    total.backward()
    empty = torch.empty(0, dtype=D64)
    input_grads = tuple(empty if (x is None or x.grad is None) else x.grad.clone() for x in xs)
    param_grads = tuple(empty if p.grad is None else p.grad.clone() for _, p in module.named_parameters())
    return tuple(o.detach() for o in outputs), weights, input_grads, param_grads
