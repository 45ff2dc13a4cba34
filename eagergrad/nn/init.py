"""torch.nn.init: initialisers that fill a tensor in place under no_grad, drawing from
eagergrad's global generator, with torch's fan and gain computations."""
import math
import warnings

import jax
import jax.numpy as jnp

from .._torch_names import NN_INIT_NAMES, nn_getattr
from ..creation import _next_key, sample
from ..creation import eye as _eye
from ..engine.grad_mode import no_grad
from ..tensor import _make

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for `nonlinearity` (torch's table).

    >>> import eagergrad as torch
    >>> torch.nn.init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or \
                isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b).

    >>> import eagergrad as torch
    >>> w = torch.nn.init.uniform_(torch.empty(2, 3), -1.0, 1.0)
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std**2).

    >>> import eagergrad as torch
    >>> w = torch.nn.init.normal_(torch.empty(2, 3), std=0.02)
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) truncated to [a, b].

    >>> import eagergrad as torch
    >>> w = torch.nn.init.trunc_normal_(torch.empty(2, 3), std=0.02, a=-0.04, b=0.04)
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    lo, hi = (a - mean) / std, (b - mean) / std
    z = sample(jax.random.truncated_normal, _next_key(generator),
               {"shape": tuple(tensor.shape), "dtype": tensor.dtype.np}, lower=lo, upper=hi)
    with no_grad():
        # (clamped as torch does: rounding may step just outside [a, b])
        return tensor.copy_(_make(z * std + mean).clamp_(min=a, max=b))


def constant_(tensor, val):
    """Fill with `val`.

    >>> import eagergrad as torch
    >>> torch.nn.init.constant_(torch.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill with ones.

    >>> import eagergrad as torch
    >>> torch.nn.init.ones_(torch.empty(2))
    tensor([1., 1.])
    """
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    """Fill with zeros.

    >>> import eagergrad as torch
    >>> torch.nn.init.zeros_(torch.empty(2))
    tensor([0., 0.])
    """
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix.

    >>> import eagergrad as torch
    >>> torch.nn.init.eye_(torch.empty(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(_eye(*tensor.shape, dtype=tensor.dtype))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import eagergrad as torch
    >>> w = torch.nn.init.xavier_uniform_(torch.empty(3, 5))
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import eagergrad as torch
    >>> w = torch.nn.init.xavier_normal_(torch.empty(3, 5))
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-b, b), b = gain * sqrt(3 / fan_mode).

    >>> import eagergrad as torch
    >>> w = torch.nn.init.kaiming_uniform_(torch.empty(3, 5), a=5 ** 0.5)
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std**2), std = gain / sqrt(fan_mode).

    >>> import eagergrad as torch
    >>> w = torch.nn.init.kaiming_normal_(torch.empty(3, 5), mode="fan_out")
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D (conv weight) tensor with the Dirac delta: the identity map
    on the first min(out/groups, in) channels of each group.

    >>> import eagergrad as torch
    >>> torch.nn.init.dirac_(torch.empty(2, 2, 3))[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    centre = tuple(n // 2 for n in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix (QR of a normal draw, signs fixed by R's
    diagonal), trailing dims flattened; times `gain`.

    >>> import eagergrad as torch
    >>> w = torch.nn.init.orthogonal_(torch.empty(3, 5))
    >>> bool(torch.allclose(w @ w.T, torch.eye(3), atol=1e-5))
    True
    """
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)._value
    if rows < cols:
        flattened = flattened.T
    q, r = jnp.linalg.qr(flattened)
    q = q * jnp.sign(jnp.diagonal(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.view_as(_make(q)).copy_(_make(q))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor with N(0, std**2), then zero ceil(sparsity * rows) random rows of
    each column.

    >>> import eagergrad as torch
    >>> w = torch.nn.init.sparse_(torch.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(0).tolist()
    [2, 2, 2]
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            row_indices = jax.random.permutation(_next_key(None), rows)
            zero_indices = _make(row_indices[:num_zeros])
            tensor[zero_indices, col_idx] = 0
    return tensor


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"Deprecated alias of nn.init.{new_name} (FutureWarning)."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)


__getattr__ = nn_getattr("eagergrad.nn.init", "torch.nn.init", NN_INIT_NAMES)
