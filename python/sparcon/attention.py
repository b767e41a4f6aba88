"""Continuous attention modules (1D sequences, 2D images).

    context = E_p[V(t)] (+ the discrete context in "disc+cont"),
    V(t) = H G psi(t) the ridge fit of the values on a Gaussian basis psi (lam),
    p the continuous alpha-entmax density of location mu and scale Sigma.

mu and Sigma come from
- "cont": a Linear head on the mean of the (unmasked) values: 1D ``mu = sigmoid(o_0)``,
  ``sigma^2 = max(softplus(o_1), min_scale)``; 2D ``mu = sigmoid(o_{0,1})``,
  ``Sigma = L L^T + min_scale I`` with ``L = [[softplus(o_2), 0], [o_3, softplus(o_4)]]``;
- "disc+cont": a learned discrete attention ``p = softmax(Linear(values))`` over the positions
  (masked by lengths), whose mean and (co)variance (+ moment_ridge) give (mu, Sigma) through
  :func:`sparcon.density_from_moments`; the discrete context ``sum_l p_l h_l`` is added.

Mirrors ``sparcon::torch::ContinuousAttention`` (C++), with the same defaults.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from sparcon.continuous import (
    continuous_attention,
    default_basis_1d,
    default_basis_2d,
    density_from_moments,
)

_ops = torch.ops.sparcon


class ContinuousAttention(nn.Module):
    """Continuous attention over a sequence (dims = 1) or an image (dims = 2).

    Parameters
    ----------
    features : int, E, the size of each value vector.
    dims : 1 or 2.
    alpha : float >= 1, the density family (1 Gaussian, 2 truncated parabola/paraboloid).
    basis_size : int, 1D: N basis functions = N/len(sds) centres x len(sds) widths.
    sds : standard deviations of the 1D basis (the paper's (0.1, 0.5), i.e. variances 0.01, 0.25).
    grid_side : int, 2D: grid_side x grid_side Gaussians on linspace(0, 1, grid_side)^2.
    variance : float, 2D: each basis Gaussian has covariance variance * I.
    basis : optional (centers, widths) overriding the default basis (shapes as in
        :func:`sparcon.continuous_expectation`).
    lam : float > 0, the ridge penalty of the value fit.
    mode : "cont" or "disc+cont".
    min_scale : floor of sigma^2 (1D) / added to the diagonal of Sigma (2D) in "cont".
    moment_ridge : ridge added to the discrete (co)variance in "disc+cont".
    initial_scale : float > 0, "cont": the head starts at mu = 1/2 and sigma^2 = initial_scale
        (2D: Sigma = initial_scale * I); for alpha = 2 in 1D the support then starts
        (3 * initial_scale / 2)^(1/3) either side of mu. As the C++ module.

    forward(values, lengths=None): values (B, L, E) with optional int64 lengths (B,) in 1D,
    (B, H, W, E) in 2D -> context (B, E). ``last_density`` holds the detached (mu, Sigma) of the
    last call: (B,), (B,) in 1D; (B, 2), (B, 2, 2) in 2D.
    """

    def __init__(self, features, dims=1, alpha=1.0, basis_size=64, sds=(0.1, 0.5), grid_side=10,
                 variance=0.001, basis=None, lam=0.01, mode="cont", min_scale=1e-6, moment_ridge=1e-4,
                 initial_scale=0.05):
        super().__init__()
        fn = "sparcon.ContinuousAttention"
        if dims not in (1, 2):
            raise ValueError(f"{fn}: dims = {dims} must be 1 or 2")
        if not (isinstance(alpha, (int, float)) and alpha >= 1):
            raise ValueError(f"{fn}: alpha = {alpha} must be a number >= 1")
        if not (isinstance(features, int) and features > 0):
            raise ValueError(f"{fn}: features = {features} must be a positive int")
        if mode not in ("cont", "disc+cont"):
            raise ValueError(f"{fn}: mode = {mode!r} must be 'cont' or 'disc+cont'")
        if not lam > 0:
            raise ValueError(f"{fn}: lam = {lam} must be > 0")
        if not (isinstance(initial_scale, (int, float)) and 0 < initial_scale < math.inf):
            raise ValueError(f"{fn}: initial_scale = {initial_scale} must be finite and > 0")
        self.features, self.dims, self.alpha, self.lam, self.mode = features, dims, float(alpha), float(lam), mode
        self.min_scale, self.moment_ridge = float(min_scale), float(moment_ridge)
        if basis is not None:
            centers, widths = (torch.as_tensor(b, dtype=torch.float32) for b in basis)
            want = ((1, 1) if dims == 1 else (2, 3))
            if centers.dim() != want[0] or widths.dim() != want[1]:
                raise ValueError(f"{fn}: basis must be (centers (N,), widths (N,)) in 1D or "
                                 f"(centers (N, 2), widths (N, 2, 2)) in 2D, got shapes "
                                 f"{list(centers.shape)} and {list(widths.shape)}")
        elif dims == 1:
            centers, widths = default_basis_1d(basis_size, sds)
        else:
            centers, widths = default_basis_2d(grid_side, variance)
        self.register_buffer("centers", centers)
        self.register_buffer("widths", widths)
        if mode == "cont":
            self.head = nn.Linear(features, 2 if dims == 1 else 5)
            # Start at a density of moderate width (one as wide as the domain gives weak,
            # drifting gradients): softplus^-1(v) = v + log(1 - e^-v) on the scale outputs.
            start = initial_scale if dims == 1 else math.sqrt(initial_scale)  # 2D: L = sqrt(s) I
            with torch.no_grad():
                self.head.bias.zero_()
                self.head.bias[1 if dims == 1 else [2, 4]] = start + math.log(-math.expm1(-start))
        else:
            self.scores = nn.Linear(features, 1)
        self.last_density = None

    def extra_repr(self):
        return (f"features={self.features}, dims={self.dims}, alpha={self.alpha}, "
                f"basis_size={self.centers.shape[0]}, lam={self.lam}, mode={self.mode!r}")

    def forward(self, values, lengths=None):
        """values (B, L, E) [lengths (B,)] or (B, H, W, E) -> context (B, E)."""
        fn = "sparcon.ContinuousAttention"
        two = self.dims == 2
        if values.dim() != (4 if two else 3) or values.shape[-1] != self.features:
            raise ValueError(f"{fn}: values must be {'(B, H, W, ' if two else '(B, L, '}{self.features}), "
                             f"got {list(values.shape)}")
        if two and lengths is not None:
            raise ValueError(f"{fn}: lengths must be None for 2D (images use every pixel)")
        b = values.shape[0]
        flat = values.flatten(1, 2) if two else values  # (B, positions, E)
        positions = flat.shape[1]
        if lengths is not None:
            lengths = torch.as_tensor(lengths, device=values.device).to(torch.int64)
            if lengths.shape != (b,):
                raise ValueError(f"{fn}: lengths must have shape ({b},), got {list(lengths.shape)}")
            if bool(((lengths < 1) | (lengths > positions)).any()):
                raise ValueError(f"{fn}: lengths must lie in [1, L = {positions}], got {lengths.tolist()}")
            valid = torch.arange(positions, device=values.device).unsqueeze(0) < lengths.unsqueeze(1)
        else:
            valid = torch.ones(b, positions, dtype=torch.bool, device=values.device)
        centers = self.centers.to(values.dtype)
        widths = self.widths.to(values.dtype)
        discrete_context = None
        if self.mode == "cont":
            w = valid.to(values.dtype)
            mean = (flat * w.unsqueeze(-1)).sum(1) / w.sum(1, keepdim=True)
            out = self.head(mean)
            if two:
                mu = torch.sigmoid(out[:, 0:2])
                l00, l10, l11 = F.softplus(out[:, 2]), out[:, 3], F.softplus(out[:, 4])
                zero = torch.zeros_like(l00)
                chol = torch.stack([torch.stack([l00, zero], 1), torch.stack([l10, l11], 1)], 1)
                eye = torch.eye(2, dtype=values.dtype, device=values.device)
                Sigma = chol @ chol.transpose(1, 2) + self.min_scale * eye
            else:
                mu = torch.sigmoid(out[:, 0])
                Sigma = torch.clamp_min(F.softplus(out[:, 1]), self.min_scale)
        else:
            s = self.scores(flat).squeeze(-1).masked_fill(~valid, float("-inf"))
            p = _ops.softmax(s, -1)  # (B, positions)
            discrete_context = (p.unsqueeze(1) @ flat).squeeze(1)
            p_in = p.view(b, values.shape[1], values.shape[2]) if two else p
            mu, Sigma = density_from_moments(p_in, self.alpha, self.moment_ridge, lengths)
        self.last_density = (mu.detach(), Sigma.detach())
        context = continuous_attention(values, mu, Sigma, centers, widths, self.lam, self.alpha, lengths)
        return context if discrete_context is None else context + discrete_context


class ContinuousAttention1D(ContinuousAttention):
    """:class:`ContinuousAttention` with dims = 1: ``c = E_p[V(t)]`` over t in [0, 1];
    values (B, L, E), lengths (B,) -> context (B, E)."""

    def __init__(self, features, **options):
        super().__init__(features, dims=1, **options)


class ContinuousAttention2D(ContinuousAttention):
    """:class:`ContinuousAttention` with dims = 2: ``c = E_p[V(t)]`` over t in [0, 1]^2;
    values (B, H, W, E) -> context (B, E)."""

    def __init__(self, features, **options):
        super().__init__(features, dims=2, **options)
