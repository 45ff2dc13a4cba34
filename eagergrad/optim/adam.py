"""Adam and AdamW (amsgrad, maximize, coupled or decoupled weight decay)."""
from ..tensor import Tensor
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_fused_foreach,
    _check_hyper,
    _hyper,
    _set_group_defaults,
)

__all__ = ["Adam", "AdamW"]


def _check_tensor_hyper(name, value, foreach, capturable):
    if isinstance(value, Tensor):
        if not capturable and foreach:
            raise ValueError(f"{name} as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        if value.numel() != 1:
            raise ValueError(f"Tensor {name} must be 1-element")


class Adam(Optimizer):
    """Adam (Kingma & Ba), torch's single-tensor formulas; `foreach`, `fused` and
    `capturable` are accepted and give the same numbers (capturable=True fails on CPU at
    step, as torch's does).

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        _check_hyper(eps=eps, betas=betas, weight_decay=weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        _check_tensor_hyper("betas[0]", betas[0], foreach, capturable)
        _check_tensor_hyper("betas[1]", betas[1], foreach, capturable)
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b
                      for b in betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, amsgrad=False, maximize=False, foreach=None, capturable=False,
                            differentiable=False, fused=None, decoupled_weight_decay=False)

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        lr = _hyper(group["lr"])
        beta1, beta2 = (_hyper(b) for b in group["betas"])
        wd = _hyper(group["weight_decay"])
        decoupled, amsgrad = group["decoupled_weight_decay"], group["amsgrad"]
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        for p in params:
            st = state[p]
            if len(st) == 0:
                st["step"] = K.scalar(0.0)
                st["exp_avg"] = K.zeros_like(p)
                st["exp_avg_sq"] = K.zeros_like(p)
                if amsgrad:
                    st["max_exp_avg_sq"] = K.zeros_like(p)
        if params:
            _check_capturable(group)

        def item(p):
            st = state[p]
            return (p, p.grad, st["exp_avg"], st["exp_avg_sq"],
                    st["max_exp_avg_sq"] if amsgrad else None, st["step"])

        K._single_tensor_adam.foreach(
            params, item, state, fused=group["fused"], lr=lr, beta1=beta1, beta2=beta2,
            eps=group["eps"], weight_decay=wd, maximize=group["maximize"],
            has_weight_decay=wd != 0, decoupled_weight_decay=decoupled, amsgrad=amsgrad,
            small=abs(1 - beta1) < 0.5)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay
    before the Adam update.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8900, 0.8900], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
