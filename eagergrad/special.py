"""torch.special: every function of torch 2.13's namespace, over the ops of
ops/special.py (and the existing exp2, expm1, log1p, erf, sigmoid, softmax, log_softmax,
logsumexp and round). Aliases are the same ops as torch's: special.psi and special.digamma
record DigammaBackward0, special.expit SigmoidBackward0, special.gammaln LgammaBackward0.
The Bessel and Airy functions and the orthogonal polynomials are not differentiable (their
results never require grad), as in torch.

>>> import eagergrad as torch
>>> torch.special.gammaln(torch.tensor([4.0]))
tensor([1.7918])
>>> torch.special.zeta(torch.tensor([2.0]), 1.0)
tensor([1.6449])
"""
from . import _torch_names
from .ops import special as _S
from .ops import unary as _U
from .ops import reduce as _R
from .tensor import Tensor

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
    "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
    "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"eagergrad does not implement torch.special.{name}(out=...) "
                                  "yet")


def _unary(name, fn):
    def f(input, *, out=None):
        _no_out(name, out)
        return fn(input)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.special.{name}(input)."
    return f


def _binary(name, fn, tensors_only=False):
    def f(input, other, *, out=None):
        _no_out(name, out)
        if tensors_only:
            _S._need_tensors("special_" + name, input, other)
        elif not isinstance(input, Tensor) and not isinstance(other, Tensor):
            _S._numbers_error("special_" + name, input, other)
        return fn(input, other)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.special.{name}(input, other)."
    return f


def _polynomial(name):
    fn = getattr(_S, "special_" + name)

    def f(input, n, *, out=None):
        _no_out(name, out)
        return fn(input, n)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.special.{name}(input, n): not differentiable, as torch's."
    return f


airy_ai = _unary("airy_ai", _S.special_airy_ai)
bessel_j0 = _unary("bessel_j0", _S.special_bessel_j0)
bessel_j1 = _unary("bessel_j1", _S.special_bessel_j1)
bessel_y0 = _unary("bessel_y0", _S.special_bessel_y0)
bessel_y1 = _unary("bessel_y1", _S.special_bessel_y1)
modified_bessel_i0 = _unary("modified_bessel_i0", _S.special_modified_bessel_i0)
modified_bessel_i1 = _unary("modified_bessel_i1", _S.special_modified_bessel_i1)
modified_bessel_k0 = _unary("modified_bessel_k0", _S.special_modified_bessel_k0)
modified_bessel_k1 = _unary("modified_bessel_k1", _S.special_modified_bessel_k1)
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0",
                                   _S.special_scaled_modified_bessel_k0)
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1",
                                   _S.special_scaled_modified_bessel_k1)
spherical_bessel_j0 = _unary("spherical_bessel_j0", _S.special_spherical_bessel_j0)
chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")

digamma = _unary("digamma", _S.digamma)
psi = _unary("psi", _S.digamma)
entr = _unary("entr", _S.special_entr)
erf = _unary("erf", lambda x: _U.erf(x))
erfc = _unary("erfc", _S.erfc)
erfcx = _unary("erfcx", _S.special_erfcx)
erfinv = _unary("erfinv", _S.erfinv)
exp2 = _unary("exp2", lambda x: _U.exp2(x))
expit = _unary("expit", lambda x: _U.sigmoid(x))
expm1 = _unary("expm1", lambda x: _U.expm1(x))
log1p = _unary("log1p", lambda x: _U.log1p(x))
gammaln = _unary("gammaln", _S.lgamma)
i0 = _unary("i0", _S.i0)
i0e = _unary("i0e", _S.special_i0e)
i1 = _unary("i1", _S.special_i1)
i1e = _unary("i1e", _S.special_i1e)
log_ndtr = _unary("log_ndtr", _S.special_log_ndtr)
ndtr = _unary("ndtr", _S.special_ndtr)
ndtri = _unary("ndtri", _S.special_ndtri)
sinc = _unary("sinc", _S.sinc)
gammainc = _binary("gammainc", _S.igamma, tensors_only=True)
gammaincc = _binary("gammaincc", _S.igammac, tensors_only=True)
xlogy = _binary("xlogy", _S.xlogy)
xlog1py = _binary("xlog1py", _S.special_xlog1py)
zeta = _binary("zeta", _S.special_zeta)


def polygamma(n, input, *, out=None):
    """torch.special.polygamma(n, input): the n-th derivative of digamma."""
    _no_out("polygamma", out)
    return _S.polygamma(n, input)


def multigammaln(input, p, *, out=None):
    """torch.special.multigammaln(input, p): torch.mvlgamma."""
    _no_out("multigammaln", out)
    return _S.mvlgamma(input, p)


def logit(input, eps=None, *, out=None):
    """torch.special.logit(input, eps=None)."""
    _no_out("logit", out)
    return _S.logit(input, eps)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """torch.special.logsumexp: torch.logsumexp."""
    _no_out("logsumexp", out)
    return _R.logsumexp(input, dim, keepdim)


def softmax(input, dim, dtype=None):
    """torch.special.softmax(input, dim, dtype=None)."""
    return _R.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    """torch.special.log_softmax(input, dim, dtype=None)."""
    return _R.log_softmax(input, dim, dtype=dtype)


def round(input, *, decimals=0, out=None):
    """torch.special.round: torch.round, but refusing integer tensors as torch's does."""
    _no_out("round", out)
    if isinstance(input, Tensor) and not input.dtype.is_differentiable:
        raise NotImplementedError(f"\"{'round_cpu' if decimals else 'round_vml_cpu'}\" not "
                                  f"implemented for '{input.dtype.scalar_name}'")
    return _U._round(input, decimals)


__getattr__ = _torch_names.module_getattr("eagergrad.special", "torch.special")
