"""torch.nn.functional: batch_norm, instance_norm and group_norm, with the Python-level
checks of torch's functional.py before the ATen entry points in ops/batchnorm.py."""
from ..ops import batchnorm as _B

__all__ = ["batch_norm", "group_norm", "instance_norm"]


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

