"""Continuous attention modules (1D sequences, 2D images), one density per example or per query.

    context = E_p[V(t)] (+ the discrete context in "disc+cont"),
    V(t) = B^T psi(t) the ridge fit of the values on a Gaussian basis psi (lam),
    p the continuous alpha-entmax density of location mu and scale Sigma.

mu and Sigma come from
- "cont": a Linear head (``head``) on each query, or on the mean of the (unmasked) values when
  the module has no queries: 1D ``mu = sigmoid(o_0)``, ``sigma^2 = max(softplus(o_1), min_scale)``;
  2D ``mu = sigmoid(o_{0,1})``, ``Sigma = L L^T + min_scale I`` with
  ``L = [[softplus(o_2), 0], [o_3, softplus(o_4)]]`` (``torch.ops.sparcon.density_head``);
- "disc+cont": a discrete attention ``p = alpha_entmax(scores, discrete_alpha)`` over the
  positions (masked by lengths), the scores from a Linear per position (``scores``) or, with
  queries, the scaled dot products of the projected query (``query``) with the values; its mean
  and (co)variance (+ moment_ridge) give (mu, Sigma) and the discrete context is added
  (``torch.ops.sparcon.disc_cont_attention``).

This module holds the parameters only: the math is the registered ops, shared with the C++
module ``sparcon::torch::ContinuousAttention`` (same parameter names, defaults and results).
"""
import math
from typing import Optional, Tuple

import torch
import torch.nn as nn

from sparcon.continuous import default_basis_1d, default_basis_2d

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
    heads : int, densities per query (or example); E is split into ``heads`` chunks and head k
        attends to chunk k.
    query_features : None (one density per example, from the values) or Dq: forward then takes
        queries (B, Q, Dq) and gives one context per query.
    discrete_alpha : float > 0, "disc+cont": the discrete map (1 softmax, 1.5 entmax15,
        2 sparsemax, any alpha).
    min_scale : floor of sigma^2 (1D) / added to the diagonal of Sigma (2D) in "cont".
    moment_ridge : ridge added to the discrete (co)variance in "disc+cont".
    initial_scale : float > 0, "cont": the head starts at mu = 1/2 and sigma^2 = initial_scale
        (2D: Sigma = initial_scale * I); for alpha = 2 in 1D the support then starts
        (3 * initial_scale / 2)^(1/3) either side of mu. As the C++ module.

    forward(values, lengths=None, queries=None): values (B, L, E) with optional int64 lengths
    (B,) in 1D, (B, H, W, E) in 2D -> context (B, E); with query_features, queries (B, Q, Dq) ->
    contexts (B, Q, E). ``last_density`` holds the detached (mu, Sigma) of the last call: 1D
    (B[, Q][, K]), 2D (B[, Q][, K], 2) and (B[, Q][, K], 2, 2) (Q with queries, K with heads > 1);
    ``last_weights`` the discrete weights of "disc+cont".

    The module scripts (``torch.jit.script``) in every mode and dimension, with or without
    queries and heads; the scripted forward takes lengths and queries as tensors (or None).
    """

    __constants__ = ["_two", "_cont", "_queried"]
    last_density: Optional[Tuple[torch.Tensor, torch.Tensor]]
    last_weights: Optional[torch.Tensor]

    def __init__(self, features, dims=1, alpha=1.0, basis_size=64, sds=(0.1, 0.5), grid_side=10,
                 variance=0.001, basis=None, lam=0.01, mode="cont", heads=1, query_features=None,
                 discrete_alpha=1.0, min_scale=1e-6, moment_ridge=1e-4, initial_scale=0.05):
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
        if not (isinstance(heads, int) and heads >= 1 and features % heads == 0):
            raise ValueError(f"{fn}: heads = {heads} must be >= 1 and divide features = {features}")
        if query_features is not None and not (isinstance(query_features, int) and query_features > 0):
            raise ValueError(f"{fn}: query_features = {query_features} must be None or a positive int")
        if not (isinstance(discrete_alpha, (int, float)) and discrete_alpha > 0):
            raise ValueError(f"{fn}: discrete_alpha = {discrete_alpha} must be a number > 0")
        self.features, self.dims, self.alpha, self.lam, self.mode = features, dims, float(alpha), float(lam), mode
        self.heads, self.query_features, self.discrete_alpha = heads, query_features, float(discrete_alpha)
        self.min_scale, self.moment_ridge = float(min_scale), float(moment_ridge)
        # Constants of a scripted module: which parameters exist and which branch forward takes.
        self._two, self._cont, self._queried = dims == 2, mode == "cont", query_features is not None
        if basis is not None:
            centers, widths = (torch.as_tensor(b, dtype=torch.float32) for b in basis)
            want = ((1, 1) if dims == 1 else (2, 3))
            if centers.dim() != want[0] or widths.dim() != want[1]:
                raise ValueError(f"{fn}: basis must be (centers (N,), widths (N,)) in 1D or "
                                 f"(centers (N, 2), widths (N, 2, 2)) in 2D, got shapes "
                                 f"{list(centers.shape)} and {list(widths.shape)}")
        elif dims == 1:
            if not (isinstance(basis_size, int) and basis_size > 0 and basis_size % len(sds) == 0):
                raise ValueError(f"{fn}: basis_size = {basis_size} must be a positive multiple of the number of "
                                 f"sds ({len(sds)})")
            centers, widths = default_basis_1d(basis_size, sds)
        else:
            centers, widths = default_basis_2d(grid_side, variance)
        self.register_buffer("centers", centers)
        self.register_buffer("widths", widths)
        if mode == "cont":
            per_head = 2 if dims == 1 else 5
            self.head = nn.Linear(query_features or features, heads * per_head)
            with torch.no_grad():
                self.head.bias.copy_(_ops.density_head_bias(dims, heads, float(initial_scale)))
        elif query_features is None:
            self.scores = nn.Linear(features, heads)
        else:
            self.query = nn.Linear(query_features, features)
        self.last_density = None
        self.last_weights = None

    def extra_repr(self):
        return (f"features={self.features}, dims={self.dims}, alpha={self.alpha}, "
                f"basis_size={self.centers.shape[0]}, lam={self.lam}, mode={self.mode!r}, heads={self.heads}, "
                f"query_features={self.query_features}")

    def forward(self, values: torch.Tensor, lengths: Optional[torch.Tensor] = None,
                queries: Optional[torch.Tensor] = None) -> torch.Tensor:
        """values (B, L, E) [lengths (B,)] or (B, H, W, E) [, queries (B, Q, Dq)] -> (B, E) or (B, Q, E)."""
        fn = "sparcon.ContinuousAttention"
        two = self._two
        if values.dim() != (4 if two else 3) or values.shape[-1] != self.features:
            raise ValueError(f"{fn}: values must be {'(B, H, W, ' if two else '(B, L, '}{self.features}), "
                             f"got {list(values.shape)}")
        if two and lengths is not None:
            raise ValueError(f"{fn}: lengths must be None for 2D (images use every pixel)")
        if self._queried:
            if queries is None:
                raise ValueError(f"{fn}: queries (B, Q, query_features) are required")
            if queries.dim() != 3 or queries.shape[0] != values.shape[0] or queries.shape[2] != self.query_features:
                raise ValueError(f"{fn}: queries must be (B, Q, {self.query_features}) with B = {values.shape[0]}, "
                                 f"got {list(queries.shape)}")
        elif queries is not None:
            raise ValueError(f"{fn}: queries were given but the module has query_features = None")
        if lengths is not None:
            if torch.jit.is_scripting():
                lengths = lengths.to(values.device).to(torch.int64)
            else:
                lengths = torch.as_tensor(lengths, device=values.device).to(torch.int64)
        centers, widths = self.centers.to(values.dtype), self.widths.to(values.dtype)
        p: Optional[torch.Tensor] = None
        if self._cont:
            # (B, Q, heads * P): the head on each query, or on the mean value as the one query.
            if self._queried:
                assert queries is not None
                raw = self.head(queries)
            else:
                raw = self.head(_ops.mean_value(values, lengths)).unsqueeze(1)
            mu, Sigma = _ops.density_head(raw, self.dims, self.heads, self.min_scale)
            context = _ops.query_continuous_attention(values, mu, Sigma, centers, widths, self.lam, self.alpha,
                                                      lengths)
        else:
            if self._queried:
                assert queries is not None
                s = _ops.query_scores(self.query(queries), values, self.heads)
            else:
                s = self.scores(values).movedim(-1, 1).unsqueeze(1)  # (B, 1, K, positions)
            context, mu, Sigma, p = _ops.disc_cont_attention(values, s, centers, widths, self.lam, self.alpha,
                                                             self.discrete_alpha, self.moment_ridge, lengths)
        self.last_density = (self._drop(mu.detach(), True), self._drop(Sigma.detach(), True))
        if p is None:
            self.last_weights = None
        else:
            self.last_weights = self._drop(p.detach(), True)
        return self._drop(context, False)

    def _drop(self, t: torch.Tensor, density: bool) -> torch.Tensor:
        """(B, Q, K, ...) -> without K for one head, without Q for one density per example."""
        if density and self.heads == 1:
            t = t.squeeze(2)
        return t if self._queried else t.squeeze(1)


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
