"""Query-conditioned continuous attention from Python: gradcheck of the ops, each query against
its own one-density attention, NaN padding ignored, errors, and parity with the C++ module
(same parameter names and initial values from the same seed, same outputs and gradients)."""
import os
import pathlib
import subprocess

import pytest
import torch
from torch.autograd import gradcheck

import sparcon

D64 = torch.float64
OPS = torch.ops.sparcon


def basis(dims, n=8):
    if dims == 1:
        return sparcon.default_basis_1d(n, dtype=D64)
    return sparcon.default_basis_2d(3, 0.01, dtype=D64)


def spd(batch_shape, scale=0.05):
    a = scale * torch.randn(*batch_shape, 2, 2, dtype=D64)
    return a @ a.transpose(-1, -2) + 0.01 * torch.eye(2, dtype=D64)


@pytest.mark.parametrize("dims", [1, 2])
def test_value_model_gradcheck(dims):
    torch.manual_seed(0)
    c, w = basis(dims)
    if dims == 1:
        values, lengths = torch.randn(2, 5, 3, dtype=D64), torch.tensor([5, 3])
    else:
        values, lengths = torch.randn(2, 3, 4, 3, dtype=D64), None
    values.requires_grad_()
    assert gradcheck(lambda v: sparcon.value_model(v, c, w, 0.05, lengths), (values,))


@pytest.mark.parametrize("alpha", [1.0, 2.0, 1.5])
@pytest.mark.parametrize("heads", [1, 2])
def test_query_attention_gradcheck_1d(alpha, heads):
    torch.manual_seed(1)
    c, w = basis(1)
    values = torch.randn(2, 7, 4, dtype=D64, requires_grad=True)
    lengths = torch.tensor([7, 4])
    mu = (0.2 + 0.6 * torch.rand(2, 3, heads, dtype=D64)).requires_grad_()
    sigma = (0.02 + 0.1 * torch.rand(2, 3, heads, dtype=D64)).requires_grad_()
    f = lambda v, m, s: sparcon.query_continuous_attention(v, m, s, c, w, 0.01, alpha, lengths)
    assert gradcheck(f, (values, mu, sigma), atol=1e-6)


def test_query_attention_gradcheck_2d():
    torch.manual_seed(2)
    c, w = basis(2)
    values = torch.randn(2, 3, 4, 2, dtype=D64, requires_grad=True)
    mu = (0.3 + 0.4 * torch.rand(2, 3, 2, dtype=D64)).requires_grad_()
    sigma = spd((2, 3)).requires_grad_()
    f = lambda v, m, s: sparcon.query_continuous_attention(v, m, 0.5 * (s + s.transpose(-1, -2)), c, w, 0.01, 1.0)
    assert gradcheck(f, (values, mu, sigma), atol=1e-6)


@pytest.mark.parametrize("discrete_alpha", [1.0, 1.5])
def test_disc_cont_gradcheck(discrete_alpha):
    torch.manual_seed(3)
    c, w = basis(1)
    values = torch.randn(2, 6, 4, dtype=D64, requires_grad=True)
    scores = torch.randn(2, 3, 2, 6, dtype=D64, requires_grad=True)
    lengths = torch.tensor([6, 4])
    f = lambda v, s: sparcon.disc_cont_attention(v, s, c, w, 0.01, 2.0, discrete_alpha, 1e-3, lengths)[0]
    assert gradcheck(f, (values, scores), atol=1e-6)


def test_each_query_is_its_own_density():
    torch.manual_seed(4)
    c, w = basis(1, 16)
    values, lengths = torch.randn(3, 9, 2, dtype=D64), torch.tensor([9, 5, 2])
    mu, sigma = torch.rand(3, 4, dtype=D64), 0.01 + 0.1 * torch.rand(3, 4, dtype=D64)
    got = sparcon.query_continuous_attention(values, mu, sigma, c, w, 0.01, 2.0, lengths)
    for q in range(4):
        want = sparcon.continuous_attention(values, mu[:, q], sigma[:, q], c, w, 0.01, 2.0, lengths)
        torch.testing.assert_close(got[:, q], want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", ["cont", "disc+cont"])
def test_module_ignores_nan_padding(mode):
    torch.manual_seed(5)
    m = sparcon.ContinuousAttention(4, alpha=2.0, basis_size=16, mode=mode, heads=2, query_features=3)
    values, lengths = torch.randn(3, 8, 4), torch.tensor([8, 5, 1])
    queries = torch.randn(3, 6, 3)
    zeros, nans = values.clone(), values.clone()
    for b, l in enumerate(lengths.tolist()):
        zeros[b, l:] = 0
        nans[b, l:] = float("nan")
    out = m(zeros, lengths, queries)
    assert out.shape == (3, 6, 4) and torch.isfinite(out).all()
    assert torch.equal(out, m(nans, lengths, queries))
    mu, sigma = m.last_density
    assert mu.shape == sigma.shape == (3, 6, 2)


def test_module_errors_name_the_argument():
    with pytest.raises(ValueError, match="heads"):
        sparcon.ContinuousAttention(6, heads=4)
    with pytest.raises(ValueError, match="query_features"):
        sparcon.ContinuousAttention(6, query_features=0)
    with pytest.raises(ValueError, match="discrete_alpha"):
        sparcon.ContinuousAttention(6, mode="disc+cont", discrete_alpha=0.0)
    m = sparcon.ContinuousAttention(6, query_features=2)
    with pytest.raises(ValueError, match="queries"):
        m(torch.randn(2, 5, 6))
    with pytest.raises(ValueError, match="queries"):
        m(torch.randn(2, 5, 6), queries=torch.randn(2, 3, 4))
    with pytest.raises(ValueError, match="queries"):
        sparcon.ContinuousAttention(6)(torch.randn(2, 5, 6), queries=torch.randn(2, 3, 2))
    with pytest.raises(ValueError, match="lengths"):
        m(torch.randn(2, 5, 6), torch.tensor([5, 6]), torch.randn(2, 3, 2))
    with pytest.raises(ValueError, match="mu"):
        c, w = basis(1)
        sparcon.query_continuous_attention(torch.randn(2, 5, 6, dtype=D64), torch.rand(3, 4, dtype=D64),
                                           torch.rand(3, 4, dtype=D64), c, w)


# ---- parity with the C++ module (tests/torch/module_parity.cc) -----------------------------------

def _parity_binary():
    path = os.environ.get("SPARCON_PARITY_BINARY")
    if path:
        return pathlib.Path(path)
    repo = pathlib.Path(__file__).resolve().parents[2]
    return repo / "build" / "release" / "tests" / "sparcon_module_parity"


@pytest.fixture(scope="module")
def cpp_results(tmp_path_factory):
    binary = _parity_binary()
    if not binary.exists():
        if os.environ.get("SPARCON_PARITY_BINARY"):
            pytest.fail(f"SPARCON_PARITY_BINARY = {binary} does not exist")
        pytest.skip(f"{binary} is not built (cmake --build --preset release)")
    out = tmp_path_factory.mktemp("parity") / "cpp.pt"
    subprocess.run([str(binary), str(out)], check=True)
    return torch.load(out)


CONFIGS = [(dims, mode, heads, q) for dims in (1, 2) for mode in ("cont", "disc+cont") for heads in (1, 2)
           for q in (0, 3)]


@pytest.mark.parametrize("dims,mode,heads,query_features", CONFIGS)
def test_python_module_equals_cpp_module(cpp_results, dims, mode, heads, query_features):
    name = f"{dims}d-{mode}-h{heads}-q{query_features}"
    cpp = {k[len(name) + 1:]: v for k, v in cpp_results.items() if k.startswith(name + "/")}
    torch.manual_seed(2020)
    m = sparcon.ContinuousAttention(4, dims=dims, alpha=2.0 if dims == 1 else 1.0, basis_size=8, grid_side=3,
                                    variance=0.01, mode=mode, heads=heads,
                                    query_features=query_features or None, discrete_alpha=1.5).double()
    params = dict(m.named_parameters())
    assert sorted(params) == sorted(k[len("param/"):] for k in cpp if k.startswith("param/"))
    for key, p in params.items():  # the same initialisation from the same seed
        assert torch.equal(p.detach(), cpp["param/" + key]), key
    values = cpp["values"].clone().requires_grad_()
    context = m(values, cpp.get("lengths"), cpp.get("queries"))
    (context * cpp["weights"]).sum().backward()
    torch.testing.assert_close(context.detach(), cpp["context"], rtol=1e-13, atol=1e-14)
    torch.testing.assert_close(values.grad, cpp["values_grad"], rtol=1e-12, atol=1e-13)
    for key, p in params.items():
        torch.testing.assert_close(p.grad, cpp["grad/" + key], rtol=1e-12, atol=1e-13, msg=key)
    torch.testing.assert_close(m.last_density[0], cpp["mu"], rtol=1e-13, atol=1e-14)
    torch.testing.assert_close(m.last_density[1], cpp["sigma"], rtol=1e-13, atol=1e-14)
