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
import argparse
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SHAPES = ["1024x512", "64x32000", "8x1000000"]
DISTS = ["s1", "s4"]
THREADS = ["t1", "t2"]
MAPS = ["softmax", "sparsemax", "entmax15", "entmax1.25", "entmax1.75", "entmax3"]
FWD = [m + "_fwd" for m in MAPS]
BWD = [m + "_bwd" for m in MAPS]
FWDBWD = [m + "_fwdbwd" for m in MAPS]
OPS = ["copy", "sort_sparsemax"] + FWD + BWD + FWDBWD
NAME = re.compile(r"^([^/]+)/(\d+x\d+)/(s\d)/(t\d)")
DIST_LABEL = {"s1": "N(0,1)", "s4": "4N(0,1)"}


def cpu_ticks():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def source_state():
    """HEAD commit, whether src/ or include/ differ from it, and a hash of their contents:
    the library was being edited while benchmarks were taken, so a table is only meaningful
    together with the source it timed."""
    def git(*a):
        try:
            return subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "?"
    h = hashlib.sha256()
    for top in ("src", "include"):
        for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, top))):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, ROOT).encode())
                with open(path, "rb") as f:
                    h.update(f.read())
    dirty = git("status", "--porcelain", "--", "src", "include")
    return {"head": git("rev-parse", "--short", "HEAD"),
            "src_include_modified": bool(dirty and dirty != "?"),
            "src_include_sha256": h.hexdigest()[:16]}


def run(args):
    cmd = [
        args.binary,
        "--benchmark_format=json",
        f"--benchmark_out={args.json_out}",
        "--benchmark_out_format=json",
        f"--benchmark_repetitions={args.repetitions}",
        f"--benchmark_min_time={args.min_time}",
        "--benchmark_report_aggregates_only=true",
        "--benchmark_enable_random_interleaving=true",
    ]
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    print("running:", " ".join(cmd), file=sys.stderr)
    source_state_at_start = source_state()
    hz = os.sysconf("SC_CLK_TCK")
    busy0, _ = cpu_ticks()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy1, _ = cpu_ticks()
    ours = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    others = max(0.0, (busy1 - busy0) / hz - ours) / wall
    with open(args.json_out) as f:
        result = json.load(f)
    result["run_environment"] = {"wall_s": wall, "cpu_of_others_cores": others,
                                 "source": source_state_at_start}
    with open(args.json_out, "w") as f:
        json.dump(result, f, indent=1)
    return result


def medians(result):
    """{(op, shape, dist, threads): (median_us, cv)} from the aggregates."""
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
            out[key] = b["real_time"] * scale[b["time_unit"]]
        elif b["aggregate_name"] == "cv":
            cv[key] = b["real_time"]  # a fraction, whatever the unit
    return {k: (v, cv.get(k)) for k, v in out.items()}


def fmt(v, digits=2):
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}f}"


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
               f"Library source: {env.get('source', {})}.\n")
    for th in THREADS:
        out.append(table(f"Median wall time, µs ({th[1]} thread{'s' if th == 't2' else ''})",
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
        cvs.sort()
        out.append(f"Noise: coefficient of variation over the repetitions, median "
                   f"{100 * cvs[len(cvs) // 2]:.1f}%, 90th percentile "
                   f"{100 * cvs[int(0.9 * (len(cvs) - 1))]:.1f}%, max {100 * cvs[-1]:.1f}%.\n")
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

    big = SHAPES[1:]
    for op in ["sparsemax_fwd", "entmax15_fwd"]:
        check(f"{op} / copy, rows 32k and 1M", [op], big,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 1.5)
        check(f"{op} / copy, rows 512", [op], SHAPES[:1],
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 4)
        check(f"{op} / softmax_fwd, every shape (faster than softmax)", [op], SHAPES,
              lambda o, s, d, th: ratio(o, "softmax_fwd", s, d, th), 1)
    for op in ["entmax1.25_fwd", "entmax1.75_fwd", "entmax3_fwd"]:
        check(f"{op} / copy, rows >= 32k", [op], big,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 5)
    for op in BWD:
        check(f"{op} (backward alone) / copy, every shape", [op], SHAPES,
              lambda o, s, d, th: ratio(o, "copy", s, d, th), 2)

    def speedup(o, s, d, th):
        if th != "t1" or t(o, s, d, "t2") is None or t(o, s, d, "t1") is None:
            return None
        return t(o, s, d, "t1") / t(o, s, d, "t2")

    for op in FWD + BWD:
        check(f"{op} 2-thread speedup, rows 32k and 1M", [op], big, speedup, 1.6, ">=")
    head = ["**Targets** (worst instance over both data sets and both thread counts)", "",
            "| target | limit | worst measured (where) | status |", "|---|---|---|---|"]
    return "\n".join(head + rows) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(ROOT, "build/release/bench/bench_discrete"))
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.1, help="seconds per repetition")
    p.add_argument("--filter", default="", help="--benchmark_filter regex")
    p.add_argument("--json-out", default=os.path.join(ROOT, "build/release/bench_discrete.json"))
    p.add_argument("--from-json", help="analyse this saved JSON instead of running")
    p.add_argument("--markdown", help="also write the Markdown report here")
    args = p.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            result = json.load(f)
    else:
        result = run(args)
    text = report(result)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
