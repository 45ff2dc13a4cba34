"""Samples for the batchnorm ops (merged into _samples.SAMPLES: lists under an existing op
name are appended to it), same format as _samples.py; SPECIAL: samples at their special
points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH).

Batch norm's running stats are inputs that need no grad: training updates them in place
(the sample's result does not read them), eval reads them. Feature / alpha dropout draw
random masks, so only their deterministic p = 1 case is a sample here;
tests/test_nn_batchnorm.py checks the random ones by their structure."""
import functools

from _samples import C, F, I, S, V  # noqa: F401

RV = {"lo": 0.5, "hi": 2.0, "rg": False}  # a running variance


def _bn(m, x, *args, training=True, eps=1e-5):
    w, b, rm, rv = (list(args) + [None] * 4)[:4]
    return m.nn.functional.batch_norm(x, rm, rv, w, b, training=training, eps=eps)


def _gn(m, x, *wb, groups=2, eps=1e-5):
    w, b = (list(wb) + [None, None])[:2]
    return m.nn.functional.group_norm(x, groups, w, b, eps)


SAMPLES = {
    "native_batch_norm": [
        S(_bn, F(4, 3, 2), F(3), F(3), name="training, weight, bias"),
        S(lambda m, x, rm, rv: _bn(m, x, None, None, rm, rv), F(5, 2), F(2, rg=False),
          F(2, **RV), name="training, running stats updated, 2-d"),
        S(lambda m, x, w, rm, rv: _bn(m, x, w, None, rm, rv, training=False), F(2, 3, 2, 2),
          F(3), F(3, rg=False), F(3, **RV), name="eval: the running stats, 4-d"),
    ],
    "native_batch_norm_legit": [
        S(lambda m, x, w, b, rm, rv: m._native_batch_norm_legit(x, w, b, rm, rv, True, 0.1,
                                                               1e-5),
          F(4, 3, 2), F(3), F(3), F(3, rg=False), F(3, **RV), name="training, running stats"),
        S(lambda m, x, w, rm, rv: m._native_batch_norm_legit(x, w, None, rm, rv, False, 0.1,
                                                            1e-5),
          F(2, 3, 2), F(3), F(3, rg=False), F(3, **RV), name="eval"),
    ],
    "native_batch_norm_legit_no_stats": [
        S(lambda m, x, w, b: m._native_batch_norm_legit(x, w, b, True, 0.1, 1e-5), F(4, 3, 2),
          F(3), F(3), name="no running stats"),
    ],
    "native_group_norm": [
        S(_gn, F(2, 4, 3), F(4), F(4), name="2 groups, weight, bias"),
        S(lambda m, x: m.native_group_norm(x, None, None, 3, 6, 1, 3, 1e-3), F(3, 6),
          name="torch.native_group_norm, 2-d, no affine: mean and rstd differentiable too"),
    ],
    "repeat": [
        S(lambda m, x: x.repeat(2, 1, 3), F(2, 3), name="Tensor.repeat, a new leading dim"),
        S(lambda m, x, w, b: m.nn.functional.instance_norm(x, weight=w, bias=b),
          F(2, 3, 4), F(3), F(3), name="instance_norm's weight and bias"),
    ],
}

SPECIAL = {
    "native_batch_norm": [
        S(lambda m, x, w, b: _bn(m, x, w, b),
          V([[1.5, 0.0], [1.5, 1.0], [1.5, 2.0]]), V([0.5, -1.0]), V([0.1, 0.2]),
          name="a constant channel: invstd = 1/sqrt(eps)"),
        S(lambda m, x, rm, rv: _bn(m, x, None, None, rm, rv, training=False, eps=0.0),
          V([[1.0, -1.0], [2.0, 4.0]]), V([0.5, 0.0], rg=False), V([4.0, 1.0], rg=False),
          name="eval, eps 0"),
    ],
    "native_group_norm": [
        S(lambda m, x, w: _gn(m, x, w, groups=2),
          V([[[1.0, 1.0], [1.0, 1.0], [0.0, 1.0], [2.0, 3.0]]]), V([0.5, -1.0, 2.0, 1.0]),
          name="a constant group: rstd = 1/sqrt(eps)"),
    ],
}

SMOOTH = {"repeat": "linear (a copy of its input): no special points"}
SMOOTH.update(dict.fromkeys(
    ("native_batch_norm_legit", "native_batch_norm_legit_no_stats"),
    "native_batch_norm's kernel and formulas under another node: its SPECIAL points"))


# ---- SyncBatchNorm's primitives ----------------------------------------------------------
# torch on CPU runs batch_norm_update_stats only; the other six have CUDA kernels alone.
# Under _CudaKernels, torch's own entry points (argument parsing, the NotImplemented node
# its autograd records, its backward error) run with these stand-ins for the CUDA kernels,
# written independently with torch ops from their definitions (cuda/Normalization.cuh):
# closed forms where the kernels merge sequentially (Welford).
@functools.cache
def _cuda_kernels():
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    def acc(dt):
        return torch.float32 if dt in (torch.float16, torch.bfloat16) else dt

    def rows(x):
        return x.reshape(x.shape[0], x.shape[1], -1)

    def per_channel(t, x):
        return t.reshape(1, -1, *([1] * (x.dim() - 2)))

    def stats(input, eps):
        var, mean = torch.var_mean(rows(input).to(acc(input.dtype)), (0, 2), correction=0)
        zero = (var == 0) & (eps == 0)
        return mean, torch.where(zero, torch.zeros_like(var), (var + eps).rsqrt())

    def elemt(input, weight, bias, mean, invstd, eps):
        out = (input.to(mean.dtype) - per_channel(mean, input)) * per_channel(invstd, input)
        if weight is not None:
            out = out * per_channel(weight, input)
        if bias is not None:
            out = out + per_channel(bias, input)
        return out.to(input.dtype)

    def with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
        c = counts.to(mean.dtype)[:, None]
        n = c.sum(0)
        avg = (c * mean).sum(0) / n
        var_n = (c * (invstd.pow(-2) - eps)).sum(0) + (c * (mean - avg) ** 2).sum(0)
        with torch.no_grad():  # (the kernel writes them: no version bump)
            if running_mean is not None:
                running_mean.data.copy_((1 - momentum) * running_mean + momentum * avg)
            if running_var is not None:
                running_var.data.copy_((1 - momentum) * running_var +
                                       momentum * var_n / (n - 1))
        return avg, (var_n / n + eps).rsqrt()

    def gather(input, mean, invstd, running_mean, running_var, momentum, eps, count):
        dt = (running_mean if running_mean is not None else input).dtype
        return with_counts(input, mean, invstd, running_mean, running_var, momentum, eps,
                           torch.full((mean.shape[0],), count, dtype=dt))

    def back_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
        g = rows(grad_out).to(mean.dtype)
        sum_dy = g.sum((0, 2))
        sum_dy_xmu = (g * (rows(input).to(mean.dtype) - mean[:, None])).sum((0, 2))
        return (sum_dy if input_g else None, sum_dy_xmu if input_g else None,
                (sum_dy_xmu * invstd).to(weight.dtype) if weight_g else None,
                sum_dy.to(weight.dtype, copy=True) if bias_g else None)

    def back_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
        n = count.sum().to(mean.dtype)
        w = per_channel(invstd if weight is None else weight * invstd, input)
        xhat_term = (input - per_channel(mean, input)) * per_channel(
            invstd * invstd * sum_dy_xmu / n, input)
        return ((grad_out - per_channel(sum_dy / n, input) - xhat_term) * w).to(input.dtype)

    aten = torch.ops.aten
    kernels = {aten.batch_norm_stats.default: stats, aten.batch_norm_elemt.default: elemt,
               aten.batch_norm_gather_stats.default: gather,
               aten.batch_norm_gather_stats_with_counts.default: with_counts,
               aten.batch_norm_backward_reduce.default: back_reduce,
               aten.batch_norm_backward_elemt.default: back_elemt}

    class CudaKernels(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return kernels.get(func, func)(*args, **(kwargs or {}))
    return CudaKernels


def _cuda(m, f, *args):
    """f(m, *args); with torch, under the CUDA kernels' stand-ins."""
    if m.__name__ != "torch":
        return f(m, *args)
    with _cuda_kernels()():
        return f(m, *args)


def _nyi(name):
    return f"derivative for aten::{name} is not implemented"


def _present(out):
    return tuple(o for o in out if o is not None)


STATS = {"lo": 0.5, "hi": 2.0}  # an invstd
SAMPLES.update({
    "batch_norm_stats": [
        S(lambda m, x: _cuda(m, lambda m: m.batch_norm_stats(x, 1e-5)), F(4, 3, 2),
          backward_error=_nyi("batch_norm_stats"), name="(mean, invstd)"),
        S(lambda m, x: _cuda(m, lambda m: m.batch_norm_stats(x, 0.0)), F(5, 2, rg=False),
          nondiff=True, name="2-d, eps 0"),
    ],
    "batch_norm_elemt": [
        S(lambda m, x, w, b, mean, istd: _cuda(
            m, lambda m: m.batch_norm_elemt(x, w, b, mean, istd, 1e-5)),
          F(4, 3, 2), F(3), F(3, rg=False), F(3, rg=False), F(3, rg=False, **STATS),
          backward_error=_nyi("batch_norm_elemt"), name="weight and bias"),
        S(lambda m, x, mean, istd: _cuda(
            m, lambda m: m.batch_norm_elemt(x, None, None, mean, istd, 1e-5)),
          F(2, 3, 2, 2, rg=False), F(3), F(3, **STATS),
          backward_error=_nyi("batch_norm_elemt"), name="no affine, 4-d, stats need grad"),
    ],
    "batch_norm_gather_stats_with_counts": [
        S(lambda m, x, mean, istd, rm, rv, counts: _cuda(
            m, lambda m: m.batch_norm_gather_stats_with_counts(
                x, mean, istd, rm, rv, 0.1, 1e-5, counts) + (rm * 1, rv * 1)),
          F(4, 3, rg=False), F(2, 3), F(2, 3, **STATS), F(3, rg=False), F(3, **RV),
          V([4.0, 6.0], rg=False), backward_error=_nyi("batch_norm_gather_stats_with_counts"),
          name="two processes, running stats updated"),
        S(lambda m, x, mean, istd: _cuda(
            m, lambda m: m.batch_norm_gather_stats_with_counts(
                x, mean, istd, None, None, 0.1, 1e-5, m.tensor([3.0, 1.0, 2.0],
                                                                dtype=x.dtype))),
          F(2, 2, rg=False), F(3, 2, rg=False), F(3, 2, rg=False, **STATS), nondiff=True,
          name="three processes, no running stats"),
    ],
    "batch_norm_gather_stats": [
        S(lambda m, x, mean, istd, rm, rv: _cuda(
            m, lambda m: m.batch_norm_gather_stats(x, mean, istd, rm, rv, 0.2, 1e-3, 5) +
            (rm * 1, rv * 1)),
          F(5, 3), F(2, 3), F(2, 3, **STATS), F(3, rg=False), F(3, **RV),
          backward_error=_nyi("batch_norm_gather_stats"),
          name="count 5 each, running stats updated"),
    ],
    "batch_norm_backward_reduce": [
        S(lambda m, g, x, mean, istd, w: _cuda(
            m, lambda m: m.batch_norm_backward_reduce(g, x, mean, istd, w, True, True, True)),
          F(4, 3, 2), F(4, 3, 2), F(3, rg=False), F(3, rg=False, **STATS), F(3, rg=False),
          backward_error=_nyi("batch_norm_backward_reduce"), name="all four"),
        S(lambda m, g, x, mean, istd, w: _cuda(
            m, lambda m: _present(m.batch_norm_backward_reduce(g, x, mean, istd, w, False,
                                                               True, False))),
          F(3, 2), F(3, 2, rg=False), F(2, rg=False), F(2, rg=False, **STATS), F(2),
          backward_error=_nyi("batch_norm_backward_reduce"),
          name="grad_weight only (output 2)"),
    ],
    "batch_norm_backward_elemt": [
        S(lambda m, g, x, mean, istd, w, sdy, sdyx, count: _cuda(
            m, lambda m: m.batch_norm_backward_elemt(g, x, mean, istd, w, sdy, sdyx, count)),
          F(4, 3, 2), F(4, 3, 2, rg=False), F(3, rg=False), F(3, rg=False, **STATS),
          F(3, rg=False), F(3, rg=False), F(3, rg=False), V([8, 4], "int32"),
          backward_error=_nyi("batch_norm_backward_elemt"), name="two processes' counts"),
        S(lambda m, g, x, mean, istd, sdy, sdyx, count: _cuda(
            m, lambda m: m.batch_norm_backward_elemt(g, x, mean, istd, None, sdy, sdyx,
                                                     count)),
          F(3, 2, rg=False), F(3, 2, rg=False), F(2, rg=False), F(2, rg=False, **STATS),
          F(2, rg=False), F(2, rg=False), V([3], "int32"), nondiff=True, name="no weight"),
    ],
    "batch_norm_update_stats": [
        S(lambda m, x, rm, rv: m.batch_norm_update_stats(x, rm, rv, 0.1) + (rm * 1, rv * 1),
          F(4, 3, 2), F(3, rg=False), F(3, **RV),
          backward_error=_nyi("batch_norm_update_stats"), name="running stats updated"),
        S(lambda m, x: m.batch_norm_update_stats(x, None, None, 0.3), F(5, 2),
          backward_error=_nyi("batch_norm_update_stats"), name="no running stats, 2-d"),
    ],
})
SMOOTH.update(dict.fromkeys(
    ("batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
     "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
     "batch_norm_backward_elemt", "batch_norm_update_stats"),
    "no derivative (torch's NotImplemented node): the 0/1 sweep covers the forward"))
