/// \file The special functions, registered by family, one file each: those that no backend has
/// as one math call (digamma, polygamma, erfinv, erfcx, the Bessel functions i0, i0e, i1, i1e,
/// K0, K1 and their scaled forms, J0, J1, Y0, Y1, spherical j0, Airy Ai, Hurwitz zeta, the
/// regularized incomplete gammas, ndtri, the orthogonal polynomials) and the bit-level frexp
/// and nextafter: each is written in lang from series, quadratures and approximations, and
/// computed in float64 whatever the operand's float type (the compute rounds the result once to
/// the output type), so float32, float16 and bfloat16 get their correctly rounded value up to
/// float64's error. Expressions are trees (a shared subexpression is computed at each use), so
/// recurrences are written so that each step uses the previous one once. The reference on
/// doubles takes an independent route where one exists (C++17's cyl_bessel_i and cyl_bessel_k
/// below 500, cyl_bessel_j and cyl_neumann below 1000, riemann_zeta, bisection on erf and on
/// Phi, the continued fraction of erfc, long direct sums, frexp and nextafter from <cmath>).
#pragma once

#include "hlir/op.h"

namespace cinn_like::hlir::ops::special {

/// digamma, polygamma, zeta, igamma, igammac (special_gamma.cc).
void RegisterGammaFunctionOps(OpRegistry& r);
/// erfinv, erfcx, ndtri (special_erf.cc).
void RegisterErrorFunctionOps(OpRegistry& r);
/// i0, i0e, i1, i1e, bessel_k0/k1 and their scaled forms, bessel_j0/j1/y0/y1,
/// spherical_bessel_j0, airy_ai (special_bessel.cc).
void RegisterBesselFunctionOps(OpRegistry& r);
/// frexp_mantissa, frexp_exponent, nextafter (special_float_bits.cc).
void RegisterFloatBitOps(OpRegistry& r);
/// The orthogonal polynomials of a tensor degree (special_polynomials.cc).
void RegisterPolynomialOps(OpRegistry& r);

}  // namespace cinn_like::hlir::ops::special
