"""Forward+backward of entmax_bisect with a tensor alpha (one per row) from Python, 1 thread.

    SPARCON_LIBRARY=build/release/torch/libsparcon_torch.so /usr/bin/python3 bench/run_tensor_alpha.py

Per shape and alpha, the time of one forward and backward (torch.autograd.grad, g ~ N(0, 1)) with
alpha a number, with alpha a tensor of shape (rows, 1) that is fixed (dx only: an alpha per head
that is not learned), and with that tensor learned (dx and d alpha); median of 7 repetitions of
5 calls, ms.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import sparcon  # noqa: E402


def median_ms(f, reps=7, calls=5):
    f()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - start) / calls)
    return 1e3 * statistics.median(times)


def parse_shapes(text):
    """"65536x16,1024x512" -> [("65536x16", 65536, 16), ("1024x512", 1024, 512)]."""
    return [(shape, *(int(v) for v in shape.split("x"))) for shape in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="65536x16,4096x128,1024x512")
    ap.add_argument("--alphas", default="1.25,1.5,1.6,1.75")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| shape | alpha | number alpha | tensor alpha, fixed | tensor alpha, learned |")
    print("|---|---|---|---|---|")
    for shape, rows, n in parse_shapes(args.shapes):
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(rows, n, generator=gen).requires_grad_()
        g = torch.randn(rows, n, generator=gen)
        for a in (float(v) for v in args.alphas.split(",")):
            fixed = torch.full((rows, 1), a)
            learned = fixed.clone().requires_grad_()

            def step(alpha, inputs):
                return lambda: torch.autograd.grad(sparcon.entmax_bisect(x, alpha=alpha, dim=-1), inputs, g)

            times = [median_ms(step(a, [x])), median_ms(step(fixed, [x])), median_ms(step(learned, [x, learned]))]
            print("| %s | %g | %s |" % (shape, a, " | ".join("%.3f" % t for t in times)))


if __name__ == "__main__":
    main()
