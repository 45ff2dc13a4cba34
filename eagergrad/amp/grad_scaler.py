"""torch.amp.grad_scaler: GradScaler, as torch 2.13's Python code, over two jitted kernels
that are torch's CPU kernels `_amp_foreach_non_finite_check_and_unscale_` (every gradient
of a group checked for inf/NaN and multiplied by the inverse scale, in one call) and
`_amp_update_scale_` (the scale backed off or grown, the growth tracker counted). Both are
traced (hyperparameters are traced float64 scalars: changing them compiles nothing); the
only value read on the host is the found-inf flag that decides whether `step` skips the
optimizer's step, as torch's `.item()` reads it."""
import inspect
import warnings
from collections import abc, defaultdict
from enum import Enum

import jax
import jax.numpy as jnp

from .. import _dtypes as D
from .. import cuda as _cuda
from .._cache import EXECUTABLES
from ..creation import full
from ..engine.grad_mode import no_grad
from ..optim.optimizer import _put
from ..tensor import Tensor

__all__ = ["OptState", "GradScaler"]


def _unscale_k(grads, found_inf, inv_scale):
    """torch's CPU kernel: 1.0 into found_inf if a gradient has an inf or NaN; every
    gradient times inv_scale (computed in float32 for half types; untouched when
    inv_scale is 1)."""
    out = []
    for g in grads:
        op = jnp.float32 if g.dtype in (jnp.float16, jnp.bfloat16) else g.dtype
        v = g.astype(op)
        found_inf = jnp.where(jnp.all(jnp.isfinite(v)), found_inf, jnp.float32(1.0))
        out.append(jnp.where(inv_scale == 1, v, v * inv_scale.astype(op)).astype(g.dtype))
    return out, found_inf


def _update_k(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
              growth_interval):
    """torch's CPU kernel: backoff on a found inf, growth after growth_interval successful
    steps (never past float32's range), in float64 then rounded as torch's double math."""
    s = scale.astype(jnp.float64)
    found = found_inf != 0
    successful = growth_tracker + 1
    grow = successful == growth_interval
    grown = (s * growth_factor).astype(jnp.float32)
    new_scale = jnp.where(found, (s * backoff_factor).astype(jnp.float32),
                          jnp.where(grow & jnp.isfinite(grown), grown, scale))
    tracker = jnp.where(found | grow, jnp.zeros((), jnp.int32), successful.astype(jnp.int32))
    return new_scale, tracker


_UNSCALE = EXECUTABLES.track(jax.jit(_unscale_k))
_UPDATE = EXECUTABLES.track(jax.jit(_update_k))


def _amp_foreach_non_finite_check_and_unscale_(scaled_grads, found_inf, inv_scale):
    """torch._amp_foreach_non_finite_check_and_unscale_ (CPU): in place on the gradients
    and found_inf (one version bump each, as torch's in-place kernel)."""
    if not scaled_grads:
        return
    for name, t in (("inv_scale", inv_scale), ("found_inf", found_inf)):
        if t.numel() != 1:
            raise RuntimeError(f"{name} must be a 1-element tensor.")
        if t.dtype is not D.float32:
            raise RuntimeError(f"{name} must be a float tensor.")
    dt = scaled_grads[0].dtype
    if any(g.dtype is not dt for g in scaled_grads):
        raise RuntimeError("Tensors of the same index must be on the same device and the same "
                           "dtype except `step` tensors that can be CPU and float32/64 "
                           "notwithstanding")
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"_amp_foreach_non_finite_check_and_unscale_cpu\" not "
                                  f"implemented for '{dt.scalar_name}'")
    new, found = _UNSCALE([g._value for g in scaled_grads], found_inf._value.reshape(()),
                          inv_scale._value.reshape(()))
    for g, a in zip(scaled_grads, new):
        _put(g, a)
    _put(found_inf, found.reshape(found_inf._shape))


def _amp_update_scale_(current_scale, growth_tracker, found_inf, growth_factor,
                       backoff_factor, growth_interval):
    """torch._amp_update_scale_ (CPU): current_scale and growth_tracker updated in place."""
    for name, t, dt in (("growth_tracker", growth_tracker, D.int32),
                        ("current_scale", current_scale, D.float32),
                        ("found_inf", found_inf, D.float32)):
        if t.numel() != 1:
            raise RuntimeError(f"{name} must be a 1-element tensor.")
        if t.dtype is not dt:
            raise RuntimeError(f"{name} must be a{'n int' if dt is D.int32 else ' float'} "
                               "tensor.")
    scale, tracker = _UPDATE(current_scale._value.reshape(()),
                             growth_tracker._value.reshape(()), found_inf._value.reshape(()),
                             jnp.float64(growth_factor), jnp.float64(backoff_factor),
                             jnp.int64(growth_interval))
    _put(current_scale, scale.reshape(current_scale._shape))
    _put(growth_tracker, tracker.reshape(growth_tracker._shape))
    return current_scale


class _MultiDeviceReplicator:
    """Lazily serves copies of a tensor to requested devices (cached per device)."""

    def __init__(self, master_tensor):
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device, None)
        if retval is None:
            retval = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales a loss so that float16 gradients do not underflow, unscales the gradients
    before the optimizer's step, skips steps whose gradients hold infs or NaNs, and adapts
    the scale: backed off after a skipped step, grown after `growth_interval` good ones.

    >>> import eagergrad as torch
    >>> w = torch.nn.Parameter(torch.ones(2))
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    >>> scaler.scale((w * w).sum()).backward()
    >>> w.grad
    tensor([8., 8.])
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> w
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda":
            if enabled and not _cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # made by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return (self._scale, self._growth_tracker)

    def _lazy_init_scale_growth_tracker(self, dev):
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = full((), self._init_scale, dtype=D.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=D.int32, device=dev)

    def scale(self, outputs):
        """outputs (a tensor, or tensors nested in lists and tuples) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)
        stash = []

        def apply_scale(val):
            if isinstance(val, Tensor):
                if len(stash) == 0:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        per_device_and_dtype_grads = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got "
                                             f"{type(param).__name__}")
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    to_unscale = param.grad
                    per_device_and_dtype_grads[to_unscale.device][to_unscale.dtype].append(
                        to_unscale)
            for device, per_dtype_grads in per_device_and_dtype_grads.items():
                for grads in per_dtype_grads.values():
                    _amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device),
                        per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale, in place (once per step; step()
        calls it when it was not called)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        elif optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # (torch takes the reciprocal in float64)
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=D.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer, *args, **kwargs):
        """unscale_(optimizer) if not done yet, then optimizer.step(*args, **kwargs) unless
        a gradient holds an inf or NaN; returns what optimizer.step returned (or None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        retval = None
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            kwargs_ = kwargs
            has_grad_scaler_kwarg = ("grad_scaler" in
                                     inspect.signature(optimizer.step).parameters)
            if has_grad_scaler_kwarg:
                warnings.warn(
                    "GradScaler is going to stop passing itself as a keyword argument to the "
                    "passed optimizer. In the near future GradScaler registers `grad_scale: "
                    "Tensor` and `found_inf: Tensor` to the passed optimizer and let the "
                    "optimizer use them directly.", FutureWarning, stacklevel=2)
                kwargs_.update({"grad_scaler": self})
            else:
                if optimizer_state["stage"] is OptState.READY:
                    self._check_inf_per_device(optimizer)
                scaler = self._get_scale_async()
                found_inf = sum([t.to(scaler.device, non_blocking=True)
                                 for t in optimizer_state["found_inf_per_device"].values()])
                optimizer.grad_scale = (
                    getattr(optimizer, "grad_scale", None)
                    if optimizer_state["stage"] == OptState.UNSCALED
                    else scaler * getattr(optimizer, "grad_scale", 1))
                optimizer.found_inf = found_inf
            retval = optimizer.step(*args, **kwargs_)
            optimizer_state["stage"] = OptState.STEPPED
            if not has_grad_scaler_kwarg:
                del optimizer.grad_scale
                del optimizer.found_inf
            return retval
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Update the scale: backoff_factor times it if a step was skipped, growth_factor
        times it after growth_interval unskipped steps; or set it to `new_scale`."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            if len(found_infs) > 1:
                for i in range(1, len(found_infs)):
                    found_inf_combined += found_infs[i]
            _amp_update_scale_(_scale, _growth_tracker, found_inf_combined,
                               self._growth_factor, self._backoff_factor,
                               self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            scale = self._get_scale_async()
            return self._init_scale if scale is None else scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({}
        when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = full((), 1.0, dtype=D.float32, device=_scale.device)
        found_inf = full((), 0.0, dtype=D.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

