"""torch.nn.utils.clip_grad: clip_grad_norm_, clip_grad_value_, get_total_norm,
clip_grads_with_norm_ (gradients scaled in place, under no_grad, as torch's foreach path on
CPU does it)."""
import functools
import types
import warnings

from ...creation import tensor as _tensor
from ...engine.grad_mode import no_grad
from ...ops.pointwise import clamp
from ...ops.reduce import vector_norm
from ...ops.shape import stack
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)
    return wrapper


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (as if concatenated into one vector).

    >>> import eagergrad as torch
    >>> torch.nn.utils.get_total_norm([torch.tensor([3.0]), torch.tensor([4.0])])
    tensor(5.)
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _tensor(0.0)
    # (torch groups by dtype for its foreach norm; the norms come out in that order)
    groups = {}
    for t in tensors:
        groups.setdefault(t.dtype, []).append(t)
    norms = [vector_norm(t, norm_type) for group in groups.values() for t in group]
    total_norm = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of `parameters` by min(1, max_norm / (total_norm + 1e-6)).

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True); w.grad = torch.tensor([3.0, 4.0])
    >>> torch.nn.utils.clip_grads_with_norm_([w], 1.0, torch.tensor(5.0)); w.grad
    tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    clip_coef_clamped = clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients in place so that their total norm is at most max_norm; returns
    the total norm before clipping.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True); w.grad = torch.tensor([3.0, 4.0])
    >>> torch.nn.utils.clip_grad_norm_([w], 1.0)
    tensor(5.)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of clip_grad_norm_ (with torch's FutureWarning)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient to [-clip_value, clip_value] in place.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True); w.grad = torch.tensor([3.0, -0.5])
    >>> torch.nn.utils.clip_grad_value_([w], 1.0); w.grad
    tensor([ 1.0000, -0.5000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    for grad in [p.grad for p in parameters if p.grad is not None]:
        grad.clamp_(min=-clip_value)  # (torch's foreach clamp_min_, then clamp_max_)
        grad.clamp_(max=clip_value)
