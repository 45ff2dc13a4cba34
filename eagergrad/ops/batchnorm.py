"""Batch and group normalization as op-table entries: native_batch_norm
(NativeBatchNormBackward0), native_group_norm (NativeGroupNormBackward0), and
Tensor.repeat, which instance norm applies to its weight and bias (RepeatBackward0), with torch's
`_saved_*` values and formulas written with eagergrad ops (double backward for free).

An optional tensor that is not given travels as an empty tensor, as in norm.py. The
running statistics of a training batch norm are updated in place WITHOUT a version bump,
as ATen's CPU kernel writes them. F.batch_norm / F.instance_norm / F.group_norm live in
nn/_functional/normalization.py.
"""
import jax
import jax.numpy as jnp

from .. import _dtypes as D
from ..engine.grad_mode import STATE, no_grad
from .._mode import FUNC
from ..tensor import Tensor
from ._table import call_op, defop, derive
from .norm import _empty, _given, _optional_meta


def _check_float(input, kernel):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")


def _check_param_dtype(input, *params):
    for p in params:
        if p is not None and p.dtype is not input.dtype and \
                input.dtype not in (D.float16, D.bfloat16):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{input.dtype.scalar_name}")


# ---- native_batch_norm ---------------------------------------------------------------------
def _bshape(ndim, c):
    return (1, c) + (1,) * (ndim - 2)


def _axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _bn_k(input, weight, bias, running_mean, running_var, training, eps):
    c = input.shape[1]
    s, axes = _bshape(input.ndim, c), _axes(input.ndim)
    if training:
        mean = jnp.mean(input, axes)
        d = input - mean.reshape(s)
        invstd = 1 / jnp.sqrt(jnp.mean(d * d, axes) + jnp.asarray(eps, input.dtype))
        out = d * invstd.reshape(s)
    else:
        mean = invstd = jnp.zeros((0,), input.dtype)
        inv = 1 / jnp.sqrt(running_var + jnp.asarray(eps, running_var.dtype))
        out = ((input - running_mean.reshape(s)) * inv.reshape(s)).astype(input.dtype)
    if _given(weight, (c,)):
        out = out * weight.reshape(s)
    if _given(bias, (c,)):
        out = out + bias.reshape(s)
    return out.astype(input.dtype), mean, invstd  # (half input, float parameters)


def _bn_stats(input, result1, result2, eps):
    """The saved batch mean and invstd, carrying their dependence on the input for
    higher order (as norm.py's _stats), shaped to broadcast."""
    s, axes = _bshape(input.ndim, input.shape[1]), _axes(input.ndim)
    if not STATE.grad:  # an ordinary (unrecorded) backward: no higher order to carry
        return result1.reshape(s), result2.reshape(s)
    m = input.mean(axes, keepdim=True)
    c = input - m
    r = ((c * c).mean(axes, keepdim=True) + eps).rsqrt()
    return result1.reshape(s) + (m - m.detach()), result2.reshape(s) + (r - r.detach())


def _bn_xhat(input, running_mean, running_var, result1, result2, training, eps):
    s = _bshape(input.ndim, input.shape[1])
    if training:
        mean, invstd = _bn_stats(input, result1, result2, eps)
    else:
        mean, invstd = running_mean.reshape(s), (running_var.reshape(s) + eps).rsqrt()
    return (input - mean) * invstd, invstd


def _bn_input_back(grad, input, weight, running_mean, running_var, result1, result2,
                   training, eps):
    c = input.shape[1]
    s, axes = _bshape(input.ndim, c), _axes(input.ndim)
    g = grad * weight.reshape(s) if _given(weight, (c,)) else grad
    xhat, invstd = _bn_xhat(input, running_mean, running_var, result1, result2, training, eps)
    if not training:
        return g * invstd
    # invstd * (g - mean(g) - xhat * mean(g * xhat)), per channel
    return invstd * (g - g.mean(axes, keepdim=True) - xhat * (g * xhat).mean(axes, keepdim=True))


def _bn_weight_back(grad, input, running_mean, running_var, result1, result2, training, eps):
    xhat, _ = _bn_xhat(input, running_mean, running_var, result1, result2, training, eps)
    return (grad * xhat).sum(_axes(input.ndim))


BATCH_NORM = defop(
    "native_batch_norm", _bn_k,
    inputs=("input", "weight", "bias", "running_mean", "running_var"),
    attrs=("training", "eps"), outputs=("result", "result1", "result2"), nondiff=(1, 2),
    saved_meta=_optional_meta(("weight", 1), ("running_mean", 3), ("running_var", 4)),
    input=_bn_input_back, weight=_bn_weight_back,
    bias=lambda grad, input: grad.sum(_axes(input.ndim)))

def _update_k(input, rm, rv, momentum):
    axes = _axes(input.ndim)
    n = input.size // input.shape[1]
    mean = jnp.mean(input, axes)
    d = input - mean.reshape(_bshape(input.ndim, input.shape[1]))
    var = jnp.sum(d * d, axes) / (n - 1)  # unbiased, as ATen's running_var
    m = momentum.astype(rm.dtype)
    return (m * mean.astype(rm.dtype) + (1 - m) * rm,
            m * var.astype(rv.dtype) + (1 - m) * rv)


_UPDATE = jax.jit(_update_k)


def _update_running(input, running_mean, running_var, momentum):
    """ATen's in-place update of the running stats (no version bump); momentum may be
    a tensor (a traced 1 / num_batches_tracked stays traced)."""
    mom = momentum._value if isinstance(momentum, Tensor) else \
        jnp.asarray(momentum, jnp.float64)
    rm, rv = _UPDATE(input._value, running_mean._value, running_var._value, mom)
    if FUNC.levels:  # (vmap: a batched update of unbatched stats raises BatchNorm's error)
        FUNC.levels[-1].stats.update((id(running_mean._storage), id(running_var._storage)))
    running_mean._write(rm)
    running_var._write(rv)


def _check_numel(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps, _op=None):
    """torch.native_batch_norm: (output, save_mean, save_invstd); in training the batch
    statistics are used (and returned) and running_mean / running_var, if given, are
    updated in place; in eval the running statistics are used and save_mean /
    save_invstd are empty.

    >>> import eagergrad as torch
    >>> torch.native_batch_norm(torch.tensor([[1.0], [3.0]]), None, None, None, None,
    ...                         True, 0.1, 0.0)[0]
    tensor([[-1.],
            [ 1.]])
    """
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1)")
    _check_float(input, "batch_norm")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        _check_numel(name, t, c)
    _check_param_dtype(input, weight, bias, running_mean, running_var)
    if not training:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
    if training and input.numel() == 0:
        raise RuntimeError("input tensor must have at least one element, but got "
                           f"input_sizes = {_shape_str(input.shape)}")
    e = _empty(input)
    out = call_op(_op or BATCH_NORM, tuple(e if t is None else t for t in (
        input, weight, bias, running_mean, running_var)), (bool(training), float(eps)))
    if training and running_mean is not None and running_var is not None:
        _update_running(input, running_mean, running_var, momentum)
    return out


LEGIT = derive(BATCH_NORM, "native_batch_norm_legit", "NativeBatchNormLegitBackward0")
LEGIT_NO_STATS = derive(BATCH_NORM, "native_batch_norm_legit_no_stats",
                        "NativeBatchNormLegitBackward1")


def _native_batch_norm_legit(input, weight, bias, *args):
    """torch._native_batch_norm_legit(input, weight, bias, running_mean, running_var,
    training, momentum, eps), or without the running stats (training, momentum, eps):
    native_batch_norm's results under torch's NativeBatchNormLegitBackward0 / ...1.

    >>> import eagergrad as torch
    >>> torch._native_batch_norm_legit(torch.tensor([[1.0], [3.0]]), None, None, True,
    ...                                0.1, 0.0)[0]
    tensor([[-1.],
            [ 1.]])
    """
    if len(args) == 3:
        return native_batch_norm(input, weight, bias, None, None, *args, _op=LEGIT_NO_STATS)
    return native_batch_norm(input, weight, bias, *args, _op=LEGIT)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=True):
    """torch.batch_norm: native_batch_norm's output (one NativeBatchNormBackward0 on CPU).

    >>> import eagergrad as torch
    >>> torch.batch_norm(torch.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1,
    ...                  0.0, False)
    tensor([[-1.],
            [ 1.]])
    """
    if (running_mean is None) != (running_var is None) and training:
        raise ValueError("running_mean and running_var must either both be None or "
                         "neither be None")
    if input.numel() == 0:
        if input.ndim < 2:
            native_batch_norm(input, weight, bias, running_mean, running_var, training,
                              momentum, eps)  # (its error)
        # ATen's _batch_norm_impl_index: a clone (not a view), times weight[0] plus bias[0]
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


# ---- repeat (instance norm's weight, bias and running stats) -------------------------------
def _repeat_k(self, self_sym_sizes, repeats):
    lead = len(repeats) - self.ndim
    return jnp.tile(self.reshape((1,) * lead + self.shape), repeats)


def _repeat_back(grad, self_sym_sizes, repeats):
    lead = len(repeats) - len(self_sym_sizes)
    sizes = (1,) * lead + tuple(self_sym_sizes)
    split = [d for r, s in zip(repeats, sizes) for d in (r, s)]
    g = grad.reshape(split).sum(tuple(range(0, 2 * len(sizes), 2)))
    return g.reshape(self_sym_sizes)


REPEAT = defop("repeat", _repeat_k, attrs=("self_sym_sizes", "repeats"), self=_repeat_back)


def repeat(self, *sizes):
    """Tensor.repeat: the tensor tiled `sizes[i]` times along dim i (leading new dims when
    there are more sizes than dims); one RepeatBackward0. (Here beside instance norm,
    its user.)

    >>> import eagergrad as torch
    >>> torch.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    sizes = tuple(int(r) for r in sizes)
    if len(sizes) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                           "number of dimensions of tensor")
    shape = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
    out = [r * s for r, s in zip(sizes, shape)]
    for n in out:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{_shape_str(out)}")
    return call_op(REPEAT, (self,), (tuple(self.shape), sizes))


_repeat = repeat


# ---- native_group_norm ---------------------------------------------------------------------
def _gn_k(input, weight, bias, N, C, HxW, group, eps):
    x = input.reshape(N, group, (C // group) * HxW)
    mean = jnp.mean(x, -1)
    d = x - mean[..., None]
    rstd = 1 / jnp.sqrt(jnp.mean(d * d, -1) + jnp.asarray(eps, input.dtype))
    out = (d * rstd[..., None]).reshape(input.shape)
    s = _bshape(input.ndim, C)
    if _given(weight, (C,)):
        out = out * weight.reshape(s)
    if _given(bias, (C,)):
        out = out + bias.reshape(s)
    return out, mean, rstd


def _gn_parts(input, result1, result2, N, C, HxW, group, eps):
    """The input as (N, group, rest), its mean and rstd (differentiable outputs: under
    create_graph their dependence on the input goes through this node again)."""
    x = input.reshape(N, group, (C // group) * HxW)
    return x, result1.unsqueeze(-1), result2.unsqueeze(-1)


def _gn_input_back(grads, input, weight, result1, result2, N, C, HxW, group, eps):
    grad, gmean, grstd = grads
    x, mean, rstd = _gn_parts(input, result1, result2, N, C, HxW, group, eps)
    g = grad * weight.reshape(_bshape(input.ndim, C)) if _given(weight, (C,)) else grad
    g = g.reshape(x.shape)
    xhat = (x - mean) * rstd
    gi = rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    # mean and rstd are differentiable outputs too (torch's infinitely_differentiable_
    # native_group_norm_backward): d mean / dx = 1 / M, d rstd / dx = -rstd^2 xhat / M
    m = x.shape[-1]
    gi = gi + (gmean.unsqueeze(-1) - grstd.unsqueeze(-1) * rstd * rstd * xhat) / m
    return gi.reshape(input.shape)


def _gn_weight_back(grad, input, result1, result2, N, C, HxW, group, eps):
    x, mean, rstd = _gn_parts(input, result1, result2, N, C, HxW, group, eps)
    xhat = ((x - mean) * rstd).reshape(input.shape)
    return (grad * xhat).sum(_axes(input.ndim))


GROUP_NORM = defop(
    "native_group_norm", _gn_k, inputs=("input", "weight", "bias"),
    attrs=("N", "C", "HxW", "group", "eps"), outputs=("result", "result1", "result2"),
    saved_meta=_optional_meta(("weight", 1)),
    input=_gn_input_back, weight=_gn_weight_back,
    bias=lambda grad, input: grad.sum(_axes(input.ndim)))


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """torch.native_group_norm: (output, mean, rstd), the statistics of shape (N, group)
    (all three differentiable, as torch's).

    >>> import eagergrad as torch
    >>> torch.native_group_norm(torch.tensor([[1.0, 3.0]]), None, None, 1, 2, 1, 1, 0.0)[0]
    tensor([[-1.,  1.]])
    """
    _check_float(input, "GroupNormKernelImpl")
    _check_param_dtype(input, weight, bias)
    e = _empty(input)
    return call_op(GROUP_NORM, (input, e if weight is None else weight,
                                e if bias is None else bias),
                   (int(N), int(C), int(HxW), int(group), float(eps)))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """torch.group_norm: normalize each group of num_groups channels per sample.

    >>> import eagergrad as torch
    >>> torch.group_norm(torch.tensor([[1.0, 3.0]]), 1, eps=0.0)
    tensor([[-1.,  1.]])
    """
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_shape_str(input.shape)} "
                           f"and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{_shape_str(t.shape)} and input of shape "
                               f"{_shape_str(input.shape)}")
    hxw = 1
    for s in input.shape[2:]:
        hxw *= s
    return native_group_norm(input.contiguous(), weight, bias, n, c, hxw, num_groups, eps)[0]


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled=True):
    """torch.instance_norm: batch norm of the input viewed as (1, N * C, ...), the weight,
    bias and running stats repeated N times; running stats get the mean over the batch.

    >>> import eagergrad as torch
    >>> torch.instance_norm(torch.tensor([[[1.0, 3.0]]]), None, None, None, None, True,
    ...                     0.1, 0.0, False)
    tensor([[[-1.,  1.]]])
    """
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    shape = (1, b * c) + tuple(input.shape[2:])
    w, bi, rm, rv = (None if t is None else _repeat(t, b)
                     for t in (weight, bias, running_mean, running_var))
    out = batch_norm(input.contiguous().view(shape), w, bi, rm, rv, use_input_stats,
                     momentum, eps, cudnn_enabled)
    if use_input_stats:
        with no_grad():
            # (ATen copies through an alias of the const tensors: one version bump each)
            if running_mean is not None:
                running_mean.copy_(rm.view(b, c).mean(0))
            if running_var is not None:
                running_var.copy_(rv.view(b, c).mean(0))
    return out.view(tuple(input.shape))
