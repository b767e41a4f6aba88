"""ContinuousAttention modules: shapes, lengths/masks, options, errors, and short training runs."""
import pytest
import torch

import sparcon

MODES = ["cont", "disc+cont"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_shapes_1d_and_lengths(mode, alpha):
    torch.manual_seed(0)
    m = sparcon.ContinuousAttention1D(6, alpha=alpha, mode=mode, basis_size=16)
    values = torch.randn(3, 11, 6)
    lengths = torch.tensor([11, 7, 2])
    out = m(values, lengths)
    assert out.shape == (3, 6) and out.dtype == torch.float32 and torch.isfinite(out).all()
    mu, S = m.last_density
    assert mu.shape == (3,) and S.shape == (3,) and (S > 0).all() and ((mu > 0) & (mu < 1)).all()
    # Positions past a length do not matter.
    garbage = values.clone()
    garbage[1, 7:] = 100.0
    garbage[2, 2:] = -50.0
    torch.testing.assert_close(m(garbage, lengths), out, rtol=0, atol=0)
    # Without lengths every position is used: differs from a masked call.
    assert m(values).shape == (3, 6)
    assert not torch.allclose(m(values), out)
    # Each example is independent of the others (its own length, its own density).
    torch.testing.assert_close(m(values[1:2, :7], lengths[1:2]), out[1:2], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_shapes_2d(mode, alpha):
    torch.manual_seed(1)
    m = sparcon.ContinuousAttention2D(5, alpha=alpha, mode=mode)
    out = m(torch.randn(2, 6, 7, 5))
    assert out.shape == (2, 5) and torch.isfinite(out).all()
    mu, S = m.last_density
    assert mu.shape == (2, 2) and S.shape == (2, 2, 2)
    assert (torch.linalg.eigvalsh(S.double()) > 0).all()


def test_generic_class_and_defaults():
    m = sparcon.ContinuousAttention(8)
    assert m.dims == 1 and m.alpha == 1.0 and m.lam == 0.01 and m.mode == "cont"
    assert m.centers.shape == (64,) and m.widths.shape == (64,)
    c, w = sparcon.default_basis_1d(64)
    assert torch.equal(m.centers, c) and torch.equal(m.widths, w)
    m2 = sparcon.ContinuousAttention(8, dims=2)
    assert m2.centers.shape == (100, 2) and m2.widths.shape == (100, 2, 2)
    assert isinstance(sparcon.ContinuousAttention2D(4), sparcon.ContinuousAttention)
    # A custom basis.
    c, w = sparcon.default_basis_1d(10, sds=(0.2,))
    m3 = sparcon.ContinuousAttention1D(3, basis=(c, w), lam=0.1)
    assert torch.equal(m3.centers, c)
    assert m3(torch.randn(2, 5, 3)).shape == (2, 3)
    # The buffers follow .double() and the state dict.
    md = sparcon.ContinuousAttention1D(3).double()
    assert md(torch.randn(2, 5, 3, dtype=torch.float64)).dtype == torch.float64
    assert "centers" in md.state_dict() and "widths" in md.state_dict()


def test_cont_head_formulas_1d_and_2d():
    torch.manual_seed(2)
    values = torch.randn(2, 9, 4, dtype=torch.float64)
    m = sparcon.ContinuousAttention1D(4).double()
    m(values)
    o = m.head(values.mean(1))
    mu, S = m.last_density
    torch.testing.assert_close(mu, torch.sigmoid(o[:, 0]))
    torch.testing.assert_close(S, torch.clamp_min(torch.nn.functional.softplus(o[:, 1]), 1e-6))
    m2 = sparcon.ContinuousAttention2D(4).double()
    v2 = torch.randn(2, 3, 3, 4, dtype=torch.float64)
    m2(v2)
    o = m2.head(v2.flatten(1, 2).mean(1))
    L = torch.zeros(2, 2, 2, dtype=torch.float64)
    L[:, 0, 0] = torch.nn.functional.softplus(o[:, 2])
    L[:, 1, 0] = o[:, 3]
    L[:, 1, 1] = torch.nn.functional.softplus(o[:, 4])
    mu, S = m2.last_density
    torch.testing.assert_close(mu, torch.sigmoid(o[:, :2]))
    torch.testing.assert_close(S, L @ L.transpose(1, 2) + 1e-6 * torch.eye(2, dtype=torch.float64))


@pytest.mark.parametrize("scale", [0.05, 5e-4, 30.0])
def test_cont_head_starts_at_initial_scale(scale):
    # With the head's weights zeroed only its bias acts: mu = 1/2 and the scale as asked.
    for dims in (1, 2):
        m = sparcon.ContinuousAttention(4, dims=dims, initial_scale=scale).double()
        with torch.no_grad():
            m.head.weight.zero_()
        m(torch.randn(2, 6, 4, dtype=torch.float64) if dims == 1 else torch.randn(2, 3, 3, 4, dtype=torch.float64))
        mu, S = m.last_density
        torch.testing.assert_close(mu, torch.full_like(mu, 0.5))
        want = scale if dims == 1 else (scale + 1e-6) * torch.eye(2, dtype=torch.float64).expand(2, 2, 2)
        torch.testing.assert_close(S, torch.full_like(S, scale) if dims == 1 else want, rtol=1e-6, atol=0)  # the bias is stored in float


def test_disc_cont_adds_discrete_context():
    torch.manual_seed(3)
    m = sparcon.ContinuousAttention1D(4, mode="disc+cont").double()
    values = torch.randn(2, 8, 4, dtype=torch.float64)
    lengths = torch.tensor([8, 5])
    out = m(values, lengths)
    s = m.scores(values).squeeze(-1).masked_fill(torch.arange(8)[None] >= lengths[:, None], float("-inf"))
    p = torch.softmax(s, -1)
    mu, S = sparcon.density_from_moments(p, 1.0, 1e-4, lengths)
    cont = sparcon.continuous_attention(values, mu, S, m.centers.double(), m.widths.double(), 0.01, 1.0, lengths)
    torch.testing.assert_close(out, cont + (p.unsqueeze(1) @ values).squeeze(1))


def test_gradients_reach_all_parameters():
    for dims, mode in [(1, "cont"), (1, "disc+cont"), (2, "cont"), (2, "disc+cont")]:
        m = sparcon.ContinuousAttention(4, dims=dims, mode=mode, alpha=2.0)
        x = torch.randn(2, 5, 4) if dims == 1 else torch.randn(2, 4, 4, 4)
        x.requires_grad_()
        m(x).pow(2).sum().backward()
        assert x.grad is not None and torch.isfinite(x.grad).all()
        for name, p in m.named_parameters():
            assert p.grad is not None and torch.isfinite(p.grad).all(), name


@pytest.mark.parametrize("kwargs, word", [
    ({"dims": 3}, "dims"),
    ({"alpha": 0.5}, "alpha"),
    ({"mode": "discrete"}, "mode"),
    ({"lam": 0.0}, "lam"),
    ({"basis_size": 15}, "basis_size"),
    ({"dims": 2, "variance": -1.0}, "variance"),
    ({"initial_scale": 0.0}, "initial_scale"),
    ({"initial_scale": float("inf")}, "initial_scale"),
])
def test_constructor_errors(kwargs, word):
    with pytest.raises(ValueError, match=word):
        sparcon.ContinuousAttention(4, **kwargs)


def test_forward_errors():
    m = sparcon.ContinuousAttention1D(4)
    with pytest.raises(ValueError, match="values"):
        m(torch.randn(2, 5, 3))
    with pytest.raises(ValueError, match="lengths"):
        m(torch.randn(2, 5, 4), torch.tensor([5, 6]))
    with pytest.raises(ValueError, match="lengths"):
        m(torch.randn(2, 5, 4), torch.tensor([5]))
    with pytest.raises(ValueError, match="lengths"):
        sparcon.ContinuousAttention2D(4)(torch.randn(2, 3, 3, 4), torch.tensor([9, 9]))


def _train(model, make_batch, steps=40, lr=0.05):
    readout = torch.nn.Linear(model.features, 1)
    opt = torch.optim.Adam(list(model.parameters()) + list(readout.parameters()), lr=lr)
    losses = []
    for step in range(steps):
        values, lengths, target = make_batch(step)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(readout(model(values, lengths)).squeeze(-1), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_training_decreases_loss_1d(mode, alpha):
    # Target: the first feature of the value at relative position ~0.7 of each sequence.
    torch.manual_seed(4)
    B, L, E = 16, 20, 4
    values = torch.randn(B, L, E)
    lengths = torch.randint(12, L + 1, (B,))
    idx = (0.7 * lengths.float()).long()
    values[torch.arange(B), idx, 1] = 3.0  # a marker the discrete scorer can find
    target = values[torch.arange(B), idx, 0]
    model = sparcon.ContinuousAttention1D(E, alpha=alpha, mode=mode, basis_size=32)
    losses = _train(model, lambda step: (values, lengths, target))
    assert sum(losses[-5:]) / 5 < 0.7 * losses[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_training_decreases_loss_2d(mode, alpha):
    torch.manual_seed(5)
    B, H, W, E = 8, 6, 6, 3
    values = torch.randn(B, H, W, E)
    values[:, 1, 4, 1] = 3.0
    target = values[:, 1, 4, 0]
    model = sparcon.ContinuousAttention2D(E, alpha=alpha, mode=mode)
    losses = _train(model, lambda step: (values, None, target))
    assert sum(losses[-5:]) / 5 < 0.7 * losses[0]
