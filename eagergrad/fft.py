"""torch.fft: the discrete Fourier transforms, composed as ATen composes them
(SpectralOps.cpp) from the three transforms of ops/fft.py, so the graphs are torch's
(FftR2CBackward0, FftC2CBackward0, FftC2RBackward0, with ToCopyBackward0 for the
promotion to complex, SliceBackward0 / ConstantPadNdBackward0 for n and s,
ConjBackward0 for the inverse real transforms), and fftfreq, rfftfreq, fftshift and
ifftshift. Integer inputs compute in the default float dtype; results are complex64 /
complex128 (float32 / float64 for the Hermitian-to-real ones). `out=` is not supported.

>>> import eagergrad as torch
>>> torch.fft.fft(torch.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""
import numpy as np

from . import _dtypes as D
from . import _torch_names
from .creation import tensor as _tensor
from .ops import fft as _F
from .ops._autocast import autocast_op
from .ops import shape as _S
from .ops.conv import constant_pad_nd as _pad
from .ops.tensor_ops import roll as _roll
from .ops.unary import conj_physical as _conj_physical
from .tensor import Tensor as _Tensor

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]


# ---- arguments, as SpectralOps.cpp checks them ----------------------------------------------
def _type_error(fname, name, pos, want, v):
    where = f" (position {pos})" if pos else ""
    return TypeError(f"fft_{fname}(): argument '{name}'{where} must be {want}, not "
                     f"{type(v).__name__}")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _check(fname, input, norm, out):
    if not isinstance(input, _Tensor):
        raise _type_error(fname, "input", 1, "Tensor", input)
    if norm is not None and not isinstance(norm, str):
        raise _type_error(fname, "norm", None, "str", norm)
    if out is not None:
        raise _torch_names.missing(f"torch.fft.{fname}(out=...)")


def _check_1d(fname, input, n, dim, norm, out):
    """(n, dim) as Python ints, after the argument parser's checks."""
    _check(fname, input, norm, out)
    if n is not None and not _is_int(n):
        raise _type_error(fname, "n", None, "int", n)
    if not _is_int(dim):
        raise _type_error(fname, "dim", None, "int", dim)
    return None if n is None else int(n), int(dim)


def _int_tuple(fname, name, v, optional=True):
    if v is None and optional:
        return None
    items = (v,) if _is_int(v) else v
    if not isinstance(items, (tuple, list)) or not all(_is_int(i) for i in items):
        raise _type_error(fname, name, None, "tuple of ints", v)
    return [int(i) for i in items]


def _norm_mode(norm, forward):
    """ATen's norm_from_string: NumPy's names, whose meaning depends on the direction."""
    if norm is None or norm == "backward":
        return _F.NORM_NONE if forward else _F.NORM_BY_N
    if norm == "forward":
        return _F.NORM_BY_N if forward else _F.NORM_NONE
    if norm == "ortho":
        return _F.NORM_BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex):
    """ATen's promote_tensor_fft: integers to the default float dtype, float32/float64
    only, and to complex if required (a ToCopyBackward0 node, as torch's .to())."""
    dt = x.dtype
    if dt.is_complex:
        return x
    new = dt if dt.is_floating_point else D.get_default_dtype()
    if new is not D.float32 and new is not D.float64:
        raise RuntimeError(f"Unsupported dtype {new.scalar_name}")
    if require_complex:
        new = new.to_complex()
    return x if new is dt else _F._preserve_layout(_S.to(x, new), x)


def _resize(x, dims, sizes):
    """ATen's resize_fft_input: x sliced (from 0) or zero-padded (at the end) to `sizes`
    along `dims`; the slices first, then one constant_pad_nd."""
    pad = [0] * (2 * x.ndim)
    padded = False
    shape = x._shape
    for d, n in zip(dims, sizes):
        if shape[d] < n:
            padded = True
            pad[2 * (x.ndim - 1 - d) + 1] = n - shape[d]
        if shape[d] > n:
            x = _S._slice(x, d, 0, n)
    return _pad(x, pad) if padded else x


def _points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


# ---- one-dimensional transforms ----------------------------------------------------------------
def _c2c(x, n, dim, norm, forward):
    d = _F._wrap_nonscalar(dim, x.ndim)
    if n is not None:
        _points(n)
        x = _resize(x, (d,), (n,))
    else:
        _points(x._shape[d])
    return _F._fft_c2c(x, (d,), _norm_mode(norm, forward), forward)


def _r2c(fname, x, n, dim, norm, forward, onesided):
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got "
                           f"{x.dtype.scalar_name}")
    x = _promote(x, False)
    d = _F._wrap_nonscalar(dim, x.ndim)
    if n is not None:
        _points(n)
        x = _resize(x, (d,), (n,))
    else:
        _points(x._shape[d])
    r = _F._fft_r2c(x, (d,), _norm_mode(norm, forward), onesided)
    return r if forward else _S.conj(r)


def _c2r(x, n, dim, norm, forward):
    x = _promote(x, True)
    d = _F._wrap_nonscalar(dim, x.ndim)
    last = 2 * (x._shape[d] - 1) if n is None else n
    _points(last)
    if n is not None:
        x = _resize(x, (d,), (n // 2 + 1,))
    mode = _norm_mode(norm, forward)
    if forward:
        x = _S.conj(x)
    return _F._fft_c2r(x, (d,), mode, last)


@autocast_op("fft_fft")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.fft: the 1-d discrete Fourier transform along `dim` (zero-padded or
    trimmed to `n`); norm "backward" (none), "ortho" (1/sqrt(n)) or "forward" (1/n).

    >>> import eagergrad as torch
    >>> torch.fft.fft(torch.tensor([1.0, 2.0]))
    tensor([ 3.+0.j, -1.+0.j])
    """
    n, dim = _check_1d("fft", input, n, dim, norm, out)
    if input.dtype.is_complex:
        return _c2c(input, n, dim, norm, True)
    return _r2c("fft", input, n, dim, norm, True, False)


@autocast_op("fft_ifft")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.ifft: the inverse of fft (scaled by 1/n with the default norm).

    >>> import eagergrad as torch
    >>> torch.fft.ifft(torch.tensor([3.0, -1.0]))
    tensor([1.-0.j, 2.-0.j])
    """
    n, dim = _check_1d("ifft", input, n, dim, norm, out)
    if input.dtype.is_complex:
        return _c2c(input, n, dim, norm, False)
    return _r2c("ifft", input, n, dim, norm, False, False)


@autocast_op("fft_rfft")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.rfft: the fft of a real signal, its n // 2 + 1 non-negative frequencies.

    >>> import eagergrad as torch
    >>> torch.fft.rfft(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    n, dim = _check_1d("rfft", input, n, dim, norm, out)
    return _r2c("rfft", input, n, dim, norm, True, True)


@autocast_op("fft_irfft")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.irfft: the inverse of rfft, a real signal of length n (default
    2 * (input.size(dim) - 1)).

    >>> import eagergrad as torch
    >>> torch.fft.irfft(torch.tensor([10.0, -2 + 2j, -2.0]))
    tensor([1., 2., 3., 4.])
    """
    n, dim = _check_1d("irfft", input, n, dim, norm, out)
    return _c2r(input, n, dim, norm, False)


@autocast_op("fft_hfft")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.hfft: the fft of a Hermitian signal given by its first half: real,
    of length n (default 2 * (input.size(dim) - 1)).

    >>> import eagergrad as torch
    >>> torch.fft.hfft(torch.tensor([1.0, 2.0, 3.0]))
    tensor([ 8., -2.,  0., -2.])
    """
    n, dim = _check_1d("hfft", input, n, dim, norm, out)
    return _c2r(input, n, dim, norm, True)


@autocast_op("fft_ihfft")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """torch.fft.ihfft: the inverse of hfft, the first n // 2 + 1 entries of ifft of a
    real signal.

    >>> import eagergrad as torch
    >>> torch.fft.ihfft(torch.tensor([8.0, -2.0, 0.0, -2.0]))
    tensor([1.-0.j, 2.-0.j, 3.-0.j])
    """
    n, dim = _check_1d("ihfft", input, n, dim, norm, out)
    return _r2c("ihfft", input, n, dim, norm, False, True)


# ---- n-dimensional transforms ------------------------------------------------------------------
def _shape_and_dims(fname, x, s, dim):
    """ATen's canonicalize_fft_shape_and_dim_args: the signal sizes and the wrapped dims
    (default: the last len(s) dims, or all of them)."""
    s = _int_tuple(fname, "s", s)
    dims = _int_tuple(fname, "dim", dim)
    nd = x.ndim
    if dims is not None:
        dims = [_F._wrap_nonscalar(d, nd) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} "
                               f"dimensions.")
        if dims is None:
            dims = list(range(nd - len(s), nd))
        shape = [x._shape[d] if n == -1 else n for n, d in zip(s, dims)]
    elif dims is None:
        dims, shape = list(range(nd)), list(x._shape)
    else:
        shape = [x._shape[d] for d in dims]
    for n in shape:
        _points(n)
    return s, shape, dims


def _c2r_shape_and_dims(fname, x, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: also the output's last size, the input's
    being last // 2 + 1."""
    s, shape, dims = _shape_and_dims(fname, x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = 2 * (x._shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _points(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _check_nd(fname, input, dim, norm, out):
    _check(fname, input, norm, out)
    if fname.endswith("2"):  # (fft2's dim is int[], not optional)
        _int_tuple(fname, "dim", dim, optional=False)


def _fftn(fname, input, s, dim, norm, out, forward):
    _check_nd(fname, input, dim, norm, out)
    _, shape, dims = _shape_and_dims(fname, input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    return _F._fft_c2c(x, dims, _norm_mode(norm, forward), forward)


@autocast_op("fft_fftn")
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.fftn: the n-d transform over `dim` (default: the last len(s) dims, or
    all), each zero-padded or trimmed to `s`.

    >>> import eagergrad as torch
    >>> torch.fft.fftn(torch.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _fftn("fftn", input, s, dim, norm, out, True)


@autocast_op("fft_ifftn")
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.ifftn: the inverse of fftn.

    >>> import eagergrad as torch
    >>> torch.fft.ifftn(torch.ones(2, 2)).real
    tensor([[1., 0.],
            [0., 0.]])
    """
    return _fftn("ifftn", input, s, dim, norm, out, False)


@autocast_op("fft_fft2")
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.fft2: fftn over two dims (default the last two)."""
    return _fftn("fft2", input, s, dim, norm, out, True)


@autocast_op("fft_ifft2")
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.ifft2: ifftn over two dims (default the last two)."""
    return _fftn("ifft2", input, s, dim, norm, out, False)


def _rfftn(fname, input, s, dim, norm, out):
    _check_nd(fname, input, dim, norm, out)
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{input.dtype.scalar_name}")
    _, shape, dims = _shape_and_dims(fname, input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input, False), dims, shape)
    return _F._fft_r2c(x, dims, _norm_mode(norm, True), True)


@autocast_op("fft_rfftn")
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.rfftn: fftn of a real signal, the last transformed dim one-sided.

    >>> import eagergrad as torch
    >>> torch.fft.rfftn(torch.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _rfftn("rfftn", input, s, dim, norm, out)


@autocast_op("fft_rfft2")
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.rfft2: rfftn over two dims (default the last two)."""
    return _rfftn("rfft2", input, s, dim, norm, out)


def _irfftn(fname, input, s, dim, norm, out):
    _check_nd(fname, input, dim, norm, out)
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    return _F._fft_c2r(x, dims, _norm_mode(norm, False), last)


@autocast_op("fft_irfftn")
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.irfftn: the inverse of rfftn, real, the last transformed dim of size
    s[-1] (default 2 * (input.size(dim[-1]) - 1)).

    >>> import eagergrad as torch
    >>> torch.fft.irfftn(torch.tensor([[4.0, 0.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _irfftn("irfftn", input, s, dim, norm, out)


@autocast_op("fft_irfft2")
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.irfft2: irfftn over two dims (default the last two)."""
    return _irfftn("irfft2", input, s, dim, norm, out)


def _hfftn(fname, input, s, dim, norm, out):
    _check_nd(fname, input, dim, norm, out)
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _F._fft_c2c(x, dims[:-1], mode, True)
    return _F._fft_c2r(_S.conj(x), dims[-1:], mode, last)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.hfftn: the n-d fft of a Hermitian signal given by its half (the last
    transformed dim); real.

    >>> import eagergrad as torch
    >>> torch.fft.hfftn(torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _hfftn("hfftn", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.hfft2: hfftn over two dims (default the last two)."""
    return _hfftn("hfft2", input, s, dim, norm, out)


def _ihfftn(fname, input, s, dim, norm, out):
    _check_nd(fname, input, dim, norm, out)
    _, shape, dims = _shape_and_dims(fname, input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _promote(input, False)
    if x.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{x.dtype.scalar_name}")
    x = _resize(x, dims, shape)
    mode = _norm_mode(norm, False)
    r = _F._fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _S.conj(r)
    return _F._fft_c2c(_F._preserve_layout(_conj_physical(r), r), dims[:-1], mode, False)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """torch.fft.ihfftn: the inverse of hfftn, one-sided in the last transformed dim.

    >>> import eagergrad as torch
    >>> torch.fft.ihfftn(torch.ones(2, 2))
    tensor([[1.-0.j, 0.-0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """torch.fft.ihfft2: ihfftn over two dims (default the last two)."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


# ---- frequencies and shifts ---------------------------------------------------------------------
def _freq(fname, n, d, out, dtype, layout, device, requires_grad, size, values):
    if not _is_int(n):
        raise _type_error(fname, "n", 1, "int", n)
    if not isinstance(d, (int, float, np.integer, np.floating)):
        raise _type_error(fname, "d", None, "float", d)
    if out is not None:
        raise _torch_names.missing(f"torch.fft.{fname}(out=...)")
    if layout is not None:
        raise _torch_names.missing(f"torch.fft.{fname}(layout=...)")
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if size < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: [{size}]")
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dt.scalar_name}'")
    # out.mul_(1.0 / (n * d)): the double scale rounded to the dtype, the product taken in
    # the op's math type (float for float32 and the 16-bit types), rounded to the dtype
    math_dt = np.float64 if dt is D.float64 else np.float32
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.float64(1.0) / np.float64(n * float(d))
        scale = np.asarray(scale).astype(dt.np).astype(math_dt)
        vals = values.astype(math_dt) * scale
    return _tensor(vals, dtype=dt, device=device, requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """torch.fft.fftfreq: the sample frequencies of fft of a signal of length n,
    spacing d: [0, 1, ..., -(n // 2), ..., -1] / (n * d).

    >>> import eagergrad as torch
    >>> torch.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    size = int(n) if _is_int(n) else 0
    values = np.arange(max(size, 0))
    values[(size + 1) // 2:] = np.arange(-(size // 2), 0)
    return _freq("fftfreq", n, d, out, dtype, layout, device, requires_grad, size, values)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """torch.fft.rfftfreq: the sample frequencies of rfft: [0, 1, ..., n // 2] / (n * d).

    >>> import eagergrad as torch
    >>> torch.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    half = (abs(int(n)) // 2) * (1 if n >= 0 else -1) if _is_int(n) else 0  # (C++'s n / 2)
    size = half + 1
    return _freq("rfftfreq", n, d, out, dtype, layout, device, requires_grad, size,
                 np.arange(max(size, 0)))


def _shift_dims(fname, input, dim):
    if not isinstance(input, _Tensor):
        raise _type_error(fname, "input", 1, "Tensor", input)
    dims = _int_tuple(fname, "dim", dim)
    if dims is None:
        return list(range(input.ndim))
    return [_F._wrap_nonscalar(d, input.ndim) for d in dims]


def fftshift(input, dim=None):
    """torch.fft.fftshift: the zero frequency moved to the centre, a roll by size // 2
    along each of `dim` (default all); one RollBackward0 node.

    >>> import eagergrad as torch
    >>> torch.fft.fftshift(torch.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    dims = _shift_dims("fftshift", input, dim)
    return _roll(input, [input._shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """torch.fft.ifftshift: the inverse of fftshift (a roll by (size + 1) // 2).

    >>> import eagergrad as torch
    >>> torch.fft.ifftshift(torch.fft.fftshift(torch.arange(5)))
    tensor([0, 1, 2, 3, 4])
    """
    dims = _shift_dims("ifftshift", input, dim)
    return _roll(input, [(input._shape[d] + 1) // 2 for d in dims], dims)


__getattr__ = _torch_names.module_getattr("eagergrad.fft", "torch.fft")
