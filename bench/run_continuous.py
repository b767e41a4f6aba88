#!/usr/bin/env python3
"""Runs bench_continuous and writes the continuous-attention tables (see BENCHMARKS.md).

    python3 bench/run_continuous.py                       # run, print Markdown to stdout
    python3 bench/run_continuous.py --markdown out.md     # also write it to a file
    python3 bench/run_continuous.py --from-json run.json  # re-analyse a saved run, no timing

Two runs of the binary: `bench_continuous --accuracy` (errors of the library's float32 forward
and of each naive quadrature variant against the library's double-precision computation), then
the timings with --benchmark_repetitions (random interleaving on) and the median of the
repetitions of each benchmark. Benchmarks that ran on a subset of the batch (a /b<k> suffix)
are scaled by 64/k to a whole-batch time and run --slow-repetitions times only.

Tables: median times; naive / library at each grid size M with the accuracy of each (for the
forward and for the expectation alone); the claim "the library is >= 20x faster than the naive
computation at equal or better accuracy"; the cost split; the 2-thread speedup.
Standard library only.
"""
import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (bench_main, fmt, median_of_sorted, noise_line, run_benchmark,  # noqa: E402
                     save_json, source_state)

BATCH = 64
DIMS = ["1d", "2d"]
ALPHAS = ["1", "2", "1.5"]
THREADS = ["1", "2"]
LIB_OPS = ["expect", "expect_bwd", "lib_fwd", "lib_bwd", "lib_fwdbwd"]
NAME = re.compile(r"^([^/]+)/(1d|2d)/a([0-9.]+)/t(\d)(?:/b(\d+))?")
PROBLEM = {"1d": "1D: 64 sequences, L = 512, E = 256, N = 128",
           "2d": "2D: 64 images 14x14, E = 256, N = 100"}
ALPHA_LABEL = {"1": "alpha=1 (closed form)", "2": "alpha=2 (closed form)",
               "1.5": "alpha=1.5 (quadrature, for information)"}
# A naive variant counts as "equal accuracy" when its context error is within this factor of
# the library's float32 error (both sit at the float32 floor set by G and r in float32).
EQUAL = 1.1
TARGET = 20


def run(args):
    source_state_at_start = source_state()
    print("running:", args.binary, "--accuracy", file=sys.stderr)
    t0 = time.monotonic()
    acc = subprocess.run([args.binary, "--accuracy"], check=True, capture_output=True, text=True)
    accuracy = json.loads(acc.stdout)["accuracy"]
    accuracy_wall = time.monotonic() - t0
    result, wall, others = run_benchmark(args, [f"--slow_repetitions={args.slow_repetitions}"])
    result["accuracy"] = accuracy
    result["run_environment"] = {"wall_s": wall, "accuracy_wall_s": accuracy_wall,
                                 "cpu_of_others_cores": others,
                                 "repetitions": args.repetitions,
                                 "slow_repetitions": args.slow_repetitions,
                                 "source": source_state_at_start}
    save_json(result, args.json_out)
    return result


def medians(result):
    """{(op, dim, alpha, threads): (median ms scaled to the whole batch, cv, examples)}."""
    out, cv, single = {}, {}, {}
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    for b in result["benchmarks"]:
        m = NAME.match(b["run_name"])
        if not m:
            continue
        op, dim, alpha, th, sub = m.groups()
        key = (op, dim, alpha, th)
        examples = int(sub) if sub else BATCH
        value = (b["real_time"] * scale[b["time_unit"]] * BATCH / examples, examples)
        if b.get("run_type") != "aggregate":
            single.setdefault(key, []).append(value)  # a benchmark run once has no aggregates
        elif b["aggregate_name"] == "median":
            out[key] = value
        elif b["aggregate_name"] == "cv":
            cv[key] = b["real_time"]
    for key, values in single.items():
        if key not in out:
            values.sort()
            out[key] = median_of_sorted(values)
    return {k: (v[0], cv.get(k), v[1]) for k, v in out.items()}


def efmt(v):
    return "–" if v is None else f"{v:.1e}"


def grid_sizes(med, dim):
    ms = set()
    for (op, d, _, _) in med:
        if d == dim and op.startswith("naive_fwd_M"):
            ms.add(int(op[len("naive_fwd_M"):]))
    return sorted(ms)


def report(result):
    med = medians(result)
    acc = {(a["dim"], f"{a['alpha']:g}", a["method"], a["M"]): a for a in result.get("accuracy", [])}

    def t(op, d, a, th):
        v = med.get((op, d, a, th))
        return None if v is None else v[0]

    def sub(op, d, a, th):
        v = med.get((op, d, a, th))
        return None if v is None else v[2]

    def err(d, a, method, m=0, which="context_error"):
        v = acc.get((d, a, method, m))
        return None if v is None else v[which]

    def ratio(x, y):
        return None if x is None or not y else x / y

    out = []
    env = result.get("run_environment", {})
    ctx = result.get("context", {})
    out.append(f"Run: {ctx.get('date', '?')}, {ctx.get('num_cpus', '?')} CPUs at "
               f"{ctx.get('mhz_per_cpu', '?')} MHz; timing wall {env.get('wall_s', 0):.0f} s "
               f"(+ {env.get('accuracy_wall_s', 0):.0f} s accuracy pass); "
               f"CPU used by other processes during the timing: "
               f"{env.get('cpu_of_others_cores', float('nan')):.2f} cores on average. "
               f"Medians of {env.get('repetitions', '?')} repetitions "
               f"({env.get('slow_repetitions', '?')} for the subset benchmarks marked *). "
               f"Library source: {env.get('source', {})}.\n")
    out.append("Naive = dense midpoint quadrature of the density on M cells (1D) or M x M cells "
               "(2D) over its support (alpha = 1: mu +- 8 sd), then context = H^T (G r) in plain "
               "loops (bench/bench_continuous.cc). Times are ms per call for the whole batch of 64; "
               "* = measured on 16 of the 64 examples (evenly strided) and scaled by 4. Errors: max "
               "over the batch of max|c - c_ref| / max|c_ref| against the library in double "
               "(naive errors on the whole batch).\n")

    # ---- times ----
    for d in DIMS:
        ms = grid_sizes(med, d)
        ops = LIB_OPS + [f"naive_expect_M{m}" for m in ms] + [f"naive_fwd_M{m}" for m in ms]
        cols = [(a, th) for a in ALPHAS for th in THREADS]
        lines = [f"**Median wall time, ms ({PROBLEM[d]})**", "",
                 "| op | " + " | ".join(f"a={a} t{th}" for a, th in cols) + " |",
                 "|---|" + "---:|" * len(cols)]
        for op in ops:
            cells = []
            for a, th in cols:
                v = t(op, d, a, th)
                star = "*" if v is not None and sub(op, d, a, th) != BATCH else ""
                cells.append(fmt(v) + star)
            if all(c == "–" for c in cells):
                continue
            lines.append(f"| {op} | " + " | ".join(cells) + " |")
        out.append("\n".join(lines) + "\n")

    # ---- naive / library at each M, with accuracy ----
    for d in DIMS:
        ms = grid_sizes(med, d)
        for a in ALPHAS:
            lib_c, lib_r = err(d, a, "library"), err(d, a, "library", 0, "r_error")
            lines = [f"**naive / library, {PROBLEM[d].split(':')[0]} {ALPHA_LABEL[a]}** "
                     f"(library: forward {fmt(t('lib_fwd', d, a, '1'))} ms, expectation "
                     f"{fmt(t('expect', d, a, '1'), 3)} ms on 1 thread; context error "
                     f"{efmt(lib_c)}, r error {efmt(lib_r)})", "",
                     "| M | context error | r error | fwd ratio t1 | fwd ratio t2 | "
                     "expectation ratio t1 | expectation ratio t2 |",
                     "|---:|---:|---:|---:|---:|---:|---:|"]
            for m in ms:
                star = "*" if sub(f"naive_fwd_M{m}", d, a, "1") not in (None, BATCH) else ""
                c = err(d, a, "naive", m)
                eq = " (=)" if c is not None and lib_c is not None and c <= EQUAL * lib_c else ""
                lines.append(
                    f"| {m}{star} | {efmt(c)}{eq} | {efmt(err(d, a, 'naive', m, 'r_error'))} | "
                    + " | ".join(fmt(ratio(t(f"naive_{k}_M{m}", d, a, th), t(base, d, a, th)))
                                 for k, base in (("fwd", "lib_fwd"), ("expect", "expect"))
                                 for th in THREADS) + " |")
            out.append("\n".join(lines) + "\n")
    out.append(f"(=): naive context error within {EQUAL}x of the library's float32 error "
               "(both at the float32 floor).\n")

    # ---- the claim ----
    lines = [f"**Claim: library >= {TARGET}x faster than naive at equal or better accuracy** "
             f"(the cheapest naive M whose context error is <= {EQUAL}x the library's; if none "
             "is, the most accurate M, and the ratio is a lower bound of the ratio at equal "
             "accuracy)", "",
             "| problem | alpha | threads | naive M (error) | library error | naive fwd ms | "
             "library fwd ms | fwd ratio | expectation ratio | claim (fwd) |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for d in DIMS:
        ms = grid_sizes(med, d)
        for a in ALPHAS:
            lib_c = err(d, a, "library")
            ok = [m for m in ms if err(d, a, "naive", m) is not None and lib_c is not None
                  and err(d, a, "naive", m) <= EQUAL * lib_c]
            if ok:
                m, note = ok[0], ""
            else:
                cands = [m for m in ms if err(d, a, "naive", m) is not None]
                if not cands:
                    continue
                m = min(cands, key=lambda x: err(d, a, "naive", x))
                note = ", never reaches library accuracy"
            for th in THREADS:
                nf, lf = t(f"naive_fwd_M{m}", d, a, th), t("lib_fwd", d, a, th)
                rf = ratio(nf, lf)
                re_ = ratio(t(f"naive_expect_M{m}", d, a, th), t("expect", d, a, th))
                if rf is None:
                    status = "–"
                elif rf >= TARGET:
                    status = "met" + (" (lower bound)" if note else "")
                else:
                    status = "**not met**" + (" (ratio is a lower bound)" if note else "")
                lines.append(f"| {d} | {a} | {th} | {m} ({efmt(err(d, a, 'naive', m))}{note}) | "
                             f"{efmt(lib_c)} | {fmt(nf)} | {fmt(lf)} | {fmt(rf)} | {fmt(re_)} | "
                             f"{status} |")
    out.append("\n".join(lines) + "\n")

    # ---- cost split ----
    lines = ["**Cost split, ms (share of the library call)**: expectation = expect; G "
             "application = lib_fwd - expect (w = G r and H^T w); backward: Jacobian = expect_bwd "
             "(dmu, dsigma and r), value side = lib_bwd - expect_bwd (H dc, G^T, dvalues)", "",
             "| problem | alpha | threads | forward | expectation | G application | backward | "
             "Jacobian | value side | fwd+bwd |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def share(x, whole):
        return "–" if x is None or not whole else f"{fmt(x)} ({100 * x / whole:.0f}%)"

    for d in DIMS:
        for a in ALPHAS:
            for th in THREADS:
                f, e = t("lib_fwd", d, a, th), t("expect", d, a, th)
                b, j = t("lib_bwd", d, a, th), t("expect_bwd", d, a, th)
                g = None if f is None or e is None else f - e
                v = None if b is None or j is None else b - j
                if f is None:
                    continue
                lines.append(f"| {d} | {a} | {th} | {fmt(f)} | {share(e, f)} | {share(g, f)} | "
                             f"{fmt(b)} | {share(j, b)} | {share(v, b)} | "
                             f"{fmt(t('lib_fwdbwd', d, a, th))} |")
    out.append("\n".join(lines) + "\n")
    out.append("A negative G application or value side means the parts were timed apart and "
               "noise exceeds the difference.\n")

    # ---- 2-thread speedup ----
    for d in DIMS:
        ms = grid_sizes(med, d)
        ops = LIB_OPS + [f"naive_fwd_M{m}" for m in ms]
        lines = [f"**2-thread speedup, time(1 thread) / time(2 threads), {PROBLEM[d]}**", "",
                 "| op | " + " | ".join(f"alpha={a}" for a in ALPHAS) + " |",
                 "|---|" + "---:|" * len(ALPHAS)]
        for op in ops:
            cells = [fmt(ratio(t(op, d, a, "1"), t(op, d, a, "2"))) for a in ALPHAS]
            if all(c == "–" for c in cells):
                continue
            lines.append(f"| {op} | " + " | ".join(cells) + " |")
        out.append("\n".join(lines) + "\n")

    # ---- accuracy ----
    lines = ["**Accuracy against the library in double** (max over the batch of "
             "max|x - x_ref| / max|x_ref| per example; naive on the whole batch)", "",
             "| problem | alpha | method | context error | r error |", "|---|---|---|---:|---:|"]
    for a in result.get("accuracy", []):
        method = "library float32" if a["method"] == "library" else f"naive M = {a['M']}"
        lines.append(f"| {a['dim']} | {a['alpha']:g} | {method} | {efmt(a['context_error'])} | "
                     f"{efmt(a['r_error'])} |")
    out.append("\n".join(lines) + "\n")

    cvs = [v[1] for v in med.values() if v[1] is not None]
    if cvs:
        out.append(noise_line(cvs))
    return "\n".join(out)


def add_arguments(p):
    p.add_argument("--slow-repetitions", type=int, default=2,
                   help="repetitions of the naive benchmarks run on a subset of the batch")


def main():
    bench_main(__doc__, "bench_continuous", run, report, add_arguments)


if __name__ == "__main__":
    main()
