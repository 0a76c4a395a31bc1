#!/usr/bin/env python3
"""The coefficients of ewald_erfc() in kernels/src/periodic/ewald_sums.cu, and their error.

erfc(x) = exp(-x^2) * erfcx(x), where erfcx (the scaled complementary error function) is smooth
and entire, so a polynomial fits it on [0, END] well: Chebyshev least squares in float64, then
its power-basis coefficients rounded to float. END = 4.3 covers x = beta * r up to the real
cutoff for every --ewald-error from 1e-8 up (beta rc = sqrt(-ln(2 delta)) <= 4.21). The error is
measured as the GPU evaluates it: float Horner with one rounding a step (FMA), x*x rounded,
exp in float; against erfc of the same float x in float64 (what erfcf approximates, to 4 ulp).

    scripts/fit-ewald-erfc.py        (numpy)
"""
import math

import numpy as np

END, DEGREE = 4.3, 16


def main():
    xs = np.linspace(0.0, END, 60001)
    erfc = np.vectorize(math.erfc)
    fit = np.polynomial.chebyshev.Chebyshev.fit(xs, erfc(xs) * np.exp(xs * xs), DEGREE,
                                                domain=[0.0, END])
    coefficients = fit.convert(kind=np.polynomial.Polynomial).coef.astype(np.float32)
    x = xs.astype(np.float32)
    p = np.full_like(x, coefficients[-1])
    for c in coefficients[-2::-1]:  # p * x + c: the product of two floats is exact in float64
        p = (p.astype(np.float64) * x + np.float64(c)).astype(np.float32)
    e = np.exp(-(x * x).astype(np.float64)).astype(np.float32)
    got = (p * e).astype(np.float32).astype(np.float64)
    error = np.abs(got - erfc(x.astype(np.float64)))
    print(f"degree {DEGREE} on [0, {END}]: max |error| {error.max():.2e} at x = "
          f"{x[error.argmax()]:.3f} (erfcf's 4 ulp of 1: {4 * 2.0**-24:.2e})")
    print("coefficients, x^0 first:")
    for c in coefficients:
        print(f"  {float(c):.9e}f,")


if __name__ == "__main__":
    main()
