"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize."""
import numpy as np

from ..tensor import _make
from . import _kernels as K
from .optimizer import Optimizer, _check_fused_foreach, _hyper, _put, _set_group_defaults

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, torch's formulas (momentum buffer starts as the first
    gradient).

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8000, 0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, nesterov=False, maximize=False, foreach=None,
                            differentiable=False, fused=False)

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        wd, mom = _hyper(group["weight_decay"]), _hyper(group["momentum"])
        h = np.array([-_hyper(group["lr"]), wd, mom, 1 - group["dampening"]], np.float64)
        f = not group["fused"]  # (torch's fused kernel bumps no version)
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p] if mom != 0 else None
            buf = state.get("momentum_buffer") if state is not None else None
            new_p, new_buf = K.sgd(p._value, p.grad._value, None if buf is None else buf._value,
                                   h=h, maximize=bool(group["maximize"]),
                                   weight_decay=wd != 0, momentum=mom != 0,
                                   nesterov=bool(group["nesterov"]), first=buf is None)
            if mom != 0:
                if buf is None:  # (torch: grad.detach().clone(), a fresh tensor)
                    state["momentum_buffer"] = _make(new_buf)
                else:
                    _put(buf, new_buf, 2 * f)  # buf.mul_(momentum).add_(grad, ...)
            _put(p, new_p, f)  # p.add_(grad, alpha=-lr)
