"""TorchScript: every nn.Module of the package scripts, saves and loads, with the outputs and
gradients (inputs and parameters) of the eager module; errors still name the argument.
(The C++ half, torch::jit::load of the same modules: tests/torchscript, ctest
TorchScript.PackageModulesRunInCpp.)"""
import io
import os
import sys

import pytest
import torch

import sparcon

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torchscript"))
from package_cases import CASES, run  # noqa: E402


def _round_trip(scripted):
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def _same(got, want, what):
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{what} {i}"
        assert torch.equal(g, w), f"{what} {i}: max |difference| {(g - w).abs().max()}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_scripts_saves_loads_same_outputs_and_gradients(name):
    module, inputs = CASES[name]()
    want_out, weights, want_in, want_param = run(module, inputs)
    scripted = torch.jit.script(module)
    assert "sparcon::" in str(scripted.forward.graph) or "sparcon::" in str(scripted.forward.inlined_graph)
    for candidate in (scripted, _round_trip(scripted)):
        got_out, _, got_in, got_param = run(candidate, inputs, weights)
        _same(got_out, want_out, "output")
        _same(got_in, want_in, "input gradient")
        _same(got_param, want_param, "parameter gradient")
        assert [n for n, _ in candidate.named_parameters()] == [n for n, _ in module.named_parameters()]
        if isinstance(module, sparcon.ContinuousAttention):
            _same(candidate.last_density, module.last_density, "last_density")
            if module.last_weights is None:
                assert candidate.last_weights is None
            else:
                _same((candidate.last_weights,), (module.last_weights,), "last_weights")


def test_every_module_class_is_covered():
    modules = {type(CASES[name]()[0]).__name__ for name in CASES}
    public = {n for n in sparcon.__all__ if isinstance(getattr(sparcon, n), type)
              and issubclass(getattr(sparcon, n), torch.nn.Module)}
    assert public <= modules, public - modules


def test_sparsemax_scripts_in_one_line():
    # The example, and the scripted module as a submodule of a user's scripted model.
    p = torch.jit.script(sparcon.Sparsemax())(torch.tensor([[1.0, 2.0, 0.5]]))
    assert torch.equal(p, sparcon.sparsemax(torch.tensor([[1.0, 2.0, 0.5]])))
    net = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 3), sparcon.Entmax15(dim=-1)))
    assert net(torch.randn(2, 4)).shape == (2, 3)


@pytest.mark.parametrize("make, call, word", [
    (lambda: sparcon.EntmaxBisect(alpha=0.0), lambda m: m(torch.randn(2, 3)), "alpha"),
    (lambda: sparcon.Sparsemax(dim=3), lambda m: m(torch.randn(2, 3)), "dim"),
    (lambda: sparcon.BudgetBisect(budget=-1.0), lambda m: m(torch.randn(2, 3)), "budget"),
    (lambda: sparcon.SparsemaxLoss(), lambda m: m(torch.randn(2, 3), torch.tensor([0, 7])), "target"),
    (lambda: sparcon.EntmaxBisectLoss(alpha=torch.ones(3)), lambda m: m(torch.randn(2, 3), torch.tensor([0, 1])),
     "alpha"),
    (lambda: sparcon.ContinuousAttention1D(4), lambda m: m(torch.randn(2, 5, 3)), "values"),
    (lambda: sparcon.ContinuousAttention1D(4), lambda m: m(torch.randn(2, 5, 4), torch.tensor([5, 6])), "lengths"),
    (lambda: sparcon.ContinuousAttention2D(4), lambda m: m(torch.randn(2, 3, 3, 4), torch.tensor([9, 9])),
     "lengths"),
    (lambda: sparcon.ContinuousAttention1D(4, query_features=2), lambda m: m(torch.randn(2, 5, 4)), "queries"),
    (lambda: sparcon.ContinuousAttention1D(4), lambda m: m(torch.randn(2, 5, 4), None, torch.randn(2, 1, 2)),
     "queries"),
])
def test_scripted_errors_name_the_argument(make, call, word):
    # Eager: a ValueError naming the argument; scripted: the same message (torch 1.13 raises
    # torch.jit.Error from a scripted module, a ValueError in the ops' own message).
    with pytest.raises(ValueError, match=word):
        call(make())
    with pytest.raises(Exception, match=word):
        call(torch.jit.script(make()))
