"""The numerical kernels of ops/special.py: jax functions of arrays, tracer-safe (no value
is read: branches are `jnp.where`s, iterations `lax.while_loop`s that stop once every
element has converged), computing what torch 2.13's CPU kernels compute, in the same
precision (float32 inputs compute in float32, except where torch's kernel itself works
in double: zeta's accumulator).

Where jax.scipy.special agrees with torch to rounding it is used as is, with torch's
values at the edges of the domain; the rest follows the algorithms of torch's
ATen/native/Math.h: Cephes' rational and Chebyshev approximations (the coefficient
tables below are Cephes', 3-clause BSD, as in torch and scipy) and torch's recurrences.
"""
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
from jax import lax

PI = math.pi
_SQRT1_2 = 0.70710678118654752440
_INV_SQRT_PI = 0.56418958354775628694807945156  # 1 / sqrt(pi)
_LN2 = math.log(2.0)


def _full(x, v):
    return jnp.full(jnp.shape(x), v, x.dtype)


def _poly(coefs, z):
    """Horner's scheme from 0, as Math.h's loops: c[0] z^(n-1) + ... + c[n-1]."""
    acc = jnp.zeros_like(z)
    for c in coefs:
        acc = acc * z + c
    return acc


def _chebyshev_sum(coefs, y):
    """Cephes' chbevl: the Chebyshev series sum at y (the recurrence's 0.5 (b0 - b2))."""
    b0 = jnp.full_like(y, coefs[0])
    b1 = b2 = jnp.zeros_like(y)
    for c in coefs[1:]:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _nan_through(f):
    """f with NaN inputs giving NaN (f's branches select on comparisons, NaN takes none)."""
    def g(x):
        return jnp.where(jnp.isnan(x), x, f(x))
    g.__name__ = f.__name__
    g.__doc__ = f.__doc__
    return g


def _until_converged(body, active, state):
    """Run `body(state) -> (state, still active)` on the elements still active (the others
    keep their state) until none is: torch's per-element loops with early exits."""
    def step(carry):
        st, act = carry
        new, keep = body(st)
        st = tuple(jnp.where(act, n, o) for n, o in zip(new, st))
        return st, act & keep

    return lax.while_loop(lambda c: jnp.any(c[1]), step, (state, active))[0]


# ---- gamma family ------------------------------------------------------------------------
def _f64(f, x):
    """f at x computed in float64 (jax's float32 gammaln and digamma are off by a few
    ulps, lgamma(1) by 5e-7, where torch's float kernels are exact), in x's dtype."""
    return f(x.astype(jnp.float64)).astype(x.dtype) if x.dtype == jnp.float32 else f(x)


def lgamma(x):
    return _f64(jss.gammaln, x)


def digamma(x):
    """torch's digamma: -inf at +0, +inf at -0, nan at the negative integers."""
    r = _f64(jss.digamma, x)
    r = jnp.where(x == 0, jnp.where(jnp.signbit(x), jnp.inf, -jnp.inf).astype(x.dtype), r)
    return jnp.where((x < 0) & (x == jnp.trunc(x)), jnp.nan, r).astype(x.dtype)


def trigamma(x):
    """torch's trigamma: reflection below 1/2, six recurrence steps, then the asymptotic
    series."""
    small = x < 0.5
    s = jnp.sin(PI * x)
    result = jnp.where(small, -(PI * PI) / (s * s), jnp.zeros_like(x))
    sign = jnp.where(small, -1.0, 1.0).astype(x.dtype)
    x = jnp.where(small, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x
    return sign * result


# Euler-Maclaurin coefficients of Cephes' zeta: (2k)! / B_2k
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16


@jax.custom_jvp
def zeta(x, q):
    """Hurwitz zeta(x, q) = sum_k (k + q)^-x, Cephes' algorithm as torch runs it: in
    double (torch's CPU accumulator type for float32 too), cast back to the input's dtype.
    Differentiable (for jax's transforms) in q only, as torch's: d/dq = -x zeta(x + 1, q)."""
    dt = x.dtype
    x, q = jnp.broadcast_arrays(x.astype(jnp.float64), q.astype(jnp.float64))
    inf = jnp.full_like(x, jnp.inf)
    nan = jnp.full_like(x, jnp.nan)
    special = jnp.where(x == 1, inf, jnp.where(
        x < 1, nan, jnp.where((q <= 0) & (q == jnp.floor(q)), inf,
                              jnp.where((q <= 0) & (x != jnp.floor(x)), nan, 0.0))))
    is_special = (x <= 1) | ((q <= 0) & ((q == jnp.floor(q)) | (x != jnp.floor(x))))
    # (torch's first term is a pow of the input dtype; the sum accumulates in double)
    s = jnp.power(q.astype(dt), -x.astype(dt)).astype(jnp.float64)
    a, b = q, jnp.zeros_like(x)
    i = jnp.zeros(x.shape, jnp.int32)

    def direct(st):  # the direct sum until a > 9 (at least 9 terms) or convergence
        i, a, b, s, conv = st
        i, a = i + 1, a + 1
        b = jnp.power(a, -x)
        s = s + b
        conv = (-_MACHEP * s < b) & (b < _MACHEP * s)
        return (i, a, b, s, conv), ~conv & ((i < 9) | (a <= 9))

    i, a, b, s, conv = _until_converged(
        direct, ~is_special, (i, a, b, s, jnp.zeros(x.shape, bool)))
    w = a
    s = jnp.where(conv, s, s + b * w / (x - 1) - 0.5 * b)
    a, k = jnp.ones_like(x), jnp.zeros_like(x)
    done = conv
    for coef in _ZETA_A:  # the Euler-Maclaurin tail, stopped at convergence
        a = a * (x + k)
        b = b / w
        t = a * b / coef
        s = jnp.where(done, s, s + t)
        done = done | (jnp.abs(t / s) < _MACHEP)
        k = k + 1
        a = a * (x + k)
        b = b / w
        k = k + 1
    return jnp.where(is_special, special, s).astype(dt)


@zeta.defjvp
def _zeta_jvp(primals, tangents):
    x, q = primals
    out = zeta(x, q)
    return out, -x * zeta(x + 1, q) * tangents[1]


def polygamma(n, x):
    """polygamma(n, x) for a Python int n >= 0, as torch dispatches it."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    sign = 1.0 if n % 2 else -1.0
    factorial = jnp.exp(lax.lgamma(jnp.asarray(n + 1.0, x.dtype)))
    return sign * factorial * zeta(jnp.full_like(x, n + 1.0), x)


def mvlgamma(x, p):
    """The multivariate log-gamma: sum_j lgamma(x - j / 2) + p (p - 1) / 4 log(pi)."""
    args = jnp.arange(-p / 2 + 0.5, 0.5, 0.5, dtype=x.dtype)
    return lgamma(x[..., None] + args).sum(-1) + p * (p - 1) / 4 * math.log(PI)


def _igamma_edges(a, x, at_a0, at_x0, at_a_inf, at_x_inf, value):
    """torch's (scipy's) boundary values of the regularized incomplete gammas."""
    nan = jnp.nan
    r = jnp.where(jnp.isinf(x), at_x_inf, value)
    r = jnp.where(jnp.isinf(a), jnp.where(jnp.isinf(x), nan, at_a_inf), r)
    r = jnp.where(x == 0, at_x0, r)
    r = jnp.where(a == 0, jnp.where(x > 0, at_a0, nan), r)
    return jnp.where((x < 0) | (a < 0), nan, r).astype(value.dtype)


def _in_double(f):
    """f computed in float64 (jax's float32 incomplete gammas lose digits for large a,
    where torch's float32 kernels keep them), cast back."""
    def g(a, x):
        dt = a.dtype
        a, x = jnp.broadcast_arrays(a.astype(jnp.float64), x.astype(jnp.float64))
        return f(a, x).astype(dt)
    g.__name__ = f.__name__
    return g


@_in_double
def igamma(a, x):
    return _igamma_edges(a, x, 1.0, 0.0, 0.0, 1.0, jss.gammainc(a, x))


@_in_double
def igammac(a, x):
    return _igamma_edges(a, x, 0.0, 1.0, 1.0, 0.0, jss.gammaincc(a, x))


# ---- error functions ---------------------------------------------------------------------
def erfcx(x):
    """exp(x^2) erfc(x): jax's below 3, the continued fraction of erfc up to 50, torch's
    five-term expansion above; 2 exp(x^2) - erfcx(-x) for negative x."""
    ax = jnp.abs(x)
    t = ax
    for k in range(40, 0, -1):  # (converged to rounding for x >= 2.1)
        t = ax + (k / 2) / jnp.where(t == 0, 1, t)
    cf = _INV_SQRT_PI / t
    x2 = ax * ax
    far = jnp.where(ax > 5e7, _INV_SQRT_PI / ax,
                    _INV_SQRT_PI * (x2 * (x2 + 4.5) + 2) / (ax * (x2 * (x2 + 5) + 3.75)))
    pos = jnp.where(ax < 3, jss.erfcx(jnp.where(ax < 3, ax, 0)), jnp.where(ax > 50, far, cf))
    e = 2 * jnp.exp(x * x)
    neg = jnp.where(x < -26.7, jnp.inf, jnp.where(x < -6.1, e, e - pos))
    return jnp.where(jnp.isnan(x), x, jnp.where(x >= 0, pos, neg)).astype(x.dtype)


def log_ndtr(x):
    """log of the standard normal CDF, torch's formula."""
    t = x * _SQRT1_2
    low = jnp.log(erfcx(-t) / 2) - t * t
    return jnp.where(x < -1.0, low, jnp.log1p(-lax.erfc(t) / 2))


i0, i0e, i1, i1e = jss.i0, jss.i0e, jss.i1, jss.i1e


def ndtri(x):
    return jss.ndtri(x)


def erfinv(x):
    return lax.erf_inv(x)


def entr(x):
    return jss.entr(x)


# ---- Bessel and Airy functions (torch's Math.h, Cephes) ----------------------------------
_AIRY_AN = (0.346538101525629, 12.007595273964581, 76.27960536152345, 168.08922493463058,
            159.75639135016442, 70.53609068404442, 14.026469116338967, 1.0)
_AIRY_AD = (0.5675945326387702, 14.75625625848472, 84.51389701414746, 177.31808814540045,
            164.2346928715297, 71.47784008255756, 14.095913560783403, 1.0)
_AIRY_AFN = (-0.1316963234183318, -0.6264565444319123, -0.6931580360369335,
             -0.2797799815451191, -0.04919001326095003, -0.004062659235948854,
             -0.0001592764962392621, -2.776491081552329e-06, -1.6778769848911465e-08)
_AIRY_AFD = (13.356042070655324, 32.682503279522464, 26.736704094149957, 9.187074029072596,
             1.4752914677166642, 0.11568717379518804, 0.004402916416152112,
             7.547203482874142e-05, 4.5185009297058035e-07)
_AIRY_AGN = (0.01973399320916857, 0.39110302961568827, 1.0657989759959559, 0.9391692298166502,
             0.35146565610554764, 0.06338889196289255, 0.005858041130483885,
             0.000282851600836737, 6.98793669997261e-06, 8.117892395543892e-08,
             3.415517847659236e-10)
_AIRY_AGD = (9.30892908077442, 19.835292871831214, 15.564662893286462, 5.476860694229755,
             0.9542936116189619, 0.08645808263523921, 0.004126565238242226,
             0.00010125908511650914, 1.1716673321441352e-06, 4.9183457006293e-09)


def airy_ai(x):
    """Ai(x): the asymptotic expansions for x < -2.09 and x >= 8.32, else the power
    series (summed until a term is below the dtype's epsilon, element by element)."""
    eps = jnp.finfo(x.dtype).eps
    # x < -2.09
    xn = jnp.where(x < -2.09, x, -3.0)
    z = 1.0 / (-2.0 * xn * jnp.sqrt(-xn) / 3.0)
    zz = z * z
    afn, afd = _poly(_AIRY_AFN, zz), _poly(_AIRY_AFD, zz)
    agn, agd = _poly(_AIRY_AGN, zz), _poly(_AIRY_AGD, zz)
    t = -2.0 * xn * jnp.sqrt(-xn) / 3.0 + 0.25 * PI
    negative = 5.64189583547756286948e-01 / jnp.sqrt(jnp.sqrt(-xn)) * (
        jnp.sin(t) * (1.0 + zz * afn / afd) - jnp.cos(t) * (z * agn / agd))
    # x >= 2.09
    xp = jnp.where(x >= 2.09, x, 3.0)
    zeta_ = 2.0 * xp * jnp.sqrt(xp) / 3.0
    an, ad = _poly(_AIRY_AN, 1.0 / zeta_), _poly(_AIRY_AD, 1.0 / zeta_)
    large = 5.64189583547756286948e-01 * (an / ad) / (2.0 * jnp.sqrt(jnp.sqrt(xp)) *
                                                       jnp.exp(zeta_))
    # the power series, for -2.09 <= x < 8.3203353
    xs = jnp.where((x >= -2.09) & (x < 2.09), x, 0.0)
    z3 = xs * xs * xs
    one = jnp.ones_like(xs)

    def term(st):
        f, g, k, m, n = st
        m = m * z3
        k = k + 1
        m = m / k
        n = n * z3
        k = k + 1
        n = n / k
        m = m / k
        f = f + m
        k = k + 1
        n = n / k
        g = g + n
        return (f, g, k, m, n), jnp.abs(m / f) > eps

    f, g, *_ = _until_converged(term, jnp.ones(xs.shape, bool), (one, xs, one, one, xs))
    series = 0.355028053887817239260 * f - 0.258819403792806798405 * g
    r = jnp.where(x < -2.09, negative, jnp.where(x > 8.3203353, large, series))
    r = jnp.where((x >= 2.09) & (x <= 8.3203353), large, r)
    r = jnp.where(x > 103.892, 0.0, r)
    return jnp.where(jnp.isinf(x), jnp.nan, jnp.where(jnp.isnan(x), x, r)).astype(x.dtype)


_J0_PP = (0.0007969367292973471, 0.08283523921074408, 1.239533716464143, 5.447250030587687,
          8.74716500199817, 5.303240382353949, 1.0)
_J0_PQ = (0.0009244088105588637, 0.08562884743544745, 1.2535274390105895, 5.470977403304171,
          8.761908832370695, 5.306052882353947, 1.0)
_J0_QP = (-0.011366383889846916, -1.2825271867050931, -19.553954425773597, -93.20601521237683,
          -177.68116798048806, -147.07750515495118, -51.41053267665993, -6.050143506007285)
_J0_QQ = (64.3178256118178, 856.4300259769806, 3882.4018360540163, 7240.467741956525,
          5930.727011873169, 2062.0933166032783, 242.0057402402914)
_J0_RP = (-4794432209.782018, 1956174919465.5657, -249248344360967.72, 9708622510473064.0)
_J0_RQ = (499.563147152651, 173785.4016763747, 48440965.83399621, 11185553704.535683,
          2112775201154.892, 310518229857422.56, 3.1812195594320496e+16, 1.7108629408104315e+18)
_J1_PP = (0.0007621256162081731, 0.07313970569409176, 1.1271960812968493, 5.112079511468076,
          8.424045901417724, 5.214515986823615, 1.0)
_J1_PQ = (0.0005713231280725487, 0.06884559087544954, 1.105142326340617, 5.073863861286015,
          8.399855543276042, 5.209828486823619, 1.0)
_J1_QP = (0.05108625947501766, 4.982138729512334, 75.82382841325453, 366.7796093601508,
          710.8563049989261, 597.4896124006136, 211.68875710057213, 25.207020585802372)
_J1_QQ = (74.23732770356752, 1056.4488603826283, 4986.410583376536, 9562.318924047562,
          7997.041604473507, 2826.1927851763908, 336.0936078106983)
_J1_RP = (-899971225.7055594, 452228297998.19403, -72749424522181.83, 3682957328638529.0)
_J1_RQ = (620.8364781180543, 256987.25675774884, 83514679.14319493, 22151159547.97925,
          4749141220799.914, 784369607876235.9, 8.952223361846274e+16, 5.322786203326801e+18)
_Y0_YP = (15592.436785523574, -14663929.59039716, 5435264770.518765, -982136065717.9115,
          87590639439536.7, -3466283033847297.0, 4.4273326857256984e+16, -1.8495080043698668e+16)
_Y0_YQ = (1041.2835366425984, 626107.330137135, 268919633.39381415, 86400248710.3935,
          20297961275010.555, 3171577528429750.5, 2.5059625617265306e+17)
_Y1_YP = (1263204747.9017804, -647355876379.1603, 114509511541823.73, -8127702555013251.0,
          2.024394757135949e+17, -7.788771962659501e+17)
_Y1_YQ = (594.3015923461282, 235564.09294306856, 73481194.44597217, 18760131610.870617,
          3882312774962.3857, 620557727146953.8, 6.871410873553005e+16, 3.9727060811656064e+18)
_SQRT_2_PI = 0.797884560802865355879892119868763737  # sqrt(2 / pi)
_PI_4 = 0.785398163397448309615660845819875721
_3PI_4 = 2.356194490192344928846982537459627163
_2_PI = 0.636619772367581343075535053490057448


def _hankel(x, pp, pq, qp, qq, phase, sine):
    """The large-x form of J (sine=False) or Y (sine=True) of order 0 or 1, x > 5."""
    z = 25.0 / (x * x)
    p = _poly(pp, z) / _poly(pq, z)
    q = 5.0 / x * (_poly(qp, z) / _poly(qq, z))
    if sine:
        v = p * jnp.sin(x - phase) + q * jnp.cos(x - phase)
    else:
        v = p * jnp.cos(x - phase) - q * jnp.sin(x - phase)
    return v * _SQRT_2_PI / jnp.sqrt(x)


@_nan_through
def bessel_j0(x):
    x = jnp.abs(x)
    xs = jnp.where(x <= 5.0, x, 1.0)
    z = xs * xs
    small = (z - 5.78318596294678452118e+00) * (z - 3.04712623436620863991e+01) * \
        _poly(_J0_RP, z) / _poly(_J0_RQ, z)
    small = jnp.where(xs < 0.00001, 1.0 - z / 4.0, small)
    xl = jnp.where(x > 5.0, x, 6.0)
    large = _hankel(xl, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PI_4, False)
    return jnp.where(x <= 5.0, small, large).astype(x.dtype)


@_nan_through
def bessel_j1(x):
    ax = jnp.abs(x)
    xs = jnp.where(ax <= 5.0, ax, 1.0)
    z = xs * xs
    small = _poly(_J1_RP, z) / _poly(_J1_RQ, z) * xs * (z - 1.46819706421238932572e+01) * \
        (z - 4.92184563216946036703e+01)
    xl = jnp.where(ax > 5.0, ax, 6.0)
    large = _hankel(xl, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _3PI_4, False)
    r = jnp.where(ax <= 5.0, small, large)
    return jnp.where(x < 0, -r, r).astype(x.dtype)


@_nan_through
def bessel_y0(x):
    xs = jnp.where((x > 0) & (x <= 5.0), x, 1.0)
    z = xs * xs
    small = _poly(_Y0_YP, z) / _poly(_Y0_YQ, z) + _2_PI * jnp.log(xs) * bessel_j0(xs)
    small = jnp.where(x == 0, -jnp.inf, jnp.where(x < 0, jnp.nan, small))
    xl = jnp.where(x > 5.0, x, 6.0)
    large = _hankel(xl, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PI_4, True)
    return jnp.where(x <= 5.0, small, large).astype(x.dtype)


@_nan_through
def bessel_y1(x):
    xs = jnp.where((x > 0) & (x <= 5.0), x, 1.0)
    z = xs * xs
    small = xs * (_poly(_Y1_YP, z) / _poly(_Y1_YQ, z)) + \
        _2_PI * (bessel_j1(xs) * jnp.log(xs) - 1.0 / xs)
    small = jnp.where(x == 0, -jnp.inf, jnp.where(x < 0, jnp.nan, small))
    xl = jnp.where(x > 5.0, x, 6.0)
    large = _hankel(xl, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _3PI_4, True)
    return jnp.where(x <= 5.0, small, large).astype(x.dtype)


_K0_A = (1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11,
         1.904516377220209e-09, 2.5347910790261494e-07, 2.286212103119452e-05,
         0.001264615411446926, 0.0359799365153615, 0.3442898999246285, -0.5353273932339028)
_K0_B = (5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17,
         -1.678231096805412e-16, 5.512055978524319e-16, -1.848593377343779e-15,
         6.3400764774050706e-15, -2.2275133269916698e-14, 8.032890775363575e-14,
         -2.9800969231727303e-13, 1.140340588208475e-12, -4.514597883373944e-12,
         1.8559491149547177e-11, -7.957489244477107e-11, 3.577397281400301e-10,
         -1.69753450938906e-09, 8.574034017414225e-09, -4.660489897687948e-08,
         2.766813639445015e-07, -1.8317555227191195e-06, 1.39498137188765e-05,
         -0.00012849549581627802, 0.0015698838857300533, -0.0314481013119645, 2.4403030820659555)
_K1_A = (-7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13,
         -1.4114883926335278e-10, -2.213387630734726e-08, -2.4334061415659684e-06,
         -0.0001730288957513052, -0.006975723859639864, -0.12261118082265715,
         -0.3531559607765449, 1.5253002273389478)
_K1_B = (-5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17,
         1.838093544366639e-16, -6.057047248373319e-16, 2.038703165624334e-15,
         -7.019837090418314e-15, 2.4771544244813043e-14, -8.976705182324994e-14,
         3.3484196660784293e-13, -1.2891739609510289e-12, 5.13963967348173e-12,
         -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10,
         2.015049755197033e-09, -1.0345762465678097e-08, 5.7410841254500495e-08,
         -3.5019606030878126e-07, 2.406484947837217e-06, -1.936197974166083e-05,
         0.00019521551847135162, -0.002857816859622779, 0.10392373657681724, 2.7206261904844427)


def modified_bessel_i0(x):
    ax = jnp.abs(x)
    return jnp.exp(ax) * jss.i0e(x)


def modified_bessel_i1(x):
    ax = jnp.abs(x)
    return jnp.exp(ax) * jss.i1e(x)


def _bessel_k(x, order, scaled):
    """K0 or K1 (times exp(x) when scaled): Chebyshev series in x^2 - 2 up to 2 (with the
    logarithmic term of I0 or I1), in 8 / x - 2 above."""
    xs = jnp.where((x > 0) & (x <= 2.0), x, 1.0)
    if order == 0:
        small = _chebyshev_sum(_K0_A, xs * xs - 2.0) - \
            jnp.log(0.5 * xs) * modified_bessel_i0(xs)
        b = _K0_B
    else:
        small = jnp.log(0.5 * xs) * modified_bessel_i1(xs) + \
            _chebyshev_sum(_K1_A, xs * xs - 2.0) / xs
        b = _K1_B
    if scaled:
        small = small * jnp.exp(xs)
    xl = jnp.where(x > 2.0, x, 3.0)
    large = _chebyshev_sum(b, 8.0 / xl - 2.0) / jnp.sqrt(xl)
    if not scaled:
        large = jnp.exp(-xl) * large
    r = jnp.where(x <= 2.0, small, large)
    r = jnp.where(x == 0, jnp.inf, jnp.where(x < 0, jnp.nan, r))
    return jnp.where(jnp.isnan(x), x, r).astype(x.dtype)


def modified_bessel_k0(x):
    return _bessel_k(x, 0, False)


def modified_bessel_k1(x):
    return _bessel_k(x, 1, False)


def scaled_modified_bessel_k0(x):
    return _bessel_k(x, 0, True)


def scaled_modified_bessel_k1(x):
    return _bessel_k(x, 1, True)


def spherical_bessel_j0(x):
    xs = jnp.where(jnp.abs(x) < 0.5, x, 0.0)
    z = xs * xs
    series = 1.0 + z * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (
        -1.0 / 5040.0 + z * (1.0 / 362880.0 + z * (-1.0 / 39916800.0 + z * (
            1.0 / 6227020800.0))))))
    xl = jnp.where(jnp.abs(x) < 0.5, 1.0, x)
    r = jnp.where(jnp.abs(x) < 0.5, series, jnp.sin(xl) / xl)
    return jnp.where(jnp.isinf(x), 0.0, r).astype(x.dtype)


# ---- orthogonal polynomials (torch's recurrences; n is cast to an integer) ---------------
def _degree(n):
    """n as torch's kernels take it: the float cast to int64 (NaN and infinities: -1,
    as torch's hermite guards; the other polynomials' casts are undefined there)."""
    bad = jnp.isnan(n) | jnp.isinf(n)
    return jnp.where(bad, -1, jnp.where(bad, 0, n).astype(jnp.int64))


def _recurrence(n, k0, p, q, step, stop_nan=True):
    """q after the recurrence (p, q) -> (q, step(k, p, q)) for k = k0 .. while k <= n,
    element by element (stopping early where q is NaN, as torch's loops)."""
    k = jnp.full(n.shape, k0, jnp.int64)

    def body(st):
        k, p, q = st
        r = step(k, p, q)
        return (k + 1, q, r), (k + 1 <= n) & (~jnp.isnan(r) if stop_nan else True)

    active = (k <= n) & (~jnp.isnan(q) if stop_nan else True)
    return _until_converged(body, active, (k, p, q))[2]


def _chebyshev(x, n, kind, shifted):
    x, nf = jnp.broadcast_arrays(x, n)
    n = _degree(nf)
    y = x + x - 1.0 if shifted else x
    one = jnp.ones_like(x)
    first = {"t": y, "u": y + y, "v": y + y - 1.0, "w": y + y + 1.0}[kind]
    rec = _recurrence(n, 2, one, first, lambda k, p, q: (y + y) * q - p)
    rec = jnp.where(n == 0, one, jnp.where(n == 1, first, rec))
    nn = n.astype(x.dtype)
    even = n % 2 == 0
    odd_sign = jnp.where(even, 1.0, -1.0).astype(x.dtype)
    theta = jnp.arccos(jnp.clip(y, -1, 1))
    # the closed forms torch uses for large n inside (-1, 1), and its values at the ends
    if kind == "t":
        closed = jnp.cos(nn * theta)
        big = 6
        at_pos, at_neg = one, odd_sign
    elif kind == "u":
        s = jnp.sin(theta)
        closed = jnp.where(s != 0, jnp.sin((nn + 1) * theta) / jnp.where(s != 0, s, 1),
                           (nn + 1) * jnp.cos((nn + 1) * theta) / y)
        big = 6 if shifted else 8
        at_pos, at_neg = nn + 1, odd_sign * (nn + 1)
    elif kind == "v":
        closed = jnp.where(jnp.sin(theta / 2) != 1,
                           jnp.cos((nn + 0.5) * theta) / jnp.cos(theta / 2),
                           odd_sign * (nn + nn + 1))
        big = 6 if shifted else 8
        at_pos, at_neg = one, odd_sign * (nn + nn + 1)
    else:
        c = jnp.cos(theta / 2)
        closed = jnp.where(c != 1, jnp.sin((nn + 0.5) * theta) / jnp.sin(theta / 2),
                           jnp.where(y > 0, nn + nn + 1, odd_sign))
        big = 4 if shifted else 8
        at_pos, at_neg = nn + nn + 1, odd_sign
    r = jnp.where((n > big) & (jnp.abs(y) < 1), closed, rec)
    if shifted:  # (the ends are tested on x itself: x == 1 and x == 0)
        r = jnp.where(x == 0, at_neg, jnp.where(x == 1, at_pos, r))
    else:
        r = jnp.where(jnp.abs(x) == 1, jnp.where(x > 0, at_pos, at_neg), r)
    return jnp.where(n < 0, 0.0, r).astype(x.dtype)


def chebyshev_polynomial(kind, shifted):
    def f(x, n):
        return _chebyshev(x, n, kind, shifted)
    f.__name__ = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    return f


def hermite_polynomial_h(x, n):
    x, nf = jnp.broadcast_arrays(x, n)
    n = _degree(nf)
    limit = 128 if x.dtype == jnp.float32 else 512
    one = jnp.ones_like(x)
    # k runs 2, 4, .., 2n - 2: with j = k / 2 from 1 while j < n
    rec = _recurrence(n - 1, 1, one, x + x, lambda j, p, q: (x + x) * q - (2 * j) * p,
                      stop_nan=False)
    r = jnp.where(n == 0, one, jnp.where(n == 1, x + x, rec))
    r = jnp.where(n > limit, jnp.nan, r)
    return jnp.where(n < 0, 0.0, r).astype(x.dtype)


def hermite_polynomial_he(x, n):
    x, nf = jnp.broadcast_arrays(x, n)
    n = _degree(nf)
    limit = 128 if x.dtype == jnp.float32 else 512
    one = jnp.ones_like(x)
    rec = _recurrence(n - 1, 1, one, x, lambda k, p, q: x * q - k * p, stop_nan=False)
    r = jnp.where(n == 0, one, jnp.where(n == 1, x, rec))
    r = jnp.where(n > limit, jnp.nan, r)
    return jnp.where(n < 0, 0.0, r).astype(x.dtype)


def laguerre_polynomial_l(x, n):
    x, nf = jnp.broadcast_arrays(x, n)
    n = _degree(nf)
    one = jnp.ones_like(x)
    rec = _recurrence(n - 1, 1, one, 1.0 - x,
                      lambda k, p, q: (((k + k) + (1.0 - x)) * q - k * p) / (k + 1))
    r = jnp.where(n == 0, one, jnp.where(n == 1, 1.0 - x, rec))
    r = jnp.where(jnp.abs(x) == 0, one, r)
    return jnp.where(n < 0, 0.0, r).astype(x.dtype)


def legendre_polynomial_p(x, n):
    x, nf = jnp.broadcast_arrays(x, n)
    n = _degree(nf)
    one = jnp.ones_like(x)
    rec = _recurrence(n - 1, 1, one, x, lambda k, p, q: ((k + k + 1) * x * q - k * p) / (k + 1))
    r = jnp.where(n == 0, one, jnp.where(n == 1, x, rec))
    odd_sign = jnp.where(n % 2 == 0, 1.0, -1.0).astype(x.dtype)
    r = jnp.where(jnp.abs(x) == 1, jnp.where(x > 0, one, odd_sign), r)
    return jnp.where(n < 0, 0.0, r).astype(x.dtype)


# ---- binary ------------------------------------------------------------------------------
def xlogy(x, y):
    return jnp.where(jnp.isnan(y), jnp.nan, jnp.where(x == 0, 0.0, x * jnp.log(y))).astype(
        jnp.result_type(x, y))


def xlog1py(x, y):
    return jnp.where(jnp.isnan(y), jnp.nan, jnp.where(x == 0, 0.0, x * jnp.log1p(y))).astype(
        jnp.result_type(x, y))


@jax.custom_jvp
def nextafter(a, b):
    return jnp.nextafter(a, b)


@nextafter.defjvp
def _nextafter_jvp(primals, tangents):  # torch's formula: the identity where a != b
    a, b = primals
    return nextafter(a, b), jnp.where(a != b, tangents[0], jnp.zeros_like(tangents[0]))


def logaddexp(a, b):
    if jnp.iscomplexobj(a):
        return _logaddexp_complex(a, b)
    m = jnp.maximum(a, b)
    r = m + jnp.log1p(jnp.exp(-jnp.abs(a - b)))
    return jnp.where(jnp.isinf(a) & (a == b), a, r)


def _logaddexp_complex(x, y):
    """torch's _log_add_exp_helper for complex numbers (the one with the larger real part
    is `max`; NaNs are infectious; infinite real parts handled apart)."""
    x, y = jnp.broadcast_arrays(x, y)
    xnan = jnp.isnan(x.real) | jnp.isnan(x.imag)
    ynan = jnp.isnan(y.real) | jnp.isnan(y.imag)
    x_lt = x.real < y.real
    mn = jnp.where(ynan, y, jnp.where(xnan, x, jnp.where(x_lt, x, y)))
    mx = jnp.where(ynan, y, jnp.where(xnan, x, jnp.where(x_lt, y, x)))
    general = jnp.log1p(jnp.exp(mn - mx)) + mx
    both_inf = ~jnp.isfinite(mn.real) & (mn.real == mx.real)
    inf_case = jnp.where(mn.real < 0, mn, jnp.log(jnp.exp(mn) + jnp.exp(mx)))
    nan = jnp.full_like(x, complex(jnp.nan, jnp.nan))
    return jnp.where(xnan | ynan, nan, jnp.where(both_inf, inf_case, general))


def logaddexp2(a, b):
    m = jnp.maximum(a, b)
    r = m + jnp.log1p(jnp.exp2(-jnp.abs(a - b))) * (1 / _LN2)
    return jnp.where(jnp.isinf(a) & (a == b), a, r)


def lerp(start, end, weight):
    """torch's lerp: from the nearer end (|weight| < 1/2: start, else end)."""
    diff = end - start
    near = jnp.abs(weight) < 0.5
    return jnp.where(near, start + weight * diff, end - diff * (1 - weight))


def shift_left(a, b):
    a, b = jnp.broadcast_arrays(a, b)
    bits = jnp.iinfo(a.dtype).bits
    ua = a.astype(jnp.dtype(f"uint{bits}"))
    out = lax.shift_left(ua, jnp.clip(b, 0, bits - 1).astype(ua.dtype)).astype(a.dtype)
    return jnp.where((b < 0) | (b >= bits), jnp.zeros_like(a), out)


def shift_right(a, b):
    a, b = jnp.broadcast_arrays(a, b)
    bits = jnp.iinfo(a.dtype).bits
    fill = lax.shift_right_arithmetic(a, jnp.full_like(a, bits - 1)) \
        if jnp.issubdtype(a.dtype, jnp.signedinteger) else jnp.zeros_like(a)
    shift = lax.shift_right_arithmetic if jnp.issubdtype(a.dtype, jnp.signedinteger) else \
        lax.shift_right_logical
    out = shift(a, jnp.clip(b, 0, bits - 1).astype(a.dtype))
    return jnp.where((b < 0) | (b >= bits), fill, out)
