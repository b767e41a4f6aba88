#!/usr/bin/python3
"""Benchmarks the sparcon LibTorch operators from Python against PyTorch itself.

    /usr/bin/python3 bench/run_python.py                        # Markdown to stdout
    /usr/bin/python3 bench/run_python.py --markdown out.md      # also to a file
    SPARCON_LIBRARY=/path/libsparcon_torch.so /usr/bin/python3 bench/run_python.py

Runs with Debian's python3-torch (1.13) and the standard library only (no numpy). The operators
are loaded with torch.ops.load_library (from $SPARCON_LIBRARY, else
build/release/torch/libsparcon_torch.so); the sparcon Python package is not imported.

Timed, float32, at 1 and at 2 threads (torch.set_num_threads), all in one process:

- torch.ops.sparcon.sparsemax, .entmax15 and .entmax (alpha 1.25 and 1.75), forward, and
  forward + backward (torch.autograd.grad with a fixed random upstream gradient);
- torch.softmax, forward and forward + backward;
- plain PyTorch references written below: the sort-based sparsemax and entmax-1.5 of the `entmax`
  package (sort, cumsum, support size, threshold), differentiated by autograd through those
  PyTorch ops, and the bisection entmax of `entmax.entmax_bisect` (50 iterations, with that
  package's closed-form backward, as a torch.autograd.Function) for the alpha cases.

Shapes of BENCHMARKS.md part 1: 1024x512, 64x32000, 8x1000000, rows N(0,1) from a fixed seed.
Per (shape, thread count) every measured function gets a warm-up call, a number of calls per
repetition chosen for ~50 ms or more (one call when a call alone takes longer), and several
repetitions; the repetitions of all functions of one (shape, thread count) are interleaved in a
shuffled order so a burst of load from elsewhere is spread over them. Reported: the median
over repetitions of the time per call. Before timing, sparcon is checked against the references
(values and gradients within 1e-5 on a small input), and on the benchmark data the forward
outputs of sparcon and of the reference are compared (max |difference| reported). glibc's heap
thresholds are fixed first (--malloc pinned, see pin_malloc): with its own, whether each call's
freed output goes back to the kernel, to be faulted in again by the next, differs from process to
process, and forward+backward times with it (up to 3x).

Also timed: the per-call overhead of torch.ops.sparcon.sparsemax on a 1x16 input, against
torch.softmax on the same input, torch.ops.aten._softmax (the cost of any call through
torch.ops) and an empty Python function call.
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import platform
import random
import resource
import statistics
import sys
import time

import torch

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, LoadMeter, fmt, git  # noqa: E402

DEFAULT_LIBRARY = os.path.join(ROOT, "build", "release", "torch", "libsparcon_torch.so")

SHAPES = [(1024, 512), (64, 32000), (8, 1000000)]
ALPHAS = [1.25, 1.75]
SEED = 1234


# glibc's mallopt parameters (malloc.h) and the largest mmap threshold it accepts (64-bit).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD_MAX = 32 * 1024 * 1024


def pin_malloc():
    """Keeps glibc's heap from going back to the kernel between calls.

    By default glibc serves a freed block's size from the heap after its first mmap and returns
    the heap's top to the kernel once more than twice that is free there. Whether an output
    freed after each call lands there depends on the heap's layout, which differs from process
    to process: measured on 8192x64 (AMD EPYC, 2026-12-05), sparsemax forward+backward took
    0.35-0.45 ms in four processes of six and 1.0-1.4 ms in the other two, every call faulting
    its 2 MB gradient in page by page; torch.softmax's forward+backward 0.54 ms or 0.83 ms
    likewise. Fixed thresholds (the largest mmap threshold, so every benchmark shape's tensor
    comes from the heap, and no trimming) give every process and every function the same
    conditions. Returns whether glibc accepted both."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, 1 << 30))


# ---------------------------------------------------------------------------------------------
# Plain PyTorch references
# ---------------------------------------------------------------------------------------------

def _arange_like(x, dim):
    """1, 2, ..., d along dim, broadcastable against x."""
    d = x.size(dim)
    rho = torch.arange(1, d + 1, device=x.device, dtype=x.dtype)
    view = [1] * x.dim()
    view[dim] = -1
    return rho.view(view)


def sort_sparsemax(x, dim=-1):
    """Sort-based sparsemax as in the `entmax` package (_sparsemax_threshold_and_support);
    gradients by autograd through the PyTorch ops."""
    x = x - x.max(dim=dim, keepdim=True).values
    srt, _ = torch.sort(x, dim=dim, descending=True)
    cumsum = srt.cumsum(dim) - 1
    rho = _arange_like(x, dim)
    support = rho * srt > cumsum
    k = support.sum(dim=dim, keepdim=True)
    tau = cumsum.gather(dim, k - 1) / k.to(x.dtype)
    return torch.clamp(x - tau, min=0)


def sort_entmax15(x, dim=-1):
    """Sort-based entmax-1.5 as in the `entmax` package (_entmax_threshold_and_support);
    gradients by autograd through the PyTorch ops. The square root is taken after the gather
    (of the one threshold per row), so autograd never differentiates sqrt at 0."""
    x = (x - x.max(dim=dim, keepdim=True).values) / 2
    srt, _ = torch.sort(x, dim=dim, descending=True)
    rho = _arange_like(x, dim)
    mean = srt.cumsum(dim) / rho
    mean_sq = (srt * srt).cumsum(dim) / rho
    ss = rho * (mean_sq - mean * mean)
    delta = (1 - ss) / rho
    with torch.no_grad():
        tau_all = mean - torch.sqrt(torch.clamp(delta, min=0))
        k = (tau_all <= srt).sum(dim=dim, keepdim=True)
    tau = mean.gather(dim, k - 1) - torch.sqrt(torch.clamp(delta.gather(dim, k - 1), min=0))
    return torch.clamp(x - tau, min=0) ** 2


class BisectEntmax(torch.autograd.Function):
    """entmax.root_finding.EntmaxBisectFunction (scalar alpha, ensure_sum_one=True)."""

    @staticmethod
    def forward(ctx, x, alpha, dim, n_iter):
        d = x.shape[dim]
        x = x * (alpha - 1)
        max_val = x.max(dim=dim, keepdim=True).values
        tau_lo = max_val - 1.0                            # _gp(1, alpha) = 1
        tau_hi = max_val - (1.0 / d) ** (alpha - 1)
        inv = 1.0 / (alpha - 1)
        f_lo = torch.clamp(x - tau_lo, min=0).pow(inv).sum(dim) - 1
        dm = tau_hi - tau_lo
        p_m = None
        for _ in range(n_iter):
            dm = dm / 2
            tau_m = tau_lo + dm
            p_m = torch.clamp(x - tau_m, min=0).pow(inv)
            f_m = p_m.sum(dim) - 1
            mask = (f_m * f_lo >= 0).unsqueeze(dim)
            tau_lo = torch.where(mask, tau_m, tau_lo)
        p_m = p_m / p_m.sum(dim=dim, keepdim=True)
        ctx.save_for_backward(p_m)
        ctx.alpha = alpha
        ctx.dim = dim
        return p_m

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        gppr = torch.where(y > 0, y ** (2 - ctx.alpha), y.new_zeros(1))
        dx = dy * gppr
        q = dx.sum(ctx.dim, keepdim=True) / gppr.sum(ctx.dim, keepdim=True)
        dx = dx - q * gppr
        return dx, None, None, None


def bisect_entmax(x, alpha, dim=-1, n_iter=50):
    return BisectEntmax.apply(x, alpha, dim, n_iter)


# ---------------------------------------------------------------------------------------------
# Measured functions
# ---------------------------------------------------------------------------------------------

def make_ops():
    """name -> (family, pass, callable(x) returning the output tensor), plus reference pairing."""
    S = torch.ops.sparcon
    maps = {
        "torch.softmax": lambda x: torch.softmax(x, -1),
        "sparcon sparsemax": lambda x: S.sparsemax(x, -1),
        "sparcon entmax15": lambda x: S.entmax15(x, -1),
    }
    for a in ALPHAS:
        maps["sparcon entmax a=%g" % a] = (lambda a: lambda x: S.entmax(x, a, -1))(a)
    maps["sort sparsemax (PyTorch)"] = sort_sparsemax
    maps["sort entmax15 (PyTorch)"] = sort_entmax15
    for a in ALPHAS:
        maps["bisect entmax a=%g (PyTorch)" % a] = (lambda a: lambda x: bisect_entmax(x, a, -1))(a)
    return maps


REFERENCE_OF = {
    "sparcon sparsemax": "sort sparsemax (PyTorch)",
    "sparcon entmax15": "sort entmax15 (PyTorch)",
}
for _a in ALPHAS:
    REFERENCE_OF["sparcon entmax a=%g" % _a] = "bisect entmax a=%g (PyTorch)" % _a
SLOW = {v for v in REFERENCE_OF.values()}


def forward_call(f, x):
    def run():
        with torch.no_grad():
            return f(x)
    return run


def fwdbwd_call(f, x, g):
    xr = x.detach().requires_grad_(True)

    def run():
        y = f(xr)
        (dx,) = torch.autograd.grad(y, xr, g)
        return dx
    return run


# ---------------------------------------------------------------------------------------------
# Correctness check
# ---------------------------------------------------------------------------------------------

def check(maps, tol=1e-5):
    """sparcon vs the PyTorch references, float32, values and gradients, a few small inputs."""
    gen = torch.Generator().manual_seed(SEED + 7)
    worst = {}
    ok = True
    for scale, shape in [(1.0, (16, 37)), (4.0, (16, 37)), (1.0, (4, 1000)), (0.1, (8, 5))]:
        x = torch.randn(shape, generator=gen) * scale
        g = torch.randn(shape, generator=gen)
        for name, ref in REFERENCE_OF.items():
            xs = x.clone().requires_grad_(True)
            xr = x.clone().requires_grad_(True)
            ys = maps[name](xs)
            yr = maps[ref](xr)
            (gs,) = torch.autograd.grad(ys, xs, g)
            (gr,) = torch.autograd.grad(yr, xr, g)
            dy = (ys - yr).abs().max().item()
            dg = (gs - gr).abs().max().item()
            sums = (ys.detach().sum(-1) - 1).abs().max().item()
            w = worst.setdefault(name, [0.0, 0.0, 0.0])
            w[0], w[1], w[2] = max(w[0], dy), max(w[1], dg), max(w[2], sums)
            if not (dy <= tol and dg <= tol and sums <= tol) or not torch.isfinite(gs).all():
                ok = False
    return ok, worst


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------

def time_calls(run, n):
    t0 = time.perf_counter()
    for _ in range(n):
        run()
    return (time.perf_counter() - t0) / n


def bench_shape(maps, rows, cols, threads, reps, reps_slow, target_s, rng, log):
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(SEED)
    x = torch.randn(rows, cols, generator=gen)
    g = torch.randn(rows, cols, generator=gen)
    cases = []  # [key, run, n, reps, times]
    diffs = {}
    outputs = {}
    for name, f in maps.items():
        for mode in ("fwd", "fwd+bwd"):
            run = forward_call(f, x) if mode == "fwd" else fwdbwd_call(f, x, g)
            t0 = time.perf_counter()
            out = run()                                   # warm-up
            t_first = time.perf_counter() - t0
            if mode == "fwd" and threads == 1:
                outputs[name] = out
            del out
            if t_first > 2 * target_s:
                t_one = t_first                           # slow: the warm-up is the estimate
            else:
                t_one = time_calls(run, 1 if t_first > target_s / 4 else 3)
            n = max(1, int(math.ceil(target_s / max(t_one, 1e-9))))
            r = reps_slow if (name in SLOW and n * t_one > 0.15) else reps
            cases.append([(name, mode), run, n, r, []])
        # forward outputs of sparcon vs its reference, on the benchmark data
        for s, ref in REFERENCE_OF.items():
            if s in outputs and ref in outputs:
                diffs[s] = (outputs[s] - outputs[ref]).abs().max().item()
                del outputs[s], outputs[ref]
    outputs.clear()
    for rep in range(max(c[3] for c in cases)):
        order = [c for c in cases if c[3] > rep]
        rng.shuffle(order)
        for c in order:
            c[4].append(time_calls(c[1], c[2]))
    result = {}
    for key, _, n, r, times in cases:
        med = statistics.median(times)
        spread = (max(times) - min(times)) / med if med > 0 else 0.0
        result[key] = {"median": med, "n": n, "reps": r, "spread": spread}
    log("  %dx%d, %d thread(s): done" % (rows, cols, threads))
    return result, diffs


def empty_function(x):
    return x


def bench_overhead(threads, reps, calls):
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(SEED)
    x = torch.randn(1, 16, generator=gen)
    sp = torch.ops.sparcon.sparsemax
    ssm = torch.ops.sparcon.softmax
    tsm = torch.softmax
    asm = torch.ops.aten._softmax
    fns = {
        "empty Python function f(x)": lambda: empty_function(x),
        "torch.softmax(x, -1)": lambda: tsm(x, -1),
        "torch.ops.sparcon.sparsemax(x, -1)": lambda: sp(x, -1),
        "torch.ops.sparcon.softmax(x, -1)": lambda: ssm(x, -1),
        # The floor of any torch.ops call: an ATen op reached the same way.
        "torch.ops.aten._softmax(x, -1, False)": lambda: asm(x, -1, False),
    }
    with torch.no_grad():
        for f in fns.values():
            for _ in range(1000):
                f()
        times = {k: [] for k in fns}
        for _ in range(reps):
            keys = list(fns)
            random.shuffle(keys)
            for k in keys:
                f = fns[k]
                t0 = time.perf_counter()
                for _ in range(calls):
                    f()
                times[k].append((time.perf_counter() - t0) / calls)
    # the loop + lambda call cost itself is part of every row; subtracted below via the empty one
    return {k: statistics.median(v) for k, v in times.items()}


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

def fmt_ms(s):
    ms = s * 1e3
    return fmt(ms, 2 if ms >= 1 else 3)


def fmt_ratio(r):
    return fmt(r) + "x"


def shape_label(s):
    return "%dx%d" % s


def machine_info():
    model = "?"
    mhz = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "?":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("cpu MHz") and mhz is None:
                    mhz = float(line.split(":", 1)[1])
    except OSError:
        pass
    head = git("rev-parse", "--short", "HEAD") or "?"
    return {
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)),
        "model": model,
        "mhz": mhz,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "head": head,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markdown", metavar="FILE", help="also write the Markdown report here")
    ap.add_argument("--json", metavar="FILE",
                    help="also write the medians here: a list of {threads, shape, op, pass, "
                         "seconds} (bench/run_issue15.py reads it)")
    ap.add_argument("--reps", type=int, default=7, help="repetitions per measurement (default 7)")
    ap.add_argument("--reps-slow", type=int, default=3,
                    help="repetitions for the slow PyTorch references when a repetition takes "
                         "over 0.15 s (default 3)")
    ap.add_argument("--target-ms", type=float, default=60.0,
                    help="minimum time of one repetition, ms (default 60)")
    ap.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    ap.add_argument("--shapes", default="all",
                    help="comma-separated RxC (default: 1024x512,64x32000,8x1000000)")
    ap.add_argument("--malloc", choices=["pinned", "default"], default="pinned",
                    help="pinned (default): fixed glibc heap thresholds, see pin_malloc; "
                         "default: glibc's own, whose trimming varies from process to process")
    args = ap.parse_args()
    malloc_pinned = args.malloc == "pinned" and pin_malloc()

    library = os.environ.get("SPARCON_LIBRARY", DEFAULT_LIBRARY)
    torch.ops.load_library(library)
    shapes = SHAPES if args.shapes == "all" else [
        tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]
    rng = random.Random(SEED)
    random.seed(SEED)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    info = machine_info()
    start = datetime.datetime.now(datetime.timezone.utc)
    meter = LoadMeter(resource.RUSAGE_SELF)
    load0 = os.getloadavg()

    maps = make_ops()
    torch.set_num_threads(1)
    ok, worst = check(maps)
    log("correctness check: %s" % ("passed" if ok else "FAILED"))
    if not ok:
        for k, (dy, dg, ds) in worst.items():
            log("  %s: max |dp| %.2e, max |dgrad| %.2e, max |sum-1| %.2e" % (k, dy, dg, ds))
        sys.exit("sparcon does not match the PyTorch references within 1e-5; not timing")

    results = {}
    diffs = {}
    for t in thread_counts:
        for s in shapes:
            results[(t, s)], d = bench_shape(maps, s[0], s[1], t, args.reps, args.reps_slow,
                                             args.target_ms / 1e3, rng, log)
            if d:
                diffs[s] = d
    overhead = {t: bench_overhead(t, args.reps, 20000) for t in thread_counts}
    log("dispatch overhead: done")

    wall, others = meter.stop()
    load1 = os.getloadavg()
    torch.set_num_threads(1)

    L = []
    L.append("# sparcon from Python (torch.ops.sparcon) against PyTorch")
    L.append("")
    L.append("Run: %s; %s CPUs (%d usable; %s%s); torch %s, Python %s; commit %s; library %s." % (
        start.strftime("%Y-%m-%dT%H:%M:%SZ"), info["cpu_count"], info["affinity"], info["model"],
        (" at %.0f MHz" % info["mhz"]) if info["mhz"] else "", info["torch"], info["python"],
        info["head"], os.path.relpath(library, ROOT) if library.startswith(ROOT) else library))
    L.append("Wall %.0f s; CPU used by other processes during the run: %.2f cores on average "
             "(load average %.2f at start, %.2f at end)." % (wall, others, load0[0], load1[0]))
    L.append("glibc heap: %s." % (
        "fixed thresholds (mmap %d MiB, no trimming; --malloc default for glibc's own)" % (
            MMAP_THRESHOLD_MAX >> 20) if malloc_pinned else "glibc's own thresholds (--malloc default)"))
    L.append("")
    L.append("float32, rows N(0,1) (seed %d). Times: median over repetitions (%d, or %d for the "
             "slow PyTorch references on large inputs) of the time per call, each repetition "
             ">= %.0f ms of calls; warm-up first; repetitions interleaved in shuffled order. "
             "fwd: forward under torch.no_grad(); fwd+bwd: forward with requires_grad and "
             "torch.autograd.grad with a random upstream gradient. Reference = sort-based "
             "PyTorch sparsemax / entmax-1.5 (autograd through sort, cumsum, gather) for "
             "sparcon sparsemax / entmax15, bisection entmax (50 iterations, closed-form "
             "backward, as entmax_bisect) for sparcon entmax alpha." % (
                 SEED, args.reps, args.reps_slow, args.target_ms))
    L.append("")
    L.append("Correctness before timing (float32, small inputs, sparcon vs reference): " + "; ".join(
        "%s |dp| %.1e, |dgrad| %.1e" % (k.replace("sparcon ", ""), w[0], w[1])
        for k, w in worst.items()) + " (all <= 1e-5).")
    if diffs:
        L.append("")
        L.append("Forward on the benchmark data, max |sparcon - reference|: " + "; ".join(
            "%s: %s" % (shape_label(s), ", ".join(
                "%s %.1e" % (k.replace("sparcon ", ""), v) for k, v in d.items()))
            for s, d in diffs.items()) + ".")
    spreads = sorted(v["spread"] for r in results.values() for v in r.values())
    if spreads:
        L.append("")
        L.append("Repetition-to-repetition variation, (max - min) / median over the repetitions "
                 "of one measurement: median %.0f%%, 90th percentile %.0f%%, max %.0f%%." % (
                     100 * statistics.median(spreads),
                     100 * spreads[min(len(spreads) - 1, int(0.9 * len(spreads)))],
                     100 * spreads[-1]))
    L.append("")

    names = list(maps)
    for t in thread_counts:
        L.append("## %d thread%s" % (t, "" if t == 1 else "s"))
        L.append("")
        L.append("Time per call, ms; `vs softmax` = torch.softmax time / this time (same pass; "
                 ">1 = faster than softmax); `vs ref` = reference time / sparcon time (>1 = "
                 "sparcon faster).")
        L.append("")
        hdr = "| op | pass |" + "".join(" %s ms | vs softmax | vs ref |" % shape_label(s)
                                        for s in shapes)
        L.append(hdr)
        L.append("|---|---|" + "---:|---:|---:|" * len(shapes))
        for name in names:
            for mode in ("fwd", "fwd+bwd"):
                row = "| %s | %s |" % (name, mode)
                for s in shapes:
                    r = results[(t, s)]
                    v = r[(name, mode)]["median"]
                    sm = r[("torch.softmax", mode)]["median"]
                    ref = REFERENCE_OF.get(name)
                    vs_ref = fmt_ratio(r[(ref, mode)]["median"] / v) if ref else ""
                    vs_sm = fmt_ratio(sm / v) if name != "torch.softmax" else ""
                    row += " %s | %s | %s |" % (fmt_ms(v), vs_sm, vs_ref)
                L.append(row)
        L.append("")
    if len(thread_counts) > 1:
        t1, t2 = thread_counts[0], thread_counts[1]
        L.append("## Thread speedup (time at %d / time at %d)" % (t1, t2))
        L.append("")
        L.append("| op | pass |" + "".join(" %s |" % shape_label(s) for s in shapes))
        L.append("|---|---|" + "---:|" * len(shapes))
        for name in names:
            for mode in ("fwd", "fwd+bwd"):
                L.append("| %s | %s |" % (name, mode) + "".join(
                    " %s |" % fmt_ratio(results[(t1, s)][(name, mode)]["median"]
                                        / results[(t2, s)][(name, mode)]["median"])
                    for s in shapes))
        L.append("")

    L.append("## Targets: sparsemax and entmax15 >= 2x faster than torch.softmax, "
             ">= 100x faster than the sort-based PyTorch version")
    L.append("")
    L.append("| op | pass | threads |" + "".join(" %s vs softmax | %s vs sort |" % (
        shape_label(s), shape_label(s)) for s in shapes))
    L.append("|---|---|---:|" + "---:|---:|" * len(shapes))
    met = {"softmax": [0, 0], "sort": [0, 0]}
    for name in ("sparcon sparsemax", "sparcon entmax15"):
        for mode in ("fwd", "fwd+bwd"):
            for t in thread_counts:
                row = "| %s | %s | %d |" % (name.replace("sparcon ", ""), mode, t)
                for s in shapes:
                    r = results[(t, s)]
                    v = r[(name, mode)]["median"]
                    a = r[("torch.softmax", mode)]["median"] / v
                    b = r[(REFERENCE_OF[name], mode)]["median"] / v
                    met["softmax"][0] += a >= 2
                    met["softmax"][1] += 1
                    met["sort"][0] += b >= 100
                    met["sort"][1] += 1
                    row += " %s %s | %s %s |" % (fmt_ratio(a), "met" if a >= 2 else "**no**",
                                                 fmt_ratio(b), "met" if b >= 100 else "**no**")
                L.append(row)
    L.append("")
    L.append("Met: >= 2x softmax in %d of %d cases; >= 100x sort-based in %d of %d cases." % (
        met["softmax"][0], met["softmax"][1], met["sort"][0], met["sort"][1]))
    L.append("")

    L.append("## Per-call overhead on a 1x16 input (torch.no_grad, µs per call)")
    L.append("")
    L.append("Each call made from a Python lambda in a loop of 20000; the empty-function row is "
             "that loop + lambda + one Python call, for scale; `- empty` subtracts it.")
    L.append("")
    L.append("| call |" + "".join(" %d thread%s | - empty |" % (t, "" if t == 1 else "s")
                                  for t in thread_counts))
    L.append("|---|" + "---:|---:|" * len(thread_counts))
    for k in overhead[thread_counts[0]]:
        row = "| %s |" % k
        for t in thread_counts:
            o = overhead[t]
            e = o["empty Python function f(x)"]
            row += " %.2f | %.2f |" % (o[k] * 1e6, (o[k] - e) * 1e6)
        L.append(row)
    L.append("")

    text = "\n".join(L)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        rows = [{"threads": t, "shape": shape_label(s), "op": name, "pass": mode, "seconds": m["median"]}
                for (t, s), by_case in results.items() for (name, mode), m in by_case.items()]
        with open(args.json, "w") as f:
            json.dump({"run": start.strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": info, "medians": rows}, f, indent=1)


if __name__ == "__main__":
    main()
