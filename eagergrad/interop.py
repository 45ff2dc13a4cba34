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
