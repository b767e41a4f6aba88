"""Continuous alpha-entmax densities and continuous attention (functional API).

The density of family alpha >= 1 with location mu and scale Sigma is

    p(t) = [(alpha - 1) f(t) - tau]_+^(1/(alpha-1)),   f(t) = -1/2 (t - mu)^T Sigma^-1 (t - mu),

with tau such that ``int p = 1``: a Gaussian N(mu, Sigma) for alpha = 1, a truncated parabola
(1D) / paraboloid (2D) for alpha = 2, a beta-Gaussian otherwise. Sigma is the covariance only
for alpha = 1. The basis is Gaussian RBFs ``psi_j(t) = N(t; centers_j, widths_j)``.

Shapes: 1D mu (B,), Sigma (B,) (the scale sigma^2), centers (N,), widths (N,) (variances);
2D mu (B, 2), Sigma (B, 2, 2) (symmetric positive definite), centers (N, 2), widths (N, 2, 2).
Positions of a sequence of length L are ``t_l = (l - 1/2)/L``, l = 1..L; of an H x W image the
product of those grids, in [0, 1]^2.
"""
import torch

_ops = torch.ops.sparcon


def continuous_expectation(mu, Sigma, centers, widths, alpha=1.0):
    """Expectations of the basis under the continuous alpha-entmax density:

        r_j = E_p[psi_j(t)] = int p(t) N(t; centers_j, widths_j) dt.

    alpha = 1: ``r_j = N(mu; c_j, Sigma + S_j)``; alpha = 2: closed form (1D) / radial closed form
    with a periodic angular rule (2D); other alpha >= 1: numerical quadrature on the support.
    Differentiable with respect to mu and Sigma.

    Parameters
    ----------
    mu : (B,) or (B, 2).
    Sigma : (B,) scale sigma^2 > 0, or (B, 2, 2) symmetric positive definite.
    centers : (N,) or (N, 2).
    widths : (N,) variances, or (N, 2, 2) covariances.
    alpha : float >= 1.

    Returns
    -------
    r : (B, N).
    """
    return _ops.continuous_expectation(mu, Sigma, centers, widths, float(alpha))


def ridge_matrix(centers, widths, grid, lam=0.01):
    """Ridge-regression matrix of the basis on a grid of positions:

        G = F^T (F F^T + lam I)^-1,   F = [psi(t_1) ... psi(t_L)]  (N x L),

    so that the value function fitted to values H (e x L) is ``V(t) = H G psi(t)``.

    Parameters
    ----------
    centers, widths : the basis (see the module docstring).
    grid : int or [L] for a 1D basis; [H, W] for a 2D basis (positions in row-major order).
    lam : float > 0, the ridge penalty lambda.

    Returns
    -------
    G : (L, N) for 1D, (H*W, N) for 2D.
    """
    if isinstance(grid, int):
        grid = [grid]
    return _ops.ridge_matrix(centers, widths, [int(g) for g in grid], float(lam))


def continuous_attention(values, mu, Sigma, centers, widths, lam=0.01, alpha=1.0, lengths=None):
    """Continuous attention context ``c = E_p[V(t)] = H^T G r`` (per example):

        G = ridge_matrix(centers, widths, L_b, lam)   (each example uses its own length L_b),
        r = continuous_expectation(mu, Sigma, centers, widths, alpha).

    Differentiable with respect to values, mu and Sigma.

    Parameters
    ----------
    values : (B, L, E) sequences, or (B, H, W, E) images.
    mu, Sigma : (B,), (B,) in 1D; (B, 2), (B, 2, 2) in 2D.
    centers, widths : the basis, (N,), (N,) or (N, 2), (N, 2, 2).
    lam : float > 0, the ridge penalty.
    alpha : float >= 1, the density family.
    lengths : optional int64 (B,), 1D only, 1 <= lengths <= L (default: all L); positions past a
        length are ignored.

    Returns
    -------
    context : (B, E).
    """
    return _ops.continuous_attention(values, mu, Sigma, centers, widths, float(lam), float(alpha), lengths)


def density_from_moments(p, alpha=1.0, ridge=1e-4, lengths=None):
    """(mu, Sigma) of the density of family alpha whose mean and (co)variance are those of a
    discrete distribution p over the positions t_l ("disc+cont" attention):

        mu = sum_l p_l t_l,   C = sum_l p_l t_l t_l^T - mu mu^T + ridge I,

    then Sigma = C for alpha = 1, or the scale whose density has covariance C otherwise
    (e.g. 1D alpha = 2: ``C = a^2/5`` with ``a = (3 Sigma/2)^(1/3)``).
    Differentiable with respect to p.

    Parameters
    ----------
    p : (B, L) with lengths (positions t_l = (l - 1/2)/lengths_b), or (B, H, W).
    alpha : float >= 1.
    ridge : float >= 0 added to the (co)variance.
    lengths : optional int64 (B,), 1D only.

    Returns
    -------
    (mu, Sigma) : (B,), (B,) in 1D; (B, 2), (B, 2, 2) in 2D.
    """
    return _ops.density_from_moments(p, float(alpha), float(ridge), lengths)


def value_model(values, centers, widths, lam=0.01, lengths=None):
    """The value model of each example, ``B_b = G_b^T H_b`` (N x E): ``V_b(t) = B_b^T psi(t)`` is
    the ridge fit of its values, so the context of any density over example b is ``B_b^T r``.
    Computed once per example and shared by its queries (query-conditioned attention).

    Parameters
    ----------
    values : (B, L, E) with optional int64 lengths (B,), or (B, H, W, E).
    centers, widths, lam : the basis and the ridge penalty.

    Returns
    -------
    model : (B, N, E). Differentiable in values (padding rows get zero gradient).
    """
    return _ops.value_model(values, centers, widths, float(lam), lengths)


def query_continuous_attention(values, mu, Sigma, centers, widths, lam=0.01, alpha=1.0, lengths=None):
    """Query-conditioned continuous attention: one density per query (and head) over the same
    values, ``context[b, q, chunk k] = B_b[:, chunk k]^T E_{p_bqk}[psi]`` with ``B_b`` the
    :func:`value_model` (E split into K chunks for K heads).

    Parameters
    ----------
    values : (B, L, E) with optional lengths (B,), or (B, H, W, E).
    mu, Sigma : 1D (B, Q) or (B, Q, K); 2D (B, Q, 2) or (B, Q, K, 2) and (B, Q, 2, 2) or
        (B, Q, K, 2, 2).

    Returns
    -------
    context : (B, Q, E). Cost O(L N E) per example plus O(N E) per query.
    """
    return _ops.query_continuous_attention(values, mu, Sigma, centers, widths, float(lam), float(alpha), lengths)


def disc_cont_attention(values, scores, centers, widths, lam=0.01, alpha=1.0, discrete_alpha=1.0,
                        moment_ridge=1e-4, lengths=None):
    """disc+cont attention of queries: ``p = alpha_entmax(scores, discrete_alpha)`` over the
    positions (masked past each length), ``(mu, Sigma)`` from the moments of p, and the context
    ``sum_l p_l h_l + query_continuous_attention(values, mu, Sigma)`` (per head chunk).

    Parameters
    ----------
    values : (B, L, E) with optional lengths, or (B, H, W, E).
    scores : (B, Q, K, L) or (B, Q, K, H, W).

    Returns
    -------
    (context (B, Q, E), mu, Sigma (as in :func:`query_continuous_attention` with K), p (the shape
    of scores)).
    """
    return _ops.disc_cont_attention(values, scores, centers, widths, float(lam), float(alpha),
                                    float(discrete_alpha), float(moment_ridge), lengths)


def default_basis_1d(basis_size=64, sds=(0.1, 0.5), dtype=torch.float32, device=None):
    """The paper's 1D basis: ``basis_size/len(sds)`` centres ``linspace(0, 1, .)``, each with every
    standard deviation in ``sds`` (variances sds^2), ordered centre by centre:
    (c0, sd0^2), (c0, sd1^2), (c1, sd0^2), ... (``torch.ops.sparcon.basis_1d``, the C++ modules'
    basis; computed in double and rounded once).

    Returns
    -------
    (centers, widths) : (N,), (N,) with N = basis_size.
    """
    centers, widths = _ops.basis_1d(int(basis_size), torch.as_tensor(sds, dtype=torch.float64).reshape(-1).tolist())
    return centers.to(dtype=dtype, device=device), widths.to(dtype=dtype, device=device)


def default_basis_2d(side=10, variance=0.001, dtype=torch.float32, device=None):
    """The paper's 2D basis: a side x side grid ``linspace(0, 1, side)^2`` (row-major) of
    Gaussians with covariance ``variance * I`` (``torch.ops.sparcon.basis_2d``).

    Returns
    -------
    (centers, widths) : (side^2, 2), (side^2, 2, 2).
    """
    centers, widths = _ops.basis_2d(int(side), float(variance))
    return centers.to(dtype=dtype, device=device), widths.to(dtype=dtype, device=device)
