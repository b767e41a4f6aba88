"""What the benchmark scripts of bench/ share (run_discrete.py, run_continuous.py, run_python.py):
the description of the machine and of the source a run timed, the load other processes put on
the machine meanwhile, running a Google Benchmark binary, medians, number formats, the noise
line and the command line of the scripts that analyse a Google Benchmark run.
Standard library only.
"""
import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cpu_ticks():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


class LoadMeter:
    """Wall time of a stretch of work and the CPU that other processes used meanwhile (in cores,
    on average): the machine's busy time from /proc/stat less our own. `who` is
    resource.RUSAGE_CHILDREN when the work runs in a child process, RUSAGE_SELF when it runs
    here."""

    def __init__(self, who=resource.RUSAGE_CHILDREN):
        self.who = who
        self.busy0, _ = cpu_ticks()
        self.usage0 = resource.getrusage(who)
        self.t0 = time.monotonic()

    def stop(self):
        """(wall seconds, cores used by other processes on average)."""
        wall = time.monotonic() - self.t0
        usage = resource.getrusage(self.who)
        busy, _ = cpu_ticks()
        ours = (usage.ru_utime - self.usage0.ru_utime) + (usage.ru_stime - self.usage0.ru_stime)
        others = max(0.0, (busy - self.busy0) / os.sysconf("SC_CLK_TCK") - ours) / wall if wall > 0 else 0.0
        return wall, others


def git(*args):
    """Output of a git command in the repository, "?" when git cannot answer."""
    try:
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def source_state():
    """HEAD commit, whether src/ or include/ differ from it, and a hash of their contents:
    the library was being edited while benchmarks were taken, so a table is only meaningful
    together with the source it timed."""
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


def run_benchmark(args, extra=()):
    """Runs args.binary once with args.repetitions repetitions of args.min_time seconds (random
    interleaving on, so a burst of load from elsewhere spreads over many benchmarks instead of
    hitting one), aggregates only, filtered by args.filter; the JSON goes to args.json_out.
    Returns (the parsed JSON, wall seconds, cores used by other processes meanwhile)."""
    cmd = [
        args.binary,
        *extra,
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
    meter = LoadMeter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall, others = meter.stop()
    with open(args.json_out) as f:
        return json.load(f), wall, others


def save_json(result, path):
    with open(path, "w") as f:
        json.dump(result, f, indent=1)


def median_of_sorted(values):
    """The upper median, values[len // 2], of sorted values (what the tables have always used)."""
    return values[len(values) // 2]


def fmt(v, digits=2):
    """A time or ratio with three significant digits or so ("–" for a missing one)."""
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}f}"


def noise_line(cvs):
    """The closing line on the coefficients of variation of the medians ("" when none)."""
    if not cvs:
        return ""
    cvs = sorted(cvs)
    return (f"Noise: coefficient of variation over the repetitions, median "
            f"{100 * median_of_sorted(cvs):.1f}%, 90th percentile "
            f"{100 * cvs[int(0.9 * (len(cvs) - 1))]:.1f}%, max {100 * cvs[-1]:.1f}%.\n")


def bench_main(doc, name, run, report, add_arguments=None):
    """The command line of a script that runs the Google Benchmark binary bench/<name> (or
    analyses a saved run of it) and prints its Markdown report: --binary, --repetitions,
    --min-time, --filter, --json-out, --from-json, --markdown, and what add_arguments adds."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(ROOT, f"build/release/bench/{name}"))
    p.add_argument("--repetitions", type=int, default=5)
    if add_arguments:
        add_arguments(p)
    p.add_argument("--min-time", type=float, default=0.1, help="seconds per repetition")
    p.add_argument("--filter", default="", help="--benchmark_filter regex")
    p.add_argument("--json-out", help="where the benchmark's JSON goes (default: <name>.json in "
                   "the build folder holding --binary)")
    p.add_argument("--from-json", help="analyse this saved JSON instead of running")
    p.add_argument("--markdown", help="also write the Markdown report here")
    args = p.parse_args()
    if args.json_out is None:  # bench/<name> lies in the build folder's bench/
        args.json_out = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.binary))),
                                     f"{name}.json")
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
