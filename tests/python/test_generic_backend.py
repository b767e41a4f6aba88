"""The device-generic kernels (torch/src/generic/, written only with ATen operations): selected for
CPU tensors by SPARCON_BACKEND=generic (read at every call), for any tensor not on the CPU
(CUDA, meta). The whole suite runs a second time with SPARCON_BACKEND=generic in CI
(scripts/test.sh); the tests here select the backend themselves, so that they also run in the
core pass: adversarial rows against the independent references, agreement with the core,
gradients, and meta tensors (shapes and devices)."""
import decimal
import math

import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck

import sparcon
from references import (budget_ref, entmax15_ref, entmax_bisect_ref, normmax_fy_loss_ref, normmax_ref,
                        sparsemax_ref, tsallis_fy_loss_ref)

ops = torch.ops.sparcon
INF = math.inf


@pytest.fixture
def generic(monkeypatch):
    monkeypatch.setenv("SPARCON_BACKEND", "generic")


def adversarial_rows(n, dtype=torch.float64, seed=0):
    """Rows that stress a threshold solver: ties at the maximum, a constant row, one entry far
    above the rest, masked entries, large offsets, tiny gaps, a spread of scales."""
    g = torch.Generator().manual_seed(seed)
    rows = [torch.randn(n, generator=g) * s for s in (0.01, 0.5, 2.0, 30.0)]
    rows.append(torch.zeros(n))                                   # constant: every entry in the support
    tie = torch.randn(n, generator=g)
    tie[: max(1, n // 3)] = tie.max() + 1
    rows.append(tie)                                              # ties at the maximum
    spike = torch.randn(n, generator=g) * 0.1
    spike[n // 2] = 50.0
    rows.append(spike)                                            # one entry alone
    rows.append(torch.randn(n, generator=g) + 1e6)                # far from 0
    near = torch.linspace(0, 1e-9, n)
    rows.append(near)                                             # entries within rounding of each other
    masked = torch.randn(n, generator=g)
    masked[::2] = -INF
    masked[0] = 0.0
    rows.append(masked)                                           # -inf masking
    return torch.stack(rows).to(dtype)


MAPS = [
    ("sparsemax", lambda x: ops.sparsemax(x, -1), sparsemax_ref),
    ("entmax15", lambda x: ops.entmax15(x, -1), entmax15_ref),
    ("softmax", lambda x: ops.softmax(x, -1), lambda x: torch.softmax(x, -1)),
    ("entmax1.25", lambda x: ops.entmax(x, 1.25, -1), lambda x: entmax_bisect_ref(x, 1.25)),
    ("entmax1.75", lambda x: ops.entmax(x, 1.75, -1), lambda x: entmax_bisect_ref(x, 1.75)),
    ("entmax3", lambda x: ops.entmax(x, 3.0, -1), lambda x: entmax_bisect_ref(x, 3.0)),
    ("normmax2", lambda x: ops.normmax(x, 2.0, -1), lambda x: normmax_ref(x, 2.0)),
    ("normmax3", lambda x: ops.normmax(x, 3.0, -1), lambda x: normmax_ref(x, 3.0)),
    ("budget2", lambda x: ops.budget(x, 2.0, -1), lambda x: budget_ref(x, 2.0)),
]


def _reference_on_rows(ref, x):
    """The reference row by row, masked entries dropped (the references know no -inf), each row
    shifted by its maximum first (exact in double; the sort and bisection references lose the
    digits of rows far from 0, the maps are shift-invariant)."""
    out = torch.zeros_like(x)
    for r in range(x.shape[0]):
        keep = x[r] > -INF
        z = x[r, keep][None]
        out[r, keep] = ref(z - z.max())[0].to(x.dtype)
    return out


@pytest.mark.parametrize("name,op,ref", MAPS, ids=[m[0] for m in MAPS])
@pytest.mark.parametrize("n", [1, 7, 300, 5000])
def test_adversarial_rows_match_references(generic, name, op, ref, n):
    if name == "budget2" and n < 2:
        pytest.skip("a budget of 2 needs rows of 2 entries or more")
    x = adversarial_rows(n)
    p = op(x)
    expected = _reference_on_rows(ref, x)
    # The rows far from 0 (1e6) carry the rounding of their entries (1e6 * eps = 1e-10).
    assert torch.allclose(p, expected, atol=1e-9, rtol=0), (p - expected).abs().max()
    total = 2.0 if name == "budget2" else 1.0
    assert torch.allclose(p.sum(-1), torch.full((x.shape[0],), total, dtype=x.dtype), atol=1e-9)


@pytest.mark.parametrize("name,op,ref", MAPS, ids=[m[0] for m in MAPS])
def test_generic_agrees_with_the_core(monkeypatch, name, op, ref):
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 2e-6)):
        x = adversarial_rows(257, dtype, seed=3)
        monkeypatch.setenv("SPARCON_BACKEND", "core")
        core = op(x)
        monkeypatch.setenv("SPARCON_BACKEND", "generic")
        gen = op(x)
        assert torch.allclose(gen, core, atol=tol, rtol=0), (name, dtype, (gen - core).abs().max())


@pytest.mark.parametrize("name,op,ref", MAPS, ids=[m[0] for m in MAPS])
def test_degenerate_rows(generic, name, op, ref):
    x = torch.randn(4, 6, dtype=torch.float64)
    x[0] = -INF                     # no distribution: p = 0
    x[1, 2] = math.nan              # NaN row: p = NaN
    x[2, 0] = INF                   # +inf: NaN too
    p = op(x)
    assert torch.equal(p[0], torch.zeros(6, dtype=x.dtype))
    assert torch.isnan(p[1]).all() and torch.isnan(p[2]).all()
    assert torch.isfinite(p[3]).all()


def test_tensor_alpha_every_regime(generic):
    """One alpha per row across the regimes the kernel solves apart (alpha < 1, = 1, in (1, 2],
    > 2), with the exact paths at 1.5 and 2, against the references."""
    x = adversarial_rows(40, seed=5)
    alphas = torch.tensor([0.5, 1.0, 1.5, 2.0, 1.2, 2.5, 4.0, 0.8, 1.9, 1.01, 3.0], dtype=x.dtype)[: x.shape[0], None]
    p = ops.entmax_tensor_alpha(x, alphas, -1)
    for r in range(x.shape[0]):
        a = float(alphas[r])
        keep = x[r] > -INF
        z = x[r, keep][None]
        if a < 1:
            continue  # the references cover alpha >= 1; alpha < 1 is checked against the core below
        expected = torch.softmax(z, -1) if a == 1 else entmax_bisect_ref(z, a)
        assert torch.allclose(p[r, keep][None], expected, atol=1e-9), (a, (p[r, keep] - expected).abs().max())


def test_alpha_below_one_agrees_with_the_core(monkeypatch):
    x = adversarial_rows(64, seed=7)
    for a in (0.3, 0.75, 0.99):
        monkeypatch.setenv("SPARCON_BACKEND", "core")
        core = ops.entmax(x, a, -1)
        monkeypatch.setenv("SPARCON_BACKEND", "generic")
        gen = ops.entmax(x, a, -1)
        assert torch.allclose(gen, core, atol=1e-12), (a, (gen - core).abs().max())


def test_gradients(generic):
    x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    for f in (lambda x: ops.sparsemax(x, -1), lambda x: ops.entmax15(x, -1), lambda x: ops.entmax(x, 1.3, -1),
              lambda x: ops.entmax(x, 2.7, -1), lambda x: ops.normmax(x, 2.5, -1), lambda x: ops.softmax(x, -1)):
        assert gradcheck(f, (x,))
    for f in (lambda x: ops.sparsemax(x, -1), lambda x: ops.entmax15(x, -1), lambda x: ops.entmax(x, 1.3, -1)):
        assert gradgradcheck(f, (x,))
    alpha = torch.tensor([[1.2], [1.0], [1.9]], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda x, a: ops.entmax_tensor_alpha(x, a, -1), (x, alpha))
    assert gradcheck(lambda a: ops.entmax_tensor_alpha(x.detach(), 1 + 0.01 * (a - 1), -1), (alpha,))


def test_losses_match_references(generic):
    torch.manual_seed(2)
    x = torch.randn(6, 9, dtype=torch.float64) * 2
    y = torch.randint(0, 9, (6,))
    for name, alpha in (("softmax", 1.0), ("sparsemax", 2.0), ("entmax15", 1.5), ("entmax", 1.3)):
        loss = ops.fenchel_young_loss(x, y, name, alpha, -100)
        assert torch.allclose(loss, tsallis_fy_loss_ref(x, y, alpha), atol=1e-10), name
    assert torch.allclose(ops.fenchel_young_loss(x, y, "normmax", 2.0, -100), normmax_fy_loss_ref(x, y, 2.0),
                          atol=1e-10)
    y_ignored = y.clone()
    y_ignored[1] = -100
    xg = x.clone().requires_grad_()
    loss = ops.fenchel_young_loss(xg, y_ignored, "sparsemax", 0.0, -100)
    assert loss[1] == 0
    (grad,) = torch.autograd.grad(loss.sum(), xg)
    expected = sparsemax_ref(x) - torch.nn.functional.one_hot(y, 9).to(x.dtype)
    expected[1] = 0
    assert torch.allclose(grad, expected, atol=1e-12)
    with pytest.raises(ValueError, match=r"target\[2\] = 9 is outside \[0, rows.length = 9\)"):
        ops.fenchel_young_loss(x, torch.tensor([0, 1, 9, 0, 0, 0]), "sparsemax", 0.0, -100)


def test_errors_are_the_cores(monkeypatch):
    x = torch.randn(2, 3)
    messages = {}
    for backend in ("core", "generic"):
        monkeypatch.setenv("SPARCON_BACKEND", backend)
        got = []
        for call in (lambda: ops.entmax(x, -1.0, -1), lambda: ops.normmax(x, 1.0, -1), lambda: ops.budget(x, 4.0, -1),
                     lambda: ops.entmax_tensor_alpha(x, torch.tensor([[1.5], [0.0]]), -1),
                     lambda: ops.fenchel_young_loss(x, torch.tensor([0, 1]), "entmax", -2.0, -100)):
            with pytest.raises(ValueError) as e:
                call()
            got.append(str(e.value).splitlines()[0])
        messages[backend] = got
    assert messages["core"] == messages["generic"]
    assert "alpha = 0 (row 1)" in messages["generic"][3]


def test_backend_is_read_at_every_call(monkeypatch):
    x = torch.randn(2, 5)
    monkeypatch.setenv("SPARCON_BACKEND", "no-such-backend")
    with pytest.raises(ValueError, match="SPARCON_BACKEND = 'no-such-backend' must be 'core', 'generic' or unset"):
        ops.sparsemax(x, -1)
    monkeypatch.setenv("SPARCON_BACKEND", "generic")
    assert torch.allclose(ops.sparsemax(x, -1), sparsemax_ref(x), atol=1e-6)
    monkeypatch.delenv("SPARCON_BACKEND")
    assert torch.allclose(ops.sparsemax(x, -1), sparsemax_ref(x), atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_computed_in_float(generic, dtype):
    x = torch.randn(4, 33)
    p = ops.entmax15(x.to(dtype), -1)
    assert p.dtype == dtype
    assert torch.allclose(p.float(), entmax15_ref(x.double()).float(), atol=1e-2)


# ---- meta tensors: shapes and devices, no data ------------------------------------------------

META_MAPS = [
    lambda x: ops.softmax(x, 1), lambda x: ops.sparsemax(x, 1), lambda x: ops.entmax15(x, 1),
    lambda x: ops.entmax(x, 1.3, 1), lambda x: ops.normmax(x, 2.0, 1), lambda x: ops.budget(x, 2.0, 1),
    lambda x: ops.entmax_tensor_alpha(x, torch.full((3, 1, 4), 1.5, device="meta"), 1),
    lambda x: sparcon.entmax15(x, dim=1), lambda x: sparcon.entmax_bisect(x, 1.7, dim=1),
]


@pytest.mark.parametrize("i", range(len(META_MAPS)))
def test_meta_tensors_give_shapes_and_devices(i):
    x = torch.empty(3, 5, 4, device="meta", requires_grad=True)
    p = META_MAPS[i](x)
    assert p.shape == (3, 5, 4) and p.device.type == "meta"
    (g,) = torch.autograd.grad(p.sum(), x)
    assert g.shape == (3, 5, 4) and g.device.type == "meta"


def test_meta_alpha_gradient_and_loss():
    x = torch.empty(3, 5, device="meta", requires_grad=True)
    alpha = torch.empty(3, 1, device="meta", requires_grad=True)
    p = ops.entmax_tensor_alpha(x, alpha, -1)
    gx, ga = torch.autograd.grad(p.sum(), (x, alpha))
    assert gx.shape == (3, 5) and ga.shape == (3, 1) and ga.device.type == "meta"
    loss = ops.fenchel_young_loss(x, torch.zeros(3, dtype=torch.long, device="meta"), "entmax15", 0.0, -100)
    assert loss.shape == (3,) and loss.device.type == "meta"
    (g,) = torch.autograd.grad(loss.sum(), x)
    assert g.shape == (3, 5) and g.device.type == "meta"


# ---- continuous ---------------------------------------------------------------------------------

def _both(monkeypatch, f):
    monkeypatch.setenv("SPARCON_BACKEND", "core")
    core = f()
    monkeypatch.setenv("SPARCON_BACKEND", "generic")
    return core, f()


@pytest.mark.parametrize("alpha,bound", [(1.0, 1e-14), (2.0, 1e-13), (1.5, 1e-11), (1.25, 1e-11), (1.75, 1e-11),
                                         (3.0, 1e-11), (1.05, 1e-11), (1.01, 1e-9), (5.0, 1e-7)])
def test_expectation_1d_error_of_the_fixed_rule(monkeypatch, alpha, bound):
    """The stated error of the 1D expectation (generic/expectation_generic.h): the closed forms at
    alpha = 1, 2 and the fixed 24 x 8-point rule otherwise, relative to max_j r_bj, against the
    core (whose rules the core's tests hold to 1e-10 against adaptive quadrature) over scales from
    1e-4 to 0.3, locations inside and outside [0, 1], the paper's basis (widths 0.01 and 0.25)."""
    g = torch.Generator().manual_seed(11)
    c, w = sparcon.continuous.default_basis_1d(64, dtype=torch.float64)
    mu = torch.rand(300, generator=g, dtype=torch.float64) * 1.6 - 0.3
    sigma = torch.exp(torch.rand(300, generator=g, dtype=torch.float64) * 8 - 9)
    core, gen = _both(monkeypatch, lambda: ops.continuous_expectation(mu, sigma, c, w, alpha))
    error = ((gen - core).abs().max(1).values / core.abs().max(1).values).max().item()
    assert error < bound, error


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
def test_expectation_1d_matches_reference(generic, alpha):
    from references import expectation_ref
    mu = torch.tensor([0.3, 0.5, -0.1, 1.2], dtype=torch.float64)
    sigma = torch.tensor([0.02, 0.1, 0.3, 0.005], dtype=torch.float64)
    c, w = sparcon.continuous.default_basis_1d(16, dtype=torch.float64)
    r = ops.continuous_expectation(mu, sigma, c, w, alpha)
    ref = expectation_ref(mu, sigma, c, w, alpha)
    assert torch.allclose(r, ref, atol=1e-10 * ref.abs().max().item(), rtol=0)


def test_expectation_2d_gaussian_matches_reference_and_gradcheck(generic):
    from references import expectation_ref
    c, w = sparcon.continuous.default_basis_2d(4, dtype=torch.float64)
    mu = torch.tensor([[0.3, 0.6], [0.5, 0.1]], dtype=torch.float64, requires_grad=True)
    sigma = torch.tensor([[[0.05, 0.01], [0.01, 0.02]], [[0.1, -0.03], [-0.03, 0.2]]], dtype=torch.float64,
                         requires_grad=True)
    r = ops.continuous_expectation(mu, sigma, c, w, 1.0)
    assert torch.allclose(r, expectation_ref(mu.detach(), sigma.detach(), c, w, 1.0), atol=1e-12)
    assert gradcheck(lambda m, s: ops.continuous_expectation(m, s, c, w, 1.0), (mu, sigma))


def _random_densities_2d(batch, seed):
    """Locations inside and outside [0, 1]^2, covariances with eigenvalues from about 1e-5 to 0.08
    (supports from far narrower than the paper's basis functions to a fifth of the square)."""
    g = torch.Generator().manual_seed(seed)
    mu = torch.rand(batch, 2, generator=g, dtype=torch.float64) * 1.4 - 0.2
    L = torch.randn(batch, 2, 2, generator=g, dtype=torch.float64) * 0.1
    floor = torch.exp(torch.rand(batch, generator=g, dtype=torch.float64) * 6 - 11)
    return mu, L @ L.transpose(1, 2) + floor[:, None, None] * torch.eye(2, dtype=torch.float64)


@pytest.mark.parametrize("alpha,bound,far_bound", [(2.0, 1e-13, 1e-13), (1.5, 2e-12, 2e-12), (3.0, 2e-12, 2e-12),
                                                   (1.25, 2e-12, 2e-12), (2.5, 1e-9, 1e-7), (5.0, 1e-7, 3e-6)])
def test_expectation_2d_error_of_the_fixed_rule(monkeypatch, alpha, bound, far_bound):
    """The stated error of the 2D expectation with alpha > 1 (generic/expectation_generic.h): the
    angular rule with the batch's largest per-pair number of rays, the radial closed form at
    alpha = 2 and the fixed 16 x 8-point rule otherwise, relative to max_j r_bj, against the core
    (whose rules the core's tests hold to 1e-10 against adaptive quadrature), the paper's 10 x 10
    basis (variance 0.001). Measured here: 7e-15 (alpha = 2), 3e-14 (1.5), 2e-13 (3), 9e-14 (1.25),
    2e-10 (2.5), 3e-8 (5: the profile cos^1.5 is not smooth at the edge); float inputs 3e-7. And a
    density far from every basis function (r ~ 1e-61 at alpha = 2: the rule's window follows the
    support's nearest edge, not the Gaussian's centre): 8e-15 (2), 7e-15 (1.5), 1e-14 (3), 2e-15
    (1.25), but 2e-8 (2.5) and 8e-7 (5), where the edge it integrates is where the profile is not
    smooth."""
    c, w = sparcon.continuous.default_basis_2d(10, dtype=torch.float64)
    mu, sigma = _random_densities_2d(4, seed=12)
    mu = torch.cat([mu, torch.tensor([[1.5, -0.5]], dtype=torch.float64)])
    sigma = torch.cat([sigma, 0.001 * torch.eye(2, dtype=torch.float64)[None]])
    core, gen = _both(monkeypatch, lambda: ops.continuous_expectation(mu, sigma, c, w, alpha))
    scale = core.abs().max(1).values
    error = (gen - core).abs().max(1).values / scale
    assert error[:4].max().item() < bound, error
    assert error[4].item() < far_bound, error
    # float inputs (the far density's r underflows float: left out)
    single = ops.continuous_expectation(mu[:4].float(), sigma[:4].float(), c.float(), w.float(), alpha)
    assert single.dtype == torch.float32
    assert ((single.double() - core[:4]).abs().max(1).values / scale[:4]).max().item() < max(2e-6, bound)


# Inside the square, anisotropic, partly outside, and far smaller than the basis functions (where
# the radial closed form of alpha = 2 cancels and the rule takes over).
MU_2D = torch.tensor([[0.3, 0.6], [0.5, 0.45], [0.95, -0.05], [0.4, 0.7]], dtype=torch.float64)
SIGMA_2D = torch.tensor([[[0.02, 0.005], [0.005, 0.01]], [[0.05, -0.03], [-0.03, 0.03]],
                         [[0.01, 0.0], [0.0, 0.004]], [[1e-6, 0.0], [0.0, 2e-6]]], dtype=torch.float64)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.0])
def test_expectation_2d_matches_reference(generic, alpha):
    """Against the independent quadrature of references.py (24 x 16 Gauss-Legendre points in the
    radius, 256 angles), accurate for basis functions of variance 0.01; per density, relative to its
    largest r."""
    from references import expectation_ref
    c, w = sparcon.continuous.default_basis_2d(3, 0.01, dtype=torch.float64)
    r = ops.continuous_expectation(MU_2D, SIGMA_2D, c, w, alpha)
    ref = expectation_ref(MU_2D, SIGMA_2D, c, w, alpha)
    error = ((r - ref).abs().max(1).values / ref.abs().max(1).values).max().item()
    assert error < 1e-11, error


@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.0])
def test_expectation_2d_gradcheck(generic, alpha):
    c, w = sparcon.continuous.default_basis_2d(3, 0.01, dtype=torch.float64)
    mu = MU_2D[:3].clone().requires_grad_()
    sigma = SIGMA_2D[:3].clone().requires_grad_()
    assert gradcheck(lambda m, s: ops.continuous_expectation(m, s, c, w, alpha), (mu, sigma))


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_attention_value_model_moments_agree_with_the_core(monkeypatch, alpha):
    g = torch.Generator().manual_seed(4)
    c, w = sparcon.continuous.default_basis_1d(16, dtype=torch.float64)
    values = torch.randn(3, 9, 5, generator=g, dtype=torch.float64)
    lengths = torch.tensor([9, 4, 1])
    mu = torch.tensor([0.2, 0.7, 0.5], dtype=torch.float64)
    sigma = torch.tensor([0.05, 0.01, 0.2], dtype=torch.float64)
    p = torch.softmax(torch.randn(3, 9, generator=g, dtype=torch.float64), -1)
    for f in (lambda: ops.continuous_attention(values, mu, sigma, c, w, 0.1, alpha, lengths),
              lambda: ops.value_model(values, c, w, 0.1, lengths),
              lambda: torch.stack(ops.density_from_moments(p, alpha, 0.01, lengths))):
        core, gen = _both(monkeypatch, f)
        assert torch.allclose(gen, core, atol=1e-11, rtol=1e-11), (gen - core).abs().max()
    # 2D: attention, value model and moments.
    c2, w2 = sparcon.continuous.default_basis_2d(4, dtype=torch.float64)
    images = torch.randn(2, 3, 4, 5, generator=g, dtype=torch.float64)
    mu2 = torch.tensor([[0.3, 0.6], [0.5, 0.1]], dtype=torch.float64)
    sigma2 = torch.tensor([[[0.05, 0.01], [0.01, 0.02]], [[0.1, -0.03], [-0.03, 0.2]]], dtype=torch.float64)
    p2 = torch.softmax(torch.randn(2, 12, generator=g, dtype=torch.float64), -1).view(2, 3, 4)
    for f in (lambda: ops.continuous_attention(images, mu2, sigma2, c2, w2, 0.1, alpha, None),
              lambda: ops.value_model(images, c2, w2, 0.1, None),
              lambda: torch.cat([t.flatten() for t in ops.density_from_moments(p2, alpha, 0.01, None)])):
        core, gen = _both(monkeypatch, f)
        assert torch.allclose(gen, core, atol=1e-11, rtol=1e-11), (gen - core).abs().max()


def test_continuous_errors_are_the_cores(monkeypatch):
    c, w = sparcon.continuous.default_basis_1d(16)
    calls = (lambda: ops.continuous_expectation(torch.tensor([0.5, 0.2]), torch.tensor([0.1, -1.0]), c, w, 1.5),
             lambda: ops.continuous_expectation(torch.tensor([0.5]), torch.tensor([0.1]), c, w, 0.5),
             lambda: ops.continuous_attention(torch.randn(2, 5, 3), torch.tensor([0.5, 0.2]), torch.tensor([0.1, 0.1]),
                                              c, w, 0.1, 1.5, torch.tensor([5, 6])),
             lambda: ops.value_model(torch.randn(2, 5, 3), c, w, -1.0, None),
             lambda: ops.density_from_moments(torch.eye(4)[:2], 1.5, 0.0, None))
    messages = {}
    for backend in ("core", "generic"):
        monkeypatch.setenv("SPARCON_BACKEND", backend)
        messages[backend] = []
        for call in calls:
            with pytest.raises(ValueError) as e:
                call()
            messages[backend].append(str(e.value).splitlines()[0])
    assert messages["core"] == messages["generic"]


def test_meta_continuous_shapes():
    c, w = (t.to("meta") for t in sparcon.continuous.default_basis_1d(16))
    mu = torch.empty(3, device="meta", requires_grad=True)
    sigma = torch.empty(3, device="meta", requires_grad=True)
    r = ops.continuous_expectation(mu, sigma, c, w, 1.5)
    assert r.shape == (3, 16) and r.device.type == "meta"
    dmu, dsigma = torch.autograd.grad(r.sum(), (mu, sigma))
    assert dmu.shape == (3,) and dsigma.device.type == "meta"
    values = torch.empty(3, 7, 4, device="meta")
    assert ops.value_model(values, c, w, 0.1, None).shape == (3, 16, 4)
    context = ops.continuous_attention(values, mu, sigma, c, w, 0.1, 2.0, None)
    assert context.shape == (3, 4) and context.device.type == "meta"
    m, s = ops.density_from_moments(torch.empty(3, 7, device="meta"), 1.5, 0.01, None)
    assert m.shape == (3,) and s.shape == (3,) and s.device.type == "meta"
    c2, w2 = (t.to("meta") for t in sparcon.continuous.default_basis_2d(4))
    for alpha in (1.0, 1.5, 2.0, 3.0):
        mu2 = torch.empty(3, 2, device="meta", requires_grad=True)
        sigma2 = torch.empty(3, 2, 2, device="meta", requires_grad=True)
        r2 = ops.continuous_expectation(mu2, sigma2, c2, w2, alpha)
        assert r2.shape == (3, 16) and r2.device.type == "meta"
        dmu2, dsigma2 = torch.autograd.grad(r2.sum(), (mu2, sigma2))
        assert dmu2.shape == (3, 2) and dsigma2.shape == (3, 2, 2) and dsigma2.device.type == "meta"
        context2 = ops.continuous_attention(torch.empty(3, 4, 5, 6, device="meta"), mu2, sigma2, c2, w2, 0.1, alpha,
                                            None)
        assert context2.shape == (3, 6) and context2.device.type == "meta"


def _entmax_in_decimal(x, alpha, digits=60):
    """alpha-entmax of one row (floats, -inf for masked entries) in `digits`-digit decimal
    arithmetic: p_i = [a (x_i - max) + c]_+^(1/a), a = alpha - 1, with c by bisection on [0, 1]
    (sum p is at most 1 at c = 0 and at least 1 at c = 1) to 2^-200. Every a (x_i - max) is
    exact, so an entry on the edge of the support gets its p from the exact offset, not from a
    rounded one. Returns (p as floats, c)."""
    with decimal.localcontext() as context:
        context.prec = digits
        a = decimal.Decimal(alpha) - 1
        k = 1 / a
        top = max(decimal.Decimal(v) for v in x if v != -INF)
        d = [a * (decimal.Decimal(v) - top) for v in x if v != -INF]

        def power(u):
            return u ** k if u > 0 else decimal.Decimal(0)

        lo, hi = decimal.Decimal(0), decimal.Decimal(1)
        for _ in range(200):
            mid = (lo + hi) / 2
            if sum(power(e + mid) for e in d if e > -1) > 1:
                hi = mid
            else:
                lo = mid
        c = (lo + hi) / 2
        return [float(power(a * (decimal.Decimal(v) - top) + c)) if v != -INF else 0.0 for v in x], c


def _rows_on_the_support_edge(alpha, dtype, rows=8, n=12, seed=40):
    """Rows of N(0, 1) scores (some offset by 1000, some with masked entries) whose first entry is
    put on the edge of the support of the others, x_0 = max - c/a rounded to the dtype, in even
    rows, and one value up from there (just inside, p_0 about (eps c)^(1/a)) in odd ones."""
    g = torch.Generator().manual_seed(seed)
    out = torch.randn(rows, n, generator=g, dtype=torch.float64)
    out[2::4] += 1000.0
    out[3::4, 1::3] = -INF
    out = out.to(dtype)
    for r in range(rows):
        others = [float(v) for v in out[r, 1:]]
        _, c = _entmax_in_decimal(others, alpha)
        edge = decimal.Decimal(max(others)) - c / (decimal.Decimal(alpha) - 1)
        out[r, 0] = float(edge)
        if r % 2:
            out[r, 0] = torch.nextafter(out[r, 0], torch.tensor(INF, dtype=dtype))
    return out


@pytest.mark.parametrize("backend", ["core", "generic"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("alpha", [2.5, 3.0, 4.0, 5.0])
def test_entmax_on_the_edge_of_the_support(monkeypatch, backend, dtype, alpha):
    """Entmax with alpha > 2 on rows with an entry on the edge of the support or one value inside
    it, where p = u^(1/(alpha - 1)) turns a rounding of the offset (eps c) into p of (eps c)^k
    (1e-4 for alpha = 5 in double before the device-generic kernels solved such rows again
    around that entry), against a 60-digit decimal reference: within 8 eps absolute, alpha as a
    number and one per row."""
    if backend == "generic":
        monkeypatch.setenv("SPARCON_BACKEND", "generic")
    x = _rows_on_the_support_edge(alpha, dtype)
    want = torch.tensor([_entmax_in_decimal([float(v) for v in row], alpha)[0] for row in x], dtype=torch.float64)
    eps = torch.finfo(dtype).eps
    per_row = torch.full((x.shape[0], 1), alpha, dtype=dtype)
    for p in (ops.entmax(x, alpha, -1), ops.entmax_tensor_alpha(x, per_row, -1)):
        error = (p.double() - want).abs()
        assert bool((error <= 8 * eps).all()), f"worst {float(error.max()):.3g} at row {int(error.amax(-1).argmax())}"


def _pairwise_backward(p, g, alpha):
    """dx_i = s_i sum_j s_j (g_i - g_j) / sum s, s = p^(2 - alpha) on the support, each row's terms
    summed exactly (math.fsum): no cancellation that a weight much larger than the others could
    amplify. Returns dx and the size of the terms, sum_j |s_i s_j (g_i - g_j)| / sum s, plus
    s_i max|g| (sum s - s_m) / sum s (the rounding of the usual form where no weight dominates)."""
    want, size = torch.zeros_like(p, dtype=torch.float64), torch.zeros_like(p, dtype=torch.float64)
    for r in range(p.shape[0]):
        support = [i for i in range(p.shape[1]) if p[r, i] > 0]
        s = {i: float(p[r, i]) ** (2 - alpha) for i in support}
        total, largest = math.fsum(s.values()), max(s.values())
        g_size = max(abs(float(g[r, i])) for i in support)
        for i in support:
            terms = [s[i] * s[j] * (float(g[r, i]) - float(g[r, j])) / total for j in support]
            want[r, i] = math.fsum(terms)
            size[r, i] = math.fsum(abs(t) for t in terms) + s[i] * g_size * (total - largest) / total
    return want, size


@pytest.mark.parametrize("backend", ["core", "generic"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("alpha", [2.5, 3.0, 4.0, 5.0])
def test_backward_where_one_weight_dominates(monkeypatch, backend, dtype, alpha):
    """Entmax with alpha > 2 on rows with an entry just inside the edge of the support (scores
    built from p_m = 1e-3, 1e-5, 1e-7 and 2 to 10 larger entries, -inf elsewhere): its weight
    p^(2 - alpha) dwarfs the others', and dx_m = s_m (g_m - q) is s_m times a small difference.
    The gradient, core and device-generic kernels, against the pairwise form within 16 eps of the
    size of its terms (the usual form s (g - sum s g / sum s) is off by eps |g| s_m there)."""
    if backend == "generic":
        monkeypatch.setenv("SPARCON_BACKEND", "generic")
    gen = torch.Generator().manual_seed(38)
    rows, n = 12, 40
    p = torch.zeros(rows, n, dtype=torch.float64)
    for r in range(rows):
        at = torch.randperm(n, generator=gen)[: 3 + r % 9]
        p[r, at] = 0.05 + torch.rand(len(at), generator=gen, dtype=torch.float64)
        p[r, at[0]] = (1e-3, 1e-5, 1e-7)[r % 3]
    p = p / p.sum(-1, keepdim=True)
    # On the support p^(alpha - 1) = (alpha - 1) x - tau: scores whose entmax is p (tau = 0).
    x = torch.where(p > 0, p ** (alpha - 1) / (alpha - 1), torch.full_like(p, -INF)).to(dtype).requires_grad_()
    g = torch.randn(rows, n, generator=gen, dtype=torch.float64).to(dtype)
    out = ops.entmax(x, alpha, -1)
    (dx,) = torch.autograd.grad(out, x, g)
    want, size = _pairwise_backward(out.detach().double(), g.double(), alpha)
    eps = torch.finfo(dtype).eps
    assert bool(((dx.double() - want).abs() <= 16 * eps * size).all()), \
        f"worst {float(((dx.double() - want).abs() / size.clamp_min(1e-300)).max() / eps):.3g} eps of the terms"
