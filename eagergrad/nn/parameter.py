"""Parameter and Buffer: tensors that a Module registers as its state.

A Parameter is a Tensor subclass sharing the storage and version counter of the tensor
it wraps (torch's `Tensor._make_subclass`); ops on it return plain Tensors, as in torch.
"""
import weakref

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
        as_parameter = getattr(type(data), "_as_parameter", None)
        if as_parameter is not None:  # a DTensor: a parameter that stays a DTensor
            return _requiring_grad(as_parameter(data, cls), requires_grad)
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


class UninitializedTensorMixin:
    """What an uninitialized parameter or buffer has: no shape until `materialize`."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Give it `shape` (uninitialized values) and make it a plain parameter/tensor."""
        if dtype is None:
            dtype = self.dtype
        self.data = empty(shape, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape a lazy module infers on its first forward.

    >>> import eagergrad as torch
    >>> p = torch.nn.UninitializedParameter()
    >>> p.materialize((2, 3)); type(p).__name__, p.shape
    ('Parameter', torch.Size([2, 3]))
    """

    __module__ = "eagergrad.nn.parameter"
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _requiring_grad(_alias_as(cls, empty(0, dtype=dtype)), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, None, self.dtype)
        memo[id(self)] = result
        return result


_PERSISTENT = {}  # id(UninitializedBuffer) -> persistent (it has no __dict__ to hold it)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module infers on its first forward.

    >>> import eagergrad as torch
    >>> b = torch.nn.UninitializedBuffer()
    >>> b.materialize((2,)); type(b).__name__
    'Tensor'
    """

    __module__ = "eagergrad.nn.parameter"
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _alias_as(cls, empty(0, dtype=dtype))
        t._requires_grad = bool(requires_grad)
        _PERSISTENT[id(t)] = persistent
        weakref.finalize(t, _PERSISTENT.pop, id(t), None)
        return t

    @property
    def persistent(self):
        return _PERSISTENT.get(id(self), True)

    _is_buffer = True


def is_lazy(param):
    """Whether `param` is an UninitializedParameter or UninitializedBuffer.

    >>> import eagergrad as torch
    >>> torch.nn.parameter.is_lazy(torch.nn.UninitializedParameter())
    True
    """
    return isinstance(param, UninitializedTensorMixin)
