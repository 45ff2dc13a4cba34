"""How tensors cross process boundaries through torch.multiprocessing's queues and pipes:
by value. torch moves a tensor's storage into shared memory so that both processes see one
storage; an eagergrad tensor's storage is a jax array of one process, so the receiver gets
a copy (same values, dtype, shape and requires_grad; contiguous strides), and writes on
either side stay on that side. As in torch, a non-leaf tensor requiring grad is refused.
"""
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ..creation import tensor as _tensor
from ..nn.parameter import Parameter
from ..tensor import Tensor

__all__ = ["init_reductions", "rebuild_tensor", "reduce_tensor"]


def rebuild_tensor(cls, array, requires_grad):
    """The receiving side of `reduce_tensor`: a new tensor (a Parameter for a Parameter)."""
    t = _tensor(array)
    if cls is Parameter:
        return Parameter(t, requires_grad=requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def reduce_tensor(tensor):
    """The sending side: the tensor's values and requires_grad (torch's error for a non-leaf
    tensor requiring grad, whose graph cannot follow it)."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    return (rebuild_tensor, (type(tensor), np.asarray(tensor._value), tensor.requires_grad))


def init_reductions():
    """Send tensors and Parameters through multiprocessing's pickler with `reduce_tensor`
    (done when eagergrad is imported, as torch does)."""
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
