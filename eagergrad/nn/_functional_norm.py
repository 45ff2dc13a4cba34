"""nn.functional's layer_norm, rms_norm, embedding and dropout (re-exported by
nn.functional), recorded as torch 2.13 records them on CPU: layer_norm is one
NativeLayerNormBackward0; rms_norm is ATen's composition (pow, mean, add, rsqrt, mul);
embedding is one EmbeddingBackward0 after an in-place renorm of the weight under no_grad
for max_norm; dropout multiplies by a noise tensor (MulBackward0), as ATen's CPU path."""
import jax
import jax.numpy as jnp

from .. import _dtypes as D
from ..creation import _next_key, from_jax
from ..engine.grad_mode import no_grad
from ..ops.loss import _add_s
from ..ops.norm import _check_layer_norm, embedding_renorm_
from ..ops.norm import embedding as _embedding
from ..ops.norm import layer_norm as _layer_norm
from ..ops.pointwise import mul

__all__ = ["dropout", "embedding", "layer_norm", "rms_norm"]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing `normalized_shape` dims, then scale and shift.

    >>> import eagergrad as torch
    >>> torch.nn.functional.layer_norm(torch.tensor([[1.0, 3.0]]), (2,), eps=0.0)
    tensor([[-1.,  1.]])
    """
    return _layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input * rsqrt(mean(input ** 2) + eps) over the trailing dims, times weight; eps
    None is the dtype's machine epsilon.

    >>> import eagergrad as torch
    >>> torch.nn.functional.rms_norm(torch.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    ns = tuple(int(s) for s in normalized_shape)
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={_shape(ns)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in ns)}], but got input of "
                           f"size{_shape(input.shape)}")
    if weight is not None:
        _check_layer_norm(input, ns, weight, None)
    # half types are upcast to float32 and the result cast back, as ATen's opmath
    up = input.to(D.float32) if input.dtype in (D.float16, D.bfloat16) else input
    if eps is None:
        real = up.dtype.to_real() if up.dtype.is_complex else up.dtype
        eps = float(jnp.finfo(real.np).eps)
    dims = tuple(range(input.ndim - 1, input.ndim - len(ns) - 1, -1))  # last first, as ATen
    r = _add_s(up.pow(2).mean(dims, keepdim=True), eps).rsqrt()
    out = up.mul(r)
    if up is not input:
        out = out.type_as(input)
    return out.mul(weight) if weight is not None else out


def _shape(s):
    return "[" + ", ".join(str(x) for x in s) + "]"


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of `weight` at the indices `input`.

    >>> import eagergrad as torch
    >>> torch.nn.functional.embedding(torch.tensor([1]), torch.eye(2))
    tensor([[0., 1.]])
    """
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)
    return _embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (the mask
    from eagergrad's generator); the input itself when not training or p == 0.

    >>> import eagergrad as torch
    >>> x = torch.ones(3)
    >>> torch.nn.functional.dropout(x, 0.5, training=False) is x
    True
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        noise = from_jax(jnp.zeros((), input.dtype.np))
    else:
        keep = jax.random.bernoulli(_next_key(), 1.0 - p, tuple(input.shape))
        dt = input.dtype.np
        noise = from_jax(keep.astype(dt) / jnp.asarray(1.0 - p, dt))
    return input.mul_(noise) if inplace else mul(input, noise)
