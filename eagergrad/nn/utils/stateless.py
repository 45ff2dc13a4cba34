"""torch.nn.utils.stateless: call a module with some of its parameters and buffers swapped
for given tensors (the deprecated spelling of torch.func.functional_call), and the
swapping machinery torch.func.functional_call runs on.

>>> import eagergrad as torch, warnings
>>> m = torch.nn.Linear(2, 1)
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     out = torch.nn.utils.stateless.functional_call(
...         m, {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}, torch.ones(1, 2))
>>> out
tensor([[2.]])
"""
import contextlib
import warnings

from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]

_MISSING = object()


# ---- torch.nn.utils._named_member_accessor, the parts functional_call uses ---------------
def _swap_tensor(module, name, tensor):
    """Put `tensor` (or _MISSING: remove) at `module.name`; return what was there."""
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for registry in (module._parameters, module._buffers):
        if name in registry:
            orig = registry[name]
            if tensor is not _MISSING:
                registry[name] = tensor
            else:
                del registry[name]
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor) and orig is not None:
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


class _Accessor:
    """Dotted-name access to a module's tensors, submodule lookups cached."""

    def __init__(self, module):
        self.module = module
        self.memo = {}

    def get_submodule(self, name):
        if not name:
            return self.module
        if name not in self.memo:
            prefix, dot, attr = name.rpartition(".")
            module = self.get_submodule(prefix) if dot else self.module
            try:
                sub = getattr(module, attr)
            except AttributeError as ex:
                raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
            if not isinstance(sub, Module):
                raise TypeError(f"submodule `{name}`: {sub} is not an instance of "
                                "torch.nn.Module")
            self.memo[name] = sub
        return self.memo[name]

    def swap_tensors_dict(self, named_tensors):
        """Swap every tensor in; on an error swap back what was swapped and re-raise."""
        orig = {}
        try:
            for name, tensor in named_tensors.items():
                prefix, _, attr = name.rpartition(".")
                orig[name] = _swap_tensor(self.get_submodule(prefix), attr, tensor)
        except Exception:
            self.restore(orig)
            raise
        return orig

    def restore(self, named_tensors):
        for name, tensor in named_tensors.items():
            prefix, _, attr = name.rpartition(".")
            _swap_tensor(self.get_submodule(prefix), attr, tensor)

    def check_keys(self, keys):
        keys = set(keys)
        valid = {n for n, _ in self.module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in self.module.named_buffers(remove_duplicate=False)}
        return sorted(valid - keys), sorted(keys - valid)


# ---- torch.nn.utils.stateless ------------------------------------------------------------
def _untie_named_tensors_map(module, parameters_and_buffers):
    """A copy of `parameters_and_buffers` where a value given for one name of tied
    tensors (the same tensor under several names in `module`) is given for all of them."""
    all_named = dict(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    names_of = {}
    for name, tensor in all_named.items():
        names_of.setdefault(tensor, set()).add(name)
    tied_names_map = {n: names for names in names_of.values() if len(names) > 1
                      for n in names}
    given = {n for n in parameters_and_buffers if n in tied_names_map}
    for name in given:
        tied = tied_names_map[name]
        if (len(tied & given) > 1
                and len({parameters_and_buffers[t] for t in tied}) != 1):
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = parameters_and_buffers.copy()
    for name in given:
        for tied in tied_names_map[name]:
            untied[tied] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    untied = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    accessor = _Accessor(module)
    if strict:
        missing, unexpected = accessor.check_keys(untied)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    orig = {}
    try:
        orig = accessor.swap_tensors_dict(untied)
        yield
    finally:
        new = {}
        for name, tensor in orig.items():  # swap back, keeping what the call left there
            prefix, _, attr = name.rpartition(".")
            new[name] = _swap_tensor(accessor.get_submodule(prefix), attr, tensor)
        # a module that reassigned a swapped-in entry (e.g. in-place on _buffers) hands
        # the new tensor back through the caller's dict, as torch's does
        parameters_and_buffers.update(
            {k: new[k] for k in parameters_and_buffers if k in new})


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Deprecated spelling of torch.func.functional_call (warns FutureWarning)."""
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will "
        "be removed in a future version of PyTorch. Please use `torch.func.functional_call` "
        "instead which is a drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)
