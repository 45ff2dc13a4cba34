"""torch.signal.windows: the window functions, composed of eagergrad's ops as torch composes
them (the same values, and with requires_grad=True the same graph).

>>> import eagergrad as torch
>>> torch.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
import math
from collections.abc import Iterable

from .. import _dtypes as D
from .. import creation as C
from .._layouts import strided
from ..ops import pointwise as P
from ..ops import special as S
from ..ops import unary as U

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    dtype = D.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, layout, device, requires_grad, one=True):
    """The window of length 0 (empty) or 1 (ones, where `one`), else None."""
    make = C.empty if M == 0 else C.ones if M == 1 and one else None
    return None if make is None else make(
        (M,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def _line(start, end, M, dtype, layout, device, requires_grad):
    return C.linspace(start=start, end=end, steps=M, dtype=dtype, layout=layout,
                             device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided,
                device=None, requires_grad=False):
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    w = _trivial(M, dtype, layout, device, requires_grad, one=False)
    if w is not None:
        return w
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    k = _line(-center * c, (-center + (M - 1)) * c, M, dtype, layout, device, requires_grad)
    return U.exp(-U.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("cosine", M, dtype, layout)
    w = _trivial(M, dtype, layout, device, requires_grad, one=False)
    if w is not None:
        return w
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _line(0.5 * c, (0.5 + (M - 1)) * c, M, dtype, layout, device, requires_grad)
    return U.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    w = _trivial(M, dtype, layout, device, requires_grad, one=False)
    if w is not None:
        return w
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _line(start * c, (start + (M - 1)) * c, M, dtype, layout, device, requires_grad)
    return U.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    w = _trivial(M, dtype, layout, device, requires_grad)
    if w is not None:
        return w
    beta = C.tensor(beta, dtype=dtype, device=device)  # (in the window's dtype)
    start = -beta
    c = 2.0 * beta / (M if not sym else M - 1)
    end = P.minimum(beta, start + (M - 1) * c)
    k = _line(start, end, M, dtype, layout, device, requires_grad)
    return S.i0(U.sqrt(beta * beta - P.pow(k, 2))) / S.i0(beta)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("bartlett", M, dtype, layout)
    w = _trivial(M, dtype, layout, device, requires_grad)
    if w is not None:
        return w
    c = 2 / (M if not sym else M - 1)
    k = _line(-1, -1 + (M - 1) * c, M, dtype, layout, device, requires_grad)
    return 1 - U.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    dtype = _checks("general_cosine", M, dtype, layout)
    w = _trivial(M, dtype, layout, device, requires_grad)
    if w is not None:
        return w
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = _line(0, (M - 1) * c, M, dtype, layout, device, requires_grad)
    a_i = C.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                       requires_grad=requires_grad)
    i = C.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device,
                     requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * U.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
