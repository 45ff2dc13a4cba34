"""torch.nn.functional's normalization functions (re-exported by nn.functional):
batch_norm, instance_norm and group_norm with the Python-level checks of torch's
functional.py before the ATen entry points in ops/batchnorm.py; layer_norm, one
NativeLayerNormBackward0; rms_norm, ATen's composition (pow, mean, add, rsqrt, mul);
normalize and local_response_norm, torch's compositions."""
import jax.numpy as jnp

from ... import _dtypes as D
from ...ops import batchnorm as _B
from ...ops.pointwise import _add_s
from ...ops.norm import layer_norm as _layer_norm
from ._utils import _dims
from .pooling import avg_pool2d, avg_pool3d
from .vision import pad


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def _verify_spatial_size(size):
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input "
                         f"size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) by the batch statistics (training: running_mean /
    running_var updated in place with `momentum`) or by the running statistics (eval).

    >>> import eagergrad as torch
    >>> torch.nn.functional.batch_norm(torch.tensor([[1.0], [3.0]]), None, None,
    ...                                training=True, eps=1e-12)
    tensor([[-1.],
            [ 1.]])
    """
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _B.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                         eps, False)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample by its own statistics.

    >>> import eagergrad as torch
    >>> torch.nn.functional.instance_norm(torch.tensor([[[1.0, 3.0]]]), eps=0.0)
    tensor([[[-1.,  1.]]])
    """
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _B.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                            momentum, eps, False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of channels of each sample, then scale and shift per channel.

    >>> import eagergrad as torch
    >>> torch.nn.functional.group_norm(torch.tensor([[1.0, 3.0]]), 1, eps=0.0)
    tensor([[-1.,  1.]])
    """
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                       + list(input.size()[2:]))
    return _B.group_norm(input, num_groups, weight, bias, eps, False)


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
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {_dims(weight.shape)} and normalized_shape = "
                           f"{_dims(ns)}")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={_dims(ns)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in ns)}], but got input of "
                           f"size{_dims(input.shape)}")
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


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps), torch's composition.

    >>> import eagergrad as torch
    >>> torch.nn.functional.normalize(torch.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.nn.functional."
                                  "normalize(out=...) yet")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization: each value divided by (k + alpha * the mean of the
    squares over `size` neighbouring channels) ** beta, composed as torch composes it
    (pad, avg_pool2d/avg_pool3d over channels, add, pow, div).

    >>> import eagergrad as torch
    >>> torch.nn.functional.local_response_norm(torch.ones(1, 2, 1), 2, alpha=1.0, beta=1.0)
    tensor([[[0.6667],
             [0.5000]]])
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
