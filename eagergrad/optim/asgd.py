"""ASGD (averaged stochastic gradient descent)."""
import numpy as np

from ..creation import tensor as _tensor
from ..creation import zeros_like
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_hyper,
    _hyper,
    _put,
    _scalar_dtype,
    _set_group_defaults,
    _step_tensor,
    _upgrade_step,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD, torch's single-tensor formulas; state keeps eta, mu and the average
    `ax`.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8000, 0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_hyper(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False,
                            capturable=False)
        _upgrade_step(self, "eta", "mu")

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        lr, wd = _hyper(group["lr"]), _hyper(group["weight_decay"])
        h = np.array([lr, group["lambd"], group["alpha"], group["t0"], wd], np.float64)
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state["eta"] = _tensor(lr, dtype=_scalar_dtype())
                state["mu"] = _tensor(1.0, dtype=_scalar_dtype())
                state["ax"] = zeros_like(p)
            if group["capturable"]:
                raise AssertionError(
                    "If capturable=True, params, mus, etas, and state_steps must be on "
                    "supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].")
            ax, eta, mu, step = state["ax"], state["eta"], state["mu"], state["step"]
            out = K.asgd(p._value, p.grad._value, ax._value, eta._value, mu._value,
                         step._value, h=h, maximize=bool(group["maximize"]),
                         weight_decay=wd != 0)
            _put(step, out[4])   # step_t += 1
            _put(p, out[0], 2)   # param.mul_(1 - lambd * eta), param.add_(grad, ...)
            _put(ax, out[1])     # ax.add_(...) or ax.copy_(param)
            _put(eta, out[2])    # eta.copy_(new_eta)
            _put(mu, out[3])     # mu.copy_(new_mu)
