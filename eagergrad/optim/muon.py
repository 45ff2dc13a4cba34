"""Muon (momentum orthogonalized by Newton-Schulz iterations) for 2-D parameters."""
from ..tensor import Tensor
from . import _kernels as K
from .adafactor import _lr_f32
from .optimizer import Optimizer, _hyper

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """Muon, torch's formulas: the (Nesterov) momentum of a 2-D parameter's gradient is
    orthogonalized by `ns_steps` Newton-Schulz iterations in bfloat16, as torch computes
    them, then applied with decoupled weight decay and an lr adjusted to the shape.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, 3, requires_grad=True)
    >>> opt = torch.optim.Muon([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['momentum_buffer']
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        state = self.state
        params = []
        for p in group["params"]:  # (torch's _init_group)
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            params.append(p)
            if "momentum_buffer" not in state[p]:
                state[p]["momentum_buffer"] = K.zeros_like(p.grad)
        if not params:
            return
        lr, mom, wd = group["lr"], _hyper(group["momentum"]), _hyper(group["weight_decay"])
        coefficients, ns_steps = group["ns_coefficients"], group["ns_steps"]
        # torch's loop fails at the first parameter whose gradient is not a matrix, or, with
        # bad Newton-Schulz settings, at the first one, after its buffer's lerp_
        bad = next((i for i, p in enumerate(params) if p.grad.ndim != 2), len(params))
        err = None
        if bad < len(params):
            err = ValueError("Param gradient must be a 2D matrix")
        if ns_steps >= 100 or len(coefficients) != 3:
            if bad > 0:
                buf = state[params[0]]["momentum_buffer"]
                buf.lerp_(params[0].grad, 1 - mom)
                err = ValueError("Number of steps must be less than 100 for computational "
                                 "efficiency" if ns_steps >= 100 else
                                 "Coefficients must be a tuple of exactly 3 values")
            bad = 0
        a, b, c = coefficients if bad else (0.0, 0.0, 0.0)
        adjust = group["adjust_lr_fn"]

        def item(p):
            return p, p.grad, state[p]["momentum_buffer"]

        K._single_tensor_muon.foreach(
            params[:bad], item, state, lr=_hyper(lr), weight_decay=wd, momentum=mom,
            ns_a=a, ns_b=b, ns_c=c, eps=group["eps"], ns_steps=ns_steps,
            nesterov=group["nesterov"], small=abs(1 - mom) < 0.5,
            small_nesterov=abs(mom) < 0.5, original=adjust is None or adjust == "original",
            match_rms_adamw=adjust == "match_rms_adamw", lr_f32=_lr_f32(lr, "Muon"))
        if err is not None:
            raise err


Muon.__module__ = "eagergrad.optim"
