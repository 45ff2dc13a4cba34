"""torch.nn.functional's scaled_dot_product_attention and multi_head_attention_forward
(re-exported by nn.functional), recorded as torch 2.13 records them on CPU.

scaled_dot_product_attention takes the flash kernel (one
ScaledDotProductFlashAttentionForCpuBackward0) when torch's CPU dispatcher would: 4-d
inputs of one batch size, equal head dims, heads equal (or divisible with enable_gqa), no
dropout, a 2-d or 4-d mask not requiring grad, or none; otherwise ATen's math composite
(q and k^T each scaled by sqrt(scale), matmul, mask added in place, _safe_softmax,
dropout, matmul).
multi_head_attention_forward is torch's Python function, line for line.
"""
import math
import warnings

import jax.numpy as jnp

from ... import _dtypes as D
from ...creation import from_jax
from ...ops._autocast import autocast_op
from ...ops.attention import _safe_softmax, _scaled_dot_product_flash_attention_for_cpu, baddbmm
from ...ops.conv import constant_pad_nd
from ...ops.linalg import bmm, matmul
from ...ops.pointwise import _mul_s
from ...ops.pointwise import where
from ...ops.shape import cat
from .dropout import dropout
from .linear import linear

try:  # Tensor.repeat's op (RepeatBackward0), declared with instance norm
    from ...ops.batchnorm import _repeat
except ImportError:  # pragma: no cover
    _repeat = None


def _dtype_cpp(t):
    return t.dtype.cpp_name


def _validate_sdpa(query, key, value, attn_mask):
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_dtype_cpp(query)} key.dtype: {_dtype_cpp(key)} "
                           f"and value.dtype: {_dtype_cpp(value)} instead.")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and "
                           f"value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype is not D.bool_ and \
            attn_mask.dtype != query.dtype:
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_dtype_cpp(attn_mask)} and  "
                           f"query.dtype: {_dtype_cpp(query)} instead.")


def _use_flash(query, key, value, attn_mask, dropout_p, enable_gqa):
    """torch's CPU backend choice (sdp_utils_cpp's use_flash_attention_cpp)."""
    if dropout_p > 0 or not query.ndim == key.ndim == value.ndim == 4:
        return False
    if query.dtype not in (D.float32, D.float64, D.float16, D.bfloat16):
        return False
    if not query.shape[0] == key.shape[0] == value.shape[0]:
        return False
    hq, hk, hv = query.shape[1], key.shape[1], value.shape[1]
    if not (hq == hk == hv or (enable_gqa and hk == hv and hq % hk == 0)):
        return False
    if attn_mask is not None and (attn_mask.ndim not in (2, 4) or attn_mask.requires_grad):
        return False
    if not query.shape[-1] == key.shape[-1] == value.shape[-1]:
        return False
    return query.shape[-2] > 0 and key.shape[-2] > 0


def _bool_to_float(mask, dtype):
    """convert_boolean_attn_mask: True keeps (0), False masks (-inf)."""
    return where(mask.logical_not(), -math.inf,
                 from_jax(jnp.zeros((), dtype.np)))


def _repeat_heads(t, n):
    """repeat_interleave(t, n, dim=-3), as ATen composes it (unsqueeze, expand, clone, view)."""
    d = t.ndim - 3
    shape = tuple(t.shape)
    x = t.unsqueeze(d + 1).expand(*shape[:d + 1], n, *shape[d + 1:]).clone()
    return x.view(*shape[:d], shape[d] * n, *shape[d + 1:])


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    neg = scale is not None and scale < 0
    e = query.shape[-1]
    s = math.sqrt(1.0 / math.sqrt(e) if scale is None else abs(scale))
    q = _mul_s(query, -s if neg else s)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
        L, S = query.shape[-2], key.shape[-2]
        attn_mask = _bool_to_float(from_jax(jnp.tril(jnp.ones((L, S), bool))), query.dtype)
    if enable_gqa:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if not (hq == hk == hv or (hq % hk == 0 and hq % hv == 0)):
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")
        if not hq == hk == hv:
            key = _repeat_heads(key, hq // hk)
            value = _repeat_heads(value, hq // hv)
    attn = matmul(q, _mul_s(key.transpose(-2, -1), s))
    if attn_mask is not None:
        attn.add_(attn_mask)
    attn = _safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return matmul(attn, value)


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v, scale 1/sqrt(head dim); a boolean mask keeps its
    True entries; is_causal masks keys after each query position.

    >>> import eagergrad as torch
    >>> q = torch.ones(1, 1, 2, 2, requires_grad=True)
    >>> out = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    >>> out.grad_fn.name()
    'ScaledDotProductFlashAttentionForCpuBackward0'
    """
    _validate_sdpa(query, key, value, attn_mask)
    if attn_mask is not None and attn_mask.dtype is D.bool_:
        attn_mask = _bool_to_float(attn_mask, query.dtype)
    if _use_flash(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _scaled_dot_product_flash_attention_for_cpu(
            query, key, value, dropout_p, is_causal, attn_mask=attn_mask, scale=scale)[0]
    return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


# ---- multi_head_attention_forward (torch/nn/functional.py) ---------------------------------
def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2) \
                .contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2) \
            .contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)),
                           ("value", w_v, (Eq, Ev))):
        if w.shape != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got "
                                 f"{w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and b.shape != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 2-D but found {key_padding_mask.dim()}-D "
                                 "tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                 "instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` "
                                 f"to be `None` or 1-D but found {key_padding_mask.dim()}-D "
                                 "tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D "
                                     "tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if attn_mask.shape != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but "
                                         f"got {attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    if mask is not None:
        is_float = mask.dtype.is_floating_point
        if mask.dtype is not D.bool_ and not is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and mask.dtype != other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is "
                          "deprecated. Use same type for both instead.", stacklevel=2)
        if not is_float:
            mask = from_jax(jnp.zeros(tuple(mask.shape), target_type.np)).masked_fill_(
                mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if hasattr(input, "dtype") and hasattr(input, "_value"):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _repeat_bias(b, bsz):
    if _repeat is None:  # pragma: no cover
        return b.expand(b.shape[0], bsz, b.shape[2])
    return _repeat(b, 1, bsz, 1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention over (L, N, E) inputs (or unbatched (L, E)), torch's composite:
    in-projection, attention per head (SDPA, or baddbmm + softmax when need_weights), the
    out-projection. Returns (output, head-averaged weights or None).

    >>> import eagergrad as torch
    >>> out, wts = torch.nn.functional.multi_head_attention_forward(
    ...     torch.ones(3, 1, 4), torch.ones(3, 1, 4), torch.ones(3, 1, 4), 4, 2,
    ...     torch.ones(12, 4), None, None, None, False, 0.0, torch.eye(4), None)
    >>> out.shape, wts.shape
    (torch.Size([3, 1, 4]), torch.Size([1, 3, 3]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, _repeat_bias(bias_k, bsz)])
        v = cat([v, _repeat_bias(bias_v, bsz)])
        if attn_mask is not None:
            attn_mask = constant_pad_nd(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = constant_pad_nd(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got "
                                 f"{static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got "
                                 f"{static_k.size(2)}")
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got "
                                 f"{static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got "
                                 f"{static_v.size(2)}")
        v = static_v
    if add_zero_attn:
        shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, from_jax(jnp.zeros(shape, k.dtype.np))], dim=1)
        v = cat([v, from_jax(jnp.zeros(shape, v.dtype.np))], dim=1)
        if attn_mask is not None:
            attn_mask = constant_pad_nd(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = constant_pad_nd(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len) \
            .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        _, _, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = bmm(q_scaled, k.transpose(-2, -1))
        weights = weights.softmax(dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if not is_batched:
        out = out.squeeze(1)
    return out, None
