"""Writes a TorchScript module that calls torch.ops.sparcon.{sparsemax, entmax15,
continuous_attention}, with an example input, the expected output, output weights w and the
expected input gradient of (output * w).sum() stored as buffers, for run_scripted.cc to load and
check from C++ (forward and backward).

Usage: save_scripted.py OUTPUT.pt   (library: $SPARCON_LIBRARY or build/release/torch/)
"""
import os
import sys

import torch
from torch import nn

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_LIBRARY = os.path.join(REPO, "build", "release", "torch", "libsparcon_torch.so")


class SparseAttention(nn.Module):
    """x (B, L, E) -> (B, 2 L + E): sparsemax and 1.5-entmax over per-position scores, and the
    1D continuous attention (alpha = 2) of x under a density whose mean and variance are those
    of the sparsemax distribution over positions in [0, 1]."""

    def __init__(self, length: int, features: int, n_basis: int = 8):
        super().__init__()
        self.score = nn.Linear(features, 1)
        self.register_buffer("positions", (torch.arange(length, dtype=torch.float64) + 0.5) / length)
        self.register_buffer("centers", torch.linspace(0.0, 1.0, n_basis, dtype=torch.float64))
        self.register_buffer("widths", torch.full((n_basis,), 0.01, dtype=torch.float64))
        # Filled in by main(): the example and what it must give.
        self.register_buffer("example_input", torch.empty(0, dtype=torch.float64))
        self.register_buffer("lengths", torch.empty(0, dtype=torch.long))
        self.register_buffer("expected_output", torch.empty(0, dtype=torch.float64))
        self.register_buffer("output_weights", torch.empty(0, dtype=torch.float64))
        self.register_buffer("expected_input_grad", torch.empty(0, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = 3.0 * self.score(x).squeeze(-1)  # (B, L)
        p = torch.ops.sparcon.sparsemax(scores, -1)
        q = torch.ops.sparcon.entmax15(scores, dim=-1)
        mu = (p * self.positions).sum(-1)
        sigma2 = (p * (self.positions - mu.unsqueeze(-1)) ** 2).sum(-1) + 1e-2
        context = torch.ops.sparcon.continuous_attention(x, mu, sigma2, self.centers, self.widths,
                                                         0.01, 2.0, self.lengths)
        return torch.cat([p, q, context], -1)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch.ops.load_library(os.environ.get("SPARCON_LIBRARY", DEFAULT_LIBRARY))
    torch.manual_seed(0)
    batch, length, features = 3, 6, 2
    model = SparseAttention(length, features).double()
    x = torch.randn(batch, length, features, dtype=torch.float64)
    lengths = torch.tensor([6, 4, 5], dtype=torch.long)
    model.lengths = lengths

    scripted = torch.jit.script(model)
    graph = str(scripted.forward.graph)
    for op in ("sparcon::sparsemax", "sparcon::entmax15", "sparcon::continuous_attention"):
        assert op in graph, f"{op} is not in the scripted graph:\n{graph}"

    xg = x.clone().requires_grad_()
    out = scripted(xg)
    w = torch.randn(out.shape, dtype=torch.float64)  # (sum(out) would not reach entmax15: rows sum to 1)
    (out * w).sum().backward()
    # The eager module must agree with its scripted form.
    assert torch.equal(model(x), out.detach())
    assert (out[:, :length] == 0).any(), "the example should make sparsemax sparse"

    scripted.example_input = x
    scripted.expected_output = out.detach().clone()
    scripted.output_weights = w
    scripted.expected_input_grad = xg.grad.clone()
    torch.jit.save(scripted, argv[1])

    loaded = torch.jit.load(argv[1])
    assert torch.equal(loaded(loaded.example_input), loaded.expected_output)
    print(f"saved {argv[1]}: input {tuple(x.shape)} -> output {tuple(out.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
