"""torch.nn.modules.transformer: the Transformer layers (TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer), with torch's
parameter names (so a torch state dict loads), initialisation calls, reprs and forward
composites.

torch's inference fast paths (no grad wanted, eval, batch_first, ...) compute the same
numbers with other kernels, except where they show: its fused attention
(_native_multi_head_attention, _transformer_encoder_layer_fwd) reads every mask as "masked
where nonzero" and gives NaN for a query row with every key masked (the composite's safe
softmax gives zeros), and TransformerEncoder's nested tensor drops the padded tokens, so
its output is zero there. Both are reproduced under exactly torch's conditions, with the
composite (the same numbers on every other row).
"""
import copy
import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtypes as D
from ...backends import mha as _mha
from ...creation import from_jax
from .. import functional as F
from .. import init
from .._functional.attention import _canonical_mask, _none_or_dtype
from . import activation as _activation_modules
from .activation import (_GRAD_WANTED, MultiheadAttention, ReLU, _fused_masks,
                         _grad_wanted)
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


class _Nested(threading.local):
    """The tensor TransformerEncoder hands its layers in place of torch's nested tensor
    (a padded tensor, zero at the padding), with its (N, S) bool padding."""

    def __init__(self):
        self.src = self.pad = None


_NESTED = _Nested()
_NESTED_WARNED = []


def _warn_nested_prototype():
    if not _NESTED_WARNED:  # (torch warns once per process)
        _NESTED_WARNED.append(True)
        warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change "
                      "in the near future. We recommend specifying layout=torch.jagged when "
                      "constructing a nested tensor, as this layout receives active "
                      "development, has better operator coverage, and works with "
                      "torch.compile.", UserWarning, stacklevel=3)


# ---- Transformer ----------------------------------------------------------------------------
def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    return from_jax(jnp.triu(jnp.full((sz, sz), -jnp.inf, dt.np), 1))


def _get_seq_len(src, batch_first):
    size = src.size()
    if len(size) == 2:
        return size[0]
    return size[1 if batch_first else 0]


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """torch's check whether `mask` is the causal mask. It reads the mask's values (in
    numpy: no op recorded or traced); a mask of jax tracers counts as not causal, which
    changes no number (is_causal is only a hint next to the mask)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        v = mask._value
        if isinstance(v, jax.core.Tracer) or tuple(mask.shape) != (sz, sz):
            return False
        causal = np.triu(np.full((sz, sz), -np.inf), 1)
        make_causal = bool(np.array_equal(np.asarray(v), causal))
    return make_causal


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual connection
    and LayerNorm (after, or before with norm_first).

    >>> import eagergrad as torch
    >>> layer = torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0)
    >>> layer(torch.ones(3, 1, 4)).shape
    torch.Size([3, 1, 4])
    """

    __constants__ = ("norm_first",)

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        gelu_module = getattr(_activation_modules, "GELU", ())
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is getattr(F, "gelu", None) or isinstance(activation, gelu_module):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 _none_or_dtype(src_mask), "src_mask",
                                                 src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype,
                                     check_other=False)
        pad = _NESTED.pad if _NESTED.src is src else None
        if not self._why_not_fast_path(src, src_mask, src_key_padding_mask, pad is not None):
            x = self._fast_path(src, src_mask, src_key_padding_mask, pad)
            return x if pad is None else x.masked_fill(pad.unsqueeze(-1), 0.0)
        if pad is not None:  # torch's slow path on a nested tensor: self_attn's fast path
            why = self.self_attn._why_not_fast_path(src, src, src, None, None)
            if why:
                raise AssertionError("MultiheadAttention does not support NestedTensor outside "
                                     f"of its fast path. The fast path was not hit because {why}")
            src_key_padding_mask = pad
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask,
                                   is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask,
                                              is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x if pad is None else x.masked_fill(pad.unsqueeze(-1), 0.0)

    def _why_not_fast_path(self, src, src_mask, src_key_padding_mask, nested=False):
        """Why torch would not run _transformer_encoder_layer_fwd here ("" when it would),
        in its words and order; `nested`: src stands for the encoder's nested tensor."""
        sa = self.self_attn
        if not _mha.get_fastpath_enabled():
            return "torch.backends.mha.get_fastpath_enabled() was not True"
        if src.dim() != 3:
            return f"input not batched; expected src.dim() of 3 but got {src.dim()}"
        if self.training:
            return "training is enabled"
        if not sa.batch_first:
            return "self_attn.batch_first was not True"
        if sa.in_proj_bias is None:
            return "self_attn was passed bias=False"
        if not sa._qkv_same_embed_dim:
            return "self_attn._qkv_same_embed_dim was not True"
        if not self.activation_relu_or_gelu:
            return "activation_relu_or_gelu was not True"
        if self.norm1.eps != self.norm2.eps:
            return "norm1.eps is not equal to norm2.eps"
        if nested and (src_key_padding_mask is not None or src_mask is not None):
            return ("neither src_key_padding_mask nor src_mask are not supported with "
                    "NestedTensor input")
        if sa.num_heads % 2 == 1:
            return "num_head is odd"
        if any(len(getattr(m, "_forward_hooks", {})) + len(getattr(m, "_forward_pre_hooks", {}))
               for m in self.modules()):
            return "forward pre-/hooks are attached to the module"
        if _grad_wanted((src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight,
                         sa.out_proj.bias, self.norm1.weight, self.norm1.bias,
                         self.norm2.weight, self.norm2.bias, self.linear1.weight,
                         self.linear1.bias, self.linear2.weight, self.linear2.bias)):
            return _GRAD_WANTED
        return ""

    def _fast_path(self, src, src_mask, src_key_padding_mask, pad):
        """torch's _transformer_encoder_layer_fwd as the composite: no dropout (whatever
        the submodules' modes), norm1's eps for both norms, exact gelu for any GELU, the
        masks as its fused attention reads them; `pad`: the nested tensor's padding."""
        sa = self.self_attn
        n, l = src.shape[:2]
        attn = kpm = full = None
        if pad is not None:
            kpm = pad
        elif src_mask is not None or src_key_padding_mask is not None:
            attn, kpm, full = _fused_masks(src_mask, src_key_padding_mask, n, sa.num_heads, l)
        eps = self.norm1.eps

        def attend(x):
            x = x.transpose(0, 1)
            out = F.multi_head_attention_forward(
                x, x, x, sa.embed_dim, sa.num_heads, sa.in_proj_weight, sa.in_proj_bias, None,
                None, False, 0.0, sa.out_proj.weight, sa.out_proj.bias, training=False,
                key_padding_mask=kpm, need_weights=False, attn_mask=attn)[0].transpose(0, 1)
            return out if full is None else out.masked_fill(full, float("nan"))

        def norm(x, ln):
            return F.layer_norm(x, ln.normalized_shape, ln.weight, ln.bias, eps)

        def feed_forward(x):
            act = F.gelu if self.activation_relu_or_gelu == 2 else F.relu
            x = act(F.linear(x, self.linear1.weight, self.linear1.bias))
            return F.linear(x, self.linear2.weight, self.linear2.bias)

        if self.norm_first:
            x = src + attend(norm(src, self.norm1))
            return x + feed_forward(norm(x, self.norm2))
        x = norm(src + attend(src), self.norm1)
        return norm(x + feed_forward(x), self.norm2)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then a feed-forward block,
    each with dropout, a residual connection and LayerNorm.

    >>> import eagergrad as torch
    >>> layer = torch.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0)
    >>> layer(torch.ones(3, 1, 4), torch.ones(5, 1, 4)).shape
    torch.Size([3, 1, 4])
    """

    __constants__ = ("norm_first",)

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **fk)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) \
            else activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    """`num_layers` deep copies of `encoder_layer`, then `norm` if given. Where torch runs
    the layers on a nested tensor (enable_nested_tensor, eval, no grad wanted, a
    src_key_padding_mask, ...), the output is zero at the padding before `norm`, as torch's.

    >>> import eagergrad as torch
    >>> layer = torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0)
    >>> enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    >>> enc(torch.ones(3, 1, 4)).shape
    torch.Size([3, 1, 4])
    """

    __constants__ = ("norm",)

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        enc = "encoder_layer"
        why = ""
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why = f"{enc} was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why = f"{enc}.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why = (f"{enc}.self_attn.batch_first was not True"
                   "(use batch_first for better inference performance)")
        elif not encoder_layer.self_attn._qkv_same_embed_dim:
            why = f"{enc}.self_attn._qkv_same_embed_dim was not True"
        elif encoder_layer.self_attn.in_proj_bias is None:
            why = f"{enc}.self_attn was passed bias=False"
        elif not encoder_layer.activation_relu_or_gelu:
            why = f"{enc}.activation_relu_or_gelu was not True"
        elif encoder_layer.norm1.eps != encoder_layer.norm2.eps:
            why = f"{enc}.norm1.eps was not equal to {enc}.norm2.eps"
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why = f"{enc}.self_attn.num_heads is odd"
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        pad, aligned = self._nested_padding(src, mask, src_key_padding_mask)
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        if pad is None or aligned is not None:
            for mod in self.layers:
                output = mod(output, src_mask=mask, is_causal=is_causal,
                             src_key_padding_mask=src_key_padding_mask)
            if aligned is not None:  # a traced mask: torch's choice made with where
                output = output.masked_fill((pad & aligned).unsqueeze(-1), 0.0)
        else:
            _warn_nested_prototype()
            output = output.masked_fill(pad.unsqueeze(-1), 0.0)
            for mod in self.layers:
                saved = _NESTED.src, _NESTED.pad
                _NESTED.src, _NESTED.pad = output, pad
                try:
                    output = mod(output, src_mask=mask, is_causal=is_causal,
                                 src_key_padding_mask=None)
                finally:
                    _NESTED.src, _NESTED.pad = saved
            v = pad._value
            if not isinstance(v, jax.core.Tracer) and bool(v.all()):
                raise RuntimeError("to_padded_tensor: at least one constituent tensor should "
                                   "have non-zero numel")
            output = output.masked_fill(pad.unsqueeze(-1), 0.0)  # to_padded_tensor(0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_padding(self, src, mask, src_key_padding_mask):
        """The (N, S) bool padding of the nested tensor torch would make of `src` here (its
        conditions, in its order), or None. torch keeps the first `count` tokens of each
        sequence, count being its number of unmasked keys; with mask_check it only converts
        a left-aligned mask, and for a traced mask that answer comes second, traced."""
        first = self.layers[0]
        kpm = src_key_padding_mask
        if not _mha.get_fastpath_enabled() or not getattr(self, "use_nested_tensor", False) \
                or first.training or src.dim() != 3 or kpm is None or mask is not None:
            return None, None
        sa = first.self_attn
        if _grad_wanted((src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight,
                         sa.out_proj.bias, first.norm1.weight, first.norm1.bias,
                         first.norm2.weight, first.norm2.bias, first.linear1.weight,
                         first.linear1.bias, first.linear2.weight, first.linear2.bias)):
            return None, None
        valid = kpm._value == 0  # src_key_padding_mask.logical_not()
        pad = jnp.arange(valid.shape[-1]) >= valid.sum(-1, keepdims=True)
        if not getattr(self, "mask_check", True):
            return from_jax(pad), None
        aligned = jnp.all(valid != pad)
        if isinstance(aligned, jax.core.Tracer):
            return from_jax(pad), from_jax(aligned)
        return (from_jax(pad), None) if bool(aligned) else (None, None)


class TransformerDecoder(Module):
    """`num_layers` deep copies of `decoder_layer`, then `norm` if given.

    >>> import eagergrad as torch
    >>> layer = torch.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0)
    >>> torch.nn.TransformerDecoder(layer, 2)(torch.ones(3, 1, 4), torch.ones(5, 1, 4)).shape
    torch.Size([3, 1, 4])
    """

    __constants__ = ("norm",)

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder and a decoder stack (each ending in LayerNorm), parameters with more
    than one dim re-drawn with xavier_uniform_ as torch does.

    >>> import eagergrad as torch
    >>> m = torch.nn.Transformer(4, 2, 1, 1, dim_feedforward=8, dropout=0.0)
    >>> m(torch.ones(5, 1, 4), torch.ones(3, 1, 4)).shape
    torch.Size([3, 1, 4])
    >>> torch.nn.Transformer.generate_square_subsequent_mask(2)
    tensor([[0., -inf],
            [0., 0.]])
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, **fk)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, **fk)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != \
                tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
