#!/usr/bin/env python3
"""How many angular nodes the 2D expectation needs: rays from the centre against chords.

A study for issue 15's 2D target, not a benchmark of the library: numpy only, run with Debian's
python3 (`/usr/bin/python3 bench/chords_2d_study.py --k 1`). Its output is quoted in
BENCHMARKS.md (Part 16).

Setting (docs/math.md section 6): in whitened coordinates u the density is
p(u) = (1 - |u|^2 / R^2)_+^k on the disk of radius R (R^2 = 2 (k + 2) when u is scaled by the
covariance), the basis function N(u; m, C). expectation_2d integrates p psi {1, u, u u^T} with
rays from the centre: the trapezoid rule in the ray's angle, n = 8 rho_eff / s nodes (s the
smallest standard deviation of C, rho_eff = sqrt(R^2 + R min(|m|, R + 40 s))), a closed-form
radial integral on each ray whose psi is within e^-44 of the best ray ("used" rays).

Chords instead (Green's theorem on the boundary circle): in a rotated frame, y = R sin(theta)
across and the chord [-w, w], w = R cos(theta), along the first axis,
    integral = int_{-pi/2}^{pi/2} N(y; m_y, C_yy) I(theta) R cos(theta) dtheta,
    I(theta) = int_{-w}^{w} p(u1, y) {1, u, u u^T} N(u1 | y) du1,   p = ((w^2 - u1^2) / R^2)^k,
with N(u1 | y) the conditional Gaussian. `--frame principal` (the default) lays the chords along
psi's long axis: then N(u1 | y) = N(u1; m_1, C_11) does not move with y, and the node count
follows from the short axis alone; `--frame centre` lays them along m (measured worse: pairs
whose Gaussian is tilted against the chords need up to 20 R / sigma_y half-nodes). Continued to theta in [pi/2, 3 pi/2] (w < 0) the
integrand is even about pi/2 and entire in theta (I is an integral of an entire function between
+-w), so the periodic trapezoid rule on the whole circle converges geometrically; by the
symmetry it takes `half` nodes theta_i = -pi/2 + pi i / half, i = 1..half-1, weight pi / half.
The inner integral has the same closed form as a ray (two ends instead of the origin and R) and
the outer Gaussian costs one exponential, as a ray's weight does, so a node costs about what a
ray costs; what differs is how many nodes there are. Here the inner integral is taken by
400-point Gauss-Legendre (the same in the reference and the trial, so that only the angular rule
is measured) and the reference is the rule with 2000 half-nodes.

For every pair the library would integrate (its bound of r not below 1e-17 of the row's largest,
approximated here by the Mahalanobis gap to the disk), it prints the current n and used rays and
the smallest `half` at which every one of the six integrals is within `--tolerance` of the
reference, relative to the row's largest r, and the chord nodes within e^-44 of the largest
(those a kernel would evaluate), then how candidate a-priori rules half = max(h0, c R / sigma_y)
and c R / sigma_y + extra (sigma_y the standard deviation of psi across the chords), and two
that follow where psi's bump lies on the half circle (BENCHMARKS.md Part 36), cover the pairs,
and for the rule half = --rule R / sigma_y + --extra the nodes evaluated and the largest error.
(Single pairs, at 1e-14 of their own r, from 0.07 R to 0.8 R wide: the fewest half-nodes approach
6 R / sigma_y near sigma_y = 0.18 R at k = 2, hence the additive margin.)
"""
import argparse
import math

import numpy as np

GL_X, GL_W = np.polynomial.legendre.leggauss(400)


def sqrtm(c):
    w, v = np.linalg.eigh(c)
    return v @ np.diag(np.sqrt(w)) @ v.T


def chord_rule(k, radius, m, cov, half):
    """The six integrals {1, u1, y, u1^2, u1 y, y^2} by the chord rule with `half` nodes, and the
    nodes' values of the first (in the rotated frame of m and cov)."""
    v22 = cov[1, 1]
    beta = cov[0, 1] / v22
    v = cov[0, 0] - cov[0, 1] ** 2 / v22
    th = -math.pi / 2 + math.pi * np.arange(1, half) / half
    y, w = radius * np.sin(th), radius * np.cos(th)
    outer = np.exp(-(y - m[1]) ** 2 / (2 * v22)) / math.sqrt(2 * math.pi * v22) * w
    mu = m[0] + beta * (y - m[1])
    u1 = w[:, None] * GL_X[None, :]
    inner = w[:, None] * GL_W[None, :] * np.exp(-(u1 - mu[:, None]) ** 2 / (2 * v)) / math.sqrt(2 * math.pi * v)
    yy = y[:, None]
    q = np.clip(1 - (u1 * u1 + yy * yy) / radius**2, 0, None) ** k
    values = np.stack([q, q * u1, q * yy, q * u1 * u1, q * u1 * yy, q * yy * yy]) * inner[None]
    nodes = values.sum(axis=2) * outer[None, :]
    # Chords whose both ends lie more than 9 standard deviations from psi's centre: their inner
    # integral needs no end terms (no exponential, no tail), the whole Gaussian's moments.
    inside = (w - np.abs(mu)) > 9 * math.sqrt(v)
    return nodes.sum(axis=1) * math.pi / half, nodes[0], inside


def current_rays(radius, m, cov):
    """expectation_2d's n for this pair and the rays that pass its e^-44 test."""
    precision = np.linalg.inv(cov)
    s = math.sqrt(np.linalg.eigvalsh(cov)[0])
    rho_eff = math.sqrt(radius * radius + radius * min(np.linalg.norm(m), radius + 40 * s))
    n = int(min(max(math.ceil(8 * rho_eff / s / 8) * 8, 32), 8192))
    th = 2 * math.pi * np.arange(n) / n
    u = np.stack([np.cos(th), np.sin(th)])
    a = np.einsum("in,ij,jn->n", u, precision, u)
    b = (precision @ m) @ u
    peak = np.clip(b / a, 0, radius)
    log_max = -0.5 * (a * peak * peak - 2 * b * peak + m @ precision @ m)
    return n, int((log_max >= log_max.max() - 44).sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=1, help="1 (alpha = 2) or 2 (alpha = 1.5)")
    ap.add_argument("--densities", type=int, default=16)
    ap.add_argument("--tolerance", type=float, default=1e-14)
    ap.add_argument("--seed", type=int, default=20241202)
    ap.add_argument("--rule", type=float, default=5, help="c in the rule half = c R / sigma_y + extra")
    ap.add_argument("--extra", type=float, default=16, help="extra in the rule half = c R / sigma_y + extra")
    ap.add_argument("--frame", choices=["centre", "principal"], default="principal",
                    help="chords along psi's long axis, or along the direction to its centre")
    args = ap.parse_args()
    k, radius = args.k, math.sqrt(2 * (args.k + 2))
    rng = np.random.default_rng(args.seed)
    grid = np.linspace(0, 1, 10)
    centres = np.array([(a, b) for a in grid for b in grid])  # GaussianBasis2D::paper()
    variance = 0.001
    rows = []
    for _ in range(args.densities):
        # As bench_continuous.cc's Problem2D draws them (its own generator).
        mu = rng.uniform(0.2, 0.8, 2)
        s1, s2 = rng.uniform(0.03, 0.2, 2)
        angle = rng.uniform(0, math.pi)
        c, s = math.cos(angle), math.sin(angle)
        covariance = np.array([[c * c * s1 * s1 + s * s * s2 * s2, c * s * (s1 * s1 - s2 * s2)],
                               [c * s * (s1 * s1 - s2 * s2), s * s * s1 * s1 + c * c * s2 * s2]])
        whiten = np.linalg.inv(sqrtm(covariance))
        cov = variance * whiten @ whiten.T
        smallest_precision = np.linalg.eigvalsh(np.linalg.inv(cov))[0]
        long_axis = math.atan2(*np.linalg.eigh(cov)[1][::-1, 1])  # psi's long axis, every pair's
        pairs = []
        for centre in centres:
            m = whiten @ (centre - mu)
            gap = max(0.0, np.linalg.norm(m) - radius)
            if 0.5 * smallest_precision * gap * gap > 44:
                continue
            if args.frame == "principal" or np.linalg.norm(m) == 0:
                phi = long_axis
            else:
                phi = math.atan2(m[1], m[0])
            rot = np.array([[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]])
            rotated, m_rotated = rot @ cov @ rot.T, rot @ m
            reference, _, _ = chord_rule(k, radius, m_rotated, rotated, 2000)
            pairs.append((m, m_rotated, rotated, reference, current_rays(radius, m, cov)))
        row_max = max(p[3][0] for p in pairs)
        for m, m_rotated, rotated, reference, (n_ray, used_ray) in pairs:
            if reference[0] < 1e-17 * row_max:
                continue
            for half in range(4, 1000, 2):
                value, nodes, _ = chord_rule(k, radius, m_rotated, rotated, half)
                if np.abs(value - reference).max() < args.tolerance * row_max:
                    used = int((np.abs(nodes) >= np.abs(nodes).max() * math.exp(-44)).sum())
                    break
            else:
                raise RuntimeError(f"no rule of up to 1000 half-nodes reaches {args.tolerance:g} (m = {m})")
            sigma_y = math.sqrt(rotated[1, 1])
            rule = math.ceil((args.rule * radius / sigma_y + args.extra) / 2) * 2
            value, nodes, inside = chord_rule(k, radius, m_rotated, rotated, rule)
            evaluated = np.abs(nodes) >= np.abs(nodes).max() * math.exp(-44)
            at_rule, inside_at_rule = int(evaluated.sum()), int((evaluated & inside).sum())
            error = np.abs(value - reference).max() / row_max
            sigma_x = math.sqrt(rotated[0, 0] - rotated[0, 1] ** 2 / rotated[1, 1])  # along, given y
            rows.append((np.linalg.norm(m) / radius, sigma_y / radius, n_ray, used_ray, half, used, rule, at_rule, error,
                         inside_at_rule, sigma_x / radius, m_rotated[1] / radius))
    rows = np.array(rows, dtype=float)
    ratio = rows[:, 4] * rows[:, 1]
    print(f"k = {k} (alpha = {1 + 1 / k:g}), {args.densities} densities, {len(rows)} pairs integrated, "
          f"tolerance {args.tolerance:g} of the row's largest r, chords along {args.frame}")
    print()
    print("| | mean | max | evaluated per pair (mean) |")
    print("|---|---:|---:|---:|")
    print(f"| rays now: n | {rows[:, 2].mean():.1f} | {rows[:, 2].max():.0f} | {rows[:, 3].mean():.1f} |")
    print(f"| chords: half-nodes needed | {rows[:, 4].mean():.1f} | {rows[:, 4].max():.0f} | {rows[:, 5].mean():.1f} |")
    print(f"| chords: half = {args.rule:g} R / sigma_y + {args.extra:g} | {rows[:, 6].mean():.1f} | {rows[:, 6].max():.0f} | "
          f"{rows[:, 7].mean():.1f} |")
    print()
    print(f"largest error at that rule: {rows[:, 8].max():.1e} of the row's largest r; of its evaluated nodes, "
          f"{rows[:, 9].sum() / rows[:, 7].sum():.0%} have both chord ends more than 9 sd from psi's centre")
    print()
    print("needed half * sigma_y / R, quantiles 0 / 0.5 / 0.9 / 0.99 / 1:",
          " / ".join(f"{q:.2f}" for q in np.quantile(ratio, [0, 0.5, 0.9, 0.99, 1])))
    print()
    print("| rule | pairs covered | half-nodes (mean) |")
    print("|---|---:|---:|")
    for h0, c in [(16, 5), (32, 5), (32, 6)]:
        rule = np.maximum(h0, np.ceil(c / rows[:, 1]))
        print(f"| max({h0}, {c} R / sigma_y) | {(rule >= rows[:, 4]).sum()} of {len(rows)} | {rule.mean():.1f} |")
    for c, extra in [(5, 8), (5, 16)]:
        rule = np.ceil(c / rows[:, 1] + extra)
        print(f"| {c} R / sigma_y + {extra} | {(rule >= rows[:, 4]).sum()} of {len(rows)} | {rule.mean():.1f} |")
    # Rules that follow where psi's bump lies on the half circle: at sin(theta_c) = m_y / R the
    # outer Gaussian's rate is R cos(theta_c) / sigma_y (dy = R cos(theta) dtheta), the inner
    # integral's ends move along at R sin(theta_c) (dw = -R sin(theta) dtheta) against sigma_x;
    # near the poles y is quadratic in theta (sqrt(2 R / sigma_y)).
    sy, sx, my = rows[:, 1], rows[:, 10], rows[:, 11]
    cos_c, sin_c = np.sqrt(np.clip(1 - my * my, 0, 1)), np.clip(np.abs(my), 0, 1)
    located = {
        "5 R sqrt(cos^2 / sigma_y^2 + sin^2 / sigma_x^2) + 16": 5 * np.sqrt((cos_c / sy) ** 2 + (sin_c / sx) ** 2) + 16,
        "5 R max(cos / sigma_y, 1 / sigma_x, sqrt(2 / (R sigma_y))) + 16":
            5 * np.maximum.reduce([cos_c / sy, 1 / sx, np.sqrt(2 / sy)]) + 16,
    }
    for name, rule in located.items():
        rule = np.ceil(rule / 2) * 2
        print(f"| {name} | {(rule >= rows[:, 4]).sum()} of {len(rows)} | {rule.mean():.1f} "
              f"(needed / rule at most {(rows[:, 4] / rule).max():.2f}) |")


if __name__ == "__main__":
    main()
