"""torch.nn.modules._functions: BackwardHookFunction, the autograd Function behind a
module's full backward hooks, and CrossMapLRN2d, nn.CrossMapLRN2d's Function."""
import numpy as np

from ...engine.function import Function


class BackwardHookFunction(Function):
    """Identity on all of a module's tensor inputs (or outputs): ONE node that sees all
    their gradients at once (BackwardHookFunctionBackward)."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


def _lrn_window(channels, size):
    """(C, C) 0/1: the squares each channel's scale sums, as torch's legacy loop builds it
    (add the next channel, drop the one `pre_pad` back; channel 0 is never dropped)."""
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    m[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        m[c] = m[c - 1]
        if c < channels - pre_pad + 1:
            m[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            m[c, c - pre_pad] -= 1
    return m


def _lrn_back_window(channels, size):
    """(C, C) 0/1: the ratios torch's backward accumulates for each channel."""
    lo = int(size - (size - 1) / 2)
    m = np.zeros((channels, channels))
    for c in range(channels):
        m[c, max(c - lo, 0):max(c + size - lo, 0)] = 1
    return m


def _over_channels(m, x):
    """The (C, C) matrix m applied along x's dim 1 (N, C, H, W)."""
    n, c, h, w = x.shape
    return x.new_tensor(m).matmul(x.reshape(n, c, h * w)).reshape(n, c, h, w)


class CrossMapLRN2d(Function):
    """torch's legacy cross-channel local response normalization (nn.CrossMapLRN2d): its
    forward and its hand-written backward, as torch's (CrossMapLRN2dBackward)."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        scale = _over_channels(_lrn_window(input.size(1), size), input * input)
        ctx.scale = scale.mul(alpha / size).add(k)
        output = ctx.scale.pow(-beta).mul(input)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        channels, lo = input.size(1), int(ctx.size - (ctx.size - 1) / 2)
        if lo > ctx.size - 1:  # (torch's narrow of its padded buffer fails: size 1)
            raise RuntimeError(f"start ({lo}) + length ({channels}) exceeds dimension size "
                               f"({channels + ctx.size - 1}).")
        ratio = grad_output * output / ctx.scale
        accum = _over_channels(_lrn_back_window(input.size(1), ctx.size), ratio)
        grad_input = ctx.scale.pow(-ctx.beta).mul(grad_output)
        grad_input = grad_input - input * accum * (2 * ctx.alpha * ctx.beta / ctx.size)
        return grad_input, None, None, None, None
