"""torch.autograd.Variable: the pre-0.4 wrapper, kept as torch keeps it. `Variable(t)` is a
new leaf sharing t's data (`t.detach()`, with `requires_grad` set when asked), and every
tensor is an instance of Variable.

>>> import eagergrad as torch
>>> x = torch.autograd.Variable(torch.ones(2), requires_grad=True)
>>> x.requires_grad, isinstance(x, torch.autograd.Variable)
(True, True)
"""
from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False, volatile=False): a leaf over `data`'s values."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            raise TypeError("Variable() missing 1 required positional argument: 'data'")
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            import warnings
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)
