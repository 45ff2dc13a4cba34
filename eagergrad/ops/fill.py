"""fill_, copy_ and zero_: the ops in-place writes (`x[...] = v`, `copy_`) run on their
target; torch's FillBackward2/3 and CopyBackwards nodes."""
import jax.numpy as jnp

from .. import creation as _creation
from .._cache import keyed
from .._dtypes import astype, bool_ as _bool, warn_if_discarding_imag
from ..size import can_broadcast_to
from ..engine.grad_mode import STATE
from .._mode import CAPTURING, FWD
from ..tensor import Tensor, _make
from . import pointwise as P
from ._args import as_t
from ._table import DTChain, defop, call_op
from .inplace import overlap_rule

ZERO = defop("zero", lambda self: jnp.zeros_like(self), self=P._zeros)
# the value is traced (NOTE [traced scalars] in pointwise.py): x.fill_(v) for every v, one
# executable
FILL = defop("fill", lambda self, value: jnp.full_like(self, value), attrs=("value",),
             node="FillBackward2", dynamic=("value",), self=P._zeros)
FILL.static_of = P.scalar_types
FILL_T = defop("fill_tensor", lambda self, value: jnp.full_like(self, value),
               inputs=("self", "value"), node="FillBackward3",
               self=P._zeros, value=lambda grad: grad.sum())
COPY = defop("copy", lambda self, src: jnp.broadcast_to(astype(src, self.dtype), self.shape),
             inputs=("self", "src"), node="CopyBackwards",
             self=P._zeros, src=lambda grad: grad)

COPY.Node.name = lambda self: "torch::autograd::CopyBackwards"  # a torch built-in node


@overlap_rule(internal=False)
def _zero(t):
    return call_op(ZERO, (t,))


@overlap_rule(scalar_internal=False, partial=False)
def _fill(t, value):
    return _fill_call(t, value, FILL, FILL_T)


def _fill_call(t, value, scalar_op, tensor_op):
    """fill_'s checks, then scalar_op (a number, traced) or tensor_op (a 0-dim tensor)."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return call_op(tensor_op, (t, value))
    return call_op(scalar_op, (t,), (keyed(checked_fill(value, t.dtype)),))


def checked_fill(value, dt):
    """Number `value` as a fill of dtype `dt`, with torch's checked_convert errors
    (fill_, full)."""
    if value.__class__ is int and value >= 2 ** 63:  # (a Scalar takes it as a uint64)
        if value >= 2 ** 64:
            raise OverflowError("int too big to convert")
        if dt._kind == 1:
            raise RuntimeError(f"value cannot be converted to type "
                               f"{P._CONVERT_NAMES.get(dt, dt.cpp_name)} without overflow")
        value = float(value)
    if dt is _bool:  # (torch: any number, true when nonzero)
        P.check_scalar(value, dt)
        return bool(value)
    if isinstance(value, complex) and not dt.is_complex:
        if value.imag != 0:  # (a traced value would lose it)
            raise RuntimeError(f"value cannot be converted to type "
                               f"{P._CONVERT_NAMES.get(dt, dt.cpp_name)} without overflow")
        value = value.real
    P.check_scalar(value, dt)
    return value


_creation.CHECKED_FILL[0] = checked_fill


@overlap_rule(noop_on_self=True)  # torch's copy_ returns at once when src is self
def _copy(t, src):
    src = as_t(src)
    if not can_broadcast_to(src._shape, t._shape):
        raise RuntimeError(f"The size of tensor a ({t._shape[-1]}) must match the size of tensor "
                           f"b ({src._shape[-1]}) at non-singleton dimension "
                           f"{len(t._shape) - 1}")
    warn_if_discarding_imag(src.dtype, t.dtype)
    if src._shape == t._shape and src.dtype is t.dtype and not FWD.active and \
            not CAPTURING.n and not (STATE.grad and (src.requires_grad or t.requires_grad)) \
            and t._vchain.__class__ is not DTChain and src._vchain.__class__ is not DTChain:
        # the copy's value is src's own array (arrays are immutable): no kernel, so no
        # compile per shape (`p.copy_(w)` for every parameter, init's in-place draws)
        return _make(src._value)
    return call_op(COPY, (t, src))
