#!/usr/bin/python3
"""Benchmarks the device-generic kernels of sparcon (torch/src/generic/, ATen operations only) on the
CPU, against the core (Highway) and against the `entmax` package's PyTorch algorithms.

    /usr/bin/python3 bench/run_generic.py                        # Markdown to stdout
    /usr/bin/python3 bench/run_generic.py --markdown out.md      # also to a file
    SPARCON_LIBRARY=/path/libsparcon_torch.so /usr/bin/python3 bench/run_generic.py

The generic kernels are what runs on a GPU; on the CPU they are selected with the environment
variable SPARCON_BACKEND=generic, which the library reads at every call: each generic case below
sets it before its call and resets it after (two putenv calls, about a microsecond). Timed,
float32, forward and forward + backward, at the thread counts given (default 1):

- sparcon sparsemax, entmax15, entmax (alpha 1.25 and 1.75) on the generic kernels and on the core;
- torch.softmax;
- the PyTorch references of bench/run_python.py: the sort-based sparsemax and entmax-1.5 of the
  `entmax` package (autograd through the PyTorch ops) and its 50-step bisection entmax with its
  closed-form backward.

Shapes, data, warm-up, repetitions (interleaved, shuffled) and medians as in bench/run_python.py,
whose timing code this script reuses. Before timing, the generic kernels are compared with the
core on the benchmark data (max |difference| reported).

    /usr/bin/python3 bench/run_generic.py --expectation-2d      # only the 2D expectation

`--expectation-2d` times instead the 2D continuous expectation r = E_p[psi] (forward, and forward
+ backward to mu and Sigma), generic against core, float32, 1 thread: 16 densities (mu in
[0.1, 0.9]^2, Sigma = L L^T + 0.001 I, L with N(0, 0.01) entries, seed 1234) against the paper's
10 x 10 basis (variance 0.001), alpha 1 and 2; median of --reps repetitions of one call each.
"""
import argparse
import datetime
import os
import random
import resource
import sys

import torch

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_python as rp  # noqa: E402
from harness import ROOT, LoadMeter  # noqa: E402


def generic(f):
    """f run with SPARCON_BACKEND=generic."""
    def run(x):
        os.environ["SPARCON_BACKEND"] = "generic"
        try:
            return f(x)
        finally:
            os.environ["SPARCON_BACKEND"] = "core"
    return run


def make_ops():
    S = torch.ops.sparcon
    sparcon_maps = {"sparsemax": lambda x: S.sparsemax(x, -1), "entmax15": lambda x: S.entmax15(x, -1)}
    for a in rp.ALPHAS:
        sparcon_maps["entmax a=%g" % a] = (lambda a: lambda x: S.entmax(x, a, -1))(a)
    maps = {"torch.softmax": lambda x: torch.softmax(x, -1)}
    for name, f in sparcon_maps.items():
        maps["generic " + name] = generic(f)
        maps["core " + name] = f
    maps["sort sparsemax (PyTorch)"] = rp.sort_sparsemax
    maps["sort entmax15 (PyTorch)"] = rp.sort_entmax15
    for a in rp.ALPHAS:
        maps["bisect entmax a=%g (PyTorch)" % a] = (lambda a: lambda x: rp.bisect_entmax(x, a, -1))(a)
    return maps, list(sparcon_maps)


def bench_expectation_2d(reps, log):
    """The 2D expectation (see the module's docstring): Markdown lines."""
    import time
    import statistics
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import sparcon
    torch.set_num_threads(1)
    S = torch.ops.sparcon
    g = torch.Generator().manual_seed(rp.SEED)
    mu = torch.rand(16, 2, generator=g) * 0.8 + 0.1
    L = torch.randn(16, 2, 2, generator=g) * 0.1
    sigma = L @ L.transpose(1, 2) + 0.001 * torch.eye(2)
    c, w = sparcon.continuous.default_basis_2d(10)
    weights = torch.randn(16, 100, generator=g)
    lines = ["| alpha | pass | generic (ms) | core (ms) | generic / core | max abs generic - core |", "|---|---|---:|---:|---:|---:|"]
    for alpha in (1.0, 2.0):
        out = {}
        for backend in ("core", "generic"):
            os.environ["SPARCON_BACKEND"] = backend
            out[backend] = S.continuous_expectation(mu, sigma, c, w, alpha)
        os.environ["SPARCON_BACKEND"] = "core"
        diff = (out["generic"] - out["core"]).abs().max().item()
        for mode in ("fwd", "fwd+bwd"):
            t = {}
            for backend in ("core", "generic"):
                os.environ["SPARCON_BACKEND"] = backend
                def run():
                    if mode == "fwd":
                        with torch.no_grad():
                            S.continuous_expectation(mu, sigma, c, w, alpha)
                    else:
                        m, s = mu.clone().requires_grad_(), sigma.clone().requires_grad_()
                        (S.continuous_expectation(m, s, c, w, alpha) * weights).sum().backward()
                run()  # warm-up
                times = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    run()
                    times.append(time.perf_counter() - t0)
                t[backend] = statistics.median(times)
            os.environ["SPARCON_BACKEND"] = "core"
            log("alpha %g %s: generic %.4g s, core %.4g s" % (alpha, mode, t["generic"], t["core"]))
            lines.append("| %g | %s | %s | %s | %s | %s |" % (alpha, mode, rp.fmt_ms(t["generic"]), rp.fmt_ms(t["core"]),
                                                         rp.fmt_ratio(t["generic"] / t["core"]),
                                                         "%.1e" % diff if mode == "fwd" else ""))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markdown", metavar="FILE", help="also write the Markdown report here")
    ap.add_argument("--reps", type=int, default=5, help="repetitions per measurement (default 5)")
    ap.add_argument("--reps-slow", type=int, default=3,
                    help="repetitions for the slow PyTorch references when a repetition takes over 0.15 s")
    ap.add_argument("--target-ms", type=float, default=60.0, help="minimum time of one repetition, ms")
    ap.add_argument("--threads", default="1", help="thread counts (default 1)")
    ap.add_argument("--shapes", default="all", help="comma-separated RxC (default: 1024x512,64x32000,8x1000000)")
    ap.add_argument("--expectation-2d", action="store_true",
                    help="time only the 2D continuous expectation, generic against core (see above)")
    args = ap.parse_args()

    library = os.environ.get("SPARCON_LIBRARY", rp.DEFAULT_LIBRARY)
    torch.ops.load_library(library)
    os.environ["SPARCON_BACKEND"] = "core"
    if args.expectation_2d:
        info = rp.machine_info()
        start = datetime.datetime.now(datetime.timezone.utc)
        lines = bench_expectation_2d(args.reps, lambda m: print(m, file=sys.stderr, flush=True))
        text = "\n".join(["# The 2D continuous expectation, generic against core (float32, 1 thread)", "",
                          "Run: %s; commit %s; torch %s." % (start.strftime("%Y-%m-%dT%H:%M:%SZ"), info["head"],
                                                             info["torch"]), ""] + lines) + "\n"
        print(text)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(text)
        return
    shapes = rp.SHAPES if args.shapes == "all" else [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]
    rng = random.Random(rp.SEED)
    random.seed(rp.SEED)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    maps, names = make_ops()
    # bench_shape compares each sparcon output with its reference on the benchmark data: here the
    # generic kernels with the core.
    rp.REFERENCE_OF = {"generic " + n: "core " + n for n in names}
    rp.SLOW = {"sort sparsemax (PyTorch)", "sort entmax15 (PyTorch)"} | {
        "bisect entmax a=%g (PyTorch)" % a for a in rp.ALPHAS}
    reference = {"sparsemax": "sort sparsemax (PyTorch)", "entmax15": "sort entmax15 (PyTorch)"}
    for a in rp.ALPHAS:
        reference["entmax a=%g" % a] = "bisect entmax a=%g (PyTorch)" % a

    info = rp.machine_info()
    start = datetime.datetime.now(datetime.timezone.utc)
    meter = LoadMeter(resource.RUSAGE_SELF)
    load0 = os.getloadavg()
    results, diffs = {}, {}
    for t in thread_counts:
        for s in shapes:
            results[(t, s)], diffs[(t, s)] = rp.bench_shape(maps, s[0], s[1], t, args.reps, args.reps_slow,
                                                            args.target_ms / 1e3, rng, log)
    wall, others = meter.stop()
    load1 = os.getloadavg()

    L = ["# sparcon's device-generic kernels on the CPU, against the core and the entmax package's PyTorch algorithms", ""]
    L.append("Run: %s; %s CPUs (%d usable; %s%s); torch %s, Python %s; commit %s; library %s." % (
        start.strftime("%Y-%m-%dT%H:%M:%SZ"), info["cpu_count"], info["affinity"], info["model"],
        (" at %.0f MHz" % info["mhz"]) if info["mhz"] else "", info["torch"], info["python"], info["head"],
        os.path.relpath(library, ROOT) if library.startswith(ROOT) else library))
    L.append("Wall %.0f s; CPU used by other processes during the run: %.2f cores on average "
             "(load average %.2f at start, %.2f at end)." % (wall, others, load0[0], load1[0]))
    L.append("")
    L.append("float32, rows N(0,1) (seed %d). Times: median over %d repetitions (%d for the slow references on "
             "large inputs) of the time per call, each repetition >= %.0f ms of calls, interleaved in shuffled "
             "order. `vs ref`: the PyTorch reference's time / the generic kernel's (sort-based for sparsemax and "
             "entmax15, 50-step bisection for entmax); `vs core`: the generic kernel's time / the core's." % (
                 rp.SEED, args.reps, args.reps_slow, args.target_ms))
    for t in thread_counts:
        L.append("")
        L.append("## %d thread%s" % (t, "" if t == 1 else "s"))
        L.append("")
        L.append("| shape | map | pass | generic | core | PyTorch reference | torch.softmax | vs ref | vs core | max abs generic - core |")
        L.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for s in shapes:
            res = results[(t, s)]
            for n in names:
                for mode in ("fwd", "fwd+bwd"):
                    g = res[("generic " + n, mode)]["median"]
                    c = res[("core " + n, mode)]["median"]
                    r = res[(reference[n], mode)]["median"]
                    sm = res[("torch.softmax", mode)]["median"]
                    d = diffs[(t, s)].get("generic " + n)
                    L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        rp.shape_label(s), n, mode, rp.fmt_ms(g), rp.fmt_ms(c), rp.fmt_ms(r), rp.fmt_ms(sm),
                        rp.fmt_ratio(r / g), rp.fmt_ratio(g / c), "%.1e" % d if (d is not None and mode == "fwd") else ""))
    text = "\n".join(L) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
