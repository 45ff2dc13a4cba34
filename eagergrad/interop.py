"""JAX interop: tensors over jax arrays and functions of tensors as functions of arrays."""
import functools

import jax

from .creation import from_jax
from .tensor import Tensor


def _is_array(x):
    return isinstance(x, jax.Array) or isinstance(x, jax.core.Tracer)


def jaxify(fn):
    """Turn `fn` (tensors in, tensors out, any pytrees) into a function of jax arrays
    that works under jax.jit, jax.grad and jax.vmap.

    >>> import jax, jax.numpy as jnp, eagergrad as torch
    >>> f = torch.jaxify(lambda x: (x.sin() * x).sum())
    >>> float(jax.jit(jax.grad(f))(jnp.zeros(3, jnp.float32)).sum())
    0.0
    """
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args, kwargs = jax.tree_util.tree_map(
            lambda a: from_jax(a) if _is_array(a) else a, (args, kwargs))
        out = fn(*args, **kwargs)
        return jax.tree_util.tree_map(lambda t: t._value if isinstance(t, Tensor) else t, out,
                                      is_leaf=lambda t: isinstance(t, Tensor))
    return wrapped


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """torch.from_dlpack: a tensor of the values of an array of another library (numpy, jax,
    torch...: anything with `__dlpack__`), or of a capsule from `to_dlpack`. A copy,
    whatever `copy` asks: eagergrad's arrays must not alias memory another library may write.

    >>> import numpy as np, eagergrad as torch
    >>> torch.from_dlpack(np.arange(3))
    tensor([0, 1, 2])
    """
    if hasattr(ext_tensor, "__dlpack__"):
        arr = jax.dlpack.from_dlpack(ext_tensor)
    else:
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is "
                                 "already a DLPack capsule.")
        try:
            arr = jax.dlpack.from_dlpack(_Capsule(ext_tensor))
        except jax.errors.JaxRuntimeError as e:  # (a capsule consumed already)
            raise RuntimeError(_INVALID_CAPSULE) from e
    t = from_jax(jax.numpy.array(arr, copy=True))
    return t if device is None else t.to(device)


_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules "
                    "can be consumed only once, so you might have already constructed a "
                    "tensor from it once.")


class _Capsule:
    """A bare DLPack capsule (a CPU array's) as the object jax's from_dlpack takes."""

    def __init__(self, capsule):
        if type(capsule).__name__ != "PyCapsule":
            raise RuntimeError(_INVALID_CAPSULE)
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def to_dlpack(tensor):
    """torch.to_dlpack: a DLPack capsule of the tensor's values (for `from_dlpack` of
    another library, or of eagergrad)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_to_dlpack(): argument 'data' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor._value.__dlpack__()


from_dlpack.__module__ = "eagergrad"
to_dlpack.__module__ = "eagergrad"
