"""Optimizer: param groups, per-parameter state, state_dict in torch's format, step hooks.

Subclasses compute their updates with the jitted kernels of `_kernels.py`, which write the
results into the parameters and state tensors in place (see `_put`), so versions bump as
torch's in-place ops bump them (each kernel declares its counts).
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .. import _dtypes as D
from .._mode import COMPILING
from ..creation import tensor as _tensor
from ..engine.grad_mode import enable_grad, no_grad
from ..engine.hooks import RemovableHandle
from ..tensor import Tensor, _make, reset_grad
from ..tensor import typename as _typename

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton for a required optimizer option (torch.optim.optimizer.required)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()



def _scalar_dtype():
    """The dtype of a `step` state tensor: float64 when that is the default, else float32."""
    return D.float64 if D.get_default_dtype() is D.float64 else D.float32


def _step_tensor():
    return _tensor(0.0, dtype=_scalar_dtype())


def _upgrade_step(opt, *keys):
    """__setstate__: state entries saved as Python numbers ("step", `keys`) become scalar
    tensors, as torch's optimizers convert old checkpoints."""
    for group in opt.param_groups:
        for p in group["params"]:
            p_state = opt.state.get(p, [])
            for key in ("step",) + keys:
                if len(p_state) != 0 and not isinstance(p_state[key], Tensor):
                    p_state[key] = _tensor(float(p_state[key]), dtype=_scalar_dtype())


def _put(t, arr, bumps=1):
    """Write `arr` into tensor `t` in place, counting `bumps` in-place ops (the number torch
    runs on that tensor for this update), as an in-place op under no_grad does."""
    if t._inference:  # (copy_ decides whether that is allowed, with torch's error)
        t.copy_(_make(arr))
        bumps -= 1
    else:
        t._write(arr)
    t._version_counter.version += bumps


def _check_capturable(group):
    if group.get("capturable"):
        raise AssertionError("If capturable=True, params and state_steps must be on supported "
                             "devices: ['cuda', 'xpu', 'hpu', 'privateuseone', 'xla'].")


def _check_fused_foreach(fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_hyper(**hypers):
    """torch's constructor checks of the hyperparameters given, in the order given (each
    optimizer's own order): a Tensor lr must have one element; lr, eps and the others must be
    >= 0, rho in [0, 1], each beta in [0, 1), 0 < etas[0] < 1 < etas[1]; ValueError."""
    for name, value in hypers.items():
        if name == "betas":
            for i in (0, 1):
                if not 0.0 <= value[i] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {value[i]}")
        elif name == "etas":
            if not 0.0 < value[0] < 1.0 < value[1]:
                raise ValueError(f"Invalid eta values: {value[0]}, {value[1]}")
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        else:
            if name == "lr" and hasattr(value, "numel") and value.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            if not 0.0 <= value:
                if name == "lr":
                    raise ValueError(f"Invalid learning rate: {value}")
                label = "epsilon" if name == "eps" else name
                raise ValueError(f"Invalid {label} value: {value}")


def _set_group_defaults(opt, /, **defaults):
    """__setstate__: options missing from the groups of an old checkpoint take `defaults`
    (group.setdefault, in the order given)."""
    for group in opt.param_groups:
        for name, default in defaults.items():
            group.setdefault(name, default)


def _hyper(x):
    """A hyperparameter as a Python number (a 1-element tensor's value)."""
    return x.item() if isinstance(x, Tensor) else x


class Optimizer:
    """Base class of all optimizers: `params` is an iterable of tensors, or of dicts each
    with a "params" entry and per-group options overriding `defaults`.

    >>> import eagergrad as torch
    >>> w = torch.zeros(2, requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> (w - 1.0).pow(2).sum().backward(); opt.step(); opt.zero_grad()
    >>> w
    tensor([0.2000, 0.2000], requires_grad=True)
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [ParamGroup(params=param_groups)]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ---- step and its hooks ----------------------------------------------------------
    @staticmethod
    def profile_hook_step(func):
        """Wrap a `step` so that the global and this optimizer's step hooks run around it."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            if COMPILING.splits and len(args) == 1 and not kwargs:
                piece = COMPILING.piece(self, self.step)
                if piece is not None:
                    return piece()
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            out = func(*args, **kwargs)
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _patch_step_function(self):
        cls = self.__class__
        if not getattr(cls.step, "hooked", None):
            cls.step = self.profile_hook_step(cls.step)
            cls.step.hooked = True

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before step."""
        return RemovableHandle(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, after step."""
        return RemovableHandle(self._optimizer_step_post_hooks, hook)

    def step(self, closure=None):
        raise NotImplementedError

    def _run_step(self, closure, update):
        """The body every optimizer's step shares: the closure with grad enabled, then
        `update(group)` per group under no_grad; returns the closure's loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        rec = COMPILING.rec
        if rec is not None:
            rec.optimizer_step(self, update)
        for group in self.param_groups:
            if group.get("differentiable"):
                _differentiable_step(group)
            with no_grad():
                update(group)
        if rec is not None:
            rec.optimizer_step(None, None)
        return loss

    # ---- groups ------------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a group ({"params": ..., option: value, ...}); missing options take the
        defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections,"
                            " but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's .grad: to None (default) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                reset_grad(p, set_to_none)

    # ---- state_dict ----------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _register(hooks, hook, prepend):
        handle = RemovableHandle(hooks, hook)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def state_dict(self):
        """{"state": {param index: {name: value}}, "param_groups": [options with "params" as
        indices]}; the state's tensors are this optimizer's own (not copies), as in torch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        sd = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, sd)
            if result is not None:
                sd = result
        return sd

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                  key=None):
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict):
        """Load a state_dict() of an optimizer over parameters of the same group sizes;
        tensors of the parameter's dtype are taken as they are (not copied), as in torch."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v, param_id=k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return ParamGroup(new_group)

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)


class ParamGroup(dict):
    """A param group the optimizer made (from a list of parameters, or by load_state_dict):
    a dict that tells a compiled call's trace when Python other than the optimizer's own
    step reads its floats; they are then guarded by value instead of lifted into inputs
    (NOTE [lifted hyperparameters] in _dynamo/_step.py). Groups the user gave as dicts
    stay the user's dicts, guarded by value."""
    __slots__ = ()

    def __getitem__(self, k):
        v = dict.__getitem__(self, k)
        if COMPILING.n and (v.__class__ is float or v.__class__ is tuple):
            _read_outside_step(self)
        return v

    def get(self, k, default=None):
        return self[k] if k in self else default

    def items(self):
        if COMPILING.n:
            _read_outside_step(self)
        return dict.items(self)

    def values(self):
        if COMPILING.n:
            _read_outside_step(self)
        return dict.values(self)

    def __iter__(self):  # (so that dict(group) and {**group} read through __getitem__)
        return dict.__iter__(self)

    def __reduce_ex__(self, protocol):  # (pickles, deepcopies as a plain dict)
        return dict, (dict(self),)


def _read_outside_step(group):
    rec = COMPILING.rec
    if rec is not None and rec.stepping is None:
        rec.group_read(group)


def _differentiable_step(group):
    """differentiable=True: torch runs the update with grad enabled, which fails for leaf
    parameters (with torch's error); eagergrad does not record optimizer updates yet."""
    with_grad = [p for p in group["params"] if p.grad is not None]
    for p in with_grad:
        if p.is_leaf and p.requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    if with_grad:
        from .._torch_names import missing
        raise missing("torch.optim with differentiable=True on non-leaf parameters")


def register_optimizer_step_pre_hook(hook):
    """A step pre hook for every optimizer."""
    return RemovableHandle(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """A step post hook for every optimizer."""
    return RemovableHandle(_global_optimizer_post_hooks, hook)
