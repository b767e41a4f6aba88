"""DistributedDataParallel (gloo, 2 CPU processes) over the sparcon operators.

A tiny double-precision model with sparsemax attention over keys (torch.ops.sparcon.sparsemax)
and 1D continuous attention (torch.ops.sparcon.continuous_attention, Gaussian basis of 8
functions, alpha = 2) is trained for a few SGD steps by two DDP ranks, each on half of a global
batch, and by one plain process on the whole batch from the same initialisation. With a mean
loss, DDP's averaged gradient equals the single-process gradient, so the parameters must agree
(within 1e-6) after every step; the two ranks must also agree exactly with each other.

The library is loaded directly (not through the sparcon package), from SPARCON_LIBRARY or the
release build; the test is skipped when torch.distributed / gloo is unavailable.
"""
import math
import os
import socket
import tempfile
import time
import traceback
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

_REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
_DEFAULT_LIBRARY = os.path.join(_REPO, "build", "release", "torch", "libsparcon_torch.so")

WORLD = 2
GLOBAL_BATCH = 8
LENGTH = 7
FEATURES = 4
VALUE_DIM = 3
N_BASIS = 8
STEPS = 4
LR = 0.2
SEED = 1234
TIMEOUT_S = 45.0  # for the whole DDP run (start, rendezvous, training, exit)


def _library_path():
    return os.environ.get("SPARCON_LIBRARY", _DEFAULT_LIBRARY)


def _load_sparcon():
    """Registers torch.ops.sparcon once per process (a second copy of the library would clash)."""
    try:
        torch.ops.sparcon.sparsemax  # noqa: B018 (resolves the operator if registered)
        return
    except (RuntimeError, AttributeError):
        pass
    torch.ops.load_library(_library_path())


class TinyAttentionModel(nn.Module):
    """Sparsemax attention over keys plus 1D continuous attention, then a linear read-out."""

    def __init__(self):
        super().__init__()
        # No key bias: it shifts every score of a row equally, and sparsemax is shift-invariant.
        self.key = nn.Linear(FEATURES, FEATURES, bias=False)
        self.query = nn.Parameter(torch.randn(FEATURES, dtype=torch.float64))
        self.value = nn.Linear(FEATURES, VALUE_DIM)
        self.head = nn.Linear(FEATURES, 2)
        with torch.no_grad():  # start with narrow densities (sigma2 ~ 0.02): truncated supports
            self.head.bias[1] = -4.0
        self.out = nn.Linear(2 * VALUE_DIM, 1)
        # A Gaussian basis on [0, 1]: 8 centres, variance 0.01.
        self.register_buffer("centers", torch.linspace(0.0, 1.0, N_BASIS, dtype=torch.float64))
        self.register_buffer("widths", torch.full((N_BASIS,), 0.01, dtype=torch.float64))

    def forward(self, x):  # x: (B, L, FEATURES) -> (B,)
        scores = self.key(x) @ self.query * (2.0 / math.sqrt(FEATURES))  # (B, L)
        p = torch.ops.sparcon.sparsemax(scores, -1)
        v = self.value(x)  # (B, L, VALUE_DIM)
        discrete = (p.unsqueeze(-1) * v).sum(1)
        h = self.head(x.mean(1))  # (B, 2)
        mu = torch.sigmoid(h[:, 0])
        sigma2 = F.softplus(h[:, 1]) + 1e-3
        continuous = torch.ops.sparcon.continuous_attention(v, mu, sigma2, self.centers, self.widths,
                                                            0.01, 2.0, None)
        return self.out(torch.cat([discrete, continuous], -1)).squeeze(-1)


def _make_model():
    torch.manual_seed(SEED)
    return TinyAttentionModel().double()


def _global_batch():
    g = torch.Generator().manual_seed(SEED + 1)
    x = torch.randn(GLOBAL_BATCH, LENGTH, FEATURES, generator=g, dtype=torch.float64)
    y = torch.randn(GLOBAL_BATCH, generator=g, dtype=torch.float64)
    return x, y


def _train(model, x, y):
    """STEPS of SGD on the mean squared error; returns the losses and the parameters after each step."""
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses, history = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)  # a mean over the batch
        loss.backward()
        opt.step()
        losses.append(loss.item())
        history.append([p.detach().clone() for p in model.parameters()])
    return losses, history


def _ddp_worker(rank, port, library, outdir):
    """One DDP rank: rendezvous on 127.0.0.1:port, train on its half, torch.save the results."""
    try:
        torch.set_num_threads(1)
        torch.ops.load_library(library)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=WORLD, timeout=timedelta(seconds=30))
        try:
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(_make_model())
            x, y = _global_batch()
            part = GLOBAL_BATCH // WORLD
            losses, history = _train(model, x[rank * part:(rank + 1) * part], y[rank * part:(rank + 1) * part])
            torch.save({"losses": losses, "history": history,
                        "names": [n for n, _ in model.module.named_parameters()]},
                       os.path.join(outdir, f"rank{rank}.pt"))
            dist.barrier()
        finally:
            dist.destroy_process_group()
    except BaseException:
        with open(os.path.join(outdir, f"rank{rank}.err"), "w") as f:
            f.write(traceback.format_exc())
        raise


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_ddp(outdir):
    library = _library_path()
    # Children inherit the environment: one thread each, gloo on the loopback interface.
    saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "GLOO_SOCKET_IFNAME")}
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    if saved["GLOO_SOCKET_IFNAME"] is None and os.path.exists("/sys/class/net/lo"):
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    try:
        context = mp.start_processes(_ddp_worker, args=(_free_port(), library, outdir), nprocs=WORLD,
                                     join=False, start_method="spawn")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while not context.join(timeout=max(0.1, deadline - time.monotonic())):
            if time.monotonic() >= deadline:
                errors = _errors(outdir)
                pytest.fail(f"DDP workers did not finish within {TIMEOUT_S} s{errors}")
    finally:
        for p in context.processes:  # only the workers started above
            if p.is_alive():
                p.terminate()
                p.join(5)
                if p.is_alive():
                    p.kill()
    return [torch.load(os.path.join(outdir, f"rank{r}.pt")) for r in range(WORLD)]


def _errors(outdir):
    text = ""
    for r in range(WORLD):
        path = os.path.join(outdir, f"rank{r}.err")
        if os.path.exists(path):
            with open(path) as f:
                text += f"\n--- rank {r} ---\n{f.read()}"
    return text


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                    reason="torch.distributed with gloo is not available")
def test_ddp_two_ranks_match_single_process_on_global_batch():
    _load_sparcon()
    with tempfile.TemporaryDirectory(prefix="sparcon-ddp-") as outdir:
        ranks = _run_ddp(outdir)

    # The single-process reference on the whole batch, from the same initialisation.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = _make_model()
        initial = [p.detach().clone() for p in model.parameters()]
        x, y = _global_batch()
        losses, history = _train(model, x, y)
    finally:
        torch.set_num_threads(threads)
    names = [n for n, _ in model.named_parameters()]

    assert all(math.isfinite(v) for v in losses)
    # Every parameter is trained: the sparsemax and continuous-attention branches pass gradients.
    for name, p0, p1 in zip(names, initial, history[-1]):
        assert not torch.equal(p0, p1), f"{name} did not change: no gradient reached it"

    for rank, result in enumerate(ranks):
        assert result["names"] == names
        # The rank's local loss is on its half; the halves' mean is the global mean loss.
        assert len(result["history"]) == STEPS
    for step in range(STEPS):
        half_mean = sum(r["losses"][step] for r in ranks) / WORLD
        assert half_mean == pytest.approx(losses[step], rel=1e-9, abs=1e-12), f"loss at step {step}"
        for name, p_single, p0, p1 in zip(names, history[step], ranks[0]["history"][step],
                                          ranks[1]["history"][step]):
            assert torch.equal(p0, p1), f"ranks disagree on {name} after step {step}"
            diff = (p0 - p_single).abs().max().item()
            assert diff <= 1e-6, f"{name} after step {step}: DDP vs single process differ by {diff}"
