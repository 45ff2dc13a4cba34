"""Differential tests of every op against real torch, driven by tests/_samples.py.

For each sample (float32 and float64): forward values, output dtypes, the graph
(grad_fn names, next_functions, output_nr, requires_grad), `_is_view()` with a view's
strides and storage offset, gradients of every input that requires grad (float64; float32
for a subset), and float64 second-order gradients (w.r.t. the inputs and the
grad_outputs). Then torch's type-promotion table and torch's error messages (torch's
rules at non-differentiable points: test_special_points.py).

Known discrepancies are strict xfails declared on the samples (Sample.xfail).
"""
import zlib

import jax
import numpy as np
import pytest
import torch

import conftest
import eagergrad as eg
from eagergrad._dtypes import FROM_NP
from _samples import (ALL, as_list, dtype_name, make_inputs, random_like, sweep_marks, to_np,
                      tolerance)

# ---- running a sample in both libraries (forward results are cached per test run) --------
_CACHE = {}


def _run(sample, fdt):
    """(torch inputs, torch outputs, eg inputs, eg outputs), forward computed once."""
    key = (sample.id, fdt)
    r = _CACHE.get(key)
    if r is None:
        arrays = sample.arrays(fdt)
        r = []
        for m in (torch, eg):
            ins = make_inputs(m, sample, fdt, arrays)
            r += [ins, as_list(sample.call(m, *ins))]
        _CACHE[key] = r = tuple(r)
    return r


def _rng(sample, salt):
    return np.random.default_rng(zlib.crc32(f"{sample.id}/{salt}".encode()))


def _assert_close(actual, expected, sample=None, what="", factor=1.0, fdt="float64"):
    a, e = to_np(actual), to_np(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != torch's {e.shape}"
    assert dtype_name(actual) == dtype_name(expected), \
        f"{what}: dtype {actual.dtype} != torch's {expected.dtype}"
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, e, err_msg=what)
    else:
        rtol, atol = tolerance(dtype_name(expected), sample, fdt)
        np.testing.assert_allclose(a, e, rtol=rtol * factor, atol=atol * factor,
                                   equal_nan=True, err_msg=what)


def _node_name(fn):
    return None if fn is None else type(fn).__name__


def _graph(outs):
    return [(o.requires_grad, _node_name(o.grad_fn), o.output_nr if o.grad_fn else None,
             [(_node_name(n), i) for n, i in o.grad_fn.next_functions] if o.grad_fn else None)
            for o in outs]


def _grad_outputs(sample, t_outs, e_outs, requires_grad=False):
    """Seeded random grad_outputs for the outputs that require grad in torch."""
    rng = _rng(sample, "v")
    idx = [i for i, o in enumerate(t_outs) if o.requires_grad]
    vs = [random_like(rng, tuple(t_outs[i].shape), dtype_name(t_outs[i])) for i in idx]
    tv = [torch.tensor(v, requires_grad=requires_grad) for v in vs]
    ev = [eg.tensor(v, requires_grad=requires_grad) for v in vs]
    return idx, tv, ev


def _rg_inputs(ins):
    return [t for t in ins if t.requires_grad]


# ---- the checks ----------------------------------------------------------------------------
def check_forward(sample, fdt):
    t_in, t_out, e_in, e_out = _run(sample, fdt)
    assert len(e_out) == len(t_out)
    for k, (e, t) in enumerate(zip(e_out, t_out)):
        _assert_close(e, t, sample, f"output {k}", fdt=fdt)


def check_graph(sample, fdt):
    t_in, t_out, e_in, e_out = _run(sample, fdt)
    tg = _graph(t_out)
    if sample.nondiff:  # the sample's label agrees with torch
        assert not any(o.requires_grad for o in t_out)
    elif sample.differentiable:
        assert any(o.requires_grad for o in t_out)
    assert _graph(e_out) == tg


def _layout(o):
    return (o._is_view(), o.is_contiguous(),
            (tuple(o.stride()), o.storage_offset()) if o._is_view() else None)


def check_is_view(sample, fdt):
    """_is_view(), and a view's strides and storage offset (torch's view semantics)."""
    t_in, t_out, e_in, e_out = _run(sample, fdt)
    assert [_layout(o) for o in e_out] == [_layout(o) for o in t_out]


def check_backward(sample, fdt, runs=None):
    """torch's gradients, against eagergrad's in `runs` (default RUNS) runs
    (conftest.repeat: the first node by node, then fused): run 1 on the forward graph
    the other checks share, runs 2+ on fresh forwards, the last without retain_graph.
    eagergrad differentiates `output * 1.0` (exactly the same gradients), so that the
    op's node is not alone between the captured inputs: a segment needs two op nodes to
    be fused."""
    t_in, t_out, e_in0, e_out0 = _run(sample, fdt)
    idx, tv, ev = _grad_outputs(sample, t_out, e_out0)
    assert [e_out0[i].requires_grad for i in idx] == [True] * len(idx)
    t_x, t_o = _rg_inputs(t_in), [t_out[i] for i in idx]
    if sample.backward_error:
        with pytest.raises(RuntimeError, match=sample.backward_error):
            torch.autograd.grad(t_o, t_x, tv, retain_graph=True, allow_unused=True)
    else:
        tg = torch.autograd.grad(t_o, t_x, tv, retain_graph=True, allow_unused=True)

    def run(k):
        if k == 0:
            e_in, e_out = e_in0, e_out0
        else:
            e_in = make_inputs(eg, sample, fdt, sample.arrays(fdt))
            e_out = as_list(sample.call(eg, *e_in))
        e_x, e_o = _rg_inputs(e_in), [e_out[i] * 1.0 for i in idx]
        retain = k < runs - 1
        if sample.backward_error:
            with pytest.raises(RuntimeError, match=sample.backward_error):
                eg.autograd.grad(e_o, e_x, ev, retain_graph=retain, allow_unused=True)
            return
        eg_ = eg.autograd.grad(e_o, e_x, ev, retain_graph=retain, allow_unused=True)
        assert [g is None for g in eg_] == [g is None for g in tg], f"run {k + 1}"
        for j, (e, t) in enumerate(zip(eg_, tg)):
            if t is not None:
                assert not e.requires_grad
                _assert_close(e, t, sample, f"run {k + 1}: grad of input {j}", fdt=fdt)
    runs = conftest.RUNS if runs is None else runs
    conftest.repeat(run, runs)


def check_double_backward(sample, fdt):
    """Grads of sum(grad_i * w_i) w.r.t. the inputs and the grad_outputs v (so the
    backward formulas' own Backward nodes run, e.g. select_backward's)."""
    t_in, t_out, e_in, e_out = _run(sample, fdt)
    idx, tv, ev = _grad_outputs(sample, t_out, e_out, requires_grad=True)
    t_x, e_x = _rg_inputs(t_in), _rg_inputs(e_in)
    tg = torch.autograd.grad([t_out[i] for i in idx], t_x, tv, retain_graph=True,
                             create_graph=True, allow_unused=True)
    eg_ = eg.autograd.grad([e_out[i] for i in idx], e_x, ev, retain_graph=True,
                           create_graph=True, allow_unused=True)
    assert [g is not None and g.requires_grad for g in eg_] == \
        [g is not None and g.requires_grad for g in tg]
    keep = [k for k, g in enumerate(tg) if g is not None and g.requires_grad]
    if not keep:
        return
    rng = _rng(sample, "w")
    ws = [random_like(rng, tuple(tg[k].shape), dtype_name(tg[k])) for k in keep]
    t2 = torch.autograd.grad([tg[k] for k in keep], t_x + tv, [torch.tensor(w) for w in ws],
                             allow_unused=True)
    e2 = eg.autograd.grad([eg_[k] for k in keep], e_x + ev, [eg.tensor(w) for w in ws],
                          allow_unused=True)
    # torch returns None or zeros for an independent input depending on the formula:
    # compare None as zeros
    for k, (e, t) in enumerate(zip(e2, t2)):
        ref = (t_x + tv)[k]
        t = t if t is not None else torch.zeros_like(ref)
        e = e if e is not None else eg.zeros_like((e_x + ev)[k])
        _assert_close(e, t, sample, f"second-order grad of target {k}", factor=10,
                      fdt=fdt)


# ---- parametrization over the samples ---------------------------------------------------
def _params(aspect, want=lambda s, dt: True, samples=ALL):
    out = []
    for s in samples:
        for dt in s.dtypes():
            if want(s, dt):
                marks = [pytest.mark.xfail(reason=s.xfail[aspect], strict=True)] \
                    if aspect in s.xfail else []
                marks += sweep_marks(s, dt)
                out.append(pytest.param(s, dt, id=f"{s.id}-{dt}", marks=marks))
    return out


@pytest.mark.parametrize("sample,fdt", _params("forward"))
def test_forward(sample, fdt):
    check_forward(sample, fdt)


@pytest.mark.parametrize("sample,fdt", _params("graph"))
def test_graph(sample, fdt):
    check_graph(sample, fdt)


@pytest.mark.parametrize("sample,fdt", _params("is_view"))
def test_is_view(sample, fdt):
    check_is_view(sample, fdt)


def _backward_in(s, dt):
    """float64 for every sample; float32 (compiles cost time) for each op's first sample
    and for samples mixing a fixed dtype into the parametrized one."""
    return s.differentiable and (dt != "float32" or s.id.endswith(":0") or
                                 any(not a.parametrized for a in s.args if a.rg))


@pytest.mark.parametrize("sample,fdt", _params("backward", _backward_in))
def test_backward(sample, fdt):
    check_backward(sample, fdt)


@pytest.mark.parametrize("sample,fdt", _params(
    "double_backward", lambda s, dt: s.double_backward and s.differentiable and
    dt in ("float64", "fixed")))
def test_double_backward(sample, fdt):
    check_double_backward(sample, fdt)


# ---- type promotion ----------------------------------------------------------------------
_DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64")
_OPERANDS = [("tensor", d) for d in _DTYPES] + [("0-dim", d) for d in _DTYPES] + \
    [("scalar", v) for v in (True, 2, 2.5, 1 + 2j)]
_BINARY = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b, "div": lambda m, a, b: a / b,
    "eq": lambda m, a, b: a == b, "pow": lambda m, a, b: a ** b,
    "where": lambda m, a, b: m.where(m.ones((), dtype=m.bool), a, b),
    "maximum": lambda m, a, b: m.maximum(a, b), "atan2": lambda m, a, b: m.atan2(a, b),
    "remainder": lambda m, a, b: a % b, "cat": lambda m, a, b: m.cat([a, b]),
}


def _operand(m, kind, d):
    if kind == "scalar":
        return d
    return m.ones(2 if kind == "tensor" else (), dtype=getattr(m, d))


def _torch_outcome(fn, a, b):
    try:
        return dtype_name(fn(torch, a, b))
    except Exception as e:  # noqa: BLE001 - the exception type is the outcome
        return type(e).__name__


def _eg_outcome(fn, ka, a, kb, b):
    """The result dtype of eagergrad's op, traced with jax.eval_shape (no compiles)."""
    arrays = [jax.ShapeDtypeStruct((2,) if k == "tensor" else (), np.dtype(v))
              for k, v in ((ka, a), (kb, b)) if k != "scalar"]

    def f(*xs):
        it = iter(xs)
        x = next(it) if ka != "scalar" else a
        y = next(it) if kb != "scalar" else b
        return fn(eg, x, y)
    try:
        return FROM_NP[np.dtype(jax.eval_shape(eg.jaxify(f), *arrays).dtype)].name
    except Exception as e:  # noqa: BLE001
        return type(e).__name__


@pytest.mark.parametrize("op", sorted(_BINARY))
def test_type_promotion(op):
    fn = _BINARY[op]
    bad = []
    for ka, a in _OPERANDS:
        for kb, b in _OPERANDS:
            if ka == kb == "scalar" or (op == "cat" and "scalar" in (ka, kb)):
                continue
            want = _torch_outcome(fn, _operand(torch, ka, a), _operand(torch, kb, b))
            got = _eg_outcome(fn, ka, a, kb, b)
            if got != want:
                bad.append(f"{ka} {a} {op} {kb} {b}: {got}, torch {want}")
    assert not bad, "\n".join(bad)


def test_type_promotion_eager():
    """A few promotions run eagerly (values too), to tie the traced table to real runs."""
    for a, b in [(eg.ones(3, dtype=eg.int64), 1.5), (eg.ones(3), eg.ones((), dtype=eg.float64)),
                 (eg.ones(3, dtype=eg.bool), 2), (eg.ones((), dtype=eg.float64),
                                                  eg.ones(3, dtype=eg.int32)),
                 (eg.ones(3, dtype=eg.int32), eg.ones((), dtype=eg.int64)),
                 (eg.ones(3, dtype=eg.float32), 1j)]:
        ta = torch.tensor(to_np(a)) if isinstance(a, eg.Tensor) else a
        tb = torch.tensor(to_np(b)) if isinstance(b, eg.Tensor) else b
        _assert_close(a * b, ta * tb)
        _assert_close(a + b, ta + tb)
        assert eg.result_type(a, b) == getattr(eg, dtype_name(ta * tb))


# ---- errors ---------------------------------------------------------------------------
ERRORS = {
    "mm shape mismatch": (lambda m: m.mm(m.ones(3, 4), m.ones(3, 4)),
                          "mat1 and mat2 shapes cannot be multiplied"),
    "matmul shape mismatch": (lambda m: m.ones(2, 3, 4) @ m.ones(2, 3, 4),
                              "Expected size for first two dimensions of batch2 tensor"),
    "mv shape mismatch": (lambda m: m.mv(m.ones(3, 4), m.ones(3)), "size mismatch"),
    "dot sizes": (lambda m: m.dot(m.ones(3), m.ones(4)), "inconsistent tensor size"),
    "view on non-contiguous": (lambda m: m.ones(3, 4).t().view(12),
                               "view size is not compatible with input tensor's size and stride"),
    "bad reshape size": (lambda m: m.ones(3, 4).reshape(5, 3),
                         "shape '[5, 3]' is invalid for input of size 12"),
    "bad view -1": (lambda m: m.ones(3, 4).view(-1, 5),
                    "shape '[-1, 5]' is invalid for input of size 12"),
    "two -1 in view": (lambda m: m.ones(3, 4).view(-1, -1), "only one dimension can be inferred"),
    "cat size mismatch": (lambda m: m.cat([m.ones(3, 4), m.ones(3, 5)]),
                          "Sizes of tensors must match except in dimension 0"),
    "stack size mismatch": (lambda m: m.stack([m.ones(3), m.ones(4)]),
                            "stack expects each tensor to be equal size"),
    "index out of range": (lambda m: m.ones(3, 4)[5],
                           "index 5 is out of bounds for dimension 0 with size 3"),
    "select out of range": (lambda m: m.ones(3, 4).select(1, -5),
                            "out of range for tensor of size [3, 4] at dimension 1"),
    "tensor index out of range": (lambda m: m.ones(3, 4)[m.tensor([0, 3])],
                                  "index 3 is out of bounds for dimension 0 with size 3"),
    # torch names the k-th index tensor, not the indexed dimension
    "second tensor index out of range": (
        lambda m: m.ones(2, 3, 4)[:, m.tensor([0]), m.tensor([9])],
        "index 9 is out of bounds for dimension 1 with size 4"),
    "tensor index after a slice out of range": (
        lambda m: m.ones(2, 3, 4)[..., m.tensor([9])],
        "index 9 is out of bounds for dimension 0 with size 4"),
    "tensor index after a mask out of range": (
        lambda m: m.ones(2, 3, 4)[m.ones(2, 3, dtype=m.bool), m.tensor([7])],
        "index 7 is out of bounds for dimension 2 with size 4"),
    "too many indices": (lambda m: m.ones(3)[0, 0], "too many indices for tensor of dimension 1"),
    "expand invalid": (lambda m: m.ones(3, 4).expand(3, 5),
                       "The expanded size of the tensor (5) must match the existing size (4) "
                       "at non-singleton dimension 1"),
    "expand fewer dims": (lambda m: m.ones(3, 4).expand(4), "the number of sizes provided (1) "
                          "must be greater or equal to the number of dimensions in the tensor "
                          "(2)"),
    "bool subtraction": (lambda m: m.ones(3, dtype=m.bool) - m.ones(3, dtype=m.bool),
                         "Subtraction, the `-` operator, with two bool tensors is not supported"),
    "bool minus scalar": (lambda m: m.ones(3, dtype=m.bool) - 1,
                          "Subtraction, the `-` operator, with a bool tensor is not supported"),
    "dim out of range": (lambda m: m.ones(3, 4).sum(2), "Dimension out of range"),
    "broadcast mismatch": (lambda m: m.ones(3, 4) + m.ones(3),
                           "The size of tensor a (4) must match the size of tensor b (3) at "
                           "non-singleton dimension 1"),
    "mean of ints": (lambda m: m.ones(3, dtype=m.int64).mean(), "mean(): could not infer output"),
    "gather float index": (lambda m: m.ones(3, 4).gather(1, m.ones(3, 1)),
                           "gather(): Expected dtype int32/int64 for index"),
    "mm dtype mismatch": (lambda m: m.mm(m.ones(2, 2), m.ones(2, 2, dtype=m.float64)),
                          "expected m1 and m2 to have the same dtype"),
    "t of 3d": (lambda m: m.ones(2, 3, 4).t(), "t() expects a tensor with <= 2 dimensions"),
    "split sizes": (lambda m: m.ones(4).split([1, 2]),
                    "split_with_sizes expects split_sizes to sum exactly to 4"),
    "imag of real": (lambda m: m.ones(3).imag, "imag is not implemented for tensors with "
                     "non-complex dtypes."),
    "clamp without bounds": (lambda m: m.clamp(m.ones(3)),
                             "At least one of 'min' or 'max' must not be None"),
    "narrow past end": (lambda m: m.ones(3).narrow(0, 2, 2), "exceeds dimension size"),
    "invert float": (lambda m: ~m.ones(3), "only implemented on integer and Boolean-type"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    fn, phrase = ERRORS[case]
    with pytest.raises(Exception) as t_err:
        fn(torch)
    assert phrase in str(t_err.value), f"torch's message changed: {t_err.value}"
    with pytest.raises(Exception) as e_err:
        fn(eg)
    assert type(e_err.value) is type(t_err.value), \
        f"{type(e_err.value).__name__}: {e_err.value}"
    assert phrase in str(e_err.value)
