"""Writes a TorchScript module that calls torch.ops.sparcon.{sparsemax, entmax15,
continuous_attention}, with an example input, the expected output, output weights w and the
expected input gradient of (output * w).sum() stored as buffers, for run_scripted.cc to load and
check from C++ (forward and backward).

With --package DIR it also writes every nn.Module of the sparcon package (tests/torchscript/
package_cases.py: the maps, the losses, ContinuousAttention in every mode and dimension),
scripted, one DIR/<case>.pt each, holding its example inputs, the expected outputs, output
weights w and the expected gradients of sum(output * w) with respect to the floating inputs and
the parameters as buffers named tsc_* (and the parameter names in the extra file
case_parameters.txt), for run_scripted.cc to check from C++.

Usage: save_scripted.py OUTPUT.pt [--package DIR]   (library: $SPARCON_LIBRARY or build/release/torch/)
"""
import os
import sys

import torch
from torch import nn

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_LIBRARY = os.path.join(REPO, "build", "release", "torch", "libsparcon_torch.so")
D64 = torch.float64


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


def save_package_modules(directory):
    """Scripts and saves every case of package_cases.py with its data (see the module docstring)."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from package_cases import CASES, run

    os.makedirs(directory, exist_ok=True)
    for name in sorted(CASES):
        module, inputs = CASES[name]()
        outputs, weights, input_grads, param_grads = run(module, inputs)
        # The data travel as buffers of the module itself (registered before scripting).
        data = {"tsc_input_is_none": torch.tensor([t is None for t in inputs], dtype=torch.long),
                "tsc_output_count": torch.tensor(len(outputs), dtype=torch.long)}
        for i, t in enumerate(inputs):
            data[f"tsc_input_{i}"] = torch.empty(0, dtype=D64) if t is None else t
            data[f"tsc_input_grad_{i}"] = input_grads[i]
        for j, (o, w) in enumerate(zip(outputs, weights)):
            data[f"tsc_output_{j}"] = o
            data[f"tsc_output_weight_{j}"] = torch.empty(0, dtype=D64) if w is None else w
        for k, g in enumerate(param_grads):
            data[f"tsc_param_grad_{k}"] = g
        for key, value in data.items():
            module.register_buffer(key, value.clone())
        scripted = torch.jit.script(module)
        got, _, got_in, got_param = run(scripted, inputs, weights)  # scripted == eager, in Python
        for a, b in zip(got + got_in + got_param, outputs + input_grads + param_grads):
            assert torch.equal(a, b), f"{name}: the scripted module differs from the eager one"
        names = "\n".join(n for n, _ in scripted.named_parameters())
        path = os.path.join(directory, f"{name}.pt")
        torch.jit.save(scripted, path, _extra_files={"case_parameters.txt": names})
        print(f"saved {path}: {len(inputs)} inputs, {len(outputs)} outputs, {len(param_grads)} parameters")


def main(argv):
    package_dir = None
    if len(argv) == 4 and argv[2] == "--package":
        package_dir = argv[3]
        argv = argv[:2]
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch.ops.load_library(os.environ.get("SPARCON_LIBRARY", DEFAULT_LIBRARY))
    if package_dir is not None:
        save_package_modules(package_dir)
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
