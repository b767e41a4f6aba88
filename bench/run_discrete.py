#!/usr/bin/env python3
"""Runs bench_discrete and writes the ratio tables of BENCHMARKS.md.

    python3 bench/run_discrete.py                       # run, print Markdown to stdout
    python3 bench/run_discrete.py --markdown out.md     # also write it to a file
    python3 bench/run_discrete.py --from-json run.json  # re-analyse a saved run, no timing

The binary is run once with --benchmark_repetitions (random interleaving on, so a burst of
load from elsewhere spreads over many benchmarks instead of hitting one), and the median of
the repetitions of each benchmark is used. Ratios: time / copy time of the same shape, data
and thread count; time / softmax forward time; 2-thread speedup t1 / t2.
Standard library only.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import bench_main, fmt, noise_line, run_benchmark, save_json, source_state  # noqa: E402

SHAPES = ["65536x16", "32768x32", "8192x64", "4096x128", "1024x512", "128x4096", "64x32000", "8x1000000"]
SHORT = ["8192x64", "4096x128"]  # rows of 64-128
MID = ["1024x512", "128x4096"]  # rows of 512-4096
LONG = ["64x32000", "8x1000000"]
DISTS = ["s1", "s4"]
THREADS = ["t1", "t2"]
MAPS = ["softmax", "sparsemax", "entmax15", "entmax1.25", "entmax1.75", "entmax3"]
FWD = [m + "_fwd" for m in MAPS]
BWD = [m + "_bwd" for m in MAPS]
FWDBWD = [m + "_fwdbwd" for m in MAPS]
OPS = ["copy", "add", "sort_sparsemax"] + FWD + BWD + FWDBWD
NAME = re.compile(r"^([^/]+)/(\d+x\d+)/(s\d)/(t\d)")
DIST_LABEL = {"s1": "N(0,1)", "s4": "4N(0,1)"}


def add_arguments(p):
    p.add_argument("--cpu-time", action="store_true",
                   help="medians of CPU time instead of wall time (steadier on a shared machine; "
                        "for 1 thread only: the 2-thread CPU time sums both threads)")
    p.add_argument("--simd-target", help="run the library's kernels of this SIMD target (AVX2, "
                                         "SSE4, ...) instead of the CPU's best")


def run(args):
    source_state_at_start = source_state()
    extra = [f"--simd_target={args.simd_target}"] if args.simd_target else []
    result, wall, others = run_benchmark(args, extra)
    result["run_environment"] = {"wall_s": wall, "cpu_of_others_cores": others,
                                 "source": source_state_at_start, "cpu_time": args.cpu_time,
                                 "simd_target": result.get("context", {}).get("simd_target", "?")}
    save_json(result, args.json_out)
    return result


def medians(result):
    """{(op, shape, dist, threads): (median_us, cv)} from the aggregates (wall or CPU time)."""
    field = "cpu_time" if result.get("run_environment", {}).get("cpu_time") else "real_time"
    out, cv = {}, {}
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    for b in result["benchmarks"]:
        if b.get("run_type") != "aggregate":
            continue
        m = NAME.match(b["run_name"])
        if not m:
            continue
        key = m.groups()
        if b["aggregate_name"] == "median":
            out[key] = b[field] * scale[b["time_unit"]]
        elif b["aggregate_name"] == "cv":
            cv[key] = b[field]  # a fraction, whatever the unit
    return {k: (v, cv.get(k)) for k, v in out.items()}


def table(title, rows, cols, cell):
    lines = [f"**{title}**", "", "| op | " + " | ".join(c[1] for c in cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for op in rows:
        cells = [cell(op, c[0]) for c in cols]
        if all(x == "–" for x in cells):
            continue
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def report(result):
    med = medians(result)
    t = lambda op, s, d, th: med.get((op, s, d, th), (None, None))[0]

    def ratio(op, base, s, d, th):
        a, b = t(op, s, d, th), t(base, s, d, th)
        return None if a is None or not b else a / b

    cols = [((s, d), f"{s} {DIST_LABEL[d]}") for s in SHAPES for d in DISTS]
    out = []
    env = result.get("run_environment", {})
    ctx = result.get("context", {})
    out.append(f"Run: {ctx.get('date', '?')}, {ctx.get('num_cpus', '?')} CPUs at "
               f"{ctx.get('mhz_per_cpu', '?')} MHz; wall {env.get('wall_s', 0):.0f} s; "
               f"CPU used by other processes during the run: "
               f"{env.get('cpu_of_others_cores', float('nan')):.2f} cores on average. "
               f"SIMD target: {ctx.get('simd_target', '?')}. "
               f"Library source: {env.get('source', {})}.\n")
    for th in THREADS:
        what = "CPU" if env.get("cpu_time") else "wall"
        out.append(table(f"Median {what} time, µs ({th[1]} thread{'s' if th == 't2' else ''})",
                         OPS, cols, lambda op, c: fmt(t(op, c[0], c[1], th))))
    for th in THREADS:
        out.append(table(f"time / copy time, same shape, data and thread count ({th[1]} "
                         f"thread{'s' if th == 't2' else ''})", OPS[1:], cols,
                         lambda op, c: fmt(ratio(op, "copy", c[0], c[1], th))))
    for th in THREADS:
        out.append(table(f"time / softmax forward time ({th[1]} thread{'s' if th == 't2' else ''})",
                         ["sort_sparsemax"] + FWD[1:] + FWDBWD, cols,
                         lambda op, c: fmt(ratio(op, "softmax_fwd", c[0], c[1], th))))
    out.append(table("2-thread speedup, time(1 thread) / time(2 threads)", OPS, cols,
                     lambda op, c: fmt(None if not t(op, c[0], c[1], "t2") or t(op, c[0], c[1], "t1") is None
                                       else t(op, c[0], c[1], "t1") / t(op, c[0], c[1], "t2"))))
    cvs = [v[1] for v in med.values() if v[1] is not None]
    if cvs:
        out.append(noise_line(cvs))
    out.append(targets(t, ratio))
    return "\n".join(out)


def targets(t, ratio):
    """Each target over every (data, threads) instance; met only when every instance is."""
    rows = []

    def check(label, ops, shapes, value, limit, cmp="<="):
        worst, where, n, bad = None, None, 0, 0
        for op in ops:
            for s in shapes:
                for d in DISTS:
                    for th in THREADS:
                        v = value(op, s, d, th)
                        if v is None:
                            continue
                        n += 1
                        ok = v <= limit if cmp == "<=" else v >= limit
                        bad += not ok
                        worse = worst is None or (v > worst if cmp == "<=" else v < worst)
                        if worse:
                            worst, where = v, f"{op} {s} {DIST_LABEL[d]} {th}"
        if n == 0:
            return
        status = "met" if bad == 0 else f"**not met** ({bad}/{n} instances miss)"
        rows.append(f"| {label} | {cmp} {limit} | {fmt(worst)} ({where}) | {status} |")

    # Issue 15's targets (the issue 2 ones on long rows kept).
    for op in ["sparsemax_fwd", "entmax15_fwd"]:
        check(f"{op} / copy, rows 32k and 1M", [op], LONG,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 1.5)
        check(f"{op} / copy, rows 512 and more", [op], MID + LONG,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 3)
        check(f"{op} / copy, rows 64-128", [op], SHORT,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 4)
        check(f"{op} / softmax_fwd, every shape (faster than softmax)", [op], SHAPES,
              lambda o, s, d, th: ratio(o, "softmax_fwd", s, d, th), 1)
    for op in ["entmax1.25_fwd", "entmax1.75_fwd", "entmax3_fwd"]:
        check(f"{op} / copy, rows 512", [op], ["1024x512"],
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 8)
        check(f"{op} / copy, rows >= 32k", [op], LONG,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 5)
    for op in BWD:
        check(f"{op} (backward alone) / copy, every shape", [op], SHAPES,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 2)

    def speedup(o, s, d, th):
        if th != "t1" or t(o, s, d, "t2") is None or t(o, s, d, "t1") is None:
            return None
        return t(o, s, d, "t1") / t(o, s, d, "t2")

    for op in FWD + BWD:
        check(f"{op} 2-thread speedup, every shape", [op], SHAPES, speedup, 1.6, ">=")
    head = ["**Targets** (worst instance over both data sets and both thread counts)", "",
            "| target | limit | worst measured (where) | status |", "|---|---|---|---|"]
    return "\n".join(head + rows) + "\n"


def main():
    bench_main(__doc__, "bench_discrete", run, report, add_arguments)


if __name__ == "__main__":
    main()
