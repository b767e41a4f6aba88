#!/usr/bin/env python3
"""Issue 15's performance targets, all measured on one build by one command, each reported as
met in every run, in some runs or in none.

    python3 bench/run_issue15.py                                  # 3 runs of everything, ~25 min
    python3 bench/run_issue15.py --runs 1 --skip python,threads   # a quick look, ~4 min
    python3 bench/run_issue15.py --bench-dir build/perf/bench --markdown status.md

A run measures (1 thread unless stated, float32, rows of N(0,1) scores):
- bench_discrete: a copy, `add` (the backward's floor: two matrices read, one written), the
  forward and backward of sparsemax and entmax-1.5 and softmax's backward on rows of 16, 32, 64,
  128, 512 and 4096 entries (matrices of 2-4 MiB), and entmax with alpha 1.25, 1.75 and 3 on rows
  of 512; medians of 3 repetitions, interleaved; every op as a ratio to the copy of the same run;
- bench_discrete at 1 and 2 threads (`threads`): the forwards of softmax, sparsemax and
  entmax-1.5 and the backwards of sparsemax and entmax-1.5 on five shapes; 1-thread time over
  2-thread time;
- bench_continuous (`attention`): continuous attention, forward+backward, on issue 15's 2D
  workload (img512: batch 64, 14 x 14 x 512 values, 100 basis functions) and its 1D workload
  (seq160: batch 64, 160 tokens, 64 basis functions), against discrete softmax attention over
  the same values; CPU time, medians of 5 repetitions;
- bench/run_python.py (`python`; Debian's /usr/bin/python3 with torch, the operators from
  --torch-library): torch.softmax's time over sparcon's sparsemax and entmax15, forward and
  forward+backward, rows of 16-512.

The machine's speed drifts between runs, and memory-bound and compute-bound work drift apart,
so the report gives each case's range over the runs. Standard library only.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

from harness import ROOT, LoadMeter, fmt, source_state

SHAPES = ["65536x16", "32768x32", "8192x64", "4096x128", "1024x512", "128x4096"]
THREAD_SHAPES = ["65536x16", "8192x64", "4096x128", "1024x512", "128x4096"]
PYTHON_SHAPES = ["65536x16", "32768x32", "8192x64", "4096x128", "1024x512"]
ALPHAS = ["entmax1.25", "entmax1.75", "entmax3"]
BACKWARDS = ["sparsemax_bwd", "entmax15_bwd", "softmax_bwd"]
THREAD_OPS = ["softmax_fwd", "sparsemax_fwd", "entmax15_fwd", "sparsemax_bwd", "entmax15_bwd"]
PARTS = ["discrete", "threads", "attention", "python"]


def row_length(shape):
    return int(shape.split("x")[1])


def medians(binary, bench_filter, repetitions, min_time=None, time_key="real_time"):
    """{benchmark name without the aggregate suffix: median time} of one run of a Google
    Benchmark binary, random interleaving on."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [binary, f"--benchmark_filter={bench_filter}", f"--benchmark_repetitions={repetitions}",
               "--benchmark_report_aggregates_only=true", "--benchmark_enable_random_interleaving=true",
               f"--benchmark_out={out.name}", "--benchmark_out_format=json"]
        if min_time is not None:
            cmd.append(f"--benchmark_min_time={min_time}")
        print("running:", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out.name) as f:
            result = json.load(f)
    found = {}
    for b in result["benchmarks"]:
        if b.get("aggregate_name") == "median":
            name = b["run_name"].removesuffix("/real_time")
            found[name] = b[time_key]
    return found


class Case:
    """One target on one shape: a value per run, met when value <= limit (at_most) or >= limit."""

    def __init__(self, limit, at_most=True):
        self.limit, self.at_most, self.values = limit, at_most, []  # limit None: no target

    def met(self, v):
        return v <= self.limit if self.at_most else v >= self.limit

    def status(self):
        """"every", "some" or "none" of the runs met the target; None without one."""
        if self.limit is None:
            return None
        hits = sum(self.met(v) for v in self.values)
        return "every" if hits == len(self.values) else "some" if hits else "none"

    def cell(self):
        """The range over the runs: bold where every run met the target, "(some)" where some did."""
        lo, hi = min(self.values), max(self.values)
        text = fmt(lo) + "x" if lo == hi else f"{fmt(lo)}-{fmt(hi)}x"
        return {"every": f"**{text}**", "some": f"{text} (some)"}.get(self.status(), text)


def record(cases, key, limit, value, at_most=True):
    """Appends this run's value to the case `key` (kind, row, column), made on first use."""
    cases.setdefault(key, Case(limit, at_most)).values.append(value)


def measure_discrete(args, cases):
    binary = os.path.join(args.bench_dir, "bench_discrete")
    ops = "copy|add|sparsemax_fwd|entmax15_fwd|" + "|".join(BACKWARDS)
    alphas = "|".join(a + "_fwd" for a in ALPHAS)
    found = medians(binary, f"^({ops})/({'|'.join(SHAPES)})/s1/t1|^({alphas})/1024x512/s1/t1", 3)
    for shape in SHAPES:
        copy = found[f"copy/{shape}/s1/t1"]
        n = row_length(shape)
        for op in ["sparsemax_fwd", "entmax15_fwd"]:
            if n >= 64:  # (rows of 16 and 32 have no forward target)
                limit = 3.0 if n >= 512 else 4.0
                record(cases, ("forward", op, shape), limit, found[f"{op}/{shape}/s1/t1"] / copy)
        for op in BACKWARDS:
            record(cases, ("backward", op, shape), 2.0, found[f"{op}/{shape}/s1/t1"] / copy)
        record(cases, ("floor", "add", shape), None, found[f"add/{shape}/s1/t1"] / copy)
    copy = found["copy/1024x512/s1/t1"]
    for a in ALPHAS:
        record(cases, ("alpha", a + "_fwd", "1024x512"), 8.0, found[f"{a}_fwd/1024x512/s1/t1"] / copy)


def measure_threads(args, cases):
    binary = os.path.join(args.bench_dir, "bench_discrete")
    found = medians(binary, f"^({'|'.join(THREAD_OPS)})/({'|'.join(THREAD_SHAPES)})/s1/t[12]", 3)
    for op in THREAD_OPS:
        for shape in THREAD_SHAPES:
            one, two = found[f"{op}/{shape}/s1/t1"], found[f"{op}/{shape}/s1/t2"]
            record(cases, ("threads", op, shape), 1.6, one / two, at_most=False)


def measure_attention(args, cases):
    binary = os.path.join(args.bench_dir, "bench_continuous")
    for workload in ["img512", "seq160"]:
        found = medians(binary, f"^(lib_fwdbwd|softmax_fwdbwd)/{workload}/.*t1/", 5, 0.1, "cpu_time")
        softmax = found[f"softmax_fwdbwd/{workload}/t1"]
        for alpha in ["a2", "a1.5", "a1"]:
            limit = 2.0 if alpha != "a1" else None  # alpha = 1: the value side alone, no target
            ratio = found[f"lib_fwdbwd/{workload}/{alpha}/t1"] / softmax
            record(cases, ("attention", workload, alpha), limit, ratio)


def measure_python(args, cases):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [args.python, os.path.join(ROOT, "bench", "run_python.py"), "--threads", "1",
               "--shapes", ",".join(PYTHON_SHAPES), "--reps", "5", "--reps-slow", "2", "--json", out.name]
        print("running:", " ".join(cmd), file=sys.stderr, flush=True)
        env = dict(os.environ, SPARCON_LIBRARY=args.torch_library)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        with open(out.name) as f:
            rows = json.load(f)["medians"]
    time = {(r["shape"], r["op"], r["pass"]): r["seconds"] for r in rows if r["threads"] == 1}
    for shape in PYTHON_SHAPES:
        for op in ["sparcon sparsemax", "sparcon entmax15"]:
            for mode in ["fwd", "fwd+bwd"]:
                ratio = time[(shape, "torch.softmax", mode)] / time[(shape, op, mode)]
                record(cases, ("python", f"{op.split()[1]} {mode}", shape), 2.0, ratio, at_most=False)


# The report: what each kind of case is, and its table's rows and columns.
TARGETS = [
    ("forward", "sparsemax and entmax-1.5 forward / copy: at most 4x at rows of 64-128, 3x at 512 and above"),
    ("alpha", "entmax with a general alpha, forward / copy at rows of 512: at most 8x"),
    ("backward", "every backward / copy: at most 2x"),
    ("python", "from Python, torch.softmax's time / sparcon's, forward and forward+backward: at least 2x"),
    ("attention", "continuous attention forward+backward / discrete softmax attention's: at most 2x "
                  "(alpha = 2 and 1.5; alpha = 1 for scale)"),
    ("threads", "1 thread's time / 2 threads': at least 1.6x"),
]


def table(cases, kind, columns):
    rows = dict.fromkeys(key[1] for key in cases if key[0] == kind)  # in the order measured
    lines = ["| | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for r in rows:
        cells = [cases[(kind, r, c)].cell() if (kind, r, c) in cases else "" for c in columns]
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    return lines


def report(cases, runs, info):
    L = ["# Issue 15's targets", "",
         f"Run: {info['start']} to {info['end']} UTC; {runs} run(s) of each part; commit {info['head']}"
         f"{' (src/ or include/ modified)' if info['modified'] else ''}; {info['cpu']}; CPU used by other "
         f"processes meanwhile: {info['others']:.2f} cores on average.",
         "Each cell: the range over the runs; **bold**: met in every run; (some): met in some runs.", ""]
    if info["others"] > 0.2:
        L += [f"**Other processes used {info['others']:.2f} cores on average during the run: the times are "
              "not this build's alone, and the 2-thread ratios mean nothing.**", ""]
    L += ["| target | cases met in every run | in some | in none |", "|---|---|---|---|"]
    for kind, text in TARGETS:
        mine = [c for key, c in cases.items() if key[0] == kind and c.limit is not None]
        if mine:
            count = {s: sum(c.status() == s for c in mine) for s in ("every", "some", "none")}
            L.append(f"| {text} | {count['every']} of {len(mine)} | {count['some']} | {count['none']} |")
    L.append("")
    layouts = [("forward", SHAPES[2:]), ("backward", SHAPES), ("floor", SHAPES), ("alpha", ["1024x512"]),
               ("python", PYTHON_SHAPES), ("attention", ["a2", "a1.5", "a1"]), ("threads", THREAD_SHAPES)]
    titles = dict(TARGETS, floor="`add` / copy, the backward's floor (no target)")
    for kind, columns in layouts:
        if any(key[0] == kind for key in cases):
            L += [f"## {titles[kind]}", ""] + table(cases, kind, columns) + [""]
    return "\n".join(L)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{os.cpu_count()} x {line.split(':', 1)[1].strip()}"
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench-dir", default=os.path.join(ROOT, "build/release/bench"),
                   help="the folder of bench_discrete and bench_continuous")
    p.add_argument("--torch-library", default=os.path.join(ROOT, "build/release/torch/libsparcon_torch.so"))
    p.add_argument("--python", default="/usr/bin/python3", help="a Python with torch, for run_python.py")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: " + ", ".join(PARTS))
    p.add_argument("--markdown", help="also write the report here")
    args = p.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    if skip - set(PARTS):
        p.error(f"--skip: unknown part(s) {sorted(skip - set(PARTS))}; the parts are {', '.join(PARTS)}")
    if args.runs < 1:
        p.error(f"--runs must be at least 1, got {args.runs}")
    for name in ["bench_discrete", "bench_continuous"]:
        if not os.access(os.path.join(args.bench_dir, name), os.X_OK):
            p.error(f"--bench-dir: no executable {name} in {args.bench_dir} (build the bench targets)")
    if "python" not in skip and not os.path.exists(args.torch_library):
        p.error(f"--torch-library: {args.torch_library} does not exist "
                "(build sparcon_torch, or --skip python)")
    measure = {"discrete": measure_discrete, "threads": measure_threads, "attention": measure_attention,
               "python": measure_python}
    state = source_state()
    start = datetime.datetime.now(datetime.timezone.utc)
    meter = LoadMeter()
    cases = {}
    for _ in range(args.runs):
        for part in PARTS:
            if part not in skip:
                measure[part](args, cases)
    _, others = meter.stop()
    end = datetime.datetime.now(datetime.timezone.utc)
    info = {"start": start.strftime("%Y-%m-%d %H:%M"), "end": end.strftime("%H:%M"), "head": state["head"],
            "modified": state["src_include_modified"], "cpu": cpu_model(), "others": others}
    text = report(cases, args.runs, info)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
