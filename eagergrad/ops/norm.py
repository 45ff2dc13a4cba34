"""Normalization, embedding and dropout as op-table entries: native_layer_norm
(NativeLayerNormBackward0), embedding (EmbeddingBackward0), native_dropout
(NativeDropoutBackward0), with torch's formulas (FunctionsManual's layer_norm_backward,
embedding_dense_backward) and the `_saved_*` values torch's nodes show.

An optional weight/bias that is not given travels as an empty tensor, as in loss.py.
F.layer_norm / F.embedding / F.dropout / F.rms_norm, built on these as ATen builds them
on CPU, live in nn/_functional/ (normalization.py, sparse.py, dropout.py).
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._cache import EXECUTABLES
from ..creation import _next_key, from_jax, sample, zeros
from ..engine.grad_mode import STATE, no_grad
from ..tensor import typename
from .reduce import _mean_k
from ._table import call_op, defop
from .scatter import index_add
from .pointwise import where

NO_PADDING = 2 ** 64 - 1  # torch's node shows padding_idx -1 as its unsigned wrap


def _hide_attrs(op, *names):
    """Attributes the kernel needs but torch's node does not keep (no `_saved_<name>`)."""
    for k in names:
        delattr(op.Node, f"_saved_{k}")
        delattr(op.Node, f"_raw_saved_{k}")


def _given(t, shape):
    return tuple(t.shape) == tuple(shape)


def _optional_meta(*names):
    """saved_meta: `_saved_<name>` is the tensor, or None for the empty placeholder."""
    def f(tensors, needs_grad):
        return {k: None if t.ndim == 1 and t._shape[0] == 0 else t
                for k, t in ((k, tensors[i]) for k, i in names)}
    return frozenset(k for k, _ in names), f


# ---- native_layer_norm -------------------------------------------------------------------
def _ln_k(input, weight, bias, normalized_shape, eps):
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean = _mean_k(input, axes, keepdims=True)
    c = input - mean
    rstd = jax.lax.rsqrt(_mean_k(c * c, axes, keepdims=True) + jnp.asarray(eps, input.dtype))
    out = c * rstd
    if _given(weight, normalized_shape):
        out = out * weight
    if _given(bias, normalized_shape):
        out = out + bias
    return out, mean, rstd


def _lead(input, normalized_shape):
    return tuple(range(input.ndim - len(normalized_shape)))


def _stats(input, result1, result2, normalized_shape, eps):
    """The saved mean and rstd, carrying their dependence on the input for higher order
    (each plus a recomputation minus itself: the same values, torch's second derivatives)."""
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    if not STATE.grad:  # an ordinary (unrecorded) backward: no higher order to carry
        return axes, result1, result2
    m = input.mean(axes, keepdim=True)
    c = input - m
    r = ((c * c).mean(axes, keepdim=True) + eps).rsqrt()
    return axes, result1 + (m - m.detach()), result2 + (r - r.detach())


def _ln_input_back(grad, input, weight, bias, result1, result2, normalized_shape, eps):
    # rstd * (g - mean(g) - xhat * mean(g * xhat)), g = grad * weight
    axes, mean, rstd = _stats(input, result1, result2, normalized_shape, eps)
    xhat = (input - mean) * rstd
    g = grad * weight if _given(weight, normalized_shape) else grad
    return rstd * (g - g.mean(axes, keepdim=True) -
                   xhat * (g * xhat).mean(axes, keepdim=True))


def _ln_weight_back(grad, input, weight, bias, result1, result2, normalized_shape, eps):
    _, mean, rstd = _stats(input, result1, result2, normalized_shape, eps)
    g = grad * ((input - mean) * rstd)
    lead = _lead(input, normalized_shape)
    return g.sum(lead) if lead else g


def _ln_bias_back(grad, input, weight, bias, result1, result2, normalized_shape, eps):
    lead = _lead(input, normalized_shape)
    return grad.sum(lead) if lead else grad.clone()


LAYER_NORM = defop(
    "native_layer_norm", _ln_k, inputs=("input", "weight", "bias"),
    attrs=("normalized_shape", "eps"), outputs=("result", "result1", "result2"),
    nondiff=(1, 2), saved_meta=_optional_meta(("weight", 1), ("bias", 2)),
    complex_error=(NotImplementedError, "\"LayerNormKernelImpl\" not implemented for '{}'"),
    input=_ln_input_back, weight=_ln_weight_back, bias=_ln_bias_back)
_hide_attrs(LAYER_NORM, "eps")


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_layer_norm(input, normalized_shape, weight, bias):
    ns = tuple(normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {_shape_str(t.shape)} and "
                               f"normalized_shape = {_shape_str(ns)}")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={_shape_str(ns)}, expected input with "
                           f"shape [*, {', '.join(str(s) for s in ns)}], but got input of "
                           f"size{_shape_str(input.shape)}")


def _empty(input):
    return zeros(0, dtype=input.dtype)  # (made on the host: no compile)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """torch.native_layer_norm: (output, mean, rstd); mean and rstd keep the normalized
    dims as size 1 and never require grad.

    >>> import eagergrad as torch
    >>> torch.native_layer_norm(torch.tensor([[1.0, 3.0]]), [2], None, None, 0.0)[0]
    tensor([[-1.,  1.]])
    """
    normalized_shape = tuple(int(s) for s in normalized_shape)
    _check_layer_norm(input, normalized_shape, weight, bias)
    return call_op(LAYER_NORM, (input, _empty(input) if weight is None else weight,
                                _empty(input) if bias is None else bias),
                   (normalized_shape, float(eps)))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
               cudnn_enable=True):
    """torch.layer_norm: native_layer_norm's output (one NativeLayerNormBackward0).

    >>> import eagergrad as torch
    >>> torch.layer_norm(torch.tensor([[1.0, 3.0]]), [2], eps=0.0)
    tensor([[-1.,  1.]])
    """
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


# ---- embedding -----------------------------------------------------------------------------
def _emb_k(weight, indices, weight_sym_argsize_0, padding_idx, scale_grad_by_freq, sparse):
    return jnp.take(weight, indices, axis=0, mode="clip")


def _emb_back(grad, indices, weight_sym_argsize_0, padding_idx, scale_grad_by_freq, sparse):
    """torch's embedding_dense_backward: rows summed per index, none to padding_idx, each
    divided by its index's count with scale_grad_by_freq."""
    n = weight_sym_argsize_0
    idx = indices.reshape(-1)
    g = grad.reshape(idx.shape[0], -1)
    if scale_grad_by_freq:
        counts = index_add(grad.new_zeros(n), 0, idx, grad.new_ones(idx.shape[0]))
        # torch's double backward (embedding_dense_double_backward) leaves the scale out
        g = g + (g / counts[idx].unsqueeze(1) - g).detach()
    if padding_idx < n:
        g = where((idx == padding_idx).unsqueeze(1), 0.0, g)
    return index_add(grad.new_zeros(n, g.shape[1]), 0, idx, g)


EMBEDDING = defop("embedding", _emb_k, inputs=("weight", "indices"),
                  attrs=("weight_sym_argsize_0", "padding_idx", "scale_grad_by_freq", "sparse"),
                  weight=_emb_back)


def _check_indices(indices, n):
    """torch's range check of the indices (reads the values, every rank's of a rank-local
    tensor; skipped on tracers)."""
    for v in indices._rank_values():
        if isinstance(v, jax.core.Tracer) or v.size == 0:
            continue
        a = np.asarray(v)
        if a.min() < 0 or a.max() >= n:
            raise IndexError("index out of range in self")


def _check_embedding_args(weight, indices):
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{typename(indices)} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding: the rows of `weight` at `indices` (EmbeddingBackward0; no
    gradient reaches row padding_idx).

    >>> import eagergrad as torch
    >>> torch.embedding(torch.eye(3), torch.tensor([2, 0]))
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    _check_embedding_args(weight, indices)
    if sparse:
        raise NotImplementedError("eagergrad does not implement torch.sparse yet "
                                  "(embedding with sparse=True)")
    n = weight.shape[0]
    _check_indices(indices, n)
    if weight.dtype.is_complex and weight.requires_grad and STATE.grad:
        raise RuntimeError("embedding does not support automatic differentiation for outputs "
                           "with complex dtype.")
    pad = NO_PADDING if padding_idx < 0 else int(padding_idx)
    return call_op(EMBEDDING, (weight, indices), (n, pad, bool(scale_grad_by_freq), False))


def _renorm_k(weight, indices, max_norm, norm_type):
    hit = jnp.zeros(weight.shape[0], bool).at[indices.reshape(-1)].set(True)
    a = jnp.abs(weight)
    if norm_type == float("inf"):
        norms = jnp.max(a, axis=1)
    elif norm_type == 0:
        norms = jnp.sum(a != 0, axis=1).astype(weight.dtype)
    else:
        norms = jnp.sum(a ** norm_type, axis=1) ** (1.0 / norm_type)
    norms = norms.astype(jnp.float64)
    # the scale in double, as ATen's, then applied in the weight's dtype
    scale = jnp.where(hit & (norms > max_norm), max_norm / (norms + 1e-7), 1.0)
    return weight * scale.astype(weight.dtype)[:, None]


_RENORM = {}


def embedding_renorm_(input, indices, max_norm, norm_type):
    """torch.embedding_renorm_: rows of `input` picked by `indices` whose norm exceeds
    max_norm scaled down to it, in place (one version bump).

    >>> import eagergrad as torch
    >>> w = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> torch.embedding_renorm_(w, torch.tensor([0, 1]), 1.0, 2.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    _check_embedding_args(input, indices)
    key = (float(max_norm), float(norm_type))
    f = _RENORM.get(key)
    if f is None:
        if len(_RENORM) > 64:
            _RENORM.clear()
        f = _RENORM[key] = EXECUTABLES.track(jax.jit(lambda w, i: _renorm_k(w, i, *key)))
    new = from_jax(f(input._value, indices._value))
    with no_grad():
        input.copy_(new)
    return input


# ---- native_dropout ------------------------------------------------------------------------
def _dropout_scale(p, train):
    if not train:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def _nd_k(input, mask, p, train):
    if not train:
        return input, jnp.ones(input.shape, bool)
    return input * mask.astype(input.dtype) * jnp.asarray(_dropout_scale(p, train),
                                                          input.dtype), mask


NATIVE_DROPOUT = defop("native_dropout", _nd_k, inputs=("input", "mask"), attrs=("p", "train"),
                       outputs=("result", "result1"), nondiff=(1,),
                       input=lambda grad, result1, p, train:
                       grad * result1 * _dropout_scale(p, train))
_hide_attrs(NATIVE_DROPOUT, "train")


def _bernoulli_mask(input, keep):
    """A bool mask, True with probability `keep`, from eagergrad's generator."""
    return from_jax(sample(jax.random.bernoulli, _next_key(), {"shape": tuple(input.shape)},
                           p=keep))


def native_dropout(input, p, train):
    """torch.native_dropout: (output, mask); output = input * mask / (1 - p), the mask
    drawn from eagergrad's generator (train False/None: the input's copy, all-True mask).

    >>> import eagergrad as torch
    >>> torch.native_dropout(torch.ones(3), 0.0, True)
    (tensor([1., 1., 1.]), tensor([True, True, True]))
    """
    train = True if train is None else bool(train)
    if train and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
    mask = _bernoulli_mask(input, 1.0 - p) if train else \
        from_jax(jnp.ones(tuple(input.shape), bool))
    return call_op(NATIVE_DROPOUT, (input, mask), (float(p), train))


# ---- norm_except_dim (weight norm's norm), native_norm -----------------------------------
def _norm_scalar_k(self, p):
    from .distance import _norm_k
    return _norm_k(self, p, None, False)


def _norm_scalar_back(grad, self, result, p):
    from .distance import _norm_back
    return _norm_back(grad, self, result, p, None, False)


# aten::norm.Scalar (NormBackward0), as norm_except_dim(v, pow, -1) records it
NORM_SCALAR = defop("norm_scalar", _norm_scalar_k, attrs=("p",), node="NormBackward0",
                    self=_norm_scalar_back)


def _check_norm_dtype(v):
    if not (v.dtype.is_floating_point or v.dtype.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {v.dtype.scalar_name} instead.")


def _norm_dim(v, pow, dim):
    """aten::norm.ScalarOpt_dim(v, pow, [dim]) (NormBackward1)."""
    from .distance import NORM_DIM
    _check_norm_dtype(v)
    return call_op(NORM_DIM, (v,), (pow, (dim,), False))


def norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the `pow`-norm of v over every dim but `dim` (kept, the others
    of size 1), dim -1: over all (ATen's composite: view, norm, view).

    >>> import eagergrad as torch
    >>> torch.norm_except_dim(torch.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5.],
            [1.]])
    """
    for name, pos, x in (("pow", 2, pow), ("dim", 3, dim)):
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError(f"norm_except_dim(): argument '{name}' (position {pos}) must be "
                            f"int, not {type(x).__name__}")
    if dim == -1:
        _check_norm_dtype(v)
        return call_op(NORM_SCALAR, (v,), (pow,))
    if dim == 0:
        shape = [v.size(0)] + [1] * (v.dim() - 1)
        return _norm_dim(v.contiguous().view(v.size(0), -1), pow, 1).view(shape)
    if dim == v.dim() - 1:
        shape = [1] * (v.dim() - 1) + [v.size(-1)]
        return _norm_dim(v.contiguous().view(-1, v.size(-1)), pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


_NATIVE_NORM_SIGS = ("(Tensor input, Number p = 2)",
                     "(Tensor input, Number p, tuple of ints dim, bool keepdim, "
                     "torch.dtype dtype)")


def native_norm(input, *args, **kwargs):
    """torch.native_norm: ATen implements it for sparse tensors only, which eagergrad does
    not have; on a (dense) tensor it raises torch's error for the CPU backend.

    >>> import eagergrad as torch
    >>> torch.native_norm(torch.ones(2))
    Traceback (most recent call last):
    ...
    NotImplementedError: Could not run 'aten::native_norm' with arguments from the 'CPU' backend...
    """
    from ..tensor import Tensor
    n = 1 + len(args) + len(kwargs)
    if not isinstance(input, Tensor) and (n <= 2 or n == 5):  # (one signature takes n)
        raise TypeError("native_norm(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(input, Tensor) or n > 5:
        got = ", ".join([type(a).__name__ if not isinstance(a, Tensor) else "Tensor"
                         for a in (input, *args)] +
                        [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError("native_norm() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n" +
                        "".join(f" * {s}\n" for s in _NATIVE_NORM_SIGS))
    raise NotImplementedError(
        "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). If you are a Facebook "
        "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
        "possible resolutions. 'aten::native_norm' is only available for these backends: "
        "[Meta, SparseCPU, SparseCUDA, SparseMPS] (eagergrad has no sparse tensors).")
