"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp.

torch's own logic (tuple conventions, strict-mode errors, the double-backward trick for
jvp/hvp), built on eagergrad's autograd.grad, so create_graph=True results live in
eagergrad's graph. `vectorize=True` (reverse mode) is one batched backward
(autograd.grad(is_grads_batched=True): the engine once under jax.vmap);
strategy="forward-mode" traces the function on tracer-holding tensors and takes
jax.vmap(jax.jvp) over the standard basis (pushforwards need no conj conversion).
"""
import jax
import jax.numpy as jnp

from ..creation import from_jax, zeros_like
from ..engine.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..func._autograd import _over_autograd
from ..func._levels import _jvp_level
from ..ops.shape import stack
from .._shapes import as_tuple as _as_tuple_nocheck
from ..tensor import Tensor
from ._api import grad as _grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(inp, arg_name=None, fn_name=None):
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_inp_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    # create_graph: a differentiable view keeps the link to the user's graph
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the "
                               "inputs of the user-provided function. This is not allowed in "
                               "strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           "gradients. The outputs must be computed in a differentiable manner "
                           "from the input when running in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """autograd.grad over the outputs that require grad (all None when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _grad(tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept),
                 allow_unused=True, create_graph=create_graph, retain_graph=retain_graph,
                 is_grads_batched=is_grads_batched)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res += (grads_i,)
    return res


def _v_or_scalar(v, against, is_tuple, fn_name, what, create_graph):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, against, is_tuple)
        return v
    if len(against) != 1 or against[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor with "
                           "a single element.")
    return None


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`.

    >>> import eagergrad as torch
    >>> torch.autograd.functional.vjp(lambda x: x ** 2, torch.tensor([1., 2.]),
    ...                               torch.tensor([1., 1.]))[1]
    tensor([2., 4.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _v_or_scalar(v, outputs, is_outputs_tuple, "vjp",
                         "user-provided function returns", create_graph)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by torch's double-backward trick.

    >>> import eagergrad as torch
    >>> torch.autograd.functional.jvp(lambda x: x ** 2, torch.tensor([1., 2.]),
    ...                               torch.tensor([1., 0.]))[1]
    tensor([2., 0.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, is_inputs_tuple, "jvp",
                         "input to the user-provided function is", create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_outputs_tuple))


def _construct_standard_basis_for(tensors, numels):
    """One (sum(numels), numel_i) block per tensor; stacked they form the identity."""
    total, start, out = sum(numels), 0, []
    for t, n in zip(tensors, numels):
        out.append(from_jax(jnp.eye(total, n, k=-start, dtype=t._value.dtype)))
        start += n
    return tuple(out)


def _jacfwd(func, inputs, strict=False, vectorize=False):
    """The Jacobian by forward mode: jax.vmap of jax.jvp over the standard basis, of
    `func` run once on tensors holding tracers. As torch's, the result is differentiable
    w.r.t. the inputs and captured tensors that require grad: the call is traced as one
    program with autograd over it (func/_autograd.py _over_autograd)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and '
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    return _over_autograd(lambda *inps: _jacfwd_vectorized(func, inps, is_inputs_tuple),
                          inputs)


def _jacfwd_vectorized(func, inputs, is_inputs_tuple):
    numels = tuple(inp.numel() for inp in inputs)
    tangents = _construct_standard_basis_for(inputs, numels)
    info = []

    def f(*values):
        out = func(*(from_jax(x) for x in values))
        is_out_tuple, out = _as_tuple(out, "outputs")
        info[:] = [is_out_tuple, [tuple(o.shape) for o in out]]
        return tuple(o._value for o in out)

    primals = tuple(inp._value for inp in inputs)

    def push(*ts):
        return jax.jvp(f, primals, tuple(t.reshape(p.shape) for t, p in zip(ts, primals)))

    with _jvp_level():  # (.item() of a value: its primal, as torch's forward AD)
        outs, jvs = jax.vmap(push, out_axes=(None, 0))(*(t._value for t in tangents))
    is_outputs_tuple, shapes = info
    jac = []
    for out, jv, shape in zip(outs, jvs, shapes):
        if jv.dtype == jax.dtypes.float0:  # an integer output: zeros, as torch's no-tangent
            jv = jnp.zeros((sum(numels), *shape), out.dtype)
        row = []
        for j, inp in zip(from_jax(jv).split(numels, dim=0), inputs):
            row.append(j.permute(*range(1, j.ndim), 0).reshape((*shape, *inp.shape)))
        jac.append(row)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs` (nested tuples as torch: [output][input]).

    >>> import eagergrad as torch
    >>> torch.autograd.functional.jacobian(lambda x: x ** 2, torch.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` '
                                      'and `strategy="forward-mode"` are not supported together '
                                      '(yet). Please either set `create_graph=False` or '
                                      '`strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please either "
                                   "set `strict=False` or `vectorize=False`.")
            numels = tuple(o.numel() for o in outputs)
            grad_outputs = _construct_standard_basis_for(outputs, numels)
            flat_outputs = tuple(o.reshape(-1) for o in outputs)
            vj = list(_autograd_grad(flat_outputs, inputs, grad_outputs,
                                     create_graph=create_graph, is_grads_batched=True))
            for k, el in enumerate(vj):
                if el is None:
                    vj[k] = zeros_like(inputs[k]).expand((sum(numels),) + inputs[k].shape)
            jac_in_out = [[jac.view(o.shape + inp.shape)
                           for jac, o in zip(jac_i.split(numels, dim=0), outputs)]
                          for jac_i, inp in zip(vj, inputs)]
            jac = _grad_postprocess(tuple(zip(*jac_in_out)), create_graph)
            return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
        jac = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError("The jacobian of the user-provided function is "
                                               f"independent of input {i}. This is not allowed "
                                               "in strict mode when create_graph=True.")
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not allowed "
                                               "in strict mode.")
                        jac_i_el.append(zeros_like(inp_el))
            jac += (tuple(stack(el, dim=0).view(out.size() + inputs[k].size())
                          for k, el in enumerate(jac_i)),)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar `func` at `inputs` (nested tuples as torch).

    >>> import eagergrad as torch
    >>> torch.autograd.functional.hessian(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_outputs(func, inputs, strict, fn_name):
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return is_outputs_tuple, outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar `func`.

    >>> import eagergrad as torch
    >>> torch.autograd.functional.vhp(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]),
    ...                               torch.tensor([1., 1.]))[1]
    tensor([ 6., 12.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, is_inputs_tuple, "vhp",
                         "input to the user-provided function is", create_graph)
        is_outputs_tuple, outputs = _scalar_function_outputs(func, inputs, strict, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar `func`, by torch's double-backward trick.

    >>> import eagergrad as torch
    >>> torch.autograd.functional.hvp(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]),
    ...                               torch.tensor([1., 0.]))[1]
    tensor([6., 0.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, is_inputs_tuple, "hvp",
                         "input to the user-provided function is", create_graph)
        is_outputs_tuple, outputs = _scalar_function_outputs(func, inputs, strict, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))
