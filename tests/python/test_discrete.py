"""Discrete maps: gradients, equality with the ops, independent references, dtypes, errors."""
import pytest
import torch
from torch.autograd import gradcheck

import sparcon
from references import budget_ref, entmax15_ref, entmax_bisect_ref, normmax_ref, sparsemax_ref

ops = torch.ops.sparcon


def rand(*shape, dtype=torch.float64, seed=0, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(dtype)


# ---- gradients ----------------------------------------------------------------------------------

GRAD_MAPS = {
    "sparsemax": lambda x, dim: sparcon.sparsemax(x, dim=dim),
    "entmax15": lambda x, dim: sparcon.entmax15(x, dim=dim),
    "sparsemax_bisect": lambda x, dim: sparcon.sparsemax_bisect(x, dim=dim),
    "entmax_bisect_1.3": lambda x, dim: sparcon.entmax_bisect(x, alpha=1.3, dim=dim),
    "entmax_bisect_2.5": lambda x, dim: sparcon.entmax_bisect(x, alpha=2.5, dim=dim),
    # alpha = 1.25, 1.75 and 3 weigh the backward by roots and a division instead of a power.
    "entmax_bisect_1.25": lambda x, dim: sparcon.entmax_bisect(x, alpha=1.25, dim=dim),
    "entmax_bisect_1.75": lambda x, dim: sparcon.entmax_bisect(x, alpha=1.75, dim=dim),
    "entmax_bisect_3": lambda x, dim: sparcon.entmax_bisect(x, alpha=3.0, dim=dim),
    "entmax_bisect_1": lambda x, dim: sparcon.entmax_bisect(x, alpha=1.0, dim=dim),
    "entmax_bisect_0.7": lambda x, dim: sparcon.entmax_bisect(x, alpha=0.7, dim=dim),
    "normmax_bisect_2": lambda x, dim: sparcon.normmax_bisect(x, alpha=2, dim=dim),
    "normmax_bisect_3": lambda x, dim: sparcon.normmax_bisect(x, alpha=3.0, dim=dim),
    "budget_bisect": lambda x, dim: sparcon.budget_bisect(x, budget=2, dim=dim),
}


@pytest.mark.parametrize("name", sorted(GRAD_MAPS))
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_gradcheck_x(name, dim):
    x = rand(3, 4, 6, seed=1).requires_grad_()
    assert gradcheck(lambda t: GRAD_MAPS[name](t, dim), (x,), eps=1e-6, atol=1e-7)


@pytest.mark.parametrize("dim", [0, -1])
def test_gradgradcheck_entmax_family(dim):
    # create_graph=True: the ops' backward is itself differentiable for the alpha-entmax maps.
    x = rand(3, 6, seed=21).requires_grad_()
    for f in (lambda x: ops.softmax(x, dim), lambda x: ops.sparsemax(x, dim), lambda x: ops.entmax15(x, dim),
              lambda x: ops.entmax(x, 1.3, dim), lambda x: ops.entmax(x, 2.5, dim),
              lambda x: ops.entmax(x, 0.7, dim), lambda x: sparcon.entmax_bisect(x, 1.6, dim)):
        assert torch.autograd.gradgradcheck(f, (x,))
    # A second derivative reaches x through a gradient penalty (entmax's own test of it).
    p = sparcon.entmax15(x, dim)
    g, = torch.autograd.grad((p * p).sum(), x, create_graph=True)
    assert g.requires_grad
    g.pow(2).sum().backward()
    assert x.grad.abs().sum() > 0


def test_double_backward_refused_where_not_implemented():
    x = rand(3, 6, seed=22).requires_grad_()
    for f in (lambda x: ops.normmax(x, 2.0, -1), lambda x: ops.budget(x, 2.0, -1),
              lambda x: ops.entmax_tensor_alpha(x, torch.full((3, 1), 1.5, dtype=x.dtype), -1)):
        out = f(x)
        with pytest.raises(ValueError, match="double backward"):
            torch.autograd.grad((out * out).sum(), x, create_graph=True)
        torch.autograd.grad((f(x) * f(x)).sum(), x)  # the first derivative alone is fine


@pytest.mark.parametrize("dim", [-1, 1])
def test_gradcheck_tensor_alpha(dim):
    x = rand(3, 4, 6, seed=2).requires_grad_()
    shape = [3, 4, 6]
    shape[dim] = 1
    g = torch.Generator().manual_seed(3)
    alpha = (1.2 + 1.3 * torch.rand(*shape, generator=g, dtype=torch.float64)).requires_grad_()
    assert gradcheck(lambda t, a: sparcon.entmax_bisect(t, alpha=a, dim=dim), (x, alpha), eps=1e-6, atol=1e-7)


def test_tensor_alpha_gradients_on_one_side():
    # Autograd asks for one gradient: a fixed alpha per row (dx alone) or a learned alpha on fixed
    # scores (dalpha alone); each against finite differences, the other side left without one.
    x = rand(3, 4, 6, seed=6)
    g = torch.Generator().manual_seed(7)
    alpha = 1.2 + 1.3 * torch.rand(3, 4, 1, generator=g, dtype=torch.float64)
    assert gradcheck(lambda t: sparcon.entmax_bisect(t, alpha=alpha), (x.clone().requires_grad_(),),
                     eps=1e-6, atol=1e-7)
    assert gradcheck(lambda a: sparcon.entmax_bisect(x, alpha=a), (alpha.clone().requires_grad_(),),
                     eps=1e-6, atol=1e-7)
    fixed, learned = x.clone().requires_grad_(), alpha.clone().requires_grad_()
    sparcon.entmax_bisect(fixed, alpha=alpha)[..., 0].sum().backward()
    sparcon.entmax_bisect(x, alpha=learned)[..., 0].sum().backward()
    assert fixed.grad is not None and learned.grad is not None and alpha.grad is None and x.grad is None


def test_gradcheck_scalar_tensor_alpha():
    x = rand(4, 5, seed=4).requires_grad_()
    alpha = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda t, a: sparcon.entmax_bisect(t, a), (x, alpha), eps=1e-6, atol=1e-7)


def test_module_alpha_parameter_learns():
    alpha = torch.nn.Parameter(torch.full((4, 1), 1.5, dtype=torch.float64))
    out = sparcon.EntmaxBisect(alpha=alpha)(rand(4, 6, seed=5))
    out[:, 0].sum().backward()
    assert alpha.grad is not None and alpha.grad.shape == (4, 1) and torch.isfinite(alpha.grad).all()


# ---- equality with the ops ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("dim", [-1, 0])
def test_equal_to_ops_bitwise(dtype, dim):
    x = rand(5, 7, dtype=dtype, seed=6)
    a = 1.2 + torch.rand(5, 1, dtype=dtype) if dim == -1 else 1.2 + torch.rand(1, 7, dtype=dtype)
    pairs = [
        (sparcon.sparsemax(x, dim), ops.sparsemax(x, dim)),
        (sparcon.Sparsemax(dim)(x), ops.sparsemax(x, dim)),
        (sparcon.sparsemax(x, dim, k=3), ops.sparsemax(x, dim)),
        (sparcon.entmax15(x, dim), ops.entmax15(x, dim)),
        (sparcon.Entmax15(dim)(x), ops.entmax15(x, dim)),
        (sparcon.entmax15(x, dim, k=2), ops.entmax15(x, dim)),
        (sparcon.sparsemax_bisect(x, dim), ops.sparsemax(x, dim)),
        (sparcon.SparsemaxBisect(dim)(x), ops.sparsemax(x, dim)),
        (sparcon.entmax_bisect(x, 1.7, dim), ops.entmax(x, 1.7, dim)),
        (sparcon.entmax_bisect(x, 1.7, dim, n_iter=3, ensure_sum_one=False), ops.entmax(x, 1.7, dim)),
        (sparcon.EntmaxBisect(1.7, dim)(x), ops.entmax(x, 1.7, dim)),
        (sparcon.entmax_bisect(x, a, dim), ops.entmax_tensor_alpha(x, a, dim)),
        (sparcon.normmax_bisect(x, 2.5, dim), ops.normmax(x, 2.5, dim)),
        (sparcon.NormmaxBisect(2.5, dim)(x), ops.normmax(x, 2.5, dim)),
        (sparcon.budget_bisect(x, 3, dim), ops.budget(x, 3.0, dim)),
        (sparcon.BudgetBisect(3, dim)(x), ops.budget(x, 3.0, dim)),
    ]
    for got, want in pairs:
        assert got.dtype == want.dtype and torch.equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_graph_free_path_equals_recorded_path(dtype, dim):
    # Without a graph to record (no input requires grad, or no_grad) the ops skip the autograd
    # Function; the values must not depend on it, for every map and layout.
    x = rand(3, 4, 6, dtype=dtype, seed=11)
    shape = [1 if d == (dim % 3) else x.shape[d] for d in range(3)]
    a = 1.2 + torch.rand(*shape, dtype=dtype)
    calls = [
        lambda x, a: ops.softmax(x, dim), lambda x, a: ops.sparsemax(x, dim), lambda x, a: ops.entmax15(x, dim),
        lambda x, a: ops.entmax(x, 1.3, dim), lambda x, a: ops.entmax(x, 0.7, dim),
        lambda x, a: ops.entmax_tensor_alpha(x, a, dim), lambda x, a: ops.normmax(x, 2.5, dim),
        lambda x, a: ops.budget(x, 2.0, dim),
    ]
    for call in calls:
        free = call(x, a)
        with torch.no_grad():
            free_no_grad = call(x.requires_grad_(), a)
        x.requires_grad_(False)
        recorded = call(x.clone().requires_grad_(), a)
        assert recorded.grad_fn is not None and free.grad_fn is None and free_no_grad.grad_fn is None
        assert free.dtype == dtype and free.shape == x.shape
        assert torch.equal(free, recorded.detach()) and torch.equal(free_no_grad, free)
    # A tensor alpha that requires grad records the graph too.
    out = ops.entmax_tensor_alpha(x, a.clone().requires_grad_(), dim)
    assert out.grad_fn is not None


# ---- independent references ---------------------------------------------------------------------

@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_sparsemax_entmax15_match_sort_references(dim):
    x = rand(6, 5, 9, seed=7)
    torch.testing.assert_close(sparcon.sparsemax(x, dim), sparsemax_ref(x, dim), rtol=0, atol=1e-12)
    torch.testing.assert_close(sparcon.entmax15(x, dim), entmax15_ref(x, dim), rtol=0, atol=1e-12)
    torch.testing.assert_close(sparcon.entmax_bisect(x, 2.0, dim), sparsemax_ref(x, dim), rtol=0, atol=1e-12)
    torch.testing.assert_close(sparcon.entmax_bisect(x, 1.5, dim), entmax15_ref(x, dim), rtol=0, atol=1e-12)


@pytest.mark.parametrize("alpha", [1.1, 1.25, 1.5, 1.75, 2.0])
def test_entmax_bisect_matches_bisection_reference(alpha):
    x = rand(8, 11, seed=8)
    torch.testing.assert_close(sparcon.entmax_bisect(x, alpha), entmax_bisect_ref(x, alpha), rtol=0, atol=1e-12)


@pytest.mark.parametrize("alpha", [1 + 1e-5, 1 + 1e-3, 1.05])
def test_entmax_bisect_near_one_to_the_last_digits(alpha):
    """Just above alpha = 1 (k = 1/(alpha-1) up to 1e5) the threshold's Newton steps must not
    cancel: p within 1e-15 of a bisection written in the log1p form, p_i = (1 + a (y_i - lam))^k
    = exp(k log1p(a (y_i - lam))), y = x - max x (1e-11 off when the core's step numerator was
    s - s^(1-1/k); the device-generic kernels were 4e-15 off). Runs on both backends."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(200, 7, generator=g, dtype=torch.float64)
    a, k = alpha - 1, 1 / (alpha - 1)
    y = x - x.max(-1, keepdim=True).values

    def p_of(lam):
        t = a * (y - lam)
        inside = t > -1
        return torch.where(inside, torch.exp(k * torch.log1p(torch.where(inside, t, 0.0))), 0.0)

    lo, hi = torch.zeros(200, 1, dtype=torch.float64), torch.full((200, 1), 50.0, dtype=torch.float64)
    for _ in range(200):
        mid = (lo + hi) / 2
        above = p_of(mid).sum(-1, keepdim=True) > 1
        lo, hi = torch.where(above, mid, lo), torch.where(above, hi, mid)
    torch.testing.assert_close(sparcon.entmax_bisect(x, alpha), p_of((lo + hi) / 2), rtol=0, atol=1e-15)


def test_entmax_bisect_large_alpha_reference():
    # For alpha > 2, p = u^(1/(alpha-1)) is steep at the support edge: the reference's own tau is
    # only good to ~1e-16, so compare to 1e-7.
    x = rand(8, 11, seed=9)
    torch.testing.assert_close(sparcon.entmax_bisect(x, 3.0), entmax_bisect_ref(x, 3.0), rtol=0, atol=1e-7)


def test_entmax_bisect_tensor_alpha_reference():
    x = rand(4, 6, 10, seed=10)
    alpha = 1.1 + 0.9 * torch.rand(4, 1, 10, dtype=torch.float64)
    torch.testing.assert_close(sparcon.entmax_bisect(x, alpha, dim=1), entmax_bisect_ref(x, alpha, dim=1),
                               rtol=0, atol=1e-12)


def test_entmax_bisect_alpha_one_is_softmax():
    x = rand(5, 8, seed=11)
    torch.testing.assert_close(sparcon.entmax_bisect(x, 1.0), torch.softmax(x, -1), rtol=0, atol=1e-14)


def test_entmax_bisect_shift_invariant_large_offsets():
    x = rand(4, 9, seed=12)
    torch.testing.assert_close(sparcon.entmax_bisect(x + 1e6, 1.3), entmax_bisect_ref(x, 1.3), rtol=0, atol=1e-9)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.0])
def test_normmax_reference(alpha):
    x = rand(7, 9, seed=13)
    torch.testing.assert_close(sparcon.normmax_bisect(x, alpha), normmax_ref(x, alpha), rtol=0, atol=1e-12)


@pytest.mark.parametrize("budget", [1, 2.5, 5])
def test_budget_reference(budget):
    x = rand(7, 9, seed=14, scale=0.7)
    p = sparcon.budget_bisect(x, budget)
    torch.testing.assert_close(p, budget_ref(x, budget), rtol=0, atol=1e-12)
    torch.testing.assert_close(p.sum(-1), torch.full((7,), float(budget), dtype=torch.float64))


def test_per_row_tensor_budget_and_normmax_alpha():
    x = rand(4, 8, seed=15, scale=0.7)
    b = torch.tensor([[1.0], [2.0], [2.0], [3.5]], dtype=torch.float64)
    p = sparcon.budget_bisect(x, b)
    for i in range(4):
        torch.testing.assert_close(p[i], budget_ref(x[i:i + 1], float(b[i]))[0], rtol=0, atol=1e-12)
    a = torch.tensor([[1.5], [2.0], [3.0], [1.5]], dtype=torch.float64)
    q = sparcon.normmax_bisect(x, a)
    for i in range(4):
        torch.testing.assert_close(q[i], normmax_ref(x[i:i + 1], float(a[i]))[0], rtol=0, atol=1e-12)
    # a one-element tensor is the same as the float
    assert torch.equal(sparcon.budget_bisect(x, torch.tensor(2.0)), sparcon.budget_bisect(x, 2.0))
    # A distinct value in every row, along dim 0, with a gradient to X (none to the parameter).
    y = rand(6, 30, seed=16, scale=0.7).requires_grad_()
    b = torch.linspace(1.1, 4.9, 30, dtype=torch.float64).reshape(1, 30).requires_grad_()
    a = torch.linspace(1.2, 3.8, 30, dtype=torch.float64).reshape(1, 30)
    pb, pa = sparcon.budget_bisect(y, b, dim=0), sparcon.normmax_bisect(y, a, dim=0)
    for j in range(30):
        torch.testing.assert_close(pb[:, j], budget_ref(y[:, j].detach()[None], float(b[0, j]))[0], rtol=0, atol=1e-12)
        torch.testing.assert_close(pa[:, j], normmax_ref(y[:, j].detach()[None], float(a[0, j]))[0], rtol=0, atol=1e-12)
    (pb.sum() + (pa * pa).sum()).backward()
    assert y.grad is not None and b.grad is None
    assert gradcheck(lambda y: sparcon.normmax_bisect(y, a, dim=0), (y.detach().clone().requires_grad_(),))
    with pytest.raises(ValueError, match="budget"):
        sparcon.budget_bisect(y, torch.ones(2, 3, dtype=torch.float64))


def test_return_support_size():
    x = rand(3, 4, 7, seed=16)
    for fn in (sparcon.sparsemax, sparcon.entmax15):
        for dim in (-1, 1):
            P, s = fn(x, dim=dim, return_support_size=True)
            assert torch.equal(P, fn(x, dim=dim))
            assert s.dtype == torch.int64
            expect_shape = list(x.shape)
            expect_shape[dim] = 1
            assert list(s.shape) == expect_shape
            assert torch.equal(s, (P > 0).sum(dim, keepdim=True))
    P, s = sparcon.Sparsemax(dim=0, return_support_size=True)(x)
    assert s.shape == (1, 4, 7)


# ---- dtypes -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda x: sparcon.sparsemax(x), lambda x: sparcon.entmax15(x), lambda x: sparcon.entmax_bisect(x, 1.3),
    lambda x: sparcon.entmax_bisect(x, torch.full((16, 1), 1.8)), lambda x: sparcon.normmax_bisect(x, 2.0),
    lambda x: sparcon.budget_bisect(x, 2), lambda x: sparcon.entmax_bisect(x, 1.0),
])
def test_bfloat16_close_to_float(fn):
    xb = rand(16, 33, seed=17).to(torch.bfloat16)
    out = fn(xb)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), fn(xb.float()), rtol=0, atol=1e-2)


def test_float32_close_to_double():
    x = rand(16, 33, seed=18)
    for fn in (sparcon.sparsemax, sparcon.entmax15, lambda t: sparcon.entmax_bisect(t, 1.3)):
        torch.testing.assert_close(fn(x.float()).double(), fn(x), rtol=0, atol=1e-6)


def test_no_in_place_and_noncontiguous():
    x = rand(6, 10, seed=19)
    xt = x.t()  # non-contiguous, normalise along dim 0 of the transpose
    before = x.clone()
    p = sparcon.entmax15(xt, dim=0)
    assert torch.equal(x, before)
    torch.testing.assert_close(p, entmax15_ref(x, -1).t(), rtol=0, atol=1e-12)


# ---- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, word", [
    (lambda x: sparcon.entmax_bisect(x, alpha=-1), "alpha"),
    (lambda x: sparcon.entmax_bisect(x, alpha=torch.tensor([[-1.0]] * 3)), "alpha"),
    (lambda x: sparcon.entmax_bisect(x, alpha=torch.ones(5, 1) * 1.5), "alpha"),
    (lambda x: sparcon.EntmaxBisect(alpha=0.0)(x), "alpha"),
    (lambda x: sparcon.sparsemax(x, dim=2), "dim"),
    (lambda x: sparcon.entmax15(x, dim=-3), "dim"),
    (lambda x: sparcon.entmax_bisect(x, 1.5, dim=5), "dim"),
    (lambda x: sparcon.normmax_bisect(x, alpha=1.0), "alpha"),
    (lambda x: sparcon.normmax_bisect(x, alpha=torch.tensor([[2.0], [0.5], [2.0]])), "alpha"),
    (lambda x: sparcon.budget_bisect(x, budget=-1), "budget"),
    (lambda x: sparcon.budget_bisect(x, budget=torch.tensor([[1.0], [-0.5], [2.0]])), "budget"),
    (lambda x: sparcon.budget_bisect(x, budget=torch.ones(4, 1)), "budget"),
])
def test_errors_name_the_argument(call, word):
    x = rand(3, 5, seed=20)
    with pytest.raises(ValueError, match=word):
        call(x)


@pytest.mark.parametrize("offset", [-0.1, -1e-6, 1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.249, 0.251, 0.5])
def test_alpha_gradient_near_one(offset):
    """d/dalpha <w, entmax_alpha(x)> against central differences of the forward (double), on
    both sides of the switch between the near-1 expansion and the direct form (|alpha-1| = 1/4),
    and float32 against double."""
    g = torch.Generator().manual_seed(21)
    x = torch.randn(3, 7, generator=g, dtype=torch.float64)
    w = torch.randn(3, 7, generator=g, dtype=torch.float64)
    alpha = torch.full((3, 1), 1 + offset, dtype=torch.float64, requires_grad=True)
    (got,) = torch.autograd.grad((sparcon.entmax_bisect(x, alpha) * w).sum(), alpha)
    h = 1e-5
    with torch.no_grad():
        up = (sparcon.entmax_bisect(x, alpha + h) * w).sum(-1, keepdim=True)
        down = (sparcon.entmax_bisect(x, alpha - h) * w).sum(-1, keepdim=True)
    torch.testing.assert_close(got, (up - down) / (2 * h), rtol=1e-6, atol=1e-8)
    alpha32 = alpha.detach().float().requires_grad_()
    (got32,) = torch.autograd.grad((sparcon.entmax_bisect(x.float(), alpha32) * w.float()).sum(), alpha32)
    torch.testing.assert_close(got32.double(), got, rtol=1e-4, atol=1e-5)


def test_minus_infinity_entries_are_masked():
    x = rand(3, 6, seed=22)
    keep = torch.tensor([True, False, True, True, False, True])
    xm = x.masked_fill(~keep, float("-inf")).requires_grad_()
    y = torch.tensor([0, 2, 5])
    for fn in (sparcon.sparsemax, sparcon.entmax15, lambda t: sparcon.entmax_bisect(t, 1.3),
               lambda t: sparcon.entmax_bisect(t, 1.0), lambda t: sparcon.normmax_bisect(t, 2.0)):
        p = fn(xm)
        assert torch.equal(p[:, ~keep], torch.zeros(3, 2, dtype=torch.float64))
        torch.testing.assert_close(p[:, keep], fn(x[:, keep]), rtol=0, atol=1e-14)
        (g,) = torch.autograd.grad((p * rand(3, 6, seed=23)).sum(), xm)
        assert torch.isfinite(g).all()
    for loss_fn in (sparcon.sparsemax_loss, sparcon.entmax15_loss, sparcon.entmax_bisect_loss,
                    sparcon.normmax_bisect_loss):
        loss = loss_fn(xm, y)
        torch.testing.assert_close(loss, loss_fn(x[:, keep], torch.tensor([0, 1, 3])), rtol=0, atol=1e-14)
        (g,) = torch.autograd.grad(loss.sum(), xm)
        assert torch.isfinite(g).all()
    # A row with no finite entry maps to zeros (documented).
    assert torch.equal(sparcon.sparsemax(torch.full((1, 4), float("-inf"))), torch.zeros(1, 4))
