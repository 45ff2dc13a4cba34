"""torch.nn.grad: the gradients of a convolution with respect to its input and its weight,
as torch's convolution_backward computes them (here: the convolution's own backward, so the
result records ConvolutionBackwardBackward0 when its inputs require grad).

>>> import eagergrad as torch
>>> w = torch.ones(1, 1, 2)
>>> torch.nn.grad.conv1d_input((1, 1, 3), w, torch.ones(1, 1, 2))
tensor([[[1., 2., 1.]]])
"""
from ..creation import zeros
from ..engine.engine import execute
from ..engine.grad_mode import enable_grad, is_grad_enabled
from ._functional.convolution import conv1d, conv2d, conv3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _backward(conv, x, weight, grad_output, wrt, args):
    keep = is_grad_enabled() and (grad_output.requires_grad or (x, weight)[1 - wrt].requires_grad)
    leaf = (x, weight)[wrt]  # (a zeros leaf of our own)
    with enable_grad():
        out = conv(x, weight, None, *args)
    (g,) = execute([out._edge()], [grad_output], keep, keep, [(leaf._grad_accumulator(), 0)],
                   accumulate_grad=False)
    return g if keep else g.detach()


def _pair(conv, n):
    def grad_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        x = zeros(tuple(input_size), dtype=weight.dtype, requires_grad=True)
        return _backward(conv, x, weight, grad_output, 0, (stride, padding, dilation, groups))

    def grad_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        w = zeros(tuple(weight_size), dtype=input.dtype, requires_grad=True)
        return _backward(conv, input, w, grad_output, 1, (stride, padding, dilation, groups))
    grad_input.__name__ = grad_input.__qualname__ = f"conv{n}d_input"
    grad_weight.__name__ = grad_weight.__qualname__ = f"conv{n}d_weight"
    grad_input.__doc__ = f"The gradient of conv{n}d with respect to its input."
    grad_weight.__doc__ = f"The gradient of conv{n}d with respect to its weight."
    return grad_input, grad_weight


conv1d_input, conv1d_weight = _pair(conv1d, 1)
conv2d_input, conv2d_weight = _pair(conv2d, 2)
conv3d_input, conv3d_weight = _pair(conv3d, 3)
