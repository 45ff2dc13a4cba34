"""RMSprop (centered, momentum, weight decay, maximize)."""
import numpy as np

from ..creation import zeros_like
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_hyper,
    _hyper,
    _put,
    _set_group_defaults,
    _step_tensor,
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
        h = np.array([_hyper(group["lr"]), alpha, group["eps"], wd, mom, 1 - alpha],
                     np.float64)
        centered = bool(group["centered"])
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state["square_avg"] = zeros_like(p)
                if mom > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if centered:
                    state["grad_avg"] = zeros_like(p)
            _check_capturable(group)
            sq, step = state["square_avg"], state["step"]
            gavg, buf = state.get("grad_avg"), state.get("momentum_buffer")
            out = K.rmsprop(p._value, p.grad._value, sq._value,
                            gavg._value if centered else None,
                            buf._value if mom > 0 else None, step._value, h=h,
                            maximize=bool(group["maximize"]), weight_decay=wd != 0,
                            centered=centered, momentum=mom > 0, small=abs(1 - alpha) < 0.5)
            _put(step, out[4])       # step += 1
            _put(sq, out[1], 2)      # square_avg.mul_(alpha).addcmul_(grad, grad, ...)
            if centered:
                _put(gavg, out[2])   # grad_avg.lerp_(grad, 1 - alpha)
            if mom > 0:
                _put(buf, out[3], 2)  # buf.mul_(momentum).addcdiv_(grad, avg)
            _put(p, out[0])          # param.add_(buf, ...) or param.addcdiv_(grad, avg, ...)
