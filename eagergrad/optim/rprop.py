"""Rprop (resilient backpropagation)."""
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_hyper,
    _hyper,
    _set_group_defaults,
    _upgrade_step,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop: per-element step sizes grown by etaplus while the gradient keeps its sign,
    shrunk by etaminus when it flips (that step skipped), torch's formulas.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_hyper(lr=lr, etas=etas)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
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
        (etaminus, etaplus), (lo, hi) = group["etas"], group["step_sizes"]
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        for p in params:
            st = state[p]
            if len(st) == 0:
                lr = _hyper(group["lr"])
                st["step"] = K.scalar(0.0)
                st["prev"] = K.zeros_like(p)
                fill = complex(lr, lr) if p.is_complex() else lr
                st["step_size"] = K.filled(p.grad._shape, fill, p.grad.dtype)  # full_like(grad)
        if params:
            _check_capturable(group)

        def item(p):
            st = state[p]
            return p, p.grad, st["prev"], st["step_size"], st["step"]

        K._single_tensor_rprop.foreach(
            params, item, state, etaminus=etaminus, etaplus=etaplus, step_size_min=lo,
            step_size_max=hi, maximize=group["maximize"])
