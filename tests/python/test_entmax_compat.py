"""`import sparcon as entmax`: the names, signatures and defaults of the entmax package."""
import inspect
import os
import subprocess
import sys

import pytest
import torch

import sparcon as entmax

# name -> the parameters (name, default) of entmax's own definition (deep-spin/entmax, master).
E = inspect.Parameter.empty
ENTMAX_SIGNATURES = {
    "sparsemax": [("X", E), ("dim", -1), ("k", None), ("return_support_size", False)],
    "entmax15": [("X", E), ("dim", -1), ("k", None), ("return_support_size", False)],
    "sparsemax_bisect": [("X", E), ("dim", -1), ("n_iter", 50), ("ensure_sum_one", True)],
    "entmax_bisect": [("X", E), ("alpha", 1.5), ("dim", -1), ("n_iter", 50), ("ensure_sum_one", True)],
    "normmax_bisect": [("X", E), ("alpha", 2), ("dim", -1), ("n_iter", 50)],
    "budget_bisect": [("X", E), ("budget", 2), ("dim", -1), ("n_iter", 50)],
    "Sparsemax": [("dim", -1), ("k", None), ("return_support_size", False)],
    "Entmax15": [("dim", -1), ("k", None), ("return_support_size", False)],
    "SparsemaxBisect": [("dim", -1), ("n_iter", None)],
    "EntmaxBisect": [("alpha", 1.5), ("dim", -1), ("n_iter", 50)],
    "NormmaxBisect": [("alpha", 2), ("dim", -1), ("n_iter", 50)],
    "BudgetBisect": [("budget", 2), ("dim", -1), ("n_iter", 50)],
    "sparsemax_loss": [("X", E), ("target", E), ("k", None), ("return_support", False)],
    "entmax15_loss": [("X", E), ("target", E), ("k", None), ("return_support", False)],
    "sparsemax_bisect_loss": [("X", E), ("target", E), ("n_iter", 50)],
    "entmax_bisect_loss": [("X", E), ("target", E), ("alpha", 1.5), ("n_iter", 50)],
    "normmax_bisect_loss": [("X", E), ("target", E), ("alpha", 2), ("n_iter", 50)],
    "SparsemaxLoss": [("k", None), ("ignore_index", -100), ("reduction", "elementwise_mean"), ("return_support", False)],
    "Entmax15Loss": [("k", 100), ("ignore_index", -100), ("reduction", "elementwise_mean"), ("return_support", False)],
    "SparsemaxBisectLoss": [("n_iter", 50), ("ignore_index", -100), ("reduction", "elementwise_mean")],
    "EntmaxBisectLoss": [("alpha", 1.5), ("n_iter", 50), ("ignore_index", -100), ("reduction", "elementwise_mean")],
    "NormmaxBisectLoss": [("alpha", 2), ("n_iter", 50), ("ignore_index", -100), ("reduction", "elementwise_mean")],
}


@pytest.mark.parametrize("name", sorted(ENTMAX_SIGNATURES))
def test_signature_matches_entmax(name):
    obj = getattr(entmax, name)
    assert name in entmax.__all__
    params = [p for p in inspect.signature(obj).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert [(p.name, p.default) for p in params] == ENTMAX_SIGNATURES[name]
    # sparcon's extras are keyword-only, so positional calls mean what they mean in entmax.
    assert all(p.kind == p.KEYWORD_ONLY for p in inspect.signature(obj).parameters.values() if p not in params)
    assert obj.__doc__ and len(obj.__doc__) > 40


def test_drop_in_usage():
    torch.manual_seed(0)
    X = torch.randn(6, 5)
    y = torch.randint(0, 5, (6,))
    p = entmax.entmax_bisect(X, alpha=1.5, dim=-1, n_iter=25)
    torch.testing.assert_close(p, entmax.entmax15(X), rtol=0, atol=1e-6)
    torch.testing.assert_close(entmax.sparsemax_bisect(X), entmax.sparsemax(X, k=2), rtol=0, atol=0)
    for module in (entmax.Sparsemax(dim=-1), entmax.Entmax15(dim=-1), entmax.SparsemaxBisect(),
                   entmax.EntmaxBisect(alpha=1.3), entmax.NormmaxBisect(alpha=2), entmax.BudgetBisect(budget=2)):
        out = module(X)
        assert out.shape == X.shape and (out >= 0).all()
    assert torch.allclose(entmax.BudgetBisect(budget=2)(X).sum(-1), torch.full((6,), 2.0))
    for crit in (entmax.SparsemaxLoss(), entmax.Entmax15Loss(k=3), entmax.SparsemaxBisectLoss(),
                 entmax.EntmaxBisectLoss(alpha=1.3), entmax.NormmaxBisectLoss(),
                 entmax.SparsemaxLoss(ignore_index=0, reduction="sum"),
                 entmax.EntmaxBisectLoss(reduction="none")):
        Xg = X.clone().requires_grad_()
        loss = crit(Xg, y)
        loss.sum().backward()
        assert torch.isfinite(Xg.grad).all()
    assert entmax.sparsemax_loss(X, y).shape == (6,)
    assert entmax.entmax_bisect_loss(X, y, alpha=torch.full((6, 1), 1.5)).shape == (6,)
    # nn.Module behaviour: in a Sequential, with a learnable alpha.
    net = torch.nn.Sequential(torch.nn.Linear(5, 5), entmax.EntmaxBisect(alpha=torch.nn.Parameter(torch.tensor(1.5))))
    net(X).sum().backward()


def _import_in_subprocess(env_extra):
    python_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
    env = dict(os.environ, PYTHONPATH=os.path.normpath(python_dir), **env_extra)
    code = "import sparcon, torch; print(torch.ops.sparcon.sparsemax(torch.tensor([1.0, 2.0])).tolist())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd="/")


def test_missing_library_gives_clear_import_error():
    res = _import_in_subprocess({"SPARCON_LIBRARY": "/nonexistent/libsparcon_torch.so"})
    assert res.returncode != 0
    assert "ImportError" in res.stderr
    assert "cmake --preset release && cmake --build --preset release" in res.stderr
    assert "/nonexistent/libsparcon_torch.so" in res.stderr


def test_library_from_environment_variable():
    lib = os.path.join(os.path.dirname(entmax.__file__), "libsparcon_torch.so")
    res = _import_in_subprocess({"SPARCON_LIBRARY": lib})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[0.0, 1.0]"


def test_function_class_names_apply_the_functions():
    # entmax's autograd Function names, called the way entmax code calls them (positional, in
    # the order of entmax's forward(ctx, ...)).
    from sparcon.activations import Entmax15Function, SparsemaxFunction
    from sparcon.losses import (Entmax15LossFunction, EntmaxBisectLossFunction, NormmaxBisectLossFunction,
                                SparsemaxBisectLossFunction, SparsemaxLossFunction)
    from sparcon.root_finding import (BudgetBisectFunction, EntmaxBisectFunction, NormmaxBisectFunction,
                                      SparsemaxBisectFunction)
    x = torch.randn(4, 6, dtype=torch.float64)
    y = torch.tensor([0, 5, 2, 1])
    assert torch.equal(SparsemaxFunction.apply(x, 0), entmax.sparsemax(x, 0))
    assert torch.equal(Entmax15Function.apply(x, -1, None), entmax.entmax15(x, -1))
    assert torch.equal(EntmaxBisectFunction.apply(x, 1.3, -1, 50, True), entmax.entmax_bisect(x, 1.3, -1))
    assert torch.equal(SparsemaxBisectFunction.apply(x, 0, 50), entmax.sparsemax_bisect(x, 0))
    assert torch.equal(NormmaxBisectFunction.apply(x, 3.0, -1), entmax.normmax_bisect(x, 3.0))
    assert torch.equal(BudgetBisectFunction.apply(x, 2, -1), entmax.budget_bisect(x, 2))
    assert torch.equal(SparsemaxLossFunction.apply(x, y), entmax.sparsemax_loss(x, y))
    assert torch.equal(Entmax15LossFunction.apply(x, y, None), entmax.entmax15_loss(x, y))
    assert torch.equal(SparsemaxBisectLossFunction.apply(x, y, 50), entmax.sparsemax_bisect_loss(x, y))
    assert torch.equal(EntmaxBisectLossFunction.apply(x, y, 1.7, 50), entmax.entmax_bisect_loss(x, y, 1.7))
    assert torch.equal(NormmaxBisectLossFunction.apply(x, y, 2.5), entmax.normmax_bisect_loss(x, y, 2.5))
    assert "not a torch.autograd.function" in SparsemaxFunction.__doc__.lower()
