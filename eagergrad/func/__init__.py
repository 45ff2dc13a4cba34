"""torch.func: function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, ...)
built on jax's transforms of the eager function, and functional_call over modules."""
from .._torch_names import module_getattr
from . import _functional_call, _transforms
from ._functional_call import *  # noqa: F401,F403
from ._transforms import *  # noqa: F401,F403

__all__ = [*_transforms.__all__, *_functional_call.__all__]
__getattr__ = module_getattr("eagergrad.func", "torch.func")
