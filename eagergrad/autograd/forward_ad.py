"""torch.autograd.forward_ad: dual tensors and forward-mode AD.

A dual tensor carries a tangent (`Tensor._fw`, see tensor.py's `_Forward`); every op of
the table pushes tangents forward with jax.jvp of its kernel (ops/_table.py), views and
in-place ops keep them aliased as torch does (ops/inplace.py). As in torch 2.13 there is
one level at a time, and a level's tangents are gone once it exits.

>>> import eagergrad as torch
>>> import eagergrad.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
...     fwAD.unpack_dual(x * x).tangent
tensor([2., 0.])
"""
from typing import NamedTuple

from ..engine.grad_mode import _Mode
from ..ops._table import call_op
from ..ops.shape import ALIAS, view
from .._mode import FWD
from ..tensor import Tensor, _tangent

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1


def enter_dual_level():
    """Enter a new forward grad level (torch supports one at a time) and return it."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = FWD.level = 0
    FWD.gen += 1
    FWD.active = True
    return 0


def exit_dual_level(*, level=None):
    """Exit the current level: the tangents of its dual tensors are deleted."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    FWD.active = False
    FWD.gen += 1  # every tangent of this level is now stale
    _current_level = FWD.level = level - 1


def _check_level(level, what):
    if level != _current_level:
        raise RuntimeError(f"Invalid level given to {what}")


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing `tensor` (a view of it) with `tangent` as its tangent.

    >>> import eagergrad as torch
    >>> import eagergrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(torch.zeros(2), torch.ones(2))
    ...     fwAD.unpack_dual(d.exp()).tangent
    tensor([1., 1.])
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    _check_level(level, "_make_dual")
    if _tangent(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if tangent._shape != tensor._shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._shape)} while the given forward gradient is of size "
            f"{list(tangent._shape)}.")
    out = view(tensor, tensor._shape)  # ViewBackward0, as torch's _make_dual
    out._fw = (FWD.gen, tangent)
    return out


class UnpackedDualTensor(NamedTuple):
    """What unpack_dual returns: `primal` (a view of the dual tensor's primal) and
    `tangent` (its tangent as is, or None)."""
    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor; tangent is None for a tensor without one.

    >>> import eagergrad as torch
    >>> import eagergrad.autograd.forward_ad as fwAD
    >>> fwAD.unpack_dual(torch.ones(1))
    UnpackedDualTensor(primal=tensor([1.]), tangent=None)
    """
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    _check_level(level, "_fw_primal")
    tangent = _tangent(tensor)
    FWD.active = False
    try:
        primal = call_op(ALIAS, (tensor,))
    finally:
        FWD.active = True
    primal._fw = None
    return UnpackedDualTensor(primal, tangent)


class dual_level(_Mode):
    """Context manager for forward AD: enters a level, exits it (deleting its tangents).

    >>> import eagergrad as torch
    >>> import eagergrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level() as level:
    ...     level
    0
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
