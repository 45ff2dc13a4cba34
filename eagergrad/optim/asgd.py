"""ASGD (averaged stochastic gradient descent)."""
from .. import _dtypes as D
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_hyper,
    _hyper,
    _set_group_defaults,
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
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        for p in params:
            st = state[p]
            if len(st) == 0:
                st["step"] = K.scalar(0.0)
                st["eta"] = K.scalar(lr)
                st["mu"] = K.scalar(1.0)
                st["ax"] = K.zeros_like(p)
        if params and group["capturable"]:
            raise AssertionError(
                "If capturable=True, params, mus, etas, and state_steps must be on "
                "supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].")

        def item(p):
            st = state[p]
            return p, p.grad, st["ax"], st["eta"], st["mu"], st["step"]

        K._single_tensor_asgd.foreach(
            params, item, state, lr=lr, lambd=group["lambd"], alpha=group["alpha"],
            t0=group["t0"], weight_decay=wd, maximize=group["maximize"],
            has_weight_decay=wd != 0, default_f64=D.get_default_dtype() is D.float64)
