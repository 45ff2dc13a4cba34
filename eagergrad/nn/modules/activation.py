"""torch.nn.modules.activation: the activation modules, with torch's constructor
signatures, attributes, extra_repr and forward calls, and MultiheadAttention (its fused
inference path: see transformer.py)."""
import warnings

import jax.numpy as jnp

from ...backends import mha as _mha
from ...creation import empty, from_jax
from ...engine.grad_mode import is_grad_enabled
from .. import functional as F
from .. import init
from .._functional.attention import _canonical_mask, _none_or_dtype
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU",
           "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]


def _inplace_str(inplace, sep=", "):
    return f"{sep}inplace=True" if inplace else ""


class _Activation(Module):
    """The base of the activation modules."""


class _Inplace(_Activation):
    """An activation whose only argument is `inplace`."""

    __constants__ = ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Threshold(_Activation):
    """value where x <= threshold, else x.

    >>> import eagergrad as torch
    >>> torch.nn.Threshold(0.1, 20)
    Threshold(threshold=0.1, value=20)
    >>> torch.nn.Threshold(1.0, 0.0)(torch.tensor([0.5, 2.0]))
    tensor([0., 2.])
    """

    __constants__ = ("threshold", "value", "inplace")

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class ReLU(Module):
    """Elementwise max(x, 0) (ReluBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.ReLU()(torch.tensor([-1.0, 1.0]))
    tensor([0., 1.])
    """

    __constants__ = ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class RReLU(_Activation):
    """Randomized leaky ReLU: random slopes in [lower, upper] in training mode, their
    mean in eval mode.

    >>> import eagergrad as torch
    >>> torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor([-1.0, 1.0]))
    tensor([-0.2000,  1.0000])
    """

    __constants__ = ("lower", "upper", "inplace")

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Hardtanh(_Activation):
    """x clamped to [min_val, max_val].

    >>> import eagergrad as torch
    >>> torch.nn.Hardtanh(-2, 2)(torch.tensor([-3.0, 1.0]))
    tensor([-2.,  1.])
    """

    __constants__ = ("min_val", "max_val", "inplace")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(0, x), 6).

    >>> import eagergrad as torch
    >>> torch.nn.ReLU6()(torch.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """Elementwise sigmoid.

    >>> import eagergrad as torch
    >>> torch.nn.Sigmoid()(torch.zeros(1))
    tensor([0.5000])
    """

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """Elementwise tanh.

    >>> import eagergrad as torch
    >>> torch.nn.Tanh()(torch.zeros(1))
    tensor([0.])
    """

    def forward(self, input):
        return input.tanh()


class SiLU(_Inplace):
    """x * sigmoid(x).

    >>> import eagergrad as torch
    >>> torch.nn.SiLU()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """x * tanh(softplus(x)).

    >>> import eagergrad as torch
    >>> torch.nn.Mish()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6.

    >>> import eagergrad as torch
    >>> torch.nn.Hardsigmoid()(torch.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6.

    >>> import eagergrad as torch
    >>> torch.nn.Hardswish()(torch.tensor([3.0]))
    tensor([3.])
    """

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""


class ELU(_Activation):
    """x if x > 0 else alpha * (exp(x) - 1).

    >>> import eagergrad as torch
    >>> torch.nn.ELU(alpha=0.5)
    ELU(alpha=0.5)
    """

    __constants__ = ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(_Activation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import eagergrad as torch
    >>> torch.nn.CELU(0.5, inplace=True)
    CELU(alpha=0.5, inplace=True)
    """

    __constants__ = ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """scale * elu(x, alpha) with SELU's constants.

    >>> import eagergrad as torch
    >>> torch.nn.SELU()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(_Activation):
    """a * sigmoid(b), a and b the halves of the input along dim.

    >>> import eagergrad as torch
    >>> torch.nn.GLU()(torch.tensor([[2.0, 0.0]]))
    tensor([[1.]])
    """

    __constants__ = ("dim",)

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(_Activation):
    """x * Phi(x); approximate='tanh' uses torch's tanh formula.

    >>> import eagergrad as torch
    >>> torch.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    __constants__ = ("approximate",)

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(_Activation):
    """x where |x| > lambd, else 0.

    >>> import eagergrad as torch
    >>> torch.nn.Hardshrink()
    Hardshrink(0.5)
    """

    __constants__ = ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(_Activation):
    """x - lambd * sign(x) where |x| > lambd, else 0.

    >>> import eagergrad as torch
    >>> torch.nn.Softshrink(0.3)
    Softshrink(0.3)
    """

    __constants__ = ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class LeakyReLU(_Activation):
    """x if x > 0 else negative_slope * x.

    >>> import eagergrad as torch
    >>> torch.nn.LeakyReLU()
    LeakyReLU(negative_slope=0.01)
    """

    __constants__ = ("inplace", "negative_slope")

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class LogSigmoid(_Activation):
    """log(sigmoid(x)).

    >>> import eagergrad as torch
    >>> torch.nn.LogSigmoid()(torch.tensor([0.0]))
    tensor([-0.6931])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(_Activation):
    """log(1 + exp(beta * x)) / beta, linear above threshold.

    >>> import eagergrad as torch
    >>> torch.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    __constants__ = ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(_Activation):
    """x if x > 0 else weight * x, with a learnable `weight` of num_parameters values
    (one, or one per channel), all `init`.

    >>> import eagergrad as torch
    >>> m = torch.nn.PReLU(3)
    >>> m
    PReLU(num_parameters=3)
    >>> m.weight
    Parameter containing:
    tensor([0.2500, 0.2500, 0.2500], requires_grad=True)
    """

    __constants__ = ("num_parameters",)

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, **factory_kwargs))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(_Activation):
    """x / (1 + |x|).

    >>> import eagergrad as torch
    >>> torch.nn.Softsign()(torch.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(_Activation):
    """x - tanh(x).

    >>> import eagergrad as torch
    >>> torch.nn.Tanhshrink()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.tanhshrink(input)


class Softmin(_Activation):
    """softmax(-x) along dim.

    >>> import eagergrad as torch
    >>> torch.nn.Softmin(dim=0)(torch.zeros(2))
    tensor([0.5000, 0.5000])
    """

    __constants__ = ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class _DimModule(Module):
    __constants__ = ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """softmax along `dim` (None: torch's deprecated implicit choice, with its warning).

    >>> import eagergrad as torch
    >>> torch.nn.Softmax(dim=0)(torch.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(_Activation):
    """softmax over the channel dim (-3) of a 3-d or 4-d input.

    >>> import eagergrad as torch
    >>> torch.nn.Softmax2d()(torch.zeros(2, 1, 1))
    tensor([[[0.5000]],
    <BLANKLINE>
            [[0.5000]]])
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_DimModule):
    """log_softmax along `dim`.

    >>> import eagergrad as torch
    >>> torch.nn.LogSoftmax(dim=0)(torch.zeros(2)).exp()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


# ---- MultiheadAttention ----------------------------------------------------------------------
class MultiheadAttention(Module):
    """Attention with `num_heads` heads over (L, N, E) inputs ((N, L, E) with batch_first):
    parameters in_proj_weight (3E, E) (or q/k/v_proj_weight when kdim/vdim differ),
    in_proj_bias, out_proj, bias_k/bias_v with add_bias_kv. Returns (output, weights).

    >>> import eagergrad as torch
    >>> mha = torch.nn.MultiheadAttention(4, 2)
    >>> x = torch.ones(3, 1, 4)
    >>> [t.shape for t in mha(x, x, x)]
    [torch.Size([3, 1, 4]), torch.Size([1, 3, 3])]
    """

    __constants__ = ("batch_first",)

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **fk))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **fk))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **fk))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **fk))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        fast = not self._why_not_fast_path(query, key, value, key_padding_mask, attn_mask) \
            and self.in_proj_bias is not None
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                             _none_or_dtype(attn_mask), "attn_mask",
                                             query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                      check_other=False)
        if fast:
            n, l = query.shape[:2]
            is_causal = False  # (torch's fused kernel reads the mask only)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        kw = {}
        if not self._qkv_same_embed_dim:
            kw = {"use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
                  "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal, **kw)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        if fast and (key_padding_mask is not None or attn_mask is not None):
            full = _fused_masks(attn_mask, key_padding_mask, n, self.num_heads, l)[2]
            out = out.masked_fill(full, float("nan"))
        return out, weights

    def _why_not_fast_path(self, query, key, value, key_padding_mask, attn_mask):
        """Why torch would not run its fused kernel (_native_multi_head_attention) here, in
        its words and order; "" when it would (given in_proj_bias)."""
        why = ""
        if (attn_mask is not None and attn_mask.is_floating_point()) or \
                (key_padding_mask is not None and key_padding_mask.is_floating_point()):
            why = "floating-point masks are not supported for fast path."
        b, w = self.in_proj_bias, self.in_proj_weight
        if not _mha.get_fastpath_enabled():
            why = "torch.backends.mha.get_fastpath_enabled() was not True"
        elif query.dim() != 3:
            why = f"input not batched; expected query.dim() of 3 but got {query.dim()}"
        elif query is not key or key is not value:
            why = ("non-self attention was used (query, key, and value are not the same "
                   "Tensor)")
        elif b is not None and query.dtype != b.dtype:
            why = (f"dtypes of query ({query.dtype}) and self.in_proj_bias ({b.dtype}) don't "
                   "match")
        elif w is None:
            why = "in_proj_weight was None"
        elif query.dtype != w.dtype:
            why = (f"dtypes of query ({query.dtype}) and self.in_proj_weight ({w.dtype}) "
                   "don't match")
        elif self.training:
            why = "training is enabled"
        elif self.num_heads % 2 != 0:
            why = "self.num_heads is not even"
        elif not self.batch_first:
            why = "batch_first was not True"
        elif self.bias_k is not None:
            why = "self.bias_k was not None"
        elif self.bias_v is not None:
            why = "self.bias_v was not None"
        elif self.add_zero_attn:
            why = "add_zero_attn was enabled"
        elif not self._qkv_same_embed_dim:
            why = "_qkv_same_embed_dim was not True"
        if not why and _grad_wanted((query, key, value, w, b, self.out_proj.weight,
                                     self.out_proj.bias)):
            why = _GRAD_WANTED
        return why

    def merge_masks(self, attn_mask, key_padding_mask, query):
        mask_type = merged = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                merged = expanded + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


_GRAD_WANTED = ("grad is enabled and at least one of query or the input/output projection "
                "weights or biases requires_grad")


def _grad_wanted(tensors):
    return is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _fused_masks(attn_mask, key_padding_mask, n, num_heads, l):
    """What torch's fused attention makes of the canonical (float) masks of a self-attention
    over (N, L, E): merge_masks' sum, masked where nonzero. Returns that as bool
    (attn_mask, key_padding_mask) for the composite, and the (N, L, 1) query rows with every
    key masked, where the fused softmax gives NaN."""
    k = None if key_padding_mask is None else key_padding_mask._value.reshape(n, 1, 1, l)
    if attn_mask is None:
        m = k != 0
        masks = (None, from_jax(m.reshape(n, l)))
    else:
        a = attn_mask._value
        a = a.reshape(n, -1, l, l) if a.ndim == 3 else a.reshape(1, 1, l, l)
        m = (a if k is None else a + k) != 0
        if m.shape[:2] == (1, 1):
            masks = (from_jax(m.reshape(l, l)), None)
        else:
            m = jnp.broadcast_to(m, (n, num_heads, l, l))
            masks = (from_jax(m.reshape(n * num_heads, l, l)), None)
    rows = jnp.broadcast_to(jnp.any(jnp.all(m, -1), 1), (n, l))
    return masks + (from_jax(rows[..., None]),)
