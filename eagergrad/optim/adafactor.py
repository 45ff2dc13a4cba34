"""Adafactor (factored second moments, relative step sizes, update clipping)."""
import jax.numpy as jnp

from .. import _dtypes as D
from ..tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, _hyper, _set_group_defaults, _upgrade_step

__all__ = ["Adafactor"]


def _lr_f32(lr, name):
    """Whether torch's scalar math with a Tensor lr rounds to float32 (see the kernels)."""
    if not isinstance(lr, Tensor) or lr.dtype is D.float64:
        return False
    if lr.dtype is D.float32:
        return True
    from .._torch_names import missing
    raise missing(f"torch.optim.{name} with a Tensor lr of dtype {lr.dtype}")


def _factored_shape(grad, dim):
    shape = list(grad._shape)
    shape[dim] = 1
    return tuple(shape)


def _lerp_error(state, end):
    """torch's error of state.lerp_(end) when the shapes do not fit (None if they do)."""
    shape = K._broadcast(tuple(state._shape), tuple(end))
    return None if shape == tuple(state._shape) else K._output_error(state._shape, shape)


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern), torch's single-tensor formulas: the second moment of a
    parameter of two or more dimensions is kept as row and column factors; lr caps the
    relative step size and scales the weight decay. `foreach` gives the same numbers.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, 3, requires_grad=True)
    >>> opt = torch.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None)
        _upgrade_step(self)

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure()'s loss."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        state = self.state
        params = []
        for p in group["params"]:  # (torch's _init_group: state made up to a bad parameter)
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            params.append(p)
            st = state[p]
            if len(st) == 0:
                st["step"] = K.scalar(0.0)
                if p.grad.dim() > 1:
                    st["row_var"] = K.filled(_factored_shape(p.grad, -1), 0, p.grad.dtype)
                    st["col_var"] = K.filled(_factored_shape(p.grad, -2), 0, p.grad.dtype)
                else:
                    st["variance"] = K.zeros_like(p.grad)
        if not params:
            return
        eps1, eps2 = group["eps"]
        if eps1 is None:  # (torch: the first parameter's dtype, for the whole group)
            eps1 = float(jnp.finfo(params[0].dtype.np).eps)
        lr = group["lr"]
        wd = _hyper(group["weight_decay"])
        bad, err = _first_bad(params, state)
        run = params[:bad] if err is not None else params

        def item(p):
            st = state[p]
            return (p, p.grad, st.get("row_var"), st.get("col_var"), st.get("variance"),
                    st["step"])

        K._single_tensor_adafactor.foreach(
            run, item, state, lr=_hyper(lr), beta2_decay=group["beta2_decay"], eps1=eps1,
            eps2=eps2, d=group["d"], weight_decay=wd, maximize=group["maximize"],
            has_weight_decay=wd != 0, lr_f32=_lr_f32(lr, "Adafactor"))
        if err is not None:
            if isinstance(err, ZeroDivisionError):  # (torch's step_t += 1 came first)
                state[params[bad]]["step"].add_(1)
            raise err


def _first_bad(params, state):
    """(index, error) of the first parameter torch's loop fails at with factors (or a
    size) that do not fit, else (len, None); the kernel checks the rest."""
    for i, p in enumerate(params):
        st = state[p]
        if p.numel() == 0:  # (torch: param.norm(2).item() / (0 ** 0.5))
            return i, ZeroDivisionError("float division by zero")
        if p.grad.dim() > 1:
            for key, dim in (("row_var", -1), ("col_var", -2)):
                t = st.get(key)
                if t is None:
                    return i, AssertionError("row_var and col_var should be defined when "
                                             "grad is multidimensional")
                err = _lerp_error(t, _factored_shape(p.grad, dim))
                if err is not None:
                    return i, err
                if t._shape != _factored_shape(p.grad, dim):
                    from .._torch_names import missing
                    return i, missing(f"torch.optim.Adafactor with a {key} of shape "
                                      f"{list(t._shape)} for a gradient of shape "
                                      f"{list(p.grad._shape)}")
        elif st.get("variance") is None:
            return i, AssertionError("variance should be defined when grad is a vector")
    return len(params), None


Adafactor.__module__ = "eagergrad.optim"
