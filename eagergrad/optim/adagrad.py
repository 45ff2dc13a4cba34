"""Adagrad (lr_decay, initial_accumulator_value, weight decay, maximize)."""
from .. import _dtypes as D
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_fused_foreach,
    _check_hyper,
    _hyper,
    _set_group_defaults,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, torch's formulas; its state is made when the optimizer is.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        _check_hyper(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                     initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                _init_state(self.state[p], group, p)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False, fused=None)

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        wd = _hyper(group["weight_decay"])
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        for p in params:
            if len(state[p]) == 0:  # (a group added after construction)
                _init_state(state[p], group, p)

        def item(p):
            st = state[p]
            return p, p.grad, st["sum"], st["step"]

        K._single_tensor_adagrad.foreach(
            params, item, state, fused=group["fused"], lr=_hyper(group["lr"]),
            lr_decay=group["lr_decay"], eps=group["eps"], weight_decay=wd,
            maximize=group["maximize"], has_weight_decay=wd != 0)


def _init_state(state, group, p):
    state["step"] = K.filled((), 0.0, D.float32) if group["fused"] else K.scalar(0.0)
    init = group["initial_accumulator_value"]
    state["sum"] = K.filled(p._shape, complex(init, init) if p.dtype.is_complex else init,
                            p.dtype)
