"""Fenchel-Young losses: values, gradients, reductions, ignore_index, errors."""
import pytest
import torch
from torch.autograd import gradcheck

import sparcon
from references import normmax_fy_loss_ref, tsallis_fy_loss_ref

ops = torch.ops.sparcon


def data(n=6, d=5, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    X = (torch.randn(n, d, generator=g, dtype=torch.float64) * 2).to(dtype)
    y = torch.randint(0, d, (n,), generator=g)
    return X, y


FUNCS = {
    "sparsemax_loss": (lambda X, y: sparcon.sparsemax_loss(X, y), lambda X, y: tsallis_fy_loss_ref(X, y, 2)),
    "sparsemax_bisect_loss": (lambda X, y: sparcon.sparsemax_bisect_loss(X, y), lambda X, y: tsallis_fy_loss_ref(X, y, 2)),
    "entmax15_loss": (lambda X, y: sparcon.entmax15_loss(X, y), lambda X, y: tsallis_fy_loss_ref(X, y, 1.5)),
    "entmax_bisect_loss_1.5": (lambda X, y: sparcon.entmax_bisect_loss(X, y), lambda X, y: tsallis_fy_loss_ref(X, y, 1.5)),
    "entmax_bisect_loss_1.25": (lambda X, y: sparcon.entmax_bisect_loss(X, y, 1.25), lambda X, y: tsallis_fy_loss_ref(X, y, 1.25)),
    "entmax_bisect_loss_1": (lambda X, y: sparcon.entmax_bisect_loss(X, y, 1.0), lambda X, y: tsallis_fy_loss_ref(X, y, 1)),
    "normmax_bisect_loss_2": (lambda X, y: sparcon.normmax_bisect_loss(X, y), lambda X, y: normmax_fy_loss_ref(X, y, 2.0)),
    "normmax_bisect_loss_3": (lambda X, y: sparcon.normmax_bisect_loss(X, y, 3.0), lambda X, y: normmax_fy_loss_ref(X, y, 3.0)),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_loss_matches_reference_and_gradcheck(name):
    fn, ref = FUNCS[name]
    X, y = data(seed=1)
    loss = fn(X, y)
    assert loss.shape == (6,)
    torch.testing.assert_close(loss, ref(X, y), rtol=0, atol=1e-12)
    assert (loss >= -1e-12).all()
    Xg = X.clone().requires_grad_()
    assert gradcheck(lambda t: fn(t, y), (Xg,), eps=1e-6, atol=1e-7)


def test_loss_gradient_is_p_minus_onehot():
    X, y = data(seed=2)
    X.requires_grad_()
    sparcon.entmax15_loss(X, y).sum().backward()
    expected = sparcon.entmax15(X.detach()) - torch.nn.functional.one_hot(y, 5).double()
    torch.testing.assert_close(X.grad, expected, rtol=0, atol=1e-14)


def test_losses_equal_op_bitwise():
    X, y = data(seed=3, dtype=torch.float32)
    assert torch.equal(sparcon.sparsemax_loss(X, y), ops.fenchel_young_loss(X, y, "sparsemax", 0.0, -100))
    assert torch.equal(sparcon.entmax15_loss(X, y, k=2), ops.fenchel_young_loss(X, y, "entmax15", 0.0, -100))
    assert torch.equal(sparcon.entmax_bisect_loss(X, y, 1.7, n_iter=3), ops.fenchel_young_loss(X, y, "entmax", 1.7, -100))
    assert torch.equal(sparcon.normmax_bisect_loss(X, y, 2.5), ops.fenchel_young_loss(X, y, "normmax", 2.5, -100))


def test_per_row_tensor_alpha_loss():
    X, y = data(seed=4)
    alpha = torch.tensor([1.5, 2.0, 1.25, 1.5, 2.0, 1.25], dtype=torch.float64)
    for a in (alpha, alpha[:, None]):
        loss = sparcon.entmax_bisect_loss(X, y, a)
        for i in range(6):
            torch.testing.assert_close(loss[i], tsallis_fy_loss_ref(X[i:i + 1], y[i:i + 1], float(alpha[i]))[0],
                                       rtol=0, atol=1e-12)
    assert torch.equal(sparcon.entmax_bisect_loss(X, y, torch.tensor(1.5)), sparcon.entmax_bisect_loss(X, y, 1.5))
    with pytest.raises(ValueError, match="alpha"):
        sparcon.entmax_bisect_loss(X, y, torch.ones(4) * 1.5)
    # A distinct alpha in every row, normmax too, with ignore_index and a gradient to X only.
    alpha = torch.linspace(1.1, 3.0, 6, dtype=torch.float64).requires_grad_()
    y2 = y.clone()
    y2[2] = -100
    Xg = X.clone().requires_grad_()
    loss = sparcon.entmax_bisect_loss(Xg, y2, alpha)
    norm = sparcon.normmax_bisect_loss(Xg, y2, alpha + 0.5)
    for i in range(6):
        a = float(alpha[i])
        want = 0.0 if i == 2 else float(tsallis_fy_loss_ref(X[i:i + 1], y2[i:i + 1], a)[0])
        torch.testing.assert_close(loss[i].item(), want, rtol=0, atol=1e-12)
        want = 0.0 if i == 2 else float(normmax_fy_loss_ref(X[i:i + 1], y2[i:i + 1], a + 0.5)[0])
        torch.testing.assert_close(norm[i].item(), want, rtol=0, atol=1e-12)
    (loss.sum() + norm.sum()).backward()
    assert alpha.grad is None and Xg.grad is not None and torch.equal(Xg.grad[2], torch.zeros(X.shape[1], dtype=X.dtype))
    with pytest.raises(ValueError, match="parameter"):
        ops.fenchel_young_loss_per_row(X, y, "sparsemax", torch.ones(6, dtype=X.dtype), -100)


def test_return_support():
    X, y = data(seed=5)
    loss, support = sparcon.sparsemax_loss(X, y, return_support=True)
    assert torch.equal(loss, sparcon.sparsemax_loss(X, y))
    assert torch.equal(support, (sparcon.sparsemax(X) > 0).sum(-1, keepdim=True))
    loss, support = sparcon.Entmax15Loss(return_support=True, reduction="none")(X, y)
    assert support.shape == (6, 1) and loss.shape == (6,)


MODULES = [
    (sparcon.SparsemaxLoss, {}, lambda X, y: sparcon.sparsemax_loss(X, y)),
    (sparcon.SparsemaxBisectLoss, {}, lambda X, y: sparcon.sparsemax_bisect_loss(X, y)),
    (sparcon.Entmax15Loss, {}, lambda X, y: sparcon.entmax15_loss(X, y)),
    (sparcon.EntmaxBisectLoss, {"alpha": 1.3}, lambda X, y: sparcon.entmax_bisect_loss(X, y, 1.3)),
    (sparcon.NormmaxBisectLoss, {"alpha": 3}, lambda X, y: sparcon.normmax_bisect_loss(X, y, 3)),
]


@pytest.mark.parametrize("cls, kw, fn", MODULES)
def test_module_reductions_and_ignore_index(cls, kw, fn):
    X, y = data(n=8, seed=6)
    per_row = fn(X, y)
    torch.testing.assert_close(cls(reduction="none", **kw)(X, y), per_row, rtol=0, atol=0)
    torch.testing.assert_close(cls(reduction="sum", **kw)(X, y), per_row.sum(), rtol=0, atol=0)
    torch.testing.assert_close(cls(**kw)(X, y), per_row.sum() / 8, rtol=0, atol=1e-15)
    torch.testing.assert_close(cls(reduction="mean", **kw)(X, y), per_row.sum() / 8, rtol=0, atol=1e-15)

    # ignore_index: ignored rows contribute 0 and no gradient; the mean is over the rest.
    y_ign = y.clone()
    y_ign[[1, 4, 5]] = -1
    Xg = X.clone().requires_grad_()
    m = cls(ignore_index=-1, reduction="none", **kw)
    out = m(Xg, y_ign)
    keep = y_ign != -1
    assert torch.equal(out[~keep], torch.zeros(3, dtype=torch.float64))
    torch.testing.assert_close(out[keep], fn(X[keep], y[keep]), rtol=0, atol=1e-14)
    out.sum().backward()
    assert torch.equal(Xg.grad[~keep], torch.zeros(3, 5, dtype=torch.float64))
    mean = cls(ignore_index=-1, **kw)(X, y_ign)
    torch.testing.assert_close(mean, fn(X[keep], y[keep]).sum() / 5, rtol=0, atol=1e-14)
    # a non-negative ignore_index (the one case entmax masks) works the same way
    y_pos = y.clone()
    y_pos[0] = 7
    total = cls(ignore_index=7, reduction="sum", **kw)(X, y_pos)
    torch.testing.assert_close(total, fn(X[1:], y[1:]).sum(), rtol=0, atol=1e-14)

def test_loss_training_decreases():
    torch.manual_seed(0)
    X = torch.randn(64, 10)
    W_true = torch.randn(10, 4)
    y = (X @ W_true).argmax(-1)
    model = torch.nn.Linear(10, 4)
    crit = sparcon.Entmax15Loss()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    first = None
    for _ in range(30):
        opt.zero_grad()
        loss = crit(model(X), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.5 * first


@pytest.mark.parametrize("call, word", [
    (lambda X, y: sparcon.SparsemaxLoss(reduction="average"), "reduction"),
    (lambda X, y: sparcon.sparsemax_loss(X, y + 10), "target"),
    (lambda X, y: sparcon.entmax_bisect_loss(X, y, alpha=-2.0), "alpha"),
    (lambda X, y: sparcon.normmax_bisect_loss(X, y, alpha=0.5), "alpha"),
    (lambda X, y: sparcon.entmax15_loss(X, y[:3]), "target"),
])
def test_loss_errors(call, word):
    X, y = data(seed=7)
    with pytest.raises(ValueError, match=word):
        call(X, y)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_bfloat16_close_to_float(name):
    fn, _ = FUNCS[name]
    X, y = data(n=16, d=9, seed=8, dtype=torch.bfloat16)
    out = fn(X, y)
    assert out.dtype == torch.bfloat16
    want = fn(X.float(), y)
    torch.testing.assert_close(out.float(), want, rtol=1e-2, atol=1e-2)
