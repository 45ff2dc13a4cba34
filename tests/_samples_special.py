"""Samples for the ops of ops/special.py (torch.special and the remaining pointwise math;
merged into _samples.SAMPLES), same format as _samples.py; SPECIAL: samples at their
special points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH).

Domains follow torch's OpInfos: away from the poles of the gamma family (the negative
integers), from the branch cuts of the complex inverse hyperbolics (complex samples in the
first quadrant), inside the domains of erfinv, atanh, logit and ndtri. In-place samples
work on `x * 1` (a non-leaf). The Bessel and Airy functions and the polynomials are not
differentiable in torch: their samples check that no output requires grad."""
import math

from _samples import C, F, I, S, T, V

NAN, INF = math.nan, math.inf
POS = dict(lo=0.5, hi=3.0)
UNIT = dict(lo=-0.9, hi=0.9)
CQ = dict(lo=0.3, hi=1.5)  # complex in the first quadrant: off every branch cut used here


def _sp(name):
    return lambda m, *xs: getattr(m.special, name)(*xs)


def _inplace_error(name):
    return f"inplace version of {name}"


SAMPLES = {
    # ---- inverse hyperbolics -----------------------------------------------------------
    "acosh": [
        S(lambda m, x: m.acosh(x), F(3, 4, lo=1.1, hi=3.0)),
        S(lambda m, x: x.arccosh(), F(lo=1.1, hi=3.0), name="0-dim method alias"),
        S(lambda m, x: m.acosh(x), C(3, 4, **CQ), name="complex"),
        S(lambda m, x: m.acosh(x), T("int64", 3, lo=1, hi=5), nondiff=True, name="int"),
    ],
    "asinh": [
        S(lambda m, x: m.asinh(x), F(3, 4)),
        S(lambda m, x: m.arcsinh(x), C(3, 4, **CQ), name="complex, alias"),
    ],
    "atanh": [
        S(lambda m, x: m.atanh(x), F(3, 4, **UNIT)),
        S(lambda m, x: x.arctanh(), C(3, 4, lo=0.2, hi=0.6), name="complex, method alias"),
    ],
    "acosh_": [S(lambda m, x: (x * 1).acosh_(), F(4, lo=1.1, hi=3.0),
                 backward_error=_inplace_error("acosh"))],
    "asinh_": [S(lambda m, x: m.arcsinh_(x * 1), F(4), backward_error=_inplace_error("asinh"))],
    "atanh_": [S(lambda m, x: (x * 1).arctanh_(), F(4, **UNIT),
                 backward_error=_inplace_error("atanh"))],
    # ---- error functions ---------------------------------------------------------------
    "erfc": [
        S(lambda m, x: m.erfc(x), F(3, 4)),
        S(lambda m, x: m.special.erfc((x * 1).erfc_()), F(4), name="in place, special.erfc"),
        S(lambda m, x: m.erfc(x), T("int32", 3), nondiff=True, name="int"),
    ],
    "erfinv": [
        S(lambda m, x: m.erfinv(x), F(3, 4, **UNIT)),
        S(lambda m, x: m.special.erfinv((x * 0.5).erfinv_()), F(4, **UNIT),
          name="in place, special.erfinv"),
    ],
    "special_erfcx": [S(_sp("erfcx"), F(3, 4, lo=-2.0, hi=6.0))],
    "special_ndtri": [S(_sp("ndtri"), F(3, 4, lo=0.05, hi=0.95)),
                      S(_sp("ndtri"), T("int64", 3, lo=0, hi=2), nondiff=True, name="int")],
    "special_log_ndtr": [S(_sp("log_ndtr"), F(3, 4, lo=-6.0, hi=3.0))],
    "special_entr": [S(_sp("entr"), F(3, 4, **POS))],
    # ---- gamma family ------------------------------------------------------------------
    "lgamma": [
        S(lambda m, x: m.lgamma(x), F(3, 4, **POS)),
        S(lambda m, x: m.special.gammaln(x), F(5, lo=-2.8, hi=-2.2), name="negative, gammaln"),
        S(lambda m, x: (x * 1).lgamma_(), F(4, **POS), name="in place"),
        S(lambda m, x: x.lgamma(), T("int64", 3, lo=1, hi=6), nondiff=True, name="int"),
    ],
    "digamma": [
        S(lambda m, x: m.digamma(x), F(3, 4, **POS)),
        S(lambda m, x: m.special.psi(x), F(5, lo=-1.8, hi=-1.2), name="negative, psi"),
        S(lambda m, x: m.special.digamma((x * 1).digamma_()), F(4, lo=2.0, hi=4.0),
          name="in place, special.digamma"),
    ],
    "polygamma": [
        S(lambda m, x: m.polygamma(1, x), F(3, 4, **POS), name="trigamma"),
        S(lambda m, x: x.polygamma(0), F(4, **POS), name="n = 0 method"),
        S(lambda m, x: m.special.polygamma(2, x), F(4, **POS), name="n = 2"),
        S(lambda m, x: m.polygamma(3, x), F(5, lo=-1.8, hi=-1.2), name="n = 3, negative"),
        S(lambda m, x: m.polygamma(1, x), F(5, lo=-2.8, hi=-2.2), name="trigamma, negative"),
        S(lambda m, x: m.polygamma(2, x), T("int64", 3, lo=1, hi=5), nondiff=True, name="int"),
    ],
    "polygamma_": [S(lambda m, x: (x * 1).polygamma_(2), F(4, **POS))],
    "mvlgamma": [
        S(lambda m, x: m.mvlgamma(x, 3), F(3, 4, lo=1.5, hi=3.0)),
        S(lambda m, x: m.special.multigammaln((x * 1).mvlgamma_(1), 1), F(4, lo=2.0, hi=3.0),
          name="p = 1, in place, multigammaln"),
    ],
    "special_zeta": [
        S(lambda m, x, q: m.special.zeta(x, q), F(3, 4, lo=1.5, hi=4.0, rg=False), F(3, 4, **POS),
          name="grad of q"),
        S(lambda m, x, q: m.special.zeta(x, q), F(4, lo=1.5, hi=4.0), F(4, **POS),
          backward_error="the derivative for 'zeta' is not implemented", name="grad of x"),
    ],
    "special_zeta_scalar_self": [S(lambda m, q: m.special.zeta(3.0, q), F(3, 4, **POS))],
    "special_zeta_scalar_other": [
        S(lambda m, x: m.special.zeta(x, 2.5), F(4, lo=1.5, hi=4.0),
          backward_error="the derivative for 'zeta' is not implemented")],
    "igamma": [
        S(lambda m, a, x: m.igamma(a, x), F(3, 4, **POS, rg=False), F(3, 4, **POS)),
        S(lambda m, a, x: m.special.gammainc(a, x), F(4, **POS), F(4, **POS),
          backward_error="the derivative for 'igamma: input' is not implemented",
          name="grad of input"),
        S(lambda m, a, x: (a * 1).igamma_(x), F(4, **POS, rg=False), F(4, **POS),
          name="in place"),
    ],
    "igammac": [
        S(lambda m, a, x: m.special.gammaincc(a, x), F(3, 4, **POS, rg=False), F(3, 4, **POS)),
        S(lambda m, a, x: m.igammac(a, x), F(4, **POS), F(4, **POS),
          backward_error="the derivative for 'igammac: input' is not implemented",
          name="grad of input"),
    ],
    # ---- Bessel ------------------------------------------------------------------------
    "i0": [
        S(lambda m, x: m.i0(x), F(3, 4, lo=-4.0, hi=4.0)),
        S(lambda m, x: m.special.i0((x * 1).i0_()), F(4), name="in place, special.i0"),
    ],
    "special_i0e": [S(_sp("i0e"), F(3, 4, lo=-4.0, hi=4.0))],
    "special_i1": [S(_sp("i1"), F(3, 4, lo=-4.0, hi=4.0))],
    "special_i1e": [S(_sp("i1e"), F(3, 4, lo=-4.0, hi=4.0))],
    # ---- other unary -------------------------------------------------------------------
    "sinc": [
        S(lambda m, x: m.sinc(x), F(3, 4)),
        S(lambda m, x: m.special.sinc(x), C(3, 4), name="complex, special.sinc"),
        S(lambda m, x: (x * 1).sinc_(), F(4), name="in place"),
    ],
    "logit": [
        S(lambda m, x: m.logit(x), F(3, 4, lo=0.1, hi=0.9)),
        S(lambda m, x: m.special.logit(x, eps=0.2), F(3, 4, lo=0.05, hi=0.95), name="eps"),
        S(lambda m, x: (x * 1).logit_(0.3), F(4, lo=0.05, hi=0.95), name="in place, eps"),
        S(lambda m, x: m.logit(x, -0.5), F(4, lo=0.1, hi=0.9), name="negative eps"),
    ],
    "deg2rad": [
        S(lambda m, x: m.deg2rad(x), F(3, 4, lo=-200.0, hi=200.0)),
        S(lambda m, x: (x * 1).deg2rad_(), F(4), name="in place"),
        S(lambda m, x: x.deg2rad(), T("int64", 3, lo=-90, hi=90), nondiff=True, name="int"),
    ],
    "rad2deg": [S(lambda m, x: m.rad2deg(x), F(3, 4)),
                S(lambda m, x: m.rad2deg_(x * 1), F(4), name="in place")],
    # ---- not differentiable: Bessel, Airy ----------------------------------------------
    "special_airy_ai": [S(_sp("airy_ai"), F(3, 4, lo=-5.0, hi=5.0), nondiff=True),
                        S(_sp("airy_ai"), T("int64", 3, lo=-3, hi=3), nondiff=True, name="int")],
    "special_bessel_j0": [S(_sp("bessel_j0"), F(3, 4, lo=-8.0, hi=8.0), nondiff=True)],
    "special_bessel_j1": [S(_sp("bessel_j1"), F(3, 4, lo=-8.0, hi=8.0), nondiff=True)],
    "special_bessel_y0": [S(_sp("bessel_y0"), F(3, 4, lo=0.1, hi=8.0), nondiff=True)],
    "special_bessel_y1": [S(_sp("bessel_y1"), F(3, 4, lo=0.1, hi=8.0), nondiff=True)],
    "special_modified_bessel_i0": [S(_sp("modified_bessel_i0"), F(3, 4, lo=-9.0, hi=9.0),
                                     nondiff=True)],
    "special_modified_bessel_i1": [S(_sp("modified_bessel_i1"), F(3, 4, lo=-9.0, hi=9.0),
                                     nondiff=True)],
    "special_modified_bessel_k0": [S(_sp("modified_bessel_k0"), F(3, 4, lo=0.1, hi=5.0),
                                     nondiff=True)],
    "special_modified_bessel_k1": [S(_sp("modified_bessel_k1"), F(3, 4, lo=0.1, hi=5.0),
                                     nondiff=True)],
    "special_scaled_modified_bessel_k0": [
        S(_sp("scaled_modified_bessel_k0"), F(3, 4, lo=0.1, hi=5.0), nondiff=True)],
    "special_scaled_modified_bessel_k1": [
        S(_sp("scaled_modified_bessel_k1"), F(3, 4, lo=0.1, hi=5.0), nondiff=True)],
    "special_spherical_bessel_j0": [S(_sp("spherical_bessel_j0"), F(3, 4, lo=-5.0, hi=5.0),
                                      nondiff=True)],
    # ---- the polynomials (x, n), not differentiable ------------------------------------
    **{f"special_{s}chebyshev_polynomial_{k}": [
        S(_sp(f"{s}chebyshev_polynomial_{k}"), F(3, 4, lo=-1.0 if not s else 0.0, hi=1.0),
          T("int64", 4, lo=0, hi=12), nondiff=True),
        S(lambda m, x, _n=f"{s}chebyshev_polynomial_{k}": getattr(m.special, _n)(x, 9),
          F(5, lo=-1.5, hi=1.5), nondiff=True, name="n a number"),
    ] for s in ("", "shifted_") for k in "tuvw"},
    "special_hermite_polynomial_h": [
        S(_sp("hermite_polynomial_h"), F(3, 4), T("int64", 4, lo=0, hi=9), nondiff=True),
        S(lambda m, n: m.special.hermite_polynomial_h(0.5, n), T("int64", 5, lo=-1, hi=6),
          nondiff=True, name="x a number")],
    "special_hermite_polynomial_he": [
        S(_sp("hermite_polynomial_he"), F(3, 4), T("int64", 4, lo=0, hi=9), nondiff=True)],
    "special_laguerre_polynomial_l": [
        S(_sp("laguerre_polynomial_l"), F(3, 4, lo=0.0, hi=4.0), T("int64", 4, lo=0, hi=9),
          nondiff=True)],
    "special_legendre_polynomial_p": [
        S(_sp("legendre_polynomial_p"), F(3, 4, lo=-1.0, hi=1.0), T("int64", 4, lo=0, hi=9),
          nondiff=True)],
    # ---- binary ------------------------------------------------------------------------
    "xlogy_tensor": [
        S(lambda m, x, y: m.xlogy(x, y), F(3, 4), F(3, 4, **POS)),
        S(lambda m, x, y: x.xlogy(y), F(3, 4), F(4, **POS), name="bcast method"),
        S(lambda m, x, y: m.special.xlogy((x * 1).xlogy_(y), y), F(4, **POS), F(4, **POS),
          name="in place, special.xlogy"),
        S(lambda m, x, y: m.xlogy(x, y), T("int64", 3, lo=0, hi=3), F(3, **POS), name="int x"),
        S(lambda m, x, y: m.xlogy(x, y), T("int64", 3, lo=0, hi=3), T("int32", 3, lo=1, hi=4),
          nondiff=True, name="ints"),
    ],
    "xlogy_tensor_scalar_self": [S(lambda m, y: m.xlogy(2.5, y), F(3, 4, **POS)),
                                 S(lambda m, y: m.special.xlogy(3, y), F(4, **POS),
                                   name="int scalar, special.xlogy")],
    "xlogy_tensor_scalar_other": [S(lambda m, x: m.xlogy(x, 1.5), F(3, 4)),
                                  S(lambda m, x: (x * 1).xlogy_(2), F(4), name="in place")],
    "special_xlog1py": [
        S(lambda m, x, y: m.special.xlog1py(x, y), F(3, 4), F(3, 4, lo=-0.5, hi=2.0)),
        S(lambda m, x, y: m.special.xlog1py(x, y), F(3, 1), F(4, lo=-0.5, hi=2.0), name="bcast"),
    ],
    "special_xlog1py_scalar_self": [S(lambda m, y: m.special.xlog1py(2.0, y),
                                      F(3, 4, lo=-0.5, hi=2.0))],
    "special_xlog1py_scalar_other": [S(lambda m, x: m.special.xlog1py(x, 0.5), F(3, 4))],
    "logaddexp": [
        S(lambda m, x, y: m.logaddexp(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: x.logaddexp(y), F(3, 4), F(4, lo=5.0, hi=9.0), name="bcast, far apart"),
        S(lambda m, x, y: m.logaddexp(x, y), C(3, 4), C(3, 4), name="complex"),
    ],
    "logaddexp2": [S(lambda m, x, y: m.logaddexp2(x, y), F(3, 4), F(3, 4)),
                   S(lambda m, x, y: m.logaddexp2(x, y), F(3, 1), F(1, 4), name="bcast")],
    "hypot": [S(lambda m, x, y: m.hypot(x, y), F(3, 4), F(3, 4)),
              S(lambda m, x, y: (x * 1).hypot_(y), F(3, 4), F(4), name="in place, bcast")],
    "nextafter": [S(lambda m, x, y: m.nextafter(x, y), F(3, 4), F(3, 4)),
                  S(lambda m, x, y: (x * 1).nextafter_(y), F(4), F(4), name="in place")],
    "fmax": [
        S(lambda m, x, y: m.fmax(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: x.fmax(y), F(3, 4), F(4), name="bcast"),
        S(lambda m, x, y: m.fmax(x, y), T("int64", 3, 4, lo=-5, hi=5), T("int32", 4, lo=-5, hi=5),
          nondiff=True, name="ints"),
    ],
    "fmin": [S(lambda m, x, y: m.fmin(x, y), F(3, 4), F(3, 4)),
             S(lambda m, x, y: m.fmin(x, y), T("float64", 4), F(4), name="mixed dtypes")],
    "fmod": [
        S(lambda m, x, y: m.fmod(x, y), F(3, 4, lo=-5.0, hi=5.0), F(3, 4, **POS)),
        S(lambda m, x, y: (x * 1).fmod_(y), F(3, 4, lo=-5.0, hi=5.0), F(4, lo=-3.0, hi=-0.5),
          name="in place, negative divisor"),
        S(lambda m, x, y: m.fmod(x, y), T("int64", 3, lo=-9, hi=9), T("int64", 3, lo=1, hi=4),
          nondiff=True, name="ints"),
    ],
    "fmod_scalar": [S(lambda m, x: m.fmod(x, 1.5), F(3, 4, lo=-5.0, hi=5.0)),
                    S(lambda m, x: x.fmod(-2), T("int64", 4, lo=-9, hi=9), nondiff=True,
                      name="int")],
    "copysign": [
        S(lambda m, x, y: m.copysign(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: (x * 1).copysign_(y), F(3, 4), F(4), name="in place, bcast"),
        S(lambda m, x, y: m.copysign(x, y), T("int64", 3), F(3), name="int magnitude"),
    ],
    "copysign_scalar": [S(lambda m, x: m.copysign(x, -1.0), F(3, 4)),
                        S(lambda m, x: x.copysign(2), F(4), name="method, int scalar")],
    "ldexp": [
        S(lambda m, x, e: m.ldexp(x, e), F(3, 4), F(3, 4)),
        S(lambda m, x, e: m.ldexp(x, e), F(3, 4), T("int64", 4, lo=0, hi=4), name="int exponent"),
        S(lambda m, x, e: (x * 1).ldexp_(e), F(4), T("int32", 4, lo=0, hi=4), name="in place"),
        # torch's self formula takes pow(2, other) in integers: 0 for a negative exponent
        S(lambda m, x, e: m.ldexp(x, e), F(4), I([-2, -1, 0, 3]), jax=False, fd=False,
          name="negative int exponent: torch's integer pow in backward"),
        # (a real exponent requiring grad: torch's backward refuses the complex gradient)
        S(lambda m, x, e: m.ldexp(x, e), C(3, 4), F(3, 4, rg=False), name="complex"),
        S(lambda m, x, e: m.ldexp(x, e), T("int64", 3), T("int64", 3, lo=-2, hi=3),
          nondiff=True, name="ints"),
    ],
    "frexp": [S(lambda m, x: m.frexp(x), F(3, 4, lo=-10.0, hi=10.0)),
              S(lambda m, x: x.frexp().mantissa, F(4), name="method, mantissa")],
    "lerp_scalar": [
        S(lambda m, x, y: m.lerp(x, y, 0.3), F(3, 4), F(3, 4)),
        S(lambda m, x, y: (x * 1).lerp_(y, 0.8), F(3, 4), F(4), name="in place, bcast, w > 0.5"),
        S(lambda m, x, y: m.lerp(x, y, 0.5 + 0.25j), C(3, 4), C(3, 4), name="complex weight"),
    ],
    "lerp": [
        S(lambda m, x, y, w: m.lerp(x, y, w), F(3, 4), F(3, 4), F(3, 4, lo=0.0, hi=1.0)),
        S(lambda m, x, y, w: x.lerp(y, w), F(3, 4), F(4), F(3, 1, lo=-1.0, hi=2.0), name="bcast"),
        S(lambda m, x, y, w: m.lerp(x, y, w), C(3), C(3), C(3, lo=0.1, hi=0.6), name="complex"),
    ],
    "addcmul": [
        S(lambda m, x, a, b: m.addcmul(x, a, b), F(3, 4), F(3, 4), F(3, 4)),
        S(lambda m, x, a, b: (x * 1).addcmul_(a, b, value=-0.5), F(3, 4), F(4), F(3, 1),
          name="in place, bcast, value"),
        S(lambda m, x, a, b: m.addcmul(x, a, b, value=2 - 1j), C(3), C(3), C(3), name="complex"),
        S(lambda m, x, a, b: m.addcmul(x, a, b, value=2.5), T("int64", 3), T("int64", 3),
          T("int64", 3), nondiff=True, name="ints, value truncated"),
    ],
    "addcdiv": [
        S(lambda m, x, a, b: m.addcdiv(x, a, b), F(3, 4), F(3, 4), F(3, 4, **POS)),
        S(lambda m, x, a, b: x.addcdiv(a, b, value=3), F(3, 4), F(4), F(3, 1, lo=-2.0, hi=-0.5),
          name="method, bcast, value"),
        S(lambda m, x, a, b: m.addcdiv(x, a, b, value=0.5j), C(3), C(3), C(3, **CQ),
          name="complex"),
    ],
    "heaviside": [S(lambda m, x, v: m.heaviside(x, v), F(3, 4), F(4),
                    backward_error="derivative for aten::heaviside is not implemented"),
                  S(lambda m, x, v: x.heaviside(v), T("int64", 4), T("int64", 1), nondiff=True,
                    name="ints")],
    "heaviside_": [S(lambda m, x, v: (x * 1).heaviside_(v), F(4), F(4),
                     backward_error="derivative for aten::heaviside_ is not implemented")],
    # ---- integers ----------------------------------------------------------------------
    "gcd": [S(lambda m, x, y: m.gcd(x, y), T("int64", 3, 4, lo=-20, hi=20),
              T("int64", 4, lo=-20, hi=20), nondiff=True),
            S(lambda m, x, y: (x * 1).gcd_(y), T("int32", 4, lo=0, hi=30),
              T("int32", 4, lo=0, hi=30), nondiff=True, name="in place")],
    "lcm": [S(lambda m, x, y: m.lcm(x, y), T("int64", 3, 4, lo=-20, hi=20),
              T("int64", 4, lo=-20, hi=20), nondiff=True),
            S(lambda m, x, y: x.lcm(y), T("uint8", 4, lo=0, hi=20), T("int8", 4, lo=-9, hi=9),
              nondiff=True, name="promoted")],
    "bitwise_left_shift": [
        S(lambda m, x, y: m.bitwise_left_shift(x, y), T("int64", 3, 4, lo=-50, hi=50),
          T("int64", 4, lo=-2, hi=70), nondiff=True),
        S(lambda m, x: x.bitwise_left_shift(3), T("uint8", 4, lo=0, hi=255), nondiff=True,
          name="uint8, scalar"),
        S(lambda m, y: m.bitwise_left_shift(5, y), T("int32", 4, lo=0, hi=33), nondiff=True,
          name="scalar self"),
    ],
    "bitwise_right_shift": [
        S(lambda m, x, y: m.bitwise_right_shift(x, y), T("int64", 3, 4, lo=-50, hi=50),
          T("int64", 4, lo=-2, hi=70), nondiff=True),
        S(lambda m, x, y: (x * 1).bitwise_right_shift_(y), T("int8", 4, lo=-100, hi=100),
          T("int8", 4, lo=0, hi=9), nondiff=True, name="in place, int8"),
    ],
    # ---- predicates --------------------------------------------------------------------
    "signbit": [S(lambda m, x: m.signbit(x), V([-1.0, -0.0, 0.0, 2.0, -INF, NAN]), nondiff=True),
                S(lambda m, x: x.signbit(), T("int64", 4), nondiff=True, name="int")],
    "isposinf": [S(lambda m, x: m.isposinf(x), V([1.0, INF, -INF, NAN]), nondiff=True),
                 S(lambda m, x: m.isposinf(x), T("int64", 3), nondiff=True, name="int")],
    "isneginf": [S(lambda m, x: x.isneginf(), V([1.0, INF, -INF, NAN]), nondiff=True)],
    "isreal": [S(lambda m, x: m.isreal(x), V([1 + 0j, 1j, -2 + 0j, NAN], "c"), nondiff=True),
               S(lambda m, x: x.isreal(), F(3), nondiff=True, name="real")],
}

# torch's compositions over existing ops (their samples run the new public names)
SAMPLES.update({
    "pow": [S(lambda m, x: m.square(x), F(3, 4), name="square"),
            S(lambda m, x: (x * 1).square_(), F(4), name="square_"),
            S(lambda m, x: m.square(x), C(3), name="square complex"),
            S(lambda m, x: m.square(x), T("bool", 3), nondiff=True, name="square bool"),
            S(lambda m, x: m.float_power(x, 2), F(3, 4), name="float_power scalar exponent")],
    "pow_tensor": [S(lambda m, x, y: m.float_power(x, y), F(3, 4, **POS), F(3, 4),
                     name="float_power"),
                   S(lambda m, x, y: (x * 1).float_power_(y), T("float64", 4, lo=1, hi=3),
                     F(4), name="float_power_")],
    "pow_scalar": [S(lambda m, y: m.float_power(2, y), F(3, 4), name="float_power scalar base")],
    "div": [S(lambda m, x, y: m.true_divide(x, y), F(3, 4), F(3, 4, **POS), name="true_divide"),
            S(lambda m, x, y: (x * 1).divide_(y), F(4), F(4, **POS), name="divide_")],
    "mul": [S(lambda m, x, y: m.multiply(x, y), F(3, 4), F(4), name="multiply")],
    "sub": [S(lambda m, x, y: (x * 1).subtract_(y, alpha=2), F(4), F(4), name="subtract_")],
    "trunc": [S(lambda m, x: m.fix(x), F(3, 4), name="fix")],
    "sigmoid": [S(lambda m, x: m.special.expit(x), F(3, 4), name="special.expit")],
    "erf": [S(lambda m, x: m.special.erf(x), F(3, 4), name="special.erf")],
    "mul_scalar": [S(lambda m, x: m.special.ndtr(x), F(3, 4), name="special.ndtr")],
    "acos": [S(lambda m, x: (x * 1).arccos_(), F(4, lo=-0.9, hi=0.9), name="arccos_")],
    "atan2": [S(lambda m, x, y: m.arctan2(x, y), F(3, 4), F(3, 4, **POS), name="arctan2")],
    "neg": [S(lambda m, x: m.negative_(x * 1), F(4), name="negative_")],
})

SPECIAL = {
    "acosh": [S(lambda m, x: x.acosh(), V([1.0, 0.5, 2.0, INF]), name="at 1 and below")],
    "atanh": [S(lambda m, x: x.atanh(), V([1.0, -1.0, 2.0, 0.0]), name="at +-1 and beyond")],
    "erfinv": [S(lambda m, x: x.erfinv(), V([1.0, -1.0, 2.0, 0.0]), name="at +-1 and beyond")],
    "lgamma": [S(lambda m, x: x.lgamma(), V([0.0, -0.0, -1.0, -2.5, 1.0, 2.0, INF, -INF]),
                 name="poles, zeros")],
    "digamma": [S(lambda m, x: x.digamma(), V([0.0, -0.0, -1.0, -2.5, 1.0, INF]),
                  name="poles")],
    "polygamma": [S(lambda m, x: m.polygamma(2, x), V([0.0, -1.0, -1.5, 1e-3, INF]),
                    name="n = 2 at poles"),
                  S(lambda m, x: m.polygamma(1, x), V([0.0, -1.0, -1.5, INF]),
                    name="trigamma at poles")],
    "special_zeta": [S(lambda m, x, q: m.special.zeta(x, q),
                       V([1.0, 0.5, 2.0, 2.0, 3.0, 2.0], rg=False),
                       V([1.0, 1.0, 0.0, -2.0, -2.5, INF]),
                       name="x <= 1, q at and below 0")],
    "igamma": [S(lambda m, a, x: m.igamma(a, x), V([0.0, 1.0, 2.0, INF, 2.0], rg=False),
                 V([1.0, 0.0, INF, 1.0, 0.5]), name="zero and infinite arguments")],
    "sinc": [S(lambda m, x: x.sinc(), V([0.0, -0.0, 1.0, 2.0]), name="at 0 and the zeros")],
    "logit": [S(lambda m, x: x.logit(), V([0.0, 1.0, -0.5, 1.5, 0.5]), name="at 0, 1, outside"),
              S(lambda m, x: x.logit(0.25), V([0.25, 0.75, 0.1, 0.9, 0.5]),
                name="at and beyond eps")],
    "special_i1": [S(lambda m, x: m.special.i1(x), V([0.0, -0.0, 1e-20, 1.0]),
                     name="the limit at 0")],
    "special_i1e": [S(lambda m, x: m.special.i1e(x), V([0.0, 1e-20, -1.0, 800.0]),
                      name="the limit at 0")],
    "special_i0e": [S(lambda m, x: m.special.i0e(x), V([0.0, -1.0, 1.0, 800.0]),
                      name="sgn at 0")],
    "special_entr": [S(lambda m, x: m.special.entr(x), V([0.0, -1.0, 1.0, INF]),
                       name="at 0 and below")],
    "special_ndtri": [S(lambda m, x: m.special.ndtri(x), V([0.0, 1.0, 0.5, 2.0]),
                        name="at 0 and 1")],
    "special_log_ndtr": [S(lambda m, x: m.special.log_ndtr(x), V([-40.0, -1.0, 0.0, 40.0]),
                           name="tails")],
    # (its second derivative 2 erfcx + 2 x erfcx' amplifies erfcx' rounding by x: not at 1e8)
    "special_erfcx": [S(lambda m, x: m.special.erfcx(x), V([-30.0, -6.5, 60.0, 2e3]),
                        name="tails")],
    "xlogy_tensor": [S(lambda m, x, y: m.xlogy(x, y), V([0.0, 0.0, 0.0, 1.0, 2.0]),
                       V([0.0, -1.0, 2.0, 0.0, NAN]), name="x == 0, y <= 0, nan")],
    "xlogy_tensor_scalar_other": [S(lambda m, x: m.xlogy(x, 0.0), V([0.0, 1.0]),
                                    name="y == 0")],
    "xlogy_tensor_scalar_self": [S(lambda m, y: m.xlogy(0.0, y), V([0.0, 1.0, NAN]),
                                   name="x == 0")],
    "special_xlog1py": [S(lambda m, x, y: m.special.xlog1py(x, y), V([0.0, 0.0, 1.0]),
                          V([-1.0, 1.0, -1.0]), name="x == 0, y == -1")],
    "special_xlog1py_scalar_other": [S(lambda m, x: m.special.xlog1py(x, -1.0), V([0.0, 1.0]),
                                       name="y == -1")],
    "logaddexp": [S(lambda m, x, y: m.logaddexp(x, y), V([INF, -INF, 1.0, 1.0]),
                    V([INF, -INF, 1.0, -INF]), name="infinities, ties")],
    "logaddexp2": [S(lambda m, x, y: m.logaddexp2(x, y), V([INF, -INF, 1.0]),
                     V([INF, -INF, 1.0]), name="infinities, ties")],
    "hypot": [S(lambda m, x, y: m.hypot(x, y), V([0.0, 3.0, INF]), V([0.0, 0.0, 1.0]),
                name="at the origin")],
    "nextafter": [S(lambda m, x, y: m.nextafter(x, y), V([1.0, 0.0, 2.0]), V([1.0, 0.0, 1.0]),
                    name="x == y")],
    "fmax": [S(lambda m, x, y: m.fmax(x, y), V([1.0, NAN, 2.0, NAN]), V([1.0, 2.0, NAN, NAN]),
               name="ties and nans")],
    "fmin": [S(lambda m, x, y: m.fmin(x, y), V([1.0, NAN, 2.0, NAN]), V([1.0, 2.0, NAN, NAN]),
               name="ties and nans")],
    "fmod": [S(lambda m, x, y: m.fmod(x, y), V([4.0, -3.0, 1.0, INF]), V([2.0, 1.5, 0.0, 1.0]),
               name="at multiples, divisor 0")],
    "fmod_scalar": [S(lambda m, x: m.fmod(x, 1.5), V([3.0, -1.5, 0.0]), name="at multiples")],
    "copysign": [S(lambda m, x, y: m.copysign(x, y), V([0.0, -0.0, 1.0, 2.0]),
                   V([-1.0, 1.0, -0.0, NAN]), name="x == 0, -0 and nan signs")],
    "copysign_scalar": [S(lambda m, x: m.copysign(x, -0.0), V([0.0, 1.0, -2.0]),
                          name="x == 0")],
    "ldexp": [S(lambda m, x, e: m.ldexp(x, e), V([1.0, 0.0, INF]), V([-1100.0, 2000.0, 1.0]),
                name="underflow and overflow")],
    "frexp": [S(lambda m, x: m.frexp(x), V([0.0, -0.0, INF, NAN, -3.0, 1.0]),
                name="zero, inf, nan")],
    "lerp_scalar": [S(lambda m, x, y: m.lerp(x, y, 0.5), V([1.0, 2.0]), V([3.0, INF]),
                      name="w == 0.5, inf end")],
    "lerp": [S(lambda m, x, y, w: m.lerp(x, y, w), V([1.0, 2.0, 0.0]), V([3.0, INF, 1.0]),
               V([0.5, 0.7, 0.0]), name="w at 0.5, inf end")],
    "addcdiv": [S(lambda m, x, a, b: m.addcdiv(x, a, b), V([1.0, 1.0]), V([1.0, 0.0]),
                  V([0.0, 0.0]), name="division by zero")],
    "mvlgamma": [S(lambda m, x: m.mvlgamma(x, 2), V([0.5, 1.0, 0.25]),
                   name="at and below (p - 1) / 2")],
    "heaviside": [S(lambda m, x, v: m.heaviside(x, v), V([0.0, -0.0, 1.0, NAN]), V([0.5]),
                    backward_error="derivative for aten::heaviside", name="at 0, nan")],
}

_SMOOTH = "analytic where it is defined; its values at 0 and 1 are in the sweep"
_NONDIFF = "not differentiable: no gradient anywhere"
SMOOTH = dict.fromkeys((
    "asinh", "erfc", "i0", "special_zeta_scalar_self", "igammac", "special_xlog1py_scalar_self",
    "polygamma_"), _SMOOTH)
SMOOTH.update(dict.fromkeys((
    "deg2rad", "rad2deg", "addcmul"), "linear in each input: the same formula at every point"))
SMOOTH.update(dict.fromkeys((
    "acosh_", "asinh_", "atanh_", "special_zeta_scalar_other", "heaviside_"),
    "torch raises in backward everywhere (a not-implemented derivative)"))
SMOOTH.update(dict.fromkeys(
    ["special_" + n for n in (
        "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
        "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
        "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
        "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
        "legendre_polynomial_p")] +
    [f"special_{s}chebyshev_polynomial_{k}" for s in ("", "shifted_") for k in "tuvw"] +
    ["gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "signbit", "isposinf",
     "isneginf", "isreal"], _NONDIFF))
