"""RMSprop (centered, momentum, weight decay, maximize)."""
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_hyper,
    _hyper,
    _set_group_defaults,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, torch's formulas (eps added outside the square root).

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_hyper(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, momentum=0, centered=False, foreach=None, maximize=False,
                            differentiable=False, capturable=False)

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        alpha, mom, wd = (_hyper(group[k]) for k in ("alpha", "momentum", "weight_decay"))
        centered = bool(group["centered"])
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        for p in params:
            st = state[p]
            if len(st) == 0:
                st["step"] = K.scalar(0.0)
                st["square_avg"] = K.zeros_like(p)
                if mom > 0:
                    st["momentum_buffer"] = K.zeros_like(p)
                if centered:
                    st["grad_avg"] = K.zeros_like(p)
        if params:
            _check_capturable(group)

        def item(p):
            st = state[p]
            return (p, p.grad, st["square_avg"], st["grad_avg"] if centered else None,
                    st["momentum_buffer"] if mom > 0 else None, st["step"])

        K._single_tensor_rmsprop.foreach(
            params, item, state, lr=_hyper(group["lr"]), alpha=alpha, eps=group["eps"],
            weight_decay=wd, momentum=mom, maximize=group["maximize"],
            has_weight_decay=wd != 0, centered=centered, has_momentum=mom > 0,
            small=abs(1 - alpha) < 0.5)
