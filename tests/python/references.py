"""Independent plain-torch references for the tests (no sparcon code)."""
import math

import torch


def _last(x, dim):
    return x.movedim(dim, -1)


def sparsemax_ref(x, dim=-1):
    """Sort-based sparsemax (Martins & Astudillo, 2016)."""
    z = _last(x, dim)
    zs, _ = torch.sort(z, dim=-1, descending=True)
    k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cs = zs.cumsum(-1)
    support = (1 + k * zs > cs)
    K = support.sum(-1, keepdim=True)
    tau = (cs.gather(-1, K - 1) - 1) / K.to(z.dtype)
    return torch.clamp(z - tau, min=0).movedim(-1, dim)


def entmax15_ref(x, dim=-1):
    """Sort-based exact 1.5-entmax (Peters et al., 2019)."""
    z = _last(x, dim) / 2
    zs, _ = torch.sort(z, dim=-1, descending=True)
    k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    mean = zs.cumsum(-1) / k
    mean_sq = (zs ** 2).cumsum(-1) / k
    ss = k * (mean_sq - mean ** 2)
    delta = torch.clamp((1 - ss) / k, min=0)
    tau = mean - torch.sqrt(delta)
    K = (tau <= zs).sum(-1, keepdim=True)
    tau_star = tau.gather(-1, K - 1)
    return (torch.clamp(z - tau_star, min=0) ** 2).movedim(-1, dim)


def _bisect(f, lo, hi, n_iter):
    """f decreasing in t; returns t with f(t) = 0 for each row (lo, hi: bracketing tensors)."""
    for _ in range(n_iter):
        mid = (lo + hi) / 2
        pos = f(mid) >= 0
        lo = torch.where(pos, mid, lo)
        hi = torch.where(pos, hi, mid)
    return (lo + hi) / 2


def entmax_bisect_ref(x, alpha, dim=-1, n_iter=200):
    """alpha-entmax by bisection on tau in double (alpha > 1)."""
    z = _last(x, dim).double()
    a = torch.as_tensor(alpha, dtype=torch.float64)
    if a.dim():
        shape = list(x.shape)
        shape[dim] = 1
        a = _last(a.expand(shape), dim)
    z = z * (a - 1)
    m = z.max(-1, keepdim=True).values
    p_of = lambda t: torch.clamp(z - t, min=0) ** (1 / (a - 1))
    tau = _bisect(lambda t: p_of(t).sum(-1, keepdim=True) - 1, m - 1, m, n_iter)
    p = p_of(tau)
    return (p / p.sum(-1, keepdim=True)).movedim(-1, dim)


def normmax_ref(x, alpha, dim=-1, n_iter=200):
    """alpha-normmax: p proportional to [x - tau]_+^(1/(alpha-1)), sum [x - tau]_+^(alpha/(alpha-1)) = 1."""
    z = _last(x, dim).double()
    m = z.max(-1, keepdim=True).values
    tau = _bisect(lambda t: (torch.clamp(z - t, min=0) ** (alpha / (alpha - 1))).sum(-1, keepdim=True) - 1,
                  m - 1, m, n_iter)
    p = torch.clamp(z - tau, min=0) ** (1 / (alpha - 1))
    return (p / p.sum(-1, keepdim=True)).movedim(-1, dim)


def budget_ref(x, budget, dim=-1, n_iter=200):
    """Projection onto {0 <= p <= 1, sum p = budget}: p = clip(x - tau, 0, 1)."""
    z = _last(x, dim).double()
    lo = z.min(-1, keepdim=True).values - 1
    hi = z.max(-1, keepdim=True).values
    tau = _bisect(lambda t: torch.clamp(z - t, 0, 1).sum(-1, keepdim=True) - budget, lo, hi, n_iter)
    return torch.clamp(z - tau, 0, 1).movedim(-1, dim)


def tsallis_fy_loss_ref(x, target, alpha):
    """Fenchel-Young loss of alpha-entmax: H_alpha(p) + <p - e_y, x> (rows of x (n, d))."""
    x = x.double()
    if alpha == 1:
        return torch.logsumexp(x, -1) - x.gather(1, target[:, None]).squeeze(1)
    p = sparsemax_ref(x) if alpha == 2 else entmax15_ref(x) if alpha == 1.5 else entmax_bisect_ref(x, alpha)
    omega = (1 - (p ** alpha).sum(-1)) / (alpha * (alpha - 1))
    return omega + (p * x).sum(-1) - x.gather(1, target[:, None]).squeeze(1)


def normmax_fy_loss_ref(x, target, alpha):
    x = x.double()
    p = normmax_ref(x, alpha)
    omega = 1 - (p ** alpha).sum(-1) ** (1 / alpha)
    return omega + (p * x).sum(-1) - x.gather(1, target[:, None]).squeeze(1)


# ---- continuous -------------------------------------------------------------------------------

def gauss_legendre(n, dtype=torch.float64):
    """Nodes and weights on [-1, 1] (Golub-Welsch)."""
    k = torch.arange(1, n, dtype=dtype)
    beta = k / torch.sqrt(4 * k * k - 1)
    J = torch.diag(beta, 1) + torch.diag(beta, -1)
    nodes, vecs = torch.linalg.eigh(J)
    return nodes, 2 * vecs[0] ** 2


def composite_gl(a, b, panels, n):
    x, w = gauss_legendre(n)
    edges = torch.linspace(a, b, panels + 1, dtype=torch.float64)
    h = (edges[1:] - edges[:-1]) / 2
    mid = (edges[1:] + edges[:-1]) / 2
    return (mid[:, None] + h[:, None] * x).reshape(-1), (h[:, None] * w).reshape(-1)


def gaussian_pdf(t, c, S):
    """N(t; c, S) for t (..., D), c (D,), S (D, D)."""
    D = c.shape[-1]
    d = t - c
    Si = torch.linalg.inv(S)
    q = torch.einsum("...i,ij,...j->...", d, Si, d)
    return torch.exp(-q / 2) / torch.sqrt((2 * math.pi) ** D * torch.linalg.det(S))


def _sqrtm(S):
    e, V = torch.linalg.eigh(S)
    return V @ torch.diag(e.sqrt()) @ V.T


def beta_gaussian_scale(alpha, D, detSigma):
    """For the density [(alpha-1) f - tau]_+^(1/(alpha-1)) with f = -1/2 u^T u in whitened
    coordinates (t = mu + A u, A = Sigma^(1/2)): kappa = -tau and the support radius R in u."""
    m = 1 / (alpha - 1)
    if D == 1:
        I = math.exp(math.lgamma(0.5) + math.lgamma(m + 1) - math.lgamma(m + 1.5))
    else:
        I = math.pi / (m + 1)
    kappa = (1 / (math.sqrt(detSigma) * (2 / (alpha - 1)) ** (D / 2) * I)) ** (1 / (m + D / 2))
    R = math.sqrt(2 * kappa / (alpha - 1))
    return kappa, R, m


def expectation_ref(mu, Sigma, centers, widths, alpha):
    """r_bj = E_p[N(t; c_j, S_j)] for the continuous alpha-entmax with (mu_b, Sigma_b), by the
    closed form at alpha = 1 and by quadrature over the support (in whitened polar coordinates)
    otherwise. 1D or 2D (as sparcon's shapes)."""
    one = mu.dim() == 1
    mu2 = mu[:, None] if one else mu
    S2 = Sigma[:, None, None] if one else Sigma
    c2 = centers[:, None] if one else centers
    w2 = widths[:, None, None] if one else widths
    D = mu2.shape[1]
    B, N = mu2.shape[0], c2.shape[0]
    r = torch.empty(B, N, dtype=torch.float64)
    for b in range(B):
        for j in range(N):
            if alpha == 1:
                r[b, j] = gaussian_pdf(mu2[b].double(), c2[j].double(), (S2[b] + w2[j]).double())
        if alpha == 1:
            continue
        S = S2[b].double()
        kappa, R, m = beta_gaussian_scale(alpha, D, float(torch.linalg.det(S)))
        A = _sqrtm(S)
        if D == 1:
            # v = sin(theta) removes the endpoint singularity of (1 - v^2)^m.
            th, wt = composite_gl(-math.pi / 2, math.pi / 2, 40, 20)
            v = th.sin()
            pts = v[:, None]
            weight = wt * kappa ** m * th.cos() ** (2 * m + 1) * R * float(A[0, 0])
        else:
            # rho = sin(phi) removes the edge singularity of (1 - rho^2)^m.
            phi, wphi = composite_gl(0.0, math.pi / 2, 24, 16)
            rho, wr = phi.sin(), wphi * phi.cos()
            nth = 256
            th = torch.arange(nth, dtype=torch.float64) * (2 * math.pi / nth)
            pts = (rho[:, None, None] * torch.stack([th.cos(), th.sin()], -1)[None]).reshape(-1, 2)
            weight = ((wr * rho * kappa ** m * (1 - rho ** 2) ** m)[:, None] * (2 * math.pi / nth)).expand(-1, nth)
            weight = weight.reshape(-1) * R ** 2 * float(torch.linalg.det(A))
        t = mu2[b].double() + (R * pts) @ A.T
        for j in range(N):
            r[b, j] = (weight * gaussian_pdf(t, c2[j].double(), w2[j].double())).sum()
    return r


def covariance_of_density(Sigma, alpha, D):
    """Covariance of the continuous alpha-entmax density with scale Sigma (D x D, double)."""
    if alpha == 1:
        return Sigma
    kappa, R, m = beta_gaussian_scale(alpha, D, float(torch.linalg.det(Sigma)))
    return R ** 2 * Sigma / (D + 2 * m + 2)


def positions_1d(L):
    return (torch.arange(1, L + 1, dtype=torch.float64) - 0.5) / L


def positions_2d(H, W):
    ty, tx = torch.meshgrid(positions_1d(H), positions_1d(W), indexing="ij")
    return torch.stack([ty.reshape(-1), tx.reshape(-1)], -1)


def ridge_ref(centers, widths, t, lam):
    """G = F^T (F F^T + lam I)^-1 with F_jl = N(t_l; c_j, S_j); t (L, D)."""
    one = centers.dim() == 1
    c2 = centers[:, None] if one else centers
    w2 = widths[:, None, None] if one else widths
    F = torch.stack([gaussian_pdf(t, c2[j].double(), w2[j].double()) for j in range(c2.shape[0])])
    N = F.shape[0]
    return F.T @ torch.linalg.inv(F @ F.T + lam * torch.eye(N, dtype=torch.float64))
