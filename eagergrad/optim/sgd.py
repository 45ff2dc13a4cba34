"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize."""
from . import _kernels as K
from .optimizer import Optimizer, _check_fused_foreach, _hyper, _set_group_defaults

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
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        # (torch gathers the buffers before the updates: a parameter listed twice starts
        # two fresh buffers on its first step, the later one kept)
        bufs = {p: state[p].get("momentum_buffer") for p in params} if mom != 0 else {}

        def item(p):
            return p, p.grad, bufs.get(p)

        K._single_tensor_sgd.foreach(
            params, item, state, fused=group["fused"], lr=_hyper(group["lr"]),
            weight_decay=wd, momentum=mom, dampening=group["dampening"],
            maximize=group["maximize"], has_weight_decay=wd != 0, has_momentum=mom != 0,
            nesterov=group["nesterov"])
