#!/usr/bin/env python3
"""2D continuous attention against discrete softmax attention on issue 15's workload (batch 64,
values 14 x 14 x 512, the paper's 100-Gaussian basis, lambda 0.01): runs bench_continuous's
img512 benchmarks (bench/bench_continuous.cc, "issue 15") and prints the medians with each
time's ratio to discrete softmax attention (forward to its forward, forward+backward and
backward to its forward+backward) and to a copy of the values.

    python3 bench/run_attention_2d.py --binary build/perf2d/bench/bench_continuous

With --workload seq160 the same for 1D continuous attention on issue 15's 1D workload (batch 64,
160 tokens of 512 features, the paper's basis of 64 Gaussians, lambda 0.01) against discrete
softmax attention over the 160 tokens (no expect_bwd row there).

Times are wall-clock medians of --repetitions runs (random interleaving); with --cpu-time the
CPU time of the benchmark's thread instead (steadier on a shared machine at 1 thread).
lib_bwd and expect_bwd alone reuse a kept forward of the same inputs when one of the last four
calls had them (expectation_2d.cc), so they depend on the order the benchmarks ran in; the
forward+backward rows (a training step) do not. Standard library only.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import bench_main, fmt, run_benchmark, save_json, source_state  # noqa: E402

OPS = ["expect", "expect_bwd", "lib_fwd", "lib_bwd", "lib_fwdbwd"]
ALPHAS = ["a1", "a2", "a1.5"]
SCALE = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def add_arguments(p):
    p.add_argument("--threads", default="1", help="1 or 2")
    p.add_argument("--cpu-time", action="store_true", help="report CPU time instead of wall time")
    p.add_argument("--workload", default="img512", choices=["img512", "seq160"],
                   help="img512: 2D, 14 x 14 x 512 values, 100 basis functions (default); "
                        "seq160: 1D, 160 x 512 values, 64 basis functions")


def run(args):
    if not args.filter:
        args.filter = f"{args.workload}/.*t{args.threads}/|copy/{args.workload}"
    state = source_state()
    result, wall, others = run_benchmark(args)
    result["run_environment"] = {"wall_s": wall, "cpu_of_others_cores": others,
                                 "repetitions": args.repetitions, "source": state,
                                 "cpu_time": args.cpu_time, "workload": args.workload}
    save_json(result, args.json_out)
    return result


def report(result):
    env = result.get("run_environment", {})
    field = "cpu_time" if env.get("cpu_time") else "real_time"
    med = {}
    for b in result["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            name = b["run_name"].replace("/real_time", "")
            med[name] = b[field] * SCALE[b["time_unit"]]
    threads = next((n.rsplit("/t", 1)[1] for n in med if n.startswith("softmax_fwd/")), "1")
    w = env.get("workload", "img512")
    soft_f = med.get(f"softmax_fwd/{w}/t{threads}")
    soft_fb = med.get(f"softmax_fwdbwd/{w}/t{threads}")
    copy = med.get(f"copy/{w}/t1")
    ctx = result.get("context", {})
    out = [f"Run: {ctx.get('date', '?')}, {ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz; "
           f"{threads} thread(s); {field} medians of {env.get('repetitions', '?')} repetitions; CPU used by "
           f"other processes meanwhile: {env.get('cpu_of_others_cores', float('nan')):.2f} cores on average; "
           f"source {env.get('source', {})}.", "",
           f"Discrete softmax attention: forward {fmt(soft_f)} ms, forward+backward {fmt(soft_fb)} ms; "
           f"copy of the values ({'25.7' if w == 'img512' else '21.0'} MB): {fmt(copy)} ms.", "",
           "| op | " + " | ".join(f"alpha = {a[1:]}" for a in ALPHAS) + " |", "|---|" + "---:|" * len(ALPHAS)]

    def cell(op, a):
        v = med.get(f"{op}/{w}/{a}/t{threads}")
        if v is None:
            return "–"
        base = soft_f if op in ("expect", "lib_fwd") else soft_fb
        return f"{fmt(v)} ms ({fmt(v / base)}x softmax, {fmt(v / copy)}x copy)" if base and copy else f"{fmt(v)} ms"

    for op in OPS:
        out.append(f"| {op} | " + " | ".join(cell(op, a) for a in ALPHAS) + " |")
    out.append("")
    out.append("Ratios: expect and lib_fwd against softmax attention's forward; expect_bwd, lib_bwd and "
               "lib_fwdbwd against its forward+backward.")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    bench_main(__doc__, "bench_continuous", run, report, add_arguments)
