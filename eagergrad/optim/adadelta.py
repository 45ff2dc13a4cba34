"""Adadelta (weight decay, maximize)."""
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_hyper,
    _hyper,
    _set_group_defaults,
    _upgrade_step,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler), torch's single-tensor formulas.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.Adadelta([w], lr=1.0)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9968, 0.9968], requires_grad=True)
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_hyper(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False,
                            capturable=False)
        _upgrade_step(self)

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        rho, wd = _hyper(group["rho"]), _hyper(group["weight_decay"])
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        for p in params:
            st = state[p]
            if len(st) == 0:
                st["step"] = K.scalar(0.0)
                st["square_avg"] = K.zeros_like(p)
                st["acc_delta"] = K.zeros_like(p)
        if params and group["capturable"]:
            raise AssertionError(
                "If capturable=True, params and state_steps must be on supported devices:"
                " ['cuda', 'xpu', 'hpu', 'privateuseone'].")

        def item(p):
            st = state[p]
            return p, p.grad, st["square_avg"], st["acc_delta"], st["step"]

        K._single_tensor_adadelta.foreach(
            params, item, state, lr=_hyper(group["lr"]), rho=rho, eps=group["eps"],
            weight_decay=wd, maximize=group["maximize"], has_weight_decay=wd != 0)
