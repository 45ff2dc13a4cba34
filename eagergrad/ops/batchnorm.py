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
import numpy as np
from jax import lax

from .. import _dtypes as D
from ..engine.grad_mode import STATE, no_grad
from .._mode import FUNC
from ..tensor import Tensor, _make
from ._args import no_out
from .reduce import _acc_dtype, _mean_k
from ._table import call_op, defop, derive
from .norm import _empty, _given, _optional_meta
from .scatter import _grad_edges_only


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
        mean = _mean_k(input, axes)
        d = input - mean.reshape(s)
        invstd = 1 / jnp.sqrt(_mean_k(d * d, axes) + jnp.asarray(eps, input.dtype))
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
    mean = _mean_k(input, axes)
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
    mean = _mean_k(x, -1)
    d = x - mean[..., None]
    rstd = 1 / jnp.sqrt(_mean_k(d * d, -1) + jnp.asarray(eps, input.dtype))
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


# ---- SyncBatchNorm's primitives (ATen's CUDA kernels, cuda/Normalization.cu and .cuh) ----
# torch on CPU has only batch_norm_update_stats; the other six run on CUDA. eagergrad runs
# all seven with the CUDA kernels' math, result dtypes (the accumulate type: float32 for
# half / bfloat16) and checks. None has a formula in derivatives.yaml: torch records their
# outputs under a NotImplemented node that fails in backward, and so does eagergrad.
def _nyi(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


def _acc(dt):
    """at::acc_type(dt, /*is_cuda=*/true) of a floating dtype."""
    return D.float32 if dt in (D.float16, D.bfloat16) else dt


def _rows(x):
    """(N, C, -1): the CUDA kernels' view of an input."""
    return x.reshape(x.shape[0], x.shape[1], -1)


def _check_kernel(dt, kernel):
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


def _expect(name, t, dt):
    """A kernel accessor's dtype check (get_packed_accessor)."""
    if t is not None and t.dtype is not dt:
        raise RuntimeError(f"Expected {name} to have type {dt.scalar_name} but got "
                           f"{t.dtype.scalar_name}")


def _same_stats_dtype(mean, invstd):
    if mean.dtype is not invstd.dtype:
        raise RuntimeError("mean and invstd need to have the same data types")


def _moments(x):
    """Per-channel mean and biased variance of x (N, C, M)."""
    mean = _mean_k(x, (0, 2))
    d = x - mean[None, :, None]
    return mean, _mean_k(d * d, (0, 2))


def _cuda_input(name, input, grad_out=None):
    """The CUDA kernels' (N, C, -1) view of the input (and grad_out): torch's IndexError
    below 2 dims, reshape's error for grad_out; an empty input is not implemented."""
    n, c = input.size(0), input.size(1)
    if input.numel() == 0:
        raise NotImplementedError(f"eagergrad does not implement torch.{name} of an empty "
                                  "input")
    if grad_out is not None and grad_out.numel() != input.numel():
        raise RuntimeError(f"shape '[{n}, {c}, -1]' is invalid for input of size "
                           f"{grad_out.numel()}")
    return c


def _stats_k(input, eps):
    mean, var = _moments(_rows(input).astype(_acc_dtype(input.dtype)))
    # (the InvStd transform: 0 for a zero variance with eps 0)
    invstd = jnp.where((var != 0) | (eps != 0), 1 / jnp.sqrt(var + eps), 0)
    return mean, invstd.astype(mean.dtype)


BN_STATS = defop("batch_norm_stats", _stats_k, inputs=("input",), attrs=("eps",),
                 dynamic=("eps",), outputs=("result0", "result1"), node="NotImplemented",
                 input=_nyi("batch_norm_stats"))


def _float_attr(v, name, fn, pos):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be float, not "
                        f"{type(v).__name__}")
    return float(v)


def batch_norm_stats(input, eps):
    """torch.batch_norm_stats (CUDA): the per-channel (mean, invstd) of `input` (N, C, ...),
    invstd = 1 / sqrt(biased variance + eps), in the accumulate dtype.

    >>> import eagergrad as torch
    >>> torch.batch_norm_stats(torch.tensor([[1.0], [3.0]]), 0.0)
    (tensor([2.]), tensor([1.]))
    """
    eps = _float_attr(eps, "eps", "batch_norm_stats", 2)
    _cuda_input("batch_norm_stats", input)
    _check_kernel(input.dtype, "batch_norm_stats_cuda")
    return _grad_edges_only(call_op(BN_STATS, (input,), (eps,)))


def _elemt_k(input, weight, bias, mean, invstd, eps):
    c = input.shape[1]
    s = _bshape(input.ndim, c)
    acc = _acc_dtype(input.dtype)
    out = (input.astype(acc) - mean.reshape(s).astype(acc)) * invstd.reshape(s).astype(acc)
    if _given(weight, (c,)):
        out = out * weight.reshape(s).astype(acc)
    if _given(bias, (c,)):
        out = out + bias.reshape(s).astype(acc)
    return out.astype(input.dtype)


_ELEMT_IN = ("input", "weight", "bias", "mean", "invstd")
BN_ELEMT = defop("batch_norm_elemt", _elemt_k, inputs=_ELEMT_IN, attrs=("eps",),
                 dynamic=("eps",), node="NotImplemented",
                 **dict.fromkeys(_ELEMT_IN, _nyi("batch_norm_elemt")))


def _stat_dtype(input_dt, *params):
    """The kernels' stat_scalar_t: the input's dtype, or its accumulate type when the
    first given parameter has another dtype (mixed type)."""
    first = next((p.dtype for p in params if p is not None), None)
    return _acc(input_dt) if first is not None and first is not input_dt else input_dt


def batch_norm_elemt(input, weight, bias, mean, invstd, eps, *, out=None):
    """torch.batch_norm_elemt (CUDA): (input - mean) * invstd * weight + bias per channel
    (eps is not used), in the input's dtype.

    >>> import eagergrad as torch
    >>> torch.batch_norm_elemt(torch.tensor([[1.0], [3.0]]), None, torch.tensor([1.0]),
    ...                        torch.tensor([2.0]), torch.tensor([0.5]), 1e-5)
    tensor([[0.5000],
            [1.5000]])
    """
    no_out(out, "batch_norm_elemt")
    eps = _float_attr(eps, "eps", "batch_norm_elemt", 6)
    c = _cuda_input("batch_norm_elemt", input)
    _check_kernel(input.dtype, "batch_norm_elementwise_cuda")
    stat = _stat_dtype(input.dtype, weight, bias)
    for name, t, dt in (("weight", weight, stat), ("bias", bias, stat),
                        ("mean", mean, _acc(stat)), ("invstd", invstd, _acc(stat))):
        _expect(name, t, dt)
    for name, t in (("weight", weight), ("bias", bias), ("mean", mean), ("invstd", invstd)):
        _check_numel(name, t, c)
    e = _empty(input)
    return _grad_edges_only(call_op(BN_ELEMT, (input, e if weight is None else weight,
                                               e if bias is None else bias, mean, invstd),
                                    (eps,)))


def _merge(mean, invstd, counts, eps):
    """batch_norm_reduce_statistics_kernel: the Welford merge of W (mean, invstd, count)
    rows, in order: (mean, sum of squared deviations, count); the count is the kernel's
    integer (each partial sum truncated)."""
    def step(carry, row):
        avg, var_n, n = carry
        m, istd, cnt = row
        v = 1 / istd
        v = (v * v - eps) * cnt
        factor = 1 / (n + cnt)
        var_n = var_n + v + (avg - m) * (avg - m) * n * cnt * factor
        avg = n * factor * avg + cnt * factor * m
        return (avg, var_n, jnp.trunc(n + cnt)), None

    acc = mean.dtype
    cnt = jnp.broadcast_to(counts.astype(acc)[:, None], mean.shape)
    zero = jnp.zeros(mean.shape[1:], acc)
    (avg, var_n, n), _ = lax.scan(step, (zero, zero, zero), (mean, invstd.astype(acc), cnt))
    return avg, var_n, n


def _gather_out(mean, invstd, counts, eps):
    avg, var_n, n = _merge(mean, invstd, counts, eps)
    return avg, (1 / jnp.sqrt(var_n / n + eps)).astype(avg.dtype)


def _gather_running(mean, invstd, counts, running_mean, running_var, momentum, eps):
    avg, var_n, n = _merge(mean, invstd, counts, eps)
    m = momentum.astype(avg.dtype)
    return (((1 - m) * running_mean.astype(avg.dtype) + m * avg).astype(running_mean.dtype),
            ((1 - m) * running_var.astype(avg.dtype) + m * var_n / (n - 1))
            .astype(running_var.dtype))


_GATHER_RUNNING = jax.jit(_gather_running)


def _gather_k(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    c = mean.shape[1]
    dt = running_mean.dtype if _given(running_mean, (c,)) else input.dtype
    return _gather_out(mean, invstd, jnp.full((mean.shape[0],), count, dt), eps)


_GATHER_IN = ("input", "mean", "invstd", "running_mean", "running_var")
BN_GATHER = defop(
    "batch_norm_gather_stats", _gather_k, inputs=_GATHER_IN,
    attrs=("momentum", "eps", "count"), dynamic=("momentum", "eps", "count"),
    outputs=("result0", "result1"), node="NotImplemented",
    **dict.fromkeys(_GATHER_IN, _nyi("batch_norm_gather_stats")))
BN_GATHER_COUNTS = defop(
    "batch_norm_gather_stats_with_counts",
    lambda input, mean, invstd, running_mean, running_var, counts, momentum, eps:
    _gather_out(mean, invstd, counts, eps),
    inputs=_GATHER_IN + ("counts",), attrs=("momentum", "eps"), dynamic=("momentum", "eps"),
    outputs=("result0", "result1"), node="NotImplemented",
    **dict.fromkeys(_GATHER_IN + ("counts",), _nyi("batch_norm_gather_stats_with_counts")))


def _gather(name, input, mean, invstd, running_mean, running_var, momentum, eps, counts,
            count=None):
    momentum = _float_attr(momentum, "momentum", name, 6)
    eps = _float_attr(eps, "eps", name, 7)
    scalar = (running_mean if running_mean is not None else input).dtype
    _check_kernel(scalar, "batch_norm_update_stats_cuda")
    w, c = mean.size(0), mean.size(1)
    # (the kernel reads (W, C) statistics, W counts and C running statistics)
    if tuple(invstd.shape) != (w, c):
        raise RuntimeError(f"invstd should have shape [{w}, {c}] as mean, but got "
                           f"{_shape_str(invstd.shape)}")
    if counts is not None and counts.numel() != w:
        raise RuntimeError(f"counts should contain {w} elements not {counts.numel()}")
    for nm, t in (("running_mean", running_mean), ("running_var", running_var)):
        _check_numel(nm, t, c)
    acc = _acc(scalar)
    # (torch's accessor for running_var is named "running_mean")
    for nm, t, dt in (("mean", mean, acc), ("invstd", invstd, acc),
                      ("running_mean", running_var, scalar)):
        _expect(nm, t, dt)
    if counts is None:  # (host-made: no compile)
        counts = _make(jnp.asarray(np.full(mean.shape[0], count, scalar.np)))
    _expect("counts", counts, scalar)
    e = _empty(input)
    rm, rv = (e if t is None else t for t in (running_mean, running_var))
    if count is None:
        out = call_op(BN_GATHER_COUNTS, (input, mean, invstd, rm, rv, counts),
                      (momentum, eps))
    else:
        out = call_op(BN_GATHER, (input, mean, invstd, rm, rv), (momentum, eps, count))
    if running_mean is not None or running_var is not None:
        new_rm, new_rv = _GATHER_RUNNING(mean._value, invstd._value, counts._value,
                                         (rm if running_mean is not None else
                                          running_var)._value,
                                         (rv if running_var is not None else
                                          running_mean)._value,
                                         jnp.asarray(momentum, jnp.float64), eps)
        _write_stats(((running_mean, new_rm), (running_var, new_rv)))
    return _grad_edges_only(out)


def _write_stats(pairs):
    """In-place writes of running statistics, without a version bump (ATen's kernels
    write them through their data pointers)."""
    pairs = [(t, a) for t, a in pairs if t is not None]
    if FUNC.levels:  # (vmap: a batched update of unbatched stats raises BatchNorm's error)
        FUNC.levels[-1].stats.update(id(t._storage) for t, _ in pairs)
    for t, a in pairs:
        t._write(a)


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    """torch.batch_norm_gather_stats (CUDA): the global (mean, invstd) of W per-process
    statistics `mean`, `invstd` (W, C), each over `count` elements; running_mean /
    running_var (if given) updated in place with momentum (the unbiased variance).

    >>> import eagergrad as torch
    >>> torch.batch_norm_gather_stats(torch.zeros(2, 1), torch.tensor([[1.0], [3.0]]),
    ...                               torch.tensor([[1.0], [1.0]]), None, None, 0.1, 0.0, 1)
    (tensor([2.]), tensor([0.7071]))
    """
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError("batch_norm_gather_stats(): argument 'count' (position 8) must be "
                        f"int, not {type(count).__name__}")
    return _gather("batch_norm_gather_stats", input, mean, invstd, running_mean, running_var,
                   momentum, eps, None, count)


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    """torch.batch_norm_gather_stats_with_counts (CUDA): batch_norm_gather_stats with a
    count per row of `mean` / `invstd` (as SyncBatchNorm gathers them).

    >>> import eagergrad as torch
    >>> torch.batch_norm_gather_stats_with_counts(
    ...     torch.zeros(2, 1), torch.tensor([[1.0], [4.0]]), torch.tensor([[1.0], [1.0]]),
    ...     None, None, 0.1, 0.0, torch.tensor([2.0, 1.0]))
    (tensor([2.]), tensor([0.5774]))
    """
    return _gather("batch_norm_gather_stats_with_counts", input, mean, invstd, running_mean,
                   running_var, momentum, eps, counts)


def _back_reduce_k(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """The requested results only (torch numbers its node's outputs among the defined)."""
    c = input.shape[1]
    acc = mean.dtype
    g = grad_out.reshape(_rows(input).shape).astype(acc)
    xmu = _rows(input).astype(acc) - mean.reshape(1, c, 1)
    sum_dy, sum_dy_xmu = jnp.sum(g, (0, 2)), jnp.sum(g * xmu, (0, 2))
    out = (sum_dy, sum_dy_xmu) if input_g else ()
    if weight_g:
        out += ((sum_dy_xmu * invstd.astype(acc)).astype(weight.dtype),)
    if bias_g:
        out += (sum_dy.astype(weight.dtype),)
    return out


_BACK_REDUCE_IN = ("grad_out", "input", "mean", "invstd", "weight")
BN_BACK_REDUCE = defop("batch_norm_backward_reduce", _back_reduce_k, inputs=_BACK_REDUCE_IN,
                       attrs=("input_g", "weight_g", "bias_g"),
                       outputs=("result0", "result1"), node="NotImplemented",
                       **dict.fromkeys(_BACK_REDUCE_IN, _nyi("batch_norm_backward_reduce")))


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    """torch.batch_norm_backward_reduce (CUDA): per channel (sum_dy, sum_dy_xmu,
    grad_weight, grad_bias) = (sum(g), sum(g * (x - mean)), sum_dy_xmu * invstd, sum_dy);
    the first two only if input_g, the others only if weight_g / bias_g (else None).

    >>> import eagergrad as torch
    >>> torch.batch_norm_backward_reduce(torch.tensor([[1.0], [2.0]]),
    ...     torch.tensor([[0.0], [2.0]]), torch.tensor([1.0]), torch.tensor([2.0]),
    ...     torch.tensor([1.0]), True, True, False)
    (tensor([3.]), tensor([1.]), tensor([2.]), None)
    """
    c = _cuda_input("batch_norm_backward_reduce", input, grad_out)
    _check_kernel(grad_out.dtype, "batch_norm_backward_reduce")
    _same_stats_dtype(mean, invstd)
    stat = _stat_dtype(grad_out.dtype, weight)
    _expect("input", input, grad_out.dtype)
    if weight is None and (weight_g or bias_g):
        raise RuntimeError("tensor does not have a device")  # (weight.options(), undefined)
    for name in ("grad_weight", "grad_bias"):
        _expect(name, weight, stat)
    _expect("mean", mean, _acc(stat))
    _expect("invstd", invstd, _acc(stat))
    _check_numel("mean", mean, c)
    _check_numel("invstd", invstd, c)
    keep = (bool(input_g), bool(input_g), bool(weight_g), bool(bias_g))
    if not any(keep):
        return (None,) * 4
    out = iter(_grad_edges_only(call_op(BN_BACK_REDUCE, (
        grad_out, input, mean, invstd, _empty(input) if weight is None else weight),
        keep[1:])))
    return tuple(next(out) if k else None for k in keep)


def _back_elemt_k(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    c = input.shape[1]
    acc = mean.dtype
    s = (1, c, 1)
    norm = 1 / jnp.sum(count.astype(jnp.int64)).astype(acc)
    istd = invstd.astype(acc).reshape(s)
    w = weight.reshape(s).astype(acc) if _given(weight, (c,)) else jnp.ones((), acc)
    factor_1 = istd * istd * sum_dy_xmu.astype(acc).reshape(s) * norm
    m_dy = sum_dy.astype(acc).reshape(s) * norm
    gi = (grad_out.reshape(_rows(input).shape).astype(acc) - m_dy -
          (_rows(input).astype(acc) - mean.reshape(s)) * factor_1) * (w * istd)
    return gi.astype(input.dtype).reshape(input.shape)


_BACK_ELEMT_IN = ("grad_out", "input", "mean", "invstd", "weight", "sum_dy", "sum_dy_xmu",
                  "count")
BN_BACK_ELEMT = defop("batch_norm_backward_elemt", _back_elemt_k, inputs=_BACK_ELEMT_IN,
                      node="NotImplemented",
                      **dict.fromkeys(_BACK_ELEMT_IN[:-1], _nyi("batch_norm_backward_elemt")))


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    """torch.batch_norm_backward_elemt (CUDA): batch norm's input gradient from the reduced
    sum_dy and sum_dy_xmu over all processes' elements (the sum of the int32 `count`):
    (g - sum_dy / n - (x - mean) * invstd^2 * sum_dy_xmu / n) * weight * invstd.

    >>> import eagergrad as torch
    >>> torch.batch_norm_backward_elemt(torch.tensor([[1.0], [2.0]]),
    ...     torch.tensor([[0.0], [2.0]]), torch.tensor([1.0]), torch.tensor([1.0]), None,
    ...     torch.tensor([3.0]), torch.tensor([1.0]), torch.tensor([2], dtype=torch.int32))
    tensor([[0.],
            [0.]])
    """
    c = _cuda_input("batch_norm_backward_elemt", input, grad_out)
    _check_kernel(grad_out.dtype, "batch_norm_backward_elemt")
    _same_stats_dtype(mean, invstd)
    stat = _acc(grad_out.dtype) if grad_out.dtype in (D.float16, D.bfloat16) and \
        mean.dtype is D.float32 else grad_out.dtype
    _expect("input", input, grad_out.dtype)
    for name, t, dt in (("mean", mean, _acc(stat)), ("invstd", invstd, _acc(stat)),
                        ("weight", weight, stat), ("sum_dy", sum_dy, _acc(stat)),
                        ("sum_dy_xmu", sum_dy_xmu, _acc(stat))):
        _expect(name, t, dt)
    if count.dtype is not D.int32:
        raise RuntimeError(f"expected scalar type Int but found {count.dtype.scalar_name}")
    for name, t in (("mean", mean), ("invstd", invstd), ("weight", weight),
                    ("sum_dy", sum_dy), ("sum_dy_xmu", sum_dy_xmu)):
        _check_numel(name, t, c)
    return _grad_edges_only(call_op(BN_BACK_ELEMT, (
        grad_out, input, mean, invstd, _empty(input) if weight is None else weight, sum_dy,
        sum_dy_xmu, count)))


def _opmath(dt):
    return jnp.float64 if dt == jnp.float64 else jnp.float32


def _update_stats_k(input, running_mean, running_var, momentum):
    c = input.shape[1]
    out_dt = running_mean.dtype if _given(running_mean, (c,)) else \
        running_var.dtype if _given(running_var, (c,)) else input.dtype
    mean, var = _moments(_rows(input).astype(_opmath(input.dtype)))
    return mean.astype(out_dt), var.astype(out_dt)


def _update_stats_running(input, running_mean, running_var, momentum):
    """ATen's CPU update: momentum * mean + (1 - momentum) * running (the unbiased
    variance), the statistics in the input's opmath type."""
    x = _rows(input).astype(_opmath(input.dtype))
    n = x.shape[0] * x.shape[2]
    mean = _mean_k(x, (0, 2))
    d = x - mean[None, :, None]
    var = jnp.sum(d * d, (0, 2)) / (n - 1)
    m = momentum.astype(x.dtype)
    return ((m * mean + (1 - m) * running_mean).astype(running_mean.dtype),
            (m * var + (1 - m) * running_var).astype(running_var.dtype))


_UPDATE_STATS_RUNNING = jax.jit(_update_stats_running)
_UPDATE_IN = ("input", "running_mean", "running_var")
BN_UPDATE_STATS = defop("batch_norm_update_stats", _update_stats_k, inputs=_UPDATE_IN,
                        attrs=("momentum",), dynamic=("momentum",),
                        outputs=("result0", "result1"), node="NotImplemented",
                        **dict.fromkeys(_UPDATE_IN, _nyi("batch_norm_update_stats")))


def _check_update_dtypes(input, params):
    """ATen's CPU checks: parameters of another dtype than the input (mixed type) must be
    float32 with a half / bfloat16 input; otherwise all share the input's dtype."""
    if not params:
        return
    if params[0].dtype is not input.dtype:
        if any(p.dtype is not D.float32 for p in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               "Float")
        if input.dtype not in (D.float16, D.bfloat16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    for p in params[1:]:
        if p.dtype is not params[0].dtype:
            raise RuntimeError(f"expected scalar type {params[0].dtype.scalar_name} but found "
                               f"{p.dtype.scalar_name}")


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """torch.batch_norm_update_stats: the per-channel (mean, biased variance) of `input`;
    running_mean / running_var (if given) updated in place with momentum (the unbiased
    variance), as a training batch norm updates them.

    >>> import eagergrad as torch
    >>> rm, rv = torch.zeros(1), torch.ones(1)
    >>> torch.batch_norm_update_stats(torch.tensor([[1.0], [3.0]]), rm, rv, 0.5)
    (tensor([2.]), tensor([1.]))
    >>> rm, rv
    (tensor([1.]), tensor([1.5000]))
    """
    momentum = _float_attr(momentum, "momentum", "batch_norm_update_stats", 4)
    _check_kernel(input.dtype, "batch_norm_update_stats_cpu")
    params = [t for t in (running_mean, running_var) if t is not None]
    _check_update_dtypes(input, params)
    c = input.size(1)
    if input.numel() == 0:
        raise RuntimeError("input tensor must have at least one element, but got "
                           f"input_sizes = {_shape_str(input.shape)}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        _check_numel(name, t, c)
    e = _empty(input)
    rm, rv = (e if t is None else t for t in (running_mean, running_var))
    out = call_op(BN_UPDATE_STATS, (input, rm, rv), (momentum,))
    if params:
        new_rm, new_rv = _UPDATE_STATS_RUNNING(
            input._value, (rm if running_mean is not None else rv)._value,
            (rv if running_var is not None else rm)._value, jnp.asarray(momentum, jnp.float64))
        _write_stats(((running_mean, new_rm), (running_var, new_rv)))
    return _grad_edges_only(out)
