#!/usr/bin/env python3
"""Fits the ratios r_J = K_(J+1) / K_J of the tail integrals (src/continuous/tail_integrals.h).

    K_j(w) = int_0^inf v^j exp(-w v - v^2 / 2) dv,   w in [4, 40],   J = 4..7.

F_J(w) = r_J(w) w / (J + 1) (which tends to 1 as w grows) is interpolated at 64 Chebyshev points
of t = 4 / (4 + w) in [1/11, 1/2], its Chebyshev series cut after degree 21 and written as a
polynomial in y = (2 t - 13/22) / (9/22) in [-1, 1]. Everything is computed with 60 digits (mpmath:
K_0 = sqrt(pi/2) erfcx(w / sqrt 2), then the recurrence K_(j+1) = j K_(j-1) - w K_j, which loses
about 2 log10(w) digits a step, far fewer than the 60 kept). The script prints the C++ table
and the largest relative error of F_J evaluated as tail_integrals.h evaluates it (in double,
Horner's rule on the even and odd parts in y^2) at 4001 points.

Run with Debian's python3 (python3-mpmath): /usr/bin/python3 scripts/fit_tail_ratios.py
"""
import mpmath as mp

mp.mp.dps = 60
W_LO, W_HI, A, DEGREE, POINTS = 4, 40, 4, 21, 64
T_LO, T_HI = mp.mpf(A) / (A + W_HI), mp.mpf(A) / (A + W_LO)


def tail_integrals(w, last):
    k0 = mp.sqrt(mp.pi / 2) * mp.exp(w * w / 2) * mp.erfc(w / mp.sqrt(2))
    k = [k0, 1 - w * k0]
    for j in range(1, last):
        k.append(j * k[j - 1] - w * k[j])
    return k


def f(y, J):
    t = (T_LO + T_HI) / 2 + (T_HI - T_LO) / 2 * y
    w = A / t - A
    k = tail_integrals(w, J + 1)
    return k[J + 1] / k[J] * w / (J + 1)


def chebyshev_series(J):
    nodes = [mp.cos(mp.pi * (i + mp.mpf(1) / 2) / POINTS) for i in range(POINTS)]
    values = [f(y, J) for y in nodes]
    return [(2 if j else 1) * mp.fsum(v * mp.cos(mp.pi * j * (i + mp.mpf(1) / 2) / POINTS) for i, v in enumerate(values)) / POINTS
            for j in range(DEGREE + 1)]


def powers_of_y(series):
    t = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]  # T_0, T_1 in powers of y
    for j in range(2, len(series)):
        up = [mp.mpf(0)] + [2 * c for c in t[j - 1]]
        t.append([a - (t[j - 2][i] if i < len(t[j - 2]) else 0) for i, a in enumerate(up)])
    out = [mp.mpf(0)] * len(series)
    for j, c in enumerate(series):
        for i, x in enumerate(t[j]):
            out[i] += c * x
    return [float(c) for c in out]


def evaluate(coefficients, y):  # as tail_integrals.h: even and odd parts in y^2, in double
    y2 = y * y
    even = odd = 0.0
    for c in reversed(coefficients[0::2]):
        even = even * y2 + c
    for c in reversed(coefficients[1::2]):
        odd = odd * y2 + c
    return even + odd * y


for J in range(4, 8):
    coefficients = powers_of_y(chebyshev_series(J))
    error = max(abs(evaluate(coefficients, y) - f(mp.mpf(y), J)) / f(mp.mpf(y), J)
                for y in (-1 + 2 * i / 4000 for i in range(4001)))
    print(f"    // J = {J}: within {float(error):.2g} relative of F_J, sum of |coefficients| "
          f"{sum(abs(c) for c in coefficients):.2f}")
    rows = [", ".join(repr(c) for c in coefficients[i:i + 4]) for i in range(0, len(coefficients), 4)]
    print("    {" + ",\n     ".join(rows) + "},")
