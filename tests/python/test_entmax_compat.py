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
    "sparsemax_loss": [("X", E), ("target", E), ("k", None), ("return_support_size", False)],
    "entmax15_loss": [("X", E), ("target", E), ("k", None), ("return_support_size", False)],
    "sparsemax_bisect_loss": [("X", E), ("target", E), ("n_iter", 50)],
    "entmax_bisect_loss": [("X", E), ("target", E), ("alpha", 1.5), ("n_iter", 50)],
    "normmax_bisect_loss": [("X", E), ("target", E), ("alpha", 2), ("n_iter", 50)],
    "SparsemaxLoss": [("k", None), ("ignore_index", -100), ("reduction", "elementwise_mean"),
                      ("return_support_size", False)],
    "Entmax15Loss": [("k", 100), ("ignore_index", -100), ("reduction", "elementwise_mean"),
                     ("return_support_size", False)],
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
    # entmax's current SparsemaxFunction / Entmax15Function return (P, support size); Entmax15Function's
    # dim defaults to 0 there.
    P, support = SparsemaxFunction.apply(x, 0)
    assert torch.equal(P, entmax.sparsemax(x, 0)) and torch.equal(support, (P > 0).sum(0, keepdim=True))
    P, support = Entmax15Function.apply(x, -1, None)
    assert torch.equal(P, entmax.entmax15(x, -1)) and torch.equal(support, (P > 0).sum(-1, keepdim=True))
    P, support = Entmax15Function.apply(x)
    assert torch.equal(P, entmax.entmax15(x, 0)) and support.shape == (1, 6)
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


def test_return_support_size_of_the_losses():
    torch.manual_seed(1)
    X, y = torch.randn(5, 7, dtype=torch.float64), torch.tensor([0, 6, 2, 2, 1])
    for fn, pmap in ((entmax.sparsemax_loss, entmax.sparsemax), (entmax.entmax15_loss, entmax.entmax15)):
        loss, support = fn(X, y, None, True)  # positional, as entmax's (X, target, k, return_support_size)
        assert torch.equal(loss, fn(X, y))
        assert support.shape == (5, 1) and support.dtype == torch.int64
        assert torch.equal(support, (pmap(X) > 0).sum(-1, keepdim=True))
        loss2, support2 = fn(X, y, return_support_size=True)
        assert torch.equal(loss2, loss) and torch.equal(support2, support)
        loss3, support3 = fn(X, y, return_support=True)  # sparcon's former keyword still works
        assert torch.equal(loss3, loss) and torch.equal(support3, support)
    for Loss in (entmax.SparsemaxLoss, entmax.Entmax15Loss):
        for kwargs in ({"return_support_size": True}, {"return_support": True}):
            loss, support = Loss(reduction="sum", **kwargs)(X, y)
            assert torch.equal(loss, Loss(reduction="sum")(X, y)) and support.shape == (5, 1)


def test_budget_zero_and_above_the_row_length():
    # entmax: budget = 0 gives zeros with a zero gradient; a budget above the row length ends
    # at p = 1 everywhere (its bisection caps at the row length).
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    for budget in (0, 0.0, torch.tensor(0.0), torch.zeros(3, 1, dtype=torch.float64)):
        p = entmax.budget_bisect(x, budget)
        assert torch.equal(p.detach(), torch.zeros(3, 5, dtype=torch.float64))
        (g,) = torch.autograd.grad((p * torch.randn(3, 5, dtype=torch.float64)).sum(), x)
        assert torch.equal(g, torch.zeros_like(g))
        assert torch.autograd.gradcheck(lambda t: entmax.budget_bisect(t, budget), (x,))
    for budget in (5, 7, 100.0, torch.full((3, 1), 9.0, dtype=torch.float64)):
        p = entmax.budget_bisect(x, budget)
        assert torch.equal(p.detach(), torch.ones(3, 5, dtype=torch.float64))
        assert torch.autograd.gradcheck(lambda t: entmax.budget_bisect(t, budget), (x,))
    # Per row: a zero budget, an ordinary one and one above the length, along dim 0.
    b = torch.tensor([[0.0, 2.0, 9.0]], dtype=torch.float64)
    p = entmax.budget_bisect(x.t(), b, dim=0)
    assert torch.equal(p[:, 0].detach(), torch.zeros(5, dtype=torch.float64))
    torch.testing.assert_close(p[:, 1], entmax.budget_bisect(x[1], 2), rtol=0, atol=0)
    assert torch.equal(p[:, 2].detach(), torch.ones(5, dtype=torch.float64))
    assert torch.autograd.gradcheck(lambda t: entmax.budget_bisect(t, b, dim=0), (x.t().detach().requires_grad_(),))
    assert torch.equal(entmax.BudgetBisect(budget=0)(x).detach(), torch.zeros(3, 5, dtype=torch.float64))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_private_threshold_helpers(dim):
    # entmax's top-k tests import these from entmax.activations.
    from sparcon.activations import _entmax_threshold_and_support, _sparsemax_threshold_and_support
    g = torch.Generator().manual_seed(dim + 5)
    x = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    x[0, 1, 2] = float("-inf")
    shape = list(x.shape)
    shape[dim] = 1
    tau, support = _sparsemax_threshold_and_support(x, dim=dim)
    assert list(tau.shape) == shape and list(support.shape) == shape and support.dtype == torch.int64
    p = entmax.sparsemax(x, dim)
    torch.testing.assert_close(torch.clamp(x - tau, min=0), p, rtol=0, atol=1e-14)
    assert torch.equal(support, (p > 0).sum(dim, keepdim=True))
    assert torch.equal(_sparsemax_threshold_and_support(x, dim=dim, k=2)[0], tau)
    # 1.5-entmax: the helper works on X / 2 (entmax's Entmax15Function halves X first).
    half = x / 2
    tau, support = _entmax_threshold_and_support(half, dim=dim)
    p = entmax.entmax15(x, dim)
    torch.testing.assert_close(torch.clamp(half - tau, min=0) ** 2, p, rtol=0, atol=1e-14)
    assert torch.equal(support, (p > 0).sum(dim, keepdim=True))
    assert torch.equal(_entmax_threshold_and_support(half, dim=dim, k=3)[0], tau)
    # A row with no finite entry: tau = +inf, support 0.
    tau, support = _sparsemax_threshold_and_support(torch.full((2, 3), float("-inf")))
    assert torch.isinf(tau).all() and (tau > 0).all() and (support == 0).all()


@pytest.mark.parametrize("call, entmax_type", [
    (lambda x: entmax.sparsemax(x, dim=2), IndexError),
    (lambda x: entmax.entmax15(x, dim=-3), IndexError),
    (lambda x: entmax.Sparsemax(dim=4)(x), IndexError),
    (lambda x: entmax.entmax_bisect(x, 1.5, dim=5), IndexError),
    (lambda x: entmax.normmax_bisect(x, 2.0, dim=2), IndexError),
    (lambda x: entmax.budget_bisect(x, 2, dim=-4), IndexError),
    (lambda x: entmax.EntmaxBisect(alpha=1.2, dim=3)(x), IndexError),
    (lambda x: entmax.entmax_bisect(x, alpha=torch.ones(5, 1) * 1.5), RuntimeError),
    (lambda x: entmax.budget_bisect(x, budget=torch.ones(4, 1)), RuntimeError),
    (lambda x: entmax.sparsemax_loss(x, torch.tensor([0, 1, 9])), RuntimeError),
    (lambda x: entmax.SparsemaxLoss()(x, torch.tensor([0, 1, 9])), RuntimeError),
    (lambda x: entmax.entmax_bisect_loss(x, torch.tensor([0, 1, 2]), torch.ones(4) * 1.5), RuntimeError),
])
def test_exceptions_are_valueerror_and_what_entmax_raises(call, entmax_type):
    x = torch.randn(3, 5, dtype=torch.float64)
    with pytest.raises(ValueError) as info:
        call(x)
    assert isinstance(info.value, entmax_type)
    assert isinstance(info.value, entmax.SparconError)
    assert "sparcon" in str(info.value)
