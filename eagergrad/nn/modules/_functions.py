"""torch.nn.modules._functions: BackwardHookFunction, the autograd Function behind a
module's full backward hooks."""
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
