"""NAdam (Nesterov-accelerated Adam, momentum decay, decoupled weight decay)."""
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_hyper,
    _hyper,
    _set_group_defaults,
    _upgrade_step,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat), torch's single-tensor formulas; state keeps `mu_product`.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8944, 0.8944], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_hyper(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay,
                     momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, maximize=False, foreach=None, capturable=False,
                            differentiable=False, decoupled_weight_decay=False)
        _upgrade_step(self, "mu_product")

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        lr = _hyper(group["lr"])
        beta1, beta2 = (_hyper(b) for b in group["betas"])
        wd = _hyper(group["weight_decay"])
        decoupled = bool(group["decoupled_weight_decay"])
        params = [p for p in group["params"] if p.grad is not None]
        state = self.state
        for p in params:
            st = state[p]
            if len(st) == 0:
                st["step"] = K.scalar(0.0)
                st["mu_product"] = K.scalar(1.0)
                st["exp_avg"] = K.zeros_like(p)
                st["exp_avg_sq"] = K.zeros_like(p)
        if params and group["capturable"]:
            raise AssertionError(
                "If capturable=True, params, mu_products and state_steps must be on "
                "supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].")

        def item(p):
            st = state[p]
            return p, p.grad, st["exp_avg"], st["exp_avg_sq"], st["mu_product"], st["step"]

        K._single_tensor_nadam.foreach(
            params, item, state, lr=lr, beta1=beta1, beta2=beta2, eps=group["eps"],
            weight_decay=wd, momentum_decay=group["momentum_decay"],
            maximize=group["maximize"], has_weight_decay=wd != 0,
            decoupled_weight_decay=decoupled, small=abs(1 - beta1) < 0.5)
