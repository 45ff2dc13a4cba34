"""The discrete Fourier transforms torch.fft is built on: ATen's _fft_c2c, _fft_r2c and
_fft_c2r, one node each (FftC2CBackward0, FftR2CBackward0, FftC2RBackward0) with torch's
formulas (derivatives.yaml; FunctionsManual.cpp's fft_r2c_backward, fft_c2r_backward),
their results laid out as torch's MKL kernels leave them (NOTE [fft layout]). The public
torch.fft functions are in eagergrad/fft.py.
"""
import jax.numpy as jnp

from .._shapes import reorder_dims, wrap_dim
from .._storage import contiguous_strides
from . import shape as S
from ._table import call_op, defop

# ATen's fft_norm_mode: the scale a transform applies, whatever its direction
NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2
_JNP_FORWARD = ("backward", "ortho", "forward")  # jnp's norm= giving that scale, forward
_JNP_INVERSE = ("forward", "ortho", "backward")  # ... and for an inverse transform


# ---- NOTE [fft layout] -----------------------------------------------------------------------
# torch's CPU (MKL) kernels permute the untransformed dims first, sorted by the input's
# strides (largest first), then the transformed ones in their (sorted) order, run the
# transform into a contiguous buffer of that order, and return it with the permutation
# undone: fft(x, dim=0) of a contiguous 3 x 4 x is (1, 3), not contiguous. The strides
# depend on shapes and the input's strides only, so they are computed here, following
# _exec_fft, _sort_dims and _fft_c2r_mkl, and set on the result (its array is logical).
def _partition(dims, keep):
    """std::partition's order (libstdc++, bidirectional: swaps from both ends)."""
    a, first, last = list(dims), 0, len(dims)
    while True:
        while first != last and keep(a[first]):
            first += 1
        if first == last:
            return a, first
        last -= 1
        while first != last and not keep(a[last]):
            last -= 1
        if first == last:
            return a, first
        a[first], a[last] = a[last], a[first]
        first += 1


def _exec_strides(in_strides, out_sizes, dims):
    """The strides _exec_fft gives its result (dims: the transformed dims, in order)."""
    perm, end = _partition(range(len(out_sizes)), lambda d: d not in dims)
    # (std::sort of at most 16 elements is an insertion sort: stable, as sorted())
    batch = sorted(perm[:end], key=lambda d: -in_strides[d])
    inner = contiguous_strides((1,) + tuple(out_sizes[d] for d in dims))
    out = [0] * len(out_sizes)
    numel = 1
    for d in reversed(batch):
        out[d] = numel * inner[0]
        numel *= out_sizes[d]
    for i, d in enumerate(dims):
        out[d] = inner[1 + i]
    return tuple(out)


def _sorted_dims(strides, dims, exclude_last=False):
    head = dims[:-1] if exclude_last else dims
    return sorted(head, key=lambda d: -strides[d]) + (list(dims[-1:]) if exclude_last else [])


def _dense_strides(t):
    """The strides of clone() / .to() / an elementwise result of t (memory_format=
    preserve): t's own if non-overlapping and dense, else ATen's infer_dense_strides
    (t's dims ordered by stride, innermost first; zero strides keep their place)."""
    st, shape = t.stride(), t._shape
    order = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: st[d])
    expect = 1
    for d in order:
        if st[d] != expect:
            break
        expect *= shape[d]
    else:
        return st
    def swap(a, b):
        if st[a] == 0 or st[b] == 0:
            return 0
        if st[a] != st[b]:
            return 1 if st[a] > st[b] else -1
        return 1 if shape[a] > shape[b] else 0
    perm = reorder_dims(len(shape), swap)  # (innermost first)
    out, cur = [0] * len(shape), 1
    for d in perm:
        out[d] = cur
        cur *= shape[d] if shape[d] > 1 else 1
    return tuple(out)


def _c2c_strides(t, dims):
    if not dims:
        return _dense_strides(t)
    st = t.stride()
    return _exec_strides(st, t._shape, _sorted_dims(st, dims))


def _laid_out(t, strides):
    t._stride = strides
    return t


def _preserve_layout(out, src):
    """`out`, a new tensor computed elementwise from `src` (.to(), conj_physical), with
    the layout torch gives it (memory_format=preserve: _dense_strides)."""
    if out._vchain is None and out._shape == src._shape:
        out._stride = _dense_strides(src)
    return out


def _no_empty_batch(t, dim):
    """torch's MKL kernels refuse an empty batch (the transformed sizes are >= 1)."""
    if dim and 0 in t._shape:
        raise RuntimeError("MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent "
                           "configuration parameters")


# ---- _fft_c2c ----------------------------------------------------------------------------------
def _c2c_k(self, dim, normalization, forward):
    if not dim:
        return jnp.array(self, copy=True)
    if forward:
        return jnp.fft.fftn(self, axes=dim, norm=_JNP_FORWARD[normalization])
    return jnp.fft.ifftn(self, axes=dim, norm=_JNP_INVERSE[normalization])


FFT_C2C = defop("fft_c2c", _c2c_k, attrs=("dim", "normalization", "forward"),
                node="FftC2CBackward0",
                self=lambda grad, dim, normalization, forward:
                _fft_c2c(grad, dim, normalization, not forward))


def _fft_c2c(self, dim, normalization, forward):
    """aten::_fft_c2c: the complex transform over `dim` (wrapped, unique), forward
    (e^-i) or not, scaled by `normalization` (NORM_*)."""
    dim = tuple(dim)
    _no_empty_batch(self, dim)
    out = call_op(FFT_C2C, (self,), (dim, int(normalization), bool(forward)))
    return _laid_out(out, _c2c_strides(self, dim))


# ---- _fft_r2c ----------------------------------------------------------------------------------
def _r2c_k(self, dim, normalization, onesided):
    norm = _JNP_FORWARD[normalization]
    if onesided:
        return jnp.fft.rfftn(self, axes=dim, norm=norm)
    return jnp.fft.fftn(self.astype(jnp.result_type(self.dtype, jnp.complex64)), axes=dim,
                        norm=norm)


def _r2c_back(grad, self, dim, normalization, onesided):
    """torch's fft_r2c_backward: the one-sided half padded back with zeros, the inverse
    complex transform (same scale), its real part."""
    if onesided:
        last = dim[-1]
        half = grad._shape[last]
        if self._shape[last] > half:  # (zeros, the half copied in: CopySlices, as torch's)
            shape = list(grad._shape)
            shape[last] = self._shape[last]
            full = grad.new_zeros(shape)
            S.narrow(full, last, 0, half).copy_(grad)
            grad = full
    return S.real(_fft_c2c(grad, dim, normalization, False))


FFT_R2C = defop("fft_r2c", _r2c_k, attrs=("dim", "normalization", "onesided"),
                node="FftR2CBackward0", self=_r2c_back)


def _fft_r2c(self, dim, normalization, onesided):
    """aten::_fft_r2c: the forward transform of real `self` over `dim`, the last of them
    halved (n // 2 + 1) if onesided."""
    dim = tuple(dim)
    _no_empty_batch(self, dim)
    out = call_op(FFT_R2C, (self,), (dim, int(normalization), bool(onesided)))
    st = self.stride()
    return _laid_out(out, _exec_strides(st, out._shape, _sorted_dims(st, dim, True)))


# ---- _fft_c2r ----------------------------------------------------------------------------------
def _c2r_k(self, dim, normalization, last_dim_size):
    s = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    return jnp.fft.irfftn(self, s=s, axes=dim, norm=_JNP_INVERSE[normalization])


def _c2r_back(grad, dim, normalization):
    """torch's fft_c2r_backward: the one-sided forward transform of grad, the entries
    that also stand for their mirror image (1 .. n - (n // 2 + 1)) doubled."""
    gI = _fft_r2c(grad, dim, normalization, True)
    last = dim[-1]
    double = grad._shape[last] - gI._shape[last]
    if double > 0:
        S.narrow(gI, last, 1, double).mul_(2)  # (a CopySlices node, as torch's)
    return gI


FFT_C2R = defop("fft_c2r", _c2r_k, attrs=("dim", "normalization", "last_dim_size"),
                node="FftC2RBackward0", self=_c2r_back)


def _fft_c2r(self, dim, normalization, last_dim_size):
    """aten::_fft_c2r: the inverse transform of the one-sided (Hermitian) `self` over
    `dim`, a real result of size last_dim_size along the last of them."""
    dim = tuple(dim)
    _no_empty_batch(self, dim)
    out = call_op(FFT_C2R, (self,), (dim, int(normalization), int(last_dim_size)))
    st, shape = self.stride(), self._shape
    if len(dim) > 1:  # (MKL: a c2c over the leading dims, then a 1-d c2r)
        st = _exec_strides(st, shape, _sorted_dims(st, dim[:-1]))
    return _laid_out(out, _exec_strides(st, out._shape, dim[-1:]))


# ---- dims -------------------------------------------------------------------------------------
def _wrap_nonscalar(dim, ndim):
    """ATen's maybe_wrap_dim(dim, ndim, wrap_scalar=false): a 0-dim tensor has no dim."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return int(wrap_dim(int(dim), ndim))
