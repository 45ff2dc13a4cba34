"""torch.nn.functional's dropout functions (re-exported by nn.functional), recorded as
torch 2.13 records them on CPU: dropout multiplies by a noise tensor (MulBackward0), as
ATen's CPU path; feature dropout by a (N, C, 1, ...) noise, alpha dropout then adds in
place (AddBackward0). The noise comes from eagergrad's generator."""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ...creation import _next_key, from_jax, sample
from ...ops.pointwise import mul


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


_ALPHA = 1.7580993408473766  # SELU's -scale * alpha


@jax.jit
def _alpha_noise(keep, a, scale, shift):
    # one kernel per shape for both of alpha dropout's noise tensors
    return keep * a, (keep - 1) * scale + shift


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise_dropout(input, p, train, inplace, feature, alpha):
    """ATen's _dropout_impl: input * noise (+ b for alpha dropout), the noise of shape
    (N, C, 1, ...) for feature dropout; the input itself when p == 0 or not training."""
    if p == 0 or not train or input.numel() == 0:
        return input
    dt = input.dtype.np
    if p == 1:
        noise = from_jax(jnp.zeros((), dt))
        return input.mul_(noise) if inplace else mul(input, noise)
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else \
        tuple(input.shape)
    # (bucketed: one sampler compile for every shape, creation's NOTE [sampling buckets])
    keep = sample(jax.random.bernoulli, _next_key(), {"shape": shape}, ("astype", dt),
                  p=1.0 - p)
    if not alpha:
        noise = from_jax(keep / jnp.asarray(1.0 - p, dt))
        return input.mul_(noise) if inplace else mul(input, noise)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    noise, b = _alpha_noise(keep, *(np.asarray(c, dt) for c in (a, _ALPHA * a, _ALPHA * a * p)))
    noise, b = from_jax(noise), from_jax(b)
    out = input.mul_(noise) if inplace else mul(input, noise)
    return out.add_(b)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a (N, C, L) or (C, L) input with probability p, scaling the
    others by 1 / (1 - p).

    >>> import eagergrad as torch
    >>> torch.nn.functional.dropout1d(torch.ones(2, 3), 1.0)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    batched = input.dim() == 3
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _noise_dropout(input, p, training, inplace, True, False)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a (N, C, H, W) input with probability p (a 3-D input is
    taken as (N, C, L), with torch's warning).

    >>> import eagergrad as torch
    >>> torch.nn.functional.dropout2d(torch.ones(1, 2, 1, 1), 0.5, training=False).sum()
    tensor(2.)
    """
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2)
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _noise_dropout(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability p.

    >>> import eagergrad as torch
    >>> torch.nn.functional.dropout3d(torch.ones(2, 1, 1, 1), 0.0).shape
    torch.Size([2, 1, 1, 1])
    """
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2)
    batched = d == 5
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _noise_dropout(input, p, training, inplace, True, False)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout (for SELU): dropped elements become SELU's negative saturation,
    then an affine map keeps zero mean and unit variance.

    >>> import eagergrad as torch
    >>> x = torch.ones(2)
    >>> torch.nn.functional.alpha_dropout(x, 0.5) is x
    True
    """
    _check_p(p)
    return _noise_dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1).

    >>> import eagergrad as torch
    >>> torch.nn.functional.feature_alpha_dropout(torch.ones(1, 2), 1.0, True)
    tensor([[0., 0.]])
    """
    _check_p(p)
    return _noise_dropout(input, p, training, inplace, True, True)
