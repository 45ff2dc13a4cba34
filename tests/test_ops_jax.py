"""Table-driven gradient checks of every op: eagergrad's backward against `jax.vjp` of
the same computation (the conjugate convention for complex: torch_vjp(v) ==
conj(jax_vjp(conj(v)))), and against central finite differences in float64.

The samples (tests/_samples.py) keep away from the points where an op is not
differentiable; torch's rules at those points are tested in test_ops_torch.py.
"""
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eagergrad as eg
from eagergrad.ops import OPS
from _samples import ALL, FLOAT, SAMPLES, as_list, dtype_name, make_inputs, random_like, \
    single_precision, to_np


def test_every_op_has_samples():
    """A new op without samples fails here; so does a SAMPLES key that is not an op."""
    assert sorted(set(OPS) - set(SAMPLES)) == []
    assert sorted(set(SAMPLES) - set(OPS)) == []
    assert all(SAMPLES[k] for k in SAMPLES)


def test_every_differentiable_op_is_checked_against_jax():
    """Every op with a derivative formula has at least one sample in the jax vjp check,
    or is reached only through a public call that torch itself cannot differentiate."""
    unchecked = [name for name, op in OPS.items() if op.diff_inputs and
                 not any(s.jax and s.differentiable for s in SAMPLES[name]) and
                 not any(s.backward_error for s in SAMPLES[name])]
    assert unchecked == []


def _setup(sample):
    """float64 (complex128) inputs, outputs, the indices of the outputs that require grad,
    the positions of the inputs that do, and seeded grad_outputs."""
    ins = make_inputs(eg, sample, "float64")
    outs = as_list(sample.call(eg, *ins))
    dout = [i for i, o in enumerate(outs) if o.requires_grad]
    rg = [k for k, a in enumerate(sample.args) if a.rg]
    rng = np.random.default_rng(zlib.crc32(f"{sample.id}/jax".encode()))
    vs = [random_like(rng, outs[i]._shape, dtype_name(outs[i])) for i in dout]
    grads = eg.autograd.grad([outs[i] for i in dout], [ins[k] for k in rg],
                             [eg.tensor(v) for v in vs], allow_unused=True)
    grads = [np.zeros(ins[k]._shape, dtype_name(ins[k])) if g is None else to_np(g)
             for k, g in zip(rg, grads)]
    return ins, dout, rg, vs, grads


def _function_of_grad_inputs(sample, ins, dout, rg):
    """The sample as a function of jax arrays (the inputs that require grad) returning the
    outputs that require grad; the other inputs are closed over."""
    consts = [t.detach() for t in ins]

    def f(*xs):
        full = list(consts)
        for k, x in zip(rg, xs):
            full[k] = x
        res = as_list(sample.call(eg, *full))
        return [res[i] for i in dout]
    return eg.jaxify(f)


def _tol(sample):
    return (2e-5, 2e-5) if single_precision(sample, "float64") else (1e-9, 1e-9)


@pytest.mark.fast_first
@pytest.mark.parametrize("sample", [s for s in ALL if s.jax and s.differentiable],
                         ids=lambda s: s.id)
def test_vjp_matches_jax(sample):
    ins, dout, rg, vs, grads = _setup(sample)
    f = _function_of_grad_inputs(sample, ins, dout, rg)
    primals = [jnp.asarray(to_np(ins[k])) for k in rg]

    @jax.jit
    def vjp(primals, cotangents):
        return jax.vjp(f, *primals)[1](cotangents)
    expected = vjp(primals, [jnp.conj(jnp.asarray(v)) for v in vs])
    rtol, atol = _tol(sample)
    for k, (g, e) in enumerate(zip(grads, expected)):
        e = np.conj(np.asarray(e))
        assert g.dtype == e.dtype, f"grad {k}: {g.dtype} != jax's {e.dtype}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"grad of input {k}")


def _fd_ok(sample):
    return sample.fd and sample.differentiable and not single_precision(sample, "float64") and \
        all(a.dtype in (FLOAT, "float64") for a in sample.args if a.rg)


@pytest.mark.fast_first
@pytest.mark.parametrize("sample", [s for s in ALL if _fd_ok(s)], ids=lambda s: s.id)
def test_gradcheck_finite_differences(sample):
    """Central differences of L(x) = Re sum_i <v_i, out_i(x)> in float64, along seeded
    random directions per input (torch's fast-mode gradcheck): <grad_k, d> must equal
    (L(x_k + eps d) - L(x_k - eps d)) / 2 eps for each direction d."""
    ins, dout, rg, vs, grads = _setup(sample)
    base = [to_np(t) for t in ins]
    rng = np.random.default_rng(zlib.crc32(f"{sample.id}/fd".encode()))

    def loss(arrays):
        with eg.no_grad():
            res = as_list(sample.call(eg, *[eg.tensor(a) for a in arrays]))
        return sum(float(np.real(np.sum(np.conj(v) * to_np(res[i]))))
                   for i, v in zip(dout, vs))

    eps = 1e-6
    for k, g in zip(rg, grads):
        for _ in range(3):
            d = rng.standard_normal(base[k].shape)
            arrays = list(base)
            arrays[k] = base[k] + eps * d
            hi = loss(arrays)
            arrays[k] = base[k] - eps * d
            num = (hi - loss(arrays)) / (2 * eps)
            np.testing.assert_allclose(np.sum(g * d), num, rtol=1e-6, atol=1e-7,
                                       err_msg=f"input {k}")


def _ops_in_graph(roots):
    """Names of the table ops whose nodes are reachable from `roots` (grad_fns)."""
    seen, names, stack = set(), set(), [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        op = getattr(type(node), "_op", None)
        if op is not None:
            names.add(op.name)
        inner = getattr(node, "_fn", None)  # CopySlices wraps the in-place op's node
        if inner is not None:
            stack.append(inner)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return names


@pytest.mark.slow
def test_samples_reach_their_op():
    """Each differentiable op's samples record its node: in the forward graph, or in the
    graph of the first-order gradients (create_graph, grad_outputs requiring grad), which
    is where the internal ops (select_backward, index_put_acc, view_scatter, ...) live, or
    of the second-order ones (a backward's own backward: _grid_sampler_2d_double_backward)."""
    missing = []
    for name, op in sorted(OPS.items()):
        if not op.diff_inputs:
            continue
        found = False
        for sample in SAMPLES[name]:
            if not any(a.rg for a in sample.args):
                continue
            ins = make_inputs(eg, sample, "float64")
            outs = [o for o in as_list(sample.call(eg, *ins)) if o.requires_grad]
            names = _ops_in_graph([o.grad_fn for o in outs])
            for _ in range(2):  # first-order gradients, then second-order ones
                if name in names or sample.backward_error or not outs:
                    break
                vs = [eg.zeros(o._shape, dtype=o.dtype, requires_grad=True) for o in outs]
                gs = eg.autograd.grad(outs, [t for t in ins if t.requires_grad], vs,
                                      create_graph=True, allow_unused=True)
                outs = [g for g in gs if g is not None and g.requires_grad]
                names |= _ops_in_graph([g.grad_fn for g in outs])
            if name in names:
                found = True
                break
        if not found:
            missing.append(name)
    assert missing == []
