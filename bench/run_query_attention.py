"""Cost of query-conditioned continuous attention against the number of queries Q at fixed L.

    /usr/bin/python3 bench/run_query_attention.py [--markdown FILE] [--reps 7] [--threads 1]

One call = forward and backward (to values, mu and sigma) of Q densities per example over the
same values, B = 8 sequences of L (200 and 800) values of E = 64 features, the paper's basis of N = 64,
alpha = 2 (truncated parabola), all in float32. Compared side by side in one process:

- value model: sparcon.value_model (B = G^T H, once per example) + continuous_expectation (r per
  query) + einsum: O(L N E + Q N E) per example. What query_continuous_attention runs for Q > 1.
- query_continuous_attention: the op as users call it (Q = 1: the fused one-density kernel,
  O(L (N + E)), which never forms B).
- one call per query: Q calls of continuous_attention, each O(L (N + E)).
- value model per query: B recomputed for every query, O(Q L N E) (what the value model avoids).

The "predicted" column is (L N E + Q N E) / (L N E + N E), the ratio to Q = 1 that the value model
path should show if its cost is the two terms. Medians over --reps repetitions; other processes'
CPU use on the machine meanwhile is reported.
"""
import argparse
import os
import platform
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import sparcon  # noqa: E402

from harness import LoadMeter, fmt, git, median_of_sorted  # noqa: E402

B, E, N, ALPHA, LAM = 8, 64, 64, 2.0, 0.01


def value_model_path(values, mu, sigma, c, w):
    b, q = mu.shape
    model = sparcon.value_model(values, c, w, LAM)
    r = sparcon.continuous_expectation(mu.reshape(-1), sigma.reshape(-1), c, w, ALPHA).view(b, q, -1)
    return torch.einsum("bqn,bne->bqe", r, model)


def op_path(values, mu, sigma, c, w):
    return sparcon.query_continuous_attention(values, mu, sigma, c, w, LAM, ALPHA)


def per_query(values, mu, sigma, c, w):
    return torch.stack([sparcon.continuous_attention(values, mu[:, q], sigma[:, q], c, w, LAM, ALPHA)
                        for q in range(mu.shape[1])], 1)


def model_per_query(values, mu, sigma, c, w):
    out = []
    for q in range(mu.shape[1]):
        model = sparcon.value_model(values, c, w, LAM)
        r = sparcon.continuous_expectation(mu[:, q], sigma[:, q], c, w, ALPHA)
        out.append(torch.einsum("bn,bne->be", r, model))
    return torch.stack(out, 1)


METHODS = [("value model", value_model_path), ("query_continuous_attention", op_path),
           ("one call per query", per_query), ("value model per query", model_per_query)]


def time_call(f, length, q, reps, gen):
    c, w = sparcon.default_basis_1d(N)
    values = torch.randn(B, length, E, generator=gen).requires_grad_()
    mu = torch.rand(B, q, generator=gen).requires_grad_()
    sigma = (0.01 + 0.1 * torch.rand(B, q, generator=gen)).requires_grad_()
    g = torch.randn(B, q, E, generator=gen)

    def once():
        values.grad = mu.grad = sigma.grad = None
        f(values, mu, sigma, c, w).backward(g)

    once()  # warm up: ridge matrices cached, allocator primed
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        once()
        times.append(time.perf_counter() - start)
    return median_of_sorted(sorted(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markdown", metavar="FILE", help="also write the Markdown table here")
    ap.add_argument("--reps", type=int, default=7, help="repetitions per measurement (default 7)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("--queries", default="1,10,100", help="query counts (default 1,10,100)")
    ap.add_argument("--lengths", default="200,800", help="sequence lengths L (default 200,800)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    qs = [int(q) for q in args.queries.split(",")]
    lengths = [int(v) for v in args.lengths.split(",")]
    gen = torch.Generator().manual_seed(0)
    meter = LoadMeter(resource.RUSAGE_SELF)
    ms = {(name, length, q): 1e3 * time_call(f, length, q, args.reps, gen)
          for length in lengths for q in qs for name, f in METHODS}
    wall, others = meter.stop()
    lines = [f"B = {B}, E = {E}, N = {N}, alpha = {ALPHA}, float32, forward + backward, "
             f"{args.threads} thread(s); median of {args.reps}; ms per call (ratio to Q = {qs[0]} of the same "
             f"method at the same L)",
             "",
             "| L | Q | predicted (LNE+QNE)/(LNE+NE) | " + " | ".join(name for name, _ in METHODS) + " |",
             "|---:|---:|---:|" + "---:|" * len(METHODS)]
    for length in lengths:
        lne, ne = length * N * E, N * E
        for q in qs:
            cells = [f"{fmt(ms[(name, length, q)])} ({fmt(ms[(name, length, q)] / ms[(name, length, qs[0])])}x)"
                     for name, _ in METHODS]
            lines.append(f"| {length} | {q} | {fmt((lne + q * ne) / (lne + qs[0] * ne))}x | " + " | ".join(cells) + " |")
    lines += ["", f"Machine: {os.cpu_count()} CPUs, torch {torch.__version__}, Python {platform.python_version()}, "
              f"commit {git('rev-parse', '--short', 'HEAD')}; {wall:.0f} s, other processes used "
              f"{others:.2f} cores on average meanwhile."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
