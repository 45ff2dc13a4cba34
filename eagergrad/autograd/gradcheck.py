"""torch.autograd.gradcheck / gradgradcheck: analytical Jacobians (one backward per output
element) against central finite differences, with torch's signatures, defaults, complex
rules and error messages. fast_mode=True compares one number per (input, output) pair
instead, v^T J u, for random unit vectors u and v: one backward with v against one
directional central difference along u (torch's fast mode, pytorch/pytorch#53876).

Complex functions are checked as torch checks them: a complex output is split into its
real and imaginary parts (two real-valued functions); for a complex input the numerical
derivative is ds/dx + i ds/dy, the conjugate Wirtinger convention (docs/design.md §8)
that backward computes. Reads values: not for use on jax tracers.
"""
import warnings

import numpy as np

from .. import _dtypes as D
from ..creation import rand, tensor, zeros_like
from ..engine.function import Function
from ..engine.fused import node_by_node
from .._shapes import as_tuple as _as_tuple
from ..ops.compare import allclose
from ..ops.shape import imag, real
from ..tensor import Tensor
from . import forward_ad
from ._api import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of `func` at `inputs` (the tensors with requires_grad) against
    finite differences; True when they agree, else GradcheckError (or False with
    raise_exception=False). Inputs should be float64 or complex128.

    >>> import eagergrad as torch
    >>> x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to "
                             "be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    for flag, name in ((check_batched_forward_grad, "check_batched_forward_grad"),
                       (check_batched_grad, "check_batched_grad")):
        if flag:
            raise NotImplementedError(f"eagergrad does not implement "
                                      f"torch.autograd.gradcheck({name}=True) yet")
    # masked only changes how sparse inputs are differentiated: eagergrad has none
    try:
        # node by node throughout: the check runs many backwards of a few structures
        # once each or so, which the fused backward would compile for nothing
        with node_by_node():
            if check_backward_ad:
                _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                           check_grad_dtypes, fast_mode)
            if check_forward_ad:
                tupled = _as_tuple(inputs)
                _check_inputs(tupled)
                _forward_gradcheck(func, tupled, eps, rtol, atol)
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of the function (inputs, grad_outputs) ->
    the gradients of `func`, computed with create_graph=True. Random grad_outputs (in
    [-1, 1)) when none are given.

    >>> import eagergrad as torch
    >>> x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradgradcheck(lambda t: t.exp() * t, (x,))
    True
    """
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_like(o, rand, gen_non_contig_grad_outputs)
                                    for o in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    n_out = len(tupled_grad_outputs)
    diff_inputs = {i for i, x in enumerate(tupled_inputs)
                   if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_outputs = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        ins = tuple(x.requires_grad_() if i in diff_inputs else x
                    for i, x in enumerate(args[:-n_out]))
        outs = _differentiable_outputs(func(*ins))
        gos = tuple(x.requires_grad_() if i in diff_grad_outputs else x
                    for i, x in enumerate(args[-n_out:]))
        grads = autograd_grad(outs, tuple(x for i, x in enumerate(ins) if i in diff_inputs),
                              gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)
    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _random_like(o, rand, noncontiguous):
    """torch.testing.make_tensor(o.shape, low=-1, high=1, noncontiguous=...): real and
    imaginary parts each in [-1, 1); noncontiguous: every other element of a buffer with
    a last dim twice as long."""
    dt = o.dtype if o.dtype.is_differentiable else D.float64
    shape = tuple(o.shape)
    wide = noncontiguous and o.numel() > 1
    if wide:
        shape = shape[:-1] + (2 * shape[-1],)
    t = rand(shape, dtype=dt.to_real()) * 2 - 1
    if dt.is_complex:
        t = (t + 1j * (rand(shape, dtype=dt.to_real()) * 2 - 1)).to(dt)
    if wide:
        t = t[..., ::2]
    return t.detach().requires_grad_()


# ---- the check ------------------------------------------------------------------------------
def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, fast_mode=False):
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    tupled = _as_tuple(inputs)
    _check_inputs(tupled)
    func_out = func(*tupled)
    outputs = _differentiable_outputs(func_out)
    complex_out = [i for i, o in enumerate(outputs) if o.is_complex()]
    if any(o.is_complex() for o in _as_tuple(func_out)):
        imag_fn, real_fn = _parts(func, imag), _parts(func, real)
        # slow mode: the central differences of func's complex outputs give both parts'
        # (their real and imaginary parts, bit for bit): func runs half as often
        raw = None if fast_mode else _raw_numerical_jacobian(func, tupled, eps)
        imag_out = imag_fn(*tupled)
        check(imag_fn, imag_out, tupled, _differentiable_outputs(imag_out), eps, rtol, atol,
              check_grad_dtypes, nondet_tol, complex_out, True,
              **({} if raw is None else {"numerical": _part_jacobian(raw, np.imag)}))
        real_out = real_fn(*tupled)
        check(real_fn, real_out, tupled, _differentiable_outputs(real_out), eps, rtol, atol,
              check_grad_dtypes, nondet_tol, complex_out, False,
              **({} if raw is None else {"numerical": _part_jacobian(raw, np.real)}))
    else:
        check(func, func_out, tupled, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol,
              None, False)
    _test_backward_mul_by_grad_output(outputs, tupled)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled)
    return True


def _forward_gradcheck(func, inputs, eps, rtol, atol):
    """check_forward_ad: per input requiring grad, the Jacobian from forward mode (a
    dual input with one unit tangent per element; for a complex input, 1 and 1j, as
    torch checks the real and imaginary parts of the input apart) against central
    differences along the same direction (whose complex outputs stay complex: a
    pushforward needs no conjugate convention)."""
    for j, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        data = inp.data
        args = list(inputs)
        for unit in ((1, 1j) if inp.is_complex() else (1,)):
            analytical, numerical = [], []
            for _d_idx, pos in enumerate(np.ndindex(*inp.shape)):
                tan = np.zeros(inp.shape, inp.dtype.np)
                tan[pos] = unit
                with forward_ad.dual_level():
                    dual = list(inputs)
                    dual[j] = forward_ad.make_dual(inp, tensor(tan))
                    outs = [o for o in _as_tuple(func(*dual)) if o.dtype.is_differentiable]
                    tangents = [forward_ad.unpack_dual(o).tangent for o in outs]
                    analytical.append([
                        np.zeros(o.numel(), o.dtype.np) if t is None else
                        t.detach().resolve_conj().numpy().reshape(-1).astype(o.dtype.np)
                        for o, t in zip(outs, tangents)])
                entry = data[pos] if pos else data
                numerical.append(_central_difference(func, args, entry, eps * unit))
            for i in range(len(analytical[0]) if analytical else 0):
                a = np.stack([row[i] for row in analytical])
                n = np.stack([row[i] for row in numerical])
                if not np.allclose(a, n, rtol, atol):
                    prefix = ("While considering the imaginary part of complex inputs only, "
                              if unit == 1j else "While considering the real part of complex "
                              "inputs only, " if inp.is_complex() else "")
                    raise GradcheckError(prefix + (
                        "Jacobian computed with forward mode mismatch for output %d with "
                        "respect to input %d,\nnumerical:%s\nanalytical:%s\n"
                        % (i, j, tensor(n), tensor(a))))


def _check_inputs(tupled):
    any_requiring = False
    for idx, inp in enumerate(tupled):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp.dtype is not D.float64 and inp.dtype is not D.complex128:
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                              "floating point or complex. This check will likely fail if all "
                              "the inputs are not of double precision floating point or "
                              "complex. ", stacklevel=4)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only "
                    "supports inputs that are non-overlapping to be able to compute the "
                    "numerical gradients correctly. You should call .contiguous on the "
                    "input before passing it to gradcheck.")
            any_requiring = True
    if not any_requiring:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _parts(fn, part):
    """fn with its complex outputs replaced by their real (or imaginary) parts."""
    def wrapped(*inputs):
        return tuple(part(o) if o.is_complex() else o for o in _as_tuple(fn(*inputs)))
    return wrapped


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, complex_indices, test_imag, numerical=None):
    func_out = _as_tuple(func_out)
    if numerical is None:
        numerical = _numerical_jacobian(func, inputs, func_out, eps)  # [input][output]
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if np.count_nonzero(jac) > 0:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    by_output = [[per_input[k] for per_input in numerical]
                 for k, o in enumerate(o for o in func_out if o.dtype.is_differentiable)
                 if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, by_output[i])):
            n = tensor(n)
            p = D.promote_types(a.dtype, n.dtype)
            if not allclose(a.to(p), n.to(p), rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j, complex_indices, test_imag))


def _notallclose_msg(analytical, numerical, output_idx, input_idx, complex_indices,
                     test_imag):
    prefix = ""
    if complex_indices and output_idx in complex_indices:
        prefix = (f"While considering the {'imaginary' if test_imag else 'real'} part of "
                  "complex outputs only, ")
    return prefix + ("Jacobian mismatch for output %d with respect to input %d,\n"
                     "numerical:%s\nanalytical:%s\n" % (output_idx, input_idx, numerical,
                                                        analytical))


def _numerical_jacobian(fn, inputs, outputs, eps):
    """Per input requiring grad, per float/complex output: the (input.numel(),
    output.numel()) Jacobian by central differences, perturbing one element at a time
    in place (through `.data`, as torch)."""
    outs = [o for o in outputs if o.dtype.is_differentiable]
    if any(o.is_complex() for o in outs):
        raise ValueError("Expected output to be non-complex. get_numerical_jacobian no longer "
                         "supports functions that return complex outputs.")
    return _part_jacobian(_raw_numerical_jacobian(fn, inputs, eps), None)


def _raw_numerical_jacobian(fn, inputs, eps):
    """Per input requiring grad: (its dtype, per float/complex output of fn (complex ones
    too) the (input.numel(), output.numel()) central differences along the real axis,
    and for a complex input those along the imaginary axis, else None)."""
    result = []
    for _idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        data = inp.data
        cplx = inp.is_complex()
        dxs, dys = [], []
        args = list(inputs)  # the inputs themselves: fn may differentiate w.r.t. them
        for pos in np.ndindex(*inp.shape):
            entry = data[pos] if pos else data
            dxs.append(_central_difference(fn, args, entry, eps))
            if cplx:
                dys.append(_central_difference(fn, args, entry, eps * 1j))
        if not dxs:  # (an empty input: (0, output.numel()) Jacobians)
            dxs = [[np.zeros((0, v.size), v.dtype) for v in _values(fn(*args))]]
            dys = dxs if cplx else []
            stack = lambda rows, k: rows[0][k]
        else:
            stack = lambda rows, k: np.stack([r[k] for r in rows])
        result.append((inp.dtype.np, [(stack(dxs, k), stack(dys, k) if cplx else None)
                                      for k in range(len(dxs[0]))]))
    return result


def _part_jacobian(raw, part):
    """_numerical_jacobian's [input][output] Jacobians from _raw_numerical_jacobian's
    differences, of `part` (np.real / np.imag) of each complex output; part None: the
    outputs are real. A complex input's is ds/dx + 1j ds/dy."""
    result = []
    for in_dtype, per_output in raw:
        jacs = []
        for dx, dy in per_output:
            if part is not None and np.iscomplexobj(dx):
                dx, dy = part(dx), None if dy is None else part(dy)
            jac = dx if dy is None else dx + 1j * dy
            if dy is not None:
                jac = jac.astype(in_dtype)
            jacs.append(jac)
        result.append(jacs)
    return result


def _central_difference(fn, args, entry, delta, norm=None):
    """(fn(x + delta) - fn(x - delta)) / 2|delta| per float output, `entry` (an element of
    an input's .data, or all of it, tracked by nothing) perturbed in place; a tensor delta
    (a direction) is divided by `norm`. fn runs in grad mode: a function of gradients
    (gradgradcheck) needs its graph."""
    orig = entry.clone()
    entry.copy_(orig - delta)
    outa = _values(fn(*args))
    entry.copy_(orig + delta)
    outb = _values(fn(*args))
    entry.copy_(orig)
    norm = abs(delta) if norm is None else norm
    return [_halved_difference(b - a, norm).reshape(-1) for a, b in zip(outa, outb)]


def _halved_difference(d, norm):
    """d / (2 norm), a complex d part by part (numpy's complex division would mix an
    infinite part into the other as NaN): its parts are those of the parts' own."""
    if not np.iscomplexobj(d):
        return d / (2 * norm)
    q = np.empty_like(d)
    q.real = d.real / (2 * norm)
    q.imag = d.imag / (2 * norm)
    return q


def _values(outs):
    """The float/complex outputs' values, as numpy arrays."""
    return [o.detach().resolve_conj().numpy().copy() for o in _as_tuple(outs)
            if o.dtype.is_differentiable]


def _basis(output):
    """The grad_outputs of slow mode: one per element of output, 1 there."""
    for j in range(output.numel()):
        base = np.zeros(output.numel(), output.dtype.np)
        base[j] = 1
        yield base


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes, v=None):
    """Per input requiring grad: the (input.numel(), output.numel()) Jacobian, one
    backward per output element (or, v given, the single column v^T J: fast mode),
    computed twice (torch's reentrancy check)."""
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    n_cols = output.numel() if v is None else 1

    def rows():
        cols = [[] for _ in diff]
        for base in (_basis(output) if v is None else [v]):
            g = tensor(base.reshape(output.shape))
            for k, d in enumerate(autograd_grad(output, diff, g, retain_graph=True,
                                                allow_unused=True)):
                cols[k].append(None if d is None else d.detach().clone())
        return cols

    def stack(cols):
        jacs, types_ok, sizes_ok = [], True, True
        for x, col in zip(diff, cols):
            jac = np.zeros((x.numel(), n_cols), x.dtype.np)
            for j, d in enumerate(col):
                if d is None:
                    continue
                if d.shape != x.shape:
                    sizes_ok = False
                if d.dtype is not x.dtype:
                    types_ok = False
                jac[:, j] = d.resolve_conj().numpy().reshape(-1)
            jacs.append(jac)
        return jacs, types_ok, sizes_ok

    with node_by_node():  # (two backwards compared bit for bit: one executor)
        jac1, types_ok, sizes_ok = stack(rows())
        jac2, _, _ = stack(rows())
    reentrant = all(a.shape == b.shape and np.max(np.abs(a - b), initial=0) <= nondet_tol
                    for a, b in zip(jac1, jac2))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical "
            f"gradient matches numerical gradient.The tolerance for nondeterminism was "
            f"{nondet_tol}." + FAILED_NONDET_MSG)
    return [tensor(j) for j in jac1]


# ---- fast mode --------------------------------------------------------------------------------
FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def _unit(rng, n, np_dtype):
    """A random vector of n nonnegative entries and norm 1 (torch's _vec_from_tensor)."""
    u = rng.random(n).astype(np_dtype)
    return u / np.linalg.norm(u)


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, complex_indices, test_imag):
    # a generator of its own, as torch's: the user's random state stays as it was
    rng = np.random.default_rng(0)
    diff = [(i, x) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    all_u = []
    for _, x in diff:
        real = x.dtype.to_real().np
        ur = _unit(rng, x.numel(), real)
        all_u.append((ur, _unit(rng, x.numel(), real)) if x.is_complex() else ur)
    all_v = [_unit(rng, o.numel(), o.dtype.np) for o in outputs]
    numerical = []  # [input][float output]: v^T (J u) (just J u when there is no output)
    for (_idx, x), u in zip(diff, all_u):
        ju = _numerical_jvp(func, inputs, x, u, eps)
        numerical.append([v @ j for v, j in zip(all_v, ju)] if outputs else ju)
    if not outputs:
        if any(j.size and np.max(np.abs(j)) > nondet_tol for ju in numerical for j in ju):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    analytical = []  # [output][input]: (v^T J) u
    for o, v in zip(outputs, all_v):
        vjs = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes, v)
        row = []
        for vj, u in zip(vjs, all_u):
            vj = vj.numpy()[:, 0]
            row.append(vj.real @ u[0] + 1j * (vj.imag @ u[1]) if vj.dtype.kind == "c"
                       else vj @ u)
        analytical.append(row)
    for i, per_input in enumerate(numerical):
        for j, n in enumerate(per_input):
            a = analytical[j][i]
            u = all_u[i]
            sum_u = float(u[0].sum()) + float(u[1].sum()) if isinstance(u, tuple) \
                else float(u.sum())
            if not np.allclose(a, n, rtol, atol * sum_u * float(all_v[j].sum())):
                raise GradcheckError(
                    _notallclose_msg(_scalar(a), _scalar(n), j, i, complex_indices, test_imag)
                    + _slow_mode_error(func, inputs, outputs, i, j, rtol, atol, eps))


def _scalar(x):
    return complex(x) if np.iscomplexobj(x) else float(x)


def _numerical_jvp(fn, inputs, x, u, eps):
    """J u per float output by one central difference along u (for a complex input,
    ds/dx along ur plus i ds/dy along ui: the conjugate Wirtinger derivative)."""
    data = x.data
    if isinstance(u, tuple):
        dx = _central_difference(fn, list(inputs), data, tensor(eps * u[0].reshape(x.shape)),
                                 eps)
        dy = _central_difference(fn, list(inputs), data,
                                 tensor(eps * 1j * u[1].reshape(x.shape)), eps)
        return [a + 1j * b for a, b in zip(dx, dy)]
    return _central_difference(fn, list(inputs), data, tensor(eps * u.reshape(x.shape)), eps)


def _slow_mode_error(func, inputs, outputs, input_idx, output_idx, rtol, atol, eps):
    """The slow-mode Jacobians of the failing pair, for the message (as torch)."""
    numerical = tensor(_numerical_jacobian(func, inputs, outputs, eps)[input_idx][output_idx])
    analytical = _analytical_jacobian(inputs, outputs[output_idx], float("inf"), False)
    analytical = analytical[input_idx]
    max_diff = (numerical - analytical).abs().max()
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are "
           "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 "
           "for more background \nabout fast mode. Below, we recompute numerical and "
           "analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {numerical}\nAnalytical:\n{analytical}\n\n"
           f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if allclose(analytical, numerical, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _test_backward_mul_by_grad_output(outputs, inputs):
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    grads = autograd_grad(outputs, diff, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        if not bool(gi.eq(0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")


class _UndefinedGrad(Function):
    """torch._C._functions.UndefinedGrad: the identity, whose backward hands on no
    gradient (an undefined one) to the node before it."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return None


def _test_undefined_backward_mode(func, outputs, inputs):
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking "
                      "feature is enabled by default, but it may break existing callers of "
                      "this function. If this is true for you, you can call this function "
                      "with \"check_undefined_grad=False\" to disable the feature",
                      stacklevel=2)

    def check(outs):
        try:
            grads = autograd_grad(outs, diff, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                "\"Notes about undefined output gradients\" in "
                "\"tools/autograd/derivatives.yaml\"") from e
        for gi in grads:
            if gi is not None and not bool(gi.eq(0).all()):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    "are undefined or zero. Please look at \"Notes about undefined output "
                    "gradients\" in \"tools/autograd/derivatives.yaml\"")

    cases = [[_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))]]
    if len(cases[0]) > 1:
        for k in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            cases.append([_UndefinedGrad.apply(o) if i == k else o for i, o in enumerate(outs)])
    for outs in cases:
        check(outs)
