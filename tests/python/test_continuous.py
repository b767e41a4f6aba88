"""Continuous operations: gradients (1D, 2D; alpha 1, 1.5, 2), independent references, errors."""
import pytest
import torch
from torch.autograd import gradcheck

import sparcon
from references import (
    covariance_of_density,
    expectation_ref,
    positions_1d,
    positions_2d,
    ridge_ref,
)

ops = torch.ops.sparcon
D64 = torch.float64
ALPHAS = [1.0, 1.5, 2.0]


def basis(dims, n=8):
    if dims == 1:
        return sparcon.default_basis_1d(n, dtype=D64)
    return sparcon.default_basis_2d(3, 0.01, dtype=D64)


def density(dims):
    if dims == 1:
        return torch.tensor([0.3, 0.55, 0.8], dtype=D64), torch.tensor([0.02, 0.1, 0.005], dtype=D64)
    mu = torch.tensor([[0.3, 0.6], [0.5, 0.45]], dtype=D64)
    S = torch.tensor([[[0.02, 0.005], [0.005, 0.01]], [[0.05, -0.01], [-0.01, 0.03]]], dtype=D64)
    return mu, S


def sym(S):
    # gradcheck perturbs one entry at a time; keep Sigma symmetric.
    return S if S.dim() == 1 else (S + S.transpose(-1, -2)) / 2


# ---- gradients ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("alpha", ALPHAS + [1.25, 3.0])
def test_gradcheck_continuous_expectation(dims, alpha):
    c, w = basis(dims)
    mu, S = density(dims)
    mu.requires_grad_()
    S.requires_grad_()
    assert gradcheck(lambda m, s: sparcon.continuous_expectation(m, sym(s), c, w, alpha), (mu, S),
                     eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_gradcheck_continuous_attention(dims, alpha):
    c, w = basis(dims)
    mu, S = density(dims)
    g = torch.Generator().manual_seed(dims)
    if dims == 1:
        values = torch.randn(3, 7, 2, generator=g, dtype=D64)
        lengths = torch.tensor([7, 5, 3])
    else:
        values = torch.randn(2, 3, 4, 2, generator=g, dtype=D64)
        lengths = None
    inputs = tuple(t.clone().requires_grad_() for t in (values, mu, S))
    assert gradcheck(lambda v, m, s: sparcon.continuous_attention(v, m, sym(s), c, w, 0.01, alpha, lengths),
                     inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_gradcheck_density_from_moments(dims, alpha):
    g = torch.Generator().manual_seed(10 + dims)
    if dims == 1:
        logits = torch.randn(3, 6, generator=g, dtype=D64)
        lengths = torch.tensor([6, 4, 2])
        mask = torch.arange(6)[None] >= lengths[:, None]

        def f(z):
            p = torch.softmax(z.masked_fill(mask, float("-inf")), -1)
            return sparcon.density_from_moments(p, alpha, 1e-3, lengths)
    else:
        logits = torch.randn(2, 12, generator=g, dtype=D64)

        def f(z):
            return sparcon.density_from_moments(torch.softmax(z, -1).view(2, 3, 4), alpha, 1e-3)
    assert gradcheck(f, (logits.requires_grad_(),), eps=1e-6, atol=1e-6, rtol=1e-4)


# ---- equality with the ops ----------------------------------------------------------------------

def test_equal_to_ops_bitwise():
    c, w = basis(1)
    mu, S = density(1)
    v = torch.randn(3, 9, 4, dtype=D64)
    lengths = torch.tensor([9, 4, 1])
    p = torch.softmax(torch.randn(3, 9, dtype=D64), -1)
    for alpha in (1.0, 1.5, 2.0, 3.0):
        assert torch.equal(sparcon.continuous_expectation(mu, S, c, w, alpha), ops.continuous_expectation(mu, S, c, w, alpha))
        assert torch.equal(sparcon.continuous_attention(v, mu, S, c, w, 0.1, alpha, lengths),
                           ops.continuous_attention(v, mu, S, c, w, 0.1, alpha, lengths))
        for a, b in zip(sparcon.density_from_moments(p, alpha, 1e-3), ops.density_from_moments(p, alpha, 1e-3, None)):
            assert torch.equal(a, b)
    assert torch.equal(sparcon.continuous_expectation(mu, S, c, w), ops.continuous_expectation(mu, S, c, w, 1.0))
    assert torch.equal(sparcon.ridge_matrix(c, w, 9, 0.01), ops.ridge_matrix(c, w, [9], 0.01))
    c2, w2 = basis(2)
    assert torch.equal(sparcon.ridge_matrix(c2, w2, (4, 5), 0.01), ops.ridge_matrix(c2, w2, [4, 5], 0.01))


# ---- independent references ---------------------------------------------------------------------

@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("alpha", [1.0, 1.25, 1.5, 2.0, 3.0])
def test_expectation_matches_reference(dims, alpha):
    c, w = basis(dims)
    mu, S = density(dims)
    r = sparcon.continuous_expectation(mu, S, c, w, alpha)
    assert r.shape == (mu.shape[0], c.shape[0])
    torch.testing.assert_close(r, expectation_ref(mu, S, c, w, alpha), rtol=1e-12, atol=1e-12)


def test_expectation_alpha_two_closed_form_small_scale_float32():
    # The truncated parabola at a tiny scale: float32 must not cancel catastrophically.
    c, w = sparcon.default_basis_1d(8)
    mu, S = torch.tensor([0.41]), torch.tensor([1e-7])
    r32 = sparcon.continuous_expectation(mu, S, c, w, 2.0)
    r64 = expectation_ref(mu.double(), S.double(), c.double(), w.double(), 2.0)
    torch.testing.assert_close(r32.double(), r64, rtol=1e-4, atol=1e-5)


def test_ridge_matrix_matches_reference():
    c, w = basis(1)
    G = sparcon.ridge_matrix(c, w, 9, 0.01)
    assert G.shape == (9, 8)
    torch.testing.assert_close(G, ridge_ref(c, w, positions_1d(9)[:, None], 0.01), rtol=0, atol=1e-10)
    c2, w2 = basis(2)
    G2 = sparcon.ridge_matrix(c2, w2, [4, 5], 0.01)
    assert G2.shape == (20, 9)
    torch.testing.assert_close(G2, ridge_ref(c2, w2, positions_2d(4, 5), 0.01), rtol=0, atol=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_continuous_attention_matches_reference_1d(alpha):
    c, w = basis(1)
    mu, S = density(1)
    v = torch.randn(3, 9, 4, dtype=D64)
    lengths = torch.tensor([9, 6, 3])
    ctx = sparcon.continuous_attention(v, mu, S, c, w, 0.01, alpha, lengths)
    r = expectation_ref(mu, S, c, w, alpha)
    ref = torch.stack([v[b, :lengths[b]].T @ ridge_ref(c, w, positions_1d(int(lengths[b]))[:, None], 0.01) @ r[b]
                       for b in range(3)])
    torch.testing.assert_close(ctx, ref, rtol=0, atol=1e-10)
    # padding is ignored: garbage past each length changes nothing
    v2 = v.clone()
    v2[1, 6:] = 1e3
    v2[2, 3:] = -7
    assert torch.equal(sparcon.continuous_attention(v2, mu, S, c, w, 0.01, alpha, lengths), ctx)
    # no lengths = full length
    assert torch.equal(sparcon.continuous_attention(v, mu, S, c, w, 0.01, alpha),
                       sparcon.continuous_attention(v, mu, S, c, w, 0.01, alpha, torch.tensor([9, 9, 9])))


@pytest.mark.parametrize("alpha", ALPHAS)
def test_continuous_attention_matches_reference_2d(alpha):
    c, w = basis(2)
    mu, S = density(2)
    v = torch.randn(2, 4, 5, 3, dtype=D64)
    ctx = sparcon.continuous_attention(v, mu, S, c, w, 0.01, alpha)
    assert ctx.shape == (2, 3)
    r = expectation_ref(mu, S, c, w, alpha)
    G = ridge_ref(c, w, positions_2d(4, 5), 0.01)
    ref = torch.stack([v[b].reshape(-1, 3).T @ G @ r[b] for b in range(2)])
    torch.testing.assert_close(ctx, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("ridge", [0.0, 1e-3])
def test_density_from_moments_reference(alpha, ridge):
    g = torch.Generator().manual_seed(5)
    lengths = torch.tensor([9, 6, 3])
    p = torch.softmax(torch.randn(3, 9, generator=g, dtype=D64).masked_fill(
        torch.arange(9)[None] >= lengths[:, None], float("-inf")), -1)
    mu, S = sparcon.density_from_moments(p, alpha, ridge, lengths)
    assert mu.shape == (3,) and S.shape == (3,)
    for b in range(3):
        t = positions_1d(int(lengths[b]))
        pb = p[b, :lengths[b]]
        m = (pb * t).sum()
        C = (pb * t * t).sum() - m * m + ridge
        torch.testing.assert_close(mu[b], m, rtol=0, atol=1e-14)
        torch.testing.assert_close(covariance_of_density(S[b].reshape(1, 1), alpha, 1)[0, 0], C, rtol=1e-12, atol=0)
    # 2D
    p2 = torch.softmax(torch.randn(2, 20, generator=g, dtype=D64), -1).view(2, 4, 5)
    mu2, S2 = sparcon.density_from_moments(p2, alpha, ridge)
    assert mu2.shape == (2, 2) and S2.shape == (2, 2, 2)
    t = positions_2d(4, 5)
    for b in range(2):
        pb = p2[b].reshape(-1)
        m = (pb[:, None] * t).sum(0)
        C = (pb[:, None, None] * t[:, :, None] * t[:, None, :]).sum(0) - torch.outer(m, m) + ridge * torch.eye(2, dtype=D64)
        torch.testing.assert_close(mu2[b], m, rtol=0, atol=1e-14)
        torch.testing.assert_close(covariance_of_density(S2[b], alpha, 2), C, rtol=0, atol=1e-14)


def test_default_bases_are_the_papers():
    c, w = sparcon.default_basis_1d()
    assert c.shape == w.shape == (64,) and c.dtype == torch.float32
    lin = torch.linspace(0, 1, 32, dtype=D64)
    torch.testing.assert_close(c[0::2].double(), lin, rtol=0, atol=1e-7)
    torch.testing.assert_close(c[1::2].double(), lin, rtol=0, atol=1e-7)
    torch.testing.assert_close(w[:4], torch.tensor([0.01, 0.25, 0.01, 0.25]))
    c2, w2 = sparcon.default_basis_2d()
    assert c2.shape == (100, 2) and w2.shape == (100, 2, 2)
    torch.testing.assert_close(c2[:11], torch.tensor([[0.0, j / 9] for j in range(10)] + [[1 / 9, 0.0]]))
    torch.testing.assert_close(w2[37], 0.001 * torch.eye(2))


def test_float32_close_to_double():
    c, w = basis(1)
    mu, S = density(1)
    for alpha in ALPHAS:
        r64 = sparcon.continuous_expectation(mu, S, c, w, alpha)
        r32 = sparcon.continuous_expectation(mu.float(), S.float(), c.float(), w.float(), alpha)
        torch.testing.assert_close(r32.double(), r64, rtol=1e-4, atol=1e-5)


# ---- errors -------------------------------------------------------------------------------------

def test_errors_name_the_argument():
    c, w = basis(1)
    mu, S = density(1)
    c2, w2 = basis(2)
    mu2, S2 = density(2)
    v = torch.randn(3, 9, 4, dtype=D64)
    cases = [
        (lambda: sparcon.continuous_expectation(mu, -S, c, w), "sigma"),
        (lambda: sparcon.continuous_expectation(mu, S, c, w, alpha=0.5), "alpha"),
        (lambda: sparcon.continuous_expectation(mu, S, c, -w), "widths"),
        (lambda: sparcon.continuous_expectation(mu2, torch.tensor([[[1.0, 2.0], [2.0, 1.0]]] * 2, dtype=D64), c2, w2),
         "sigma"),
        (lambda: sparcon.continuous_expectation(mu2, -S2, c2, w2, 2.0), "sigma"),
        (lambda: sparcon.continuous_expectation(mu, S[:2], c, w), "sigma"),
        (lambda: sparcon.continuous_expectation(mu, S, c, w2), "widths"),
        (lambda: sparcon.ridge_matrix(c, w, 9, lam=-1.0), "lambda"),
        (lambda: sparcon.ridge_matrix(c, w, [4, 5], 0.01), "grid"),
        (lambda: sparcon.continuous_attention(v, mu, S, c, w, 0.01, 1.0, torch.tensor([9, 10, 2])), "lengths"),
        (lambda: sparcon.continuous_attention(v, mu, S, c, w, 0.01, 1.0, torch.tensor([9, 0, 2])), "lengths"),
        (lambda: sparcon.continuous_attention(v[0], mu, S, c, w), "values"),
        (lambda: sparcon.density_from_moments(torch.rand(3, 9, dtype=D64), alpha=0.5), "alpha"),
    ]
    for call, word in cases:
        with pytest.raises(ValueError, match=f"(?i){word}"):
            call()


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_bfloat16_close_to_float(dims, alpha):
    c, w = basis(dims)
    mu, S = density(dims)
    b = [t.to(torch.bfloat16) for t in (mu, S, c, w)]
    r = sparcon.continuous_expectation(*b, alpha)
    assert r.dtype == torch.bfloat16
    want = sparcon.continuous_expectation(*[t.float() for t in b], alpha)
    torch.testing.assert_close(r.float() / want.abs().max(), want / want.abs().max(), rtol=0, atol=1e-2)
