"""Parameter and Buffer: tensors that a Module registers as its state.

A Parameter is a Tensor subclass sharing the storage and version counter of the tensor
it wraps (torch's `Tensor._make_subclass`); ops on it return plain Tensors, as in torch.
"""
from ..creation import _requiring_grad, empty
from ..tensor import Tensor

_SLOTS = tuple(s for s in Tensor.__slots__ if s != "__weakref__")
_UNSET = object()


def _alias_as(cls, data):
    """A `cls` instance over `data.detach()` (same storage and version counter)."""
    d = data.detach()
    out = object.__new__(cls)
    for s in _SLOTS:
        v = getattr(d, s, _UNSET)
        if v is not _UNSET:
            object.__setattr__(out, s, v)
    return out


class Parameter(Tensor):
    """A leaf tensor that a Module lists among its parameters.

    >>> import eagergrad as torch
    >>> p = torch.nn.Parameter(torch.ones(2))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    __module__ = "eagergrad.nn.parameter"

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        return _requiring_grad(_alias_as(cls, data), requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """A tensor that, assigned to a Module attribute, registers as a buffer
    (`persistent=False`: left out of the state_dict).

    >>> import eagergrad as torch
    >>> m = torch.nn.Module()
    >>> m.running = torch.nn.Buffer(torch.zeros(3))
    >>> list(m.state_dict())
    ['running']
    """

    __module__ = "eagergrad.nn.parameter"

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = _alias_as(cls, data)
        t._requires_grad = data.requires_grad
        t.persistent = persistent
        return t

    def __reduce_ex__(self, proto):
        return (Buffer, (self.data,), {"persistent": self.persistent})


def is_lazy(param):
    """Whether `param` is an uninitialized parameter or buffer (eagergrad has none yet)."""
    return False
