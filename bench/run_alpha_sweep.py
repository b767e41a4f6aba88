"""The forward of entmax_bisect across alpha from Python, 1 thread: where each alpha's solver lands.

    SPARCON_LIBRARY=build/release/torch/libsparcon_torch.so /usr/bin/python3 bench/run_alpha_sweep.py

Per shape (x ~ N(0, 1), float32) and alpha (a number), the time of one forward under
torch.no_grad(); median of 7 repetitions of 5 calls, ms, one row per shape. Alphas in (1, 1.1)
take the row-at-a-time solver with log1p powers, 1.25 (k = 4) and 1.75 the lanes' Newton with
integer or rational powers, the others in [1.1, 3] the lanes' Newton with a general power.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import sparcon  # noqa: E402
from run_tensor_alpha import median_ms, parse_shapes  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="65536x16,1024x512")
    ap.add_argument("--alphas", default="1.01,1.05,1.09,1.1,1.15,1.2,1.25,1.3,1.5,1.75,2")
    args = ap.parse_args()
    torch.set_num_threads(1)
    alphas = [float(a) for a in args.alphas.split(",")]
    print("| shape | " + " | ".join(f"{a:g}" for a in alphas) + " |")
    print("|---|" + "---:|" * len(alphas))
    for shape, rows, cols in parse_shapes(args.shapes):
        x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(1234))
        times = []
        for alpha in alphas:
            def forward(alpha=alpha):
                with torch.no_grad():
                    sparcon.entmax_bisect(x, alpha=alpha, dim=-1)
            times.append(median_ms(forward))
        print(f"| {shape} | " + " | ".join(f"{t:.3g}" for t in times) + " |")


if __name__ == "__main__":
    main()
