"""torch.func: function transforms (grad, grad_and_value, vjp, jvp, linearize, jacrev,
jacfwd, hessian, vmap, functionalize) built on jax's transforms of the eager function,
and functional_call over modules.

Each transform runs the eager function once on tensors that hold jax tracers and applies
the matching jax transform (jax.vjp, jax.jvp, jax.vmap), so transforms compose (vmap of
grad, jacfwd of jacrev) and run under jax.jit. Called eagerly, a transform is traced
anew on every call, so the user's Python runs each time as in torch, exactly once per
call (torch's linearize runs it twice, and so does ours); NOTE [programs] says how the
traces become compiled programs. Autograd over a transform: outputs are differentiable
w.r.t. the tensors that require grad which it reads, arguments or captured by closure
(NOTE [captured tensors]). A function that reads values (.item(), float(), bool() on a
traced tensor) gets them from the trace itself (NOTE [values in a trace]).

The modules, lowest first: _pytree (pytrees of tensors), _trace (tracing to a jaxpr),
_program (a call's capture, its program, keys and caches of executables), _levels
(.item(), bool() and random draws inside a transform), _jax_transforms (what each
transform computes in jax), _autograd (autograd over a transform), _deferred
(transforms inside a program's trace), then the transforms: _eager_transforms (as torch's
torch/_functorch/eager_transforms.py), _vmap, _functional_call.
"""
from .._torch_names import module_getattr
from ._eager_transforms import (functionalize, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                                linearize, vjp)
from ._functional_call import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._vmap import vmap

__all__ = [
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "vjp",
    "vmap",
    "functional_call",
    "stack_module_state",
    "replace_all_batch_norm_modules_",
]
__getattr__ = module_getattr("eagergrad.func", "torch.func")
