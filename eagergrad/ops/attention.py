"""Attention as op-table entries, as torch records them on CPU:
_scaled_dot_product_flash_attention_for_cpu (ScaledDotProductFlashAttentionForCpuBackward0,
outputs output and logsumexp) with the flash-attention backward, and _safe_softmax
(SafeSoftmaxBackward0: softmax whose all -inf rows give 0), which SDPA's math path uses,
and baddbmm (BaddbmmBackward0), which MultiheadAttention's need_weights path uses.

The flash backward is itself an op (torch's `_scaled_dot_product_flash_attention_for_cpu
_backward`) whose node is torch's NotImplemented: a first backward works under
create_graph, going through it again raises torch's "derivative ... is not implemented".
An attn_mask that is not given travels as an empty tensor (`_saved_attn_mask` None).
F.scaled_dot_product_attention, which picks this op or the math path, lives in
nn/_functional/attention.py.
"""
import math

import jax
import jax.numpy as jnp

from .._shapes import conj_scalar
from ..creation import zeros
from ._table import call_op, defop
from .inplace import inplace
from ._autocast import autocast_op
from .norm import _optional_meta

_WRAP = 2 ** 64  # torch's nodes show a negative dim as its unsigned wrap


# ---- _safe_softmax ---------------------------------------------------------------------------
def _axis(dim):
    return dim - _WRAP if dim >= 2 ** 63 else dim


def _safe_softmax_k(self, dim, dtype):
    x = self.astype(dtype.np)
    ax = _axis(dim)
    out = jax.nn.softmax(x, axis=ax)
    return jnp.where(jnp.all(x == -jnp.inf, axis=ax, keepdims=True), jnp.zeros_like(out), out)


SAFE_SOFTMAX = defop(
    "_safe_softmax", _safe_softmax_k, attrs=("dim", "dtype"),
    self=lambda grad, result, dim:
    result * (grad - (grad * result).sum(_axis(dim), keepdim=True)))
delattr(SAFE_SOFTMAX.Node, "_saved_dtype")
delattr(SAFE_SOFTMAX.Node, "_raw_saved_dtype")


def _safe_softmax(input, dim, dtype=None):
    """torch._safe_softmax: softmax along `dim`, rows that are all -inf give 0, not nan
    (not bound as eagergrad._safe_softmax: private names are not exported).

    >>> import eagergrad as torch
    >>> from eagergrad.ops.attention import _safe_softmax
    >>> _safe_softmax(torch.tensor([[-float('inf'), -float('inf')], [0.0, 0.0]]), -1)
    tensor([[0.0000, 0.0000],
            [0.5000, 0.5000]])
    """
    from .. import _dtypes as D
    dt = D.as_dtype(dtype) if dtype is not None else input.dtype
    d = int(dim)
    if not -max(input.ndim, 1) <= d < max(input.ndim, 1):
        lo, hi = -max(input.ndim, 1), max(input.ndim, 1) - 1
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {d})")
    if dt.is_complex:
        raise NotImplementedError(f"\"softmax_lastdim_kernel_impl\" not implemented for "
                                  f"'{dt.scalar_name}'")
    return call_op(SAFE_SOFTMAX, (input,), (d + _WRAP if d < 0 else d, dt))


# ---- flash attention (CPU) -------------------------------------------------------------------
def _given(t):
    return not (t.ndim == 1 and t.shape[0] == 0)


def _scores(query, key, attn_mask, is_causal, scale):
    """scale * q k^T (+ mask, causal -inf above the diagonal), keys repeated per query
    head group (GQA)."""
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    g = query.shape[-3] // key.shape[-3]
    if g != 1:
        key = jnp.repeat(key, g, axis=-3)
    x = jnp.einsum("...le,...se->...ls", query, key) * jnp.asarray(s, query.dtype)
    if _given(attn_mask):
        x = x + attn_mask.astype(x.dtype)
    if is_causal:
        L, S = x.shape[-2:]
        x = jnp.where(jnp.tril(jnp.ones((L, S), bool)), x, -jnp.inf)
    return x, s, g


def _acc(*arrays):
    """Half-precision inputs computed in float32, as torch's CPU kernel accumulates."""
    dt = arrays[0].dtype
    if dt in (jnp.float16, jnp.bfloat16):
        return dt, [a.astype(jnp.float32) for a in arrays]
    return dt, list(arrays)


def _flash_k(query, key, value, attn_mask, dropout_p, is_causal, scale):
    dt, (query, key, value) = _acc(query, key, value)
    x, _, g = _scores(query, key, attn_mask, is_causal, scale)
    m = jnp.max(x, axis=-1, keepdims=True)
    m = jnp.where(m == -jnp.inf, jnp.zeros_like(m), m)
    e = jnp.exp(x - m)
    z = jnp.sum(e, axis=-1, keepdims=True)
    p = e / jnp.where(z == 0, jnp.ones_like(z), z)
    if g != 1:
        value = jnp.repeat(value, g, axis=-3)
    out = jnp.einsum("...ls,...se->...le", p, value)
    # a fully masked row: output 0 and logsumexp 0, as torch's CPU kernel
    lse = jnp.where(z == 0, jnp.zeros_like(z), m + jnp.log(z))[..., 0]
    return out.astype(dt), lse


def _group_sum(a, g):
    if g == 1:
        return a
    shape = a.shape[:-3] + (a.shape[-3] // g, g) + a.shape[-2:]
    return jnp.sum(a.reshape(shape), axis=-3)


def _flash_back_k(grad_out, query, key, value, out, logsumexp, attn_mask, dropout_p,
                  is_causal, scale):
    """The flash-attention backward: p = exp(scores - lse), ds = p (dp - rowsum(dO o))."""
    dt, (grad_out, query, key, value, out) = _acc(grad_out, query, key, value, out)
    x, s, g = _scores(query, key, attn_mask, is_causal, scale)
    p = jnp.exp(x - logsumexp[..., None])
    kr = jnp.repeat(key, g, axis=-3) if g != 1 else key
    vr = jnp.repeat(value, g, axis=-3) if g != 1 else value
    dv = jnp.einsum("...ls,...le->...se", p, grad_out)
    dp = jnp.einsum("...le,...se->...ls", grad_out, vr)
    ds = p * (dp - jnp.sum(grad_out * out, axis=-1, keepdims=True))
    s = jnp.asarray(s, query.dtype)
    dq = jnp.einsum("...ls,...se->...le", ds, kr) * s
    dk = jnp.einsum("...ls,...le->...se", ds, query) * s
    return dq.astype(dt), _group_sum(dk, g).astype(dt), _group_sum(dv, g).astype(dt)


def _not_implemented(grad):
    raise RuntimeError("derivative for aten::_scaled_dot_product_flash_attention_for_cpu_"
                       "backward is not implemented")


FLASH_BACKWARD = defop(
    "_scaled_dot_product_flash_attention_for_cpu_backward", _flash_back_k,
    inputs=("grad_out", "query", "key", "value", "out", "logsumexp", "attn_mask"),
    attrs=("dropout_p", "is_causal", "scale"),
    outputs=("grad_query", "grad_key", "grad_value"), node="NotImplemented",
    grad_out=_not_implemented, query=_not_implemented, key=_not_implemented,
    value=_not_implemented, out=_not_implemented)


def _flash_grads(grad, query, key, value, attn_mask, output, logsumexp, dropout_p, is_causal,
                 scale):
    return call_op(FLASH_BACKWARD, (grad, query, key, value, output, logsumexp, attn_mask),
                   (dropout_p, is_causal, scale))


def _flash_formula(i):
    def formula(grad, query, key, value, attn_mask, output, logsumexp, dropout_p, is_causal,
                scale):
        return _flash_grads(grad, query, key, value, attn_mask, output, logsumexp, dropout_p,
                            is_causal, scale)[i]
    return formula


FLASH = defop(
    "_scaled_dot_product_flash_attention_for_cpu", _flash_k,
    inputs=("query", "key", "value", "attn_mask"), attrs=("dropout_p", "is_causal", "scale"),
    outputs=("output", "logsumexp"), nondiff=(1,),
    saved_meta=_optional_meta(("attn_mask", 3)),
    query=_flash_formula(0), key=_flash_formula(1), value=_flash_formula(2))


def _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0,
                                                is_causal=False, *, attn_mask=None,
                                                scale=None):
    """torch._scaled_dot_product_flash_attention_for_cpu: (output, logsumexp) of
    softmax(scale q k^T + mask) v for 4-d (batch, heads, length, head dim) inputs.

    >>> import eagergrad as torch
    >>> from eagergrad.ops.attention import _scaled_dot_product_flash_attention_for_cpu as fa
    >>> q = torch.ones(1, 1, 2, 2)
    >>> fa(q, q, q)[0]
    tensor([[[[1., 1.],
              [1., 1.]]]])
    """
    if dropout_p != 0:
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not "
                           "support dropout > 0")
    if attn_mask is None:
        attn_mask = zeros(0, dtype=query.dtype)  # (made on the host: no compile)
    return call_op(FLASH, (query, key, value, attn_mask),
                   (float(dropout_p), bool(is_causal), None if scale is None else float(scale)))


# ---- baddbmm (MultiheadAttention's need_weights path) -----------------------------------------
def _baddbmm_k(self, batch1, batch2, beta, alpha):
    prod = jnp.matmul(batch1, batch2)
    if alpha != 1:
        prod = prod * jnp.asarray(alpha, prod.dtype)
    if beta == 0:  # torch ignores self (its nan and inf too) when beta is 0
        return prod
    s = self if beta == 1 else self * jnp.asarray(beta, self.dtype)
    return jnp.broadcast_to(s, prod.shape).astype(prod.dtype) + prod


def _maybe_mul(grad, v):
    return grad if v == 1 else grad * v


BADDBMM = defop(
    "baddbmm", _baddbmm_k, inputs=("self", "batch1", "batch2"), attrs=("beta", "alpha"),
    self=lambda grad, beta: _maybe_mul(grad, conj_scalar(beta)),
    batch1=lambda grad, batch2, alpha: _maybe_mul(grad.bmm(batch2.transpose(1, 2).conj()),
                                                  conj_scalar(alpha)),
    batch2=lambda grad, batch1, alpha: _maybe_mul(batch1.transpose(1, 2).conj().bmm(grad),
                                                  conj_scalar(alpha)))


@autocast_op("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batched (BaddbmmBackward0); input
    broadcasts to the product's shape.

    >>> import eagergrad as torch
    >>> torch.baddbmm(torch.ones(1, 1, 2), torch.ones(3, 1, 2), torch.ones(3, 2, 2)).shape
    torch.Size([3, 1, 2])
    """
    _baddbmm_check(input, batch1, batch2)
    return call_op(BADDBMM, (input, batch1, batch2), (beta, alpha))


def baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    """Tensor.baddbmm_: baddbmm written into input, which must have the result's shape
    and the batches' dtype."""
    _baddbmm_check(input, batch1, batch2, True)
    return inplace(input, baddbmm, batch1, batch2, beta=beta, alpha=alpha)


def _baddbmm_check(input, batch1, batch2, in_place=False):
    """torch's baddbmm checks (the meta function's; for baddbmm_ its in-place output's)."""
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    b, n, k = batch1.shape
    if tuple(batch2.shape[:2]) != (b, k):
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    target = (b, n, batch2.shape[2])
    shape = tuple(input.shape)
    lead = (1,) * (3 - len(shape)) + shape
    for i, (s, t) in enumerate(zip(lead, target)):
        if len(shape) > 3 or (s != t and s != 1):
            sizes = ", ".join(map(str, target))
            raise RuntimeError(f"The expanded size of the tensor ({t}) must match the existing "
                               f"size ({s}) at non-singleton dimension {i}.  Target sizes: "
                               f"[{sizes}].  Tensor sizes: [{', '.join(map(str, shape))}]")
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {input.dtype.cpp_name}, "
                           f"batch1: {batch1.dtype.cpp_name}, batch2: {batch2.dtype.cpp_name}")
    if in_place:
        if input.dtype is not batch2.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {input.dtype.cpp_name} "
                               f"and output tensor dtype {batch2.dtype.cpp_name} should match")
        if input._shape != target:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(input._shape)} "
                               f"and output tensor size {list(target)} should match")
    if batch2.dtype is not batch1.dtype:
        raise RuntimeError(f"expected scalar type {batch1.dtype.scalar_name} but found "
                           f"{batch2.dtype.scalar_name}")

