"""The shape and small linear-algebra ops of ops/tensor_ops.py and ops/products.py against
real torch, for what the op samples cannot express: torch's error messages, meshgrid's
indexing, tril/triu_indices, repeat_interleave's output_size and its one-argument form, the
views these ops return (storage and version counter shared with the base), cross's dim
rules and its once-only warning, cdist's choice between its two paths, and jax traces."""
import subprocess
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from conftest import attempt, same, same_error

import eagergrad as eg
from eagergrad.ops import tensor_ops


def _graph(fn):
    if fn is None:
        return None
    return (type(fn).__name__, tuple(_graph(n) for n, _ in fn.next_functions))


def _x(L, *shape, dtype="float64", rg=False, seed=0):
    a = np.random.default_rng(seed + len(shape)).standard_normal(shape)
    return L.tensor(a, dtype=getattr(L, dtype), requires_grad=rg)


# ---- errors: torch's exception types and messages ------------------------------------------
def _i(L, v):
    return L.tensor(v)


ERRORS = {
    "flip duplicate dims": (lambda L: _x(L, 3, 4).flip(0, -2), RuntimeError, "appears multiple"),
    "flip dim out of range": (lambda L: _x(L, 3, 4).flip(2), IndexError, "out of range"),
    "fliplr of a vector": (lambda L: _x(L, 3).fliplr(), RuntimeError, ">= 2-d"),
    "flipud of a 0-dim": (lambda L: _x(L).flipud(), RuntimeError, ">= 1-d"),
    "roll shifts without dims": (lambda L: _x(L, 3, 4).roll((1, 2)), RuntimeError, "align"),
    "roll shifts and dims": (lambda L: _x(L, 3, 4).roll((1, 2), (0,)), RuntimeError, "align"),
    "roll no shifts": (lambda L: _x(L, 3, 4).roll((), ()), RuntimeError, "required"),
    "rot90 three dims": (lambda L: _x(L, 3, 4).rot90(1, [0, 1, 0]), RuntimeError, "== 2"),
    "rot90 of a vector": (lambda L: _x(L, 3).rot90(), RuntimeError, ">= 2"),
    "rot90 same dims": (lambda L: _x(L, 3, 4).rot90(1, [1, -1]), RuntimeError, "different"),
    "rot90 dim out of range": (lambda L: _x(L, 3, 4).rot90(1, [0, 5]), IndexError, "range"),
    "diag of 3-d": (lambda L: _x(L, 2, 2, 2).diag(), RuntimeError, "1D or 2D"),
    "diag_embed same dims": (lambda L: _x(L, 3, 4).diag_embed(0, 1, 1), RuntimeError,
                             "identical"),
    "diag_embed of a 0-dim": (lambda L: _x(L).diag_embed(), IndexError, "out of range"),
    "diagonal_scatter size": (lambda L: L.diagonal_scatter(_x(L, 3, 4), _x(L, 4)),
                              RuntimeError, "expected src to have a size"),
    "select_scatter size": (lambda L: L.select_scatter(_x(L, 3, 4), _x(L, 3), 0, 0),
                            RuntimeError, "expected src to have a size"),
    "select_scatter index": (lambda L: L.select_scatter(_x(L, 3, 4), _x(L, 4), 0, 5),
                             IndexError, "out of range"),
    "slice_scatter size": (lambda L: L.slice_scatter(_x(L, 3, 4), _x(L, 3, 3), 1, 0, 2),
                           RuntimeError, "expected src to have a size"),
    "select_scatter complex autograd": (
        lambda L: L.select_scatter(_x(L, 3, 3, dtype="complex128", rg=True),
                                   _x(L, 3, dtype="complex128"), 0, 0),
        RuntimeError, "complex dtype"),
    "slice_scatter complex autograd": (
        lambda L: L.slice_scatter(_x(L, 3, 3, dtype="complex128"),
                                  _x(L, 1, 3, dtype="complex128", rg=True), 0, 0, 1),
        RuntimeError, "complex dtype"),
    "trace of a vector": (lambda L: _x(L, 3).trace(), RuntimeError, "expected a matrix"),
    "trace of bool": (lambda L: L.ones(2, 2, dtype=L.bool).trace(), NotImplementedError,
                      "Bool"),
    "tile negative": (lambda L: _x(L, 3, 4).tile(-1), RuntimeError, "negative dimension"),
    "hstack empty": (lambda L: L.hstack([]), RuntimeError, "non-empty"),
    "vstack empty": (lambda L: L.vstack(()), RuntimeError, "non-empty"),
    "column_stack empty": (lambda L: L.column_stack([]), RuntimeError, "non-empty"),
    "hsplit of a 0-dim": (lambda L: _x(L).hsplit(1), RuntimeError, "at least 1"),
    "hsplit not divisible": (lambda L: _x(L, 3, 4).hsplit(3), RuntimeError, "divisible"),
    "vsplit of a vector": (lambda L: _x(L, 3).vsplit(3), RuntimeError, "at least 2"),
    "vsplit zero": (lambda L: _x(L, 3, 4).vsplit(0), RuntimeError, "divisible"),
    "dsplit of a matrix": (lambda L: _x(L, 3, 4).dsplit(2), RuntimeError, "at least 3"),
    "tensor_split zero sections": (lambda L: _x(L, 3, 4).tensor_split(0), RuntimeError,
                                   "larger than 0"),
    "tensor_split of a 0-dim": (lambda L: _x(L).tensor_split(1), RuntimeError, "0 dims"),
    "tensor_split float tensor": (lambda L: _x(L, 3, 4).tensor_split(L.tensor([1.0]), 1),
                                  RuntimeError, "dtype of long"),
    "tensor_split 2-d tensor": (lambda L: _x(L, 3, 4).tensor_split(L.tensor([[1]]), 1),
                                RuntimeError, "zero-dimensional or one-dimensional"),
    "take_along_dim ndim": (lambda L: _x(L, 3, 4).take_along_dim(_i(L, [0, 1]), 1),
                            RuntimeError, "same number of dimensions"),
    "take_along_dim int32": (
        lambda L: _x(L, 3, 4).take_along_dim(L.tensor([[0]], dtype=L.int32), 1),
        RuntimeError, "should be Long"),
    "take out of range": (lambda L: _x(L, 3, 4).take(_i(L, [1, 12])), IndexError,
                          "out of range"),
    "take negative out of range": (lambda L: _x(L, 3, 4).take(_i(L, [-13])), IndexError,
                                   "out of range"),
    "take int32 index": (lambda L: _x(L, 3).take(L.tensor([0], dtype=L.int32)),
                         RuntimeError, "long tensor"),
    "broadcast_tensors": (lambda L: L.broadcast_tensors(_x(L, 3, 4), _x(L, 2)), RuntimeError,
                          "must match"),
    "meshgrid indexing": (lambda L: L.meshgrid(_x(L, 3), _x(L, 2), indexing="ji"),
                          RuntimeError, "indexing must be"),
    "meshgrid dtypes": (lambda L: L.meshgrid(_x(L, 3), _x(L, 2, dtype="float32"),
                                             indexing="ij"), RuntimeError, "same dtype"),
    "meshgrid empty": (lambda L: L.meshgrid(indexing="ij"), RuntimeError, "non-empty"),
    "tril_indices negative row": (lambda L: L.tril_indices(-1, 3), RuntimeError,
                                  "non-negative"),
    "triu_indices negative col": (lambda L: L.triu_indices(3, -2), RuntimeError,
                                  "non-negative"),
    "tril_indices float": (lambda L: L.tril_indices(3, 3, dtype=L.float32),
                           NotImplementedError, "not implemented"),
    "repeat_interleave negative": (lambda L: _x(L, 3).repeat_interleave(-1), RuntimeError,
                                   "non-negative"),
    "repeat_interleave output_size": (
        lambda L: _x(L, 3, 4).repeat_interleave(2, 0, output_size=5), RuntimeError,
        "Invalid output_size"),
    "repeat_interleave repeats size": (
        lambda L: _x(L, 3, 4).repeat_interleave(_i(L, [1, 2]), 0), RuntimeError,
        "same size as input"),
    "repeat_interleave 2-d repeats": (
        lambda L: _x(L, 3, 4).repeat_interleave(_i(L, [[1]]), 0), RuntimeError,
        "0-dim or 1-dim"),
    "repeat_interleave negative repeats": (
        lambda L: _x(L, 3).repeat_interleave(_i(L, [1, -1, 1]), 0), RuntimeError,
        "can not be negative"),
    "repeat_interleave float repeats": (
        lambda L: _x(L, 3).repeat_interleave(L.tensor([1.0, 1.0, 1.0]), 0),
        NotImplementedError, "not implemented"),
    "repeat_interleave wrong output_size": (
        lambda L: _x(L, 3).repeat_interleave(_i(L, [1, 2, 0]), 0, output_size=4),
        RuntimeError, "allocated size"),
    "repeat_interleave of 0-d repeats alone": (lambda L: L.repeat_interleave(_i(L, 2)),
                                               RuntimeError, "1D vector"),
    "tensordot negative": (lambda L: L.tensordot(_x(L, 3, 4), _x(L, 4, 3), -1), RuntimeError,
                           "dims >= 0"),
    "tensordot too many": (lambda L: L.tensordot(_x(L, 3, 4), _x(L, 4, 3), 3), RuntimeError,
                           "dims < ndim_a"),
    "tensordot mismatch": (lambda L: L.tensordot(_x(L, 3, 4), _x(L, 3, 4), ([0], [1])),
                           RuntimeError, "contracted dimensions need to match"),
    "tensordot dtypes": (lambda L: L.tensordot(_x(L, 3), _x(L, 3, dtype="float32"), 1),
                         RuntimeError, "same dtype"),
    "tensordot duplicate dims": (lambda L: L.tensordot(_x(L, 3, 3), _x(L, 3, 3),
                                                      ([0, 0], [0, 1])),
                                 RuntimeError, "appears multiple"),
    "tensordot int lists": (lambda L: L.tensordot(_x(L, 3, 4), _x(L, 3, 4), [1, 1]),
                            TypeError, "must be tuple of ints"),
    "inner last dims": (lambda L: L.inner(_x(L, 3, 4), _x(L, 3)), RuntimeError,
                        "last dimension must match"),
    "vdot dtypes": (lambda L: L.vdot(_x(L, 3), _x(L, 3, dtype="float32")), RuntimeError,
                    "same dtype"),
    "vdot of matrices": (lambda L: L.vdot(_x(L, 2, 2), _x(L, 2, 2)), RuntimeError,
                         "1D tensors expected"),
    "vdot sizes": (lambda L: L.vdot(_x(L, 3), _x(L, 4)), RuntimeError,
                   "inconsistent tensor size"),
    "vdot bool": (lambda L: L.vdot(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
                  NotImplementedError, "Bool"),
    "dot complex and real": (lambda L: L.dot(_x(L, 3, dtype="complex64"), _x(L, 3,
                                                                            dtype="float32")),
                             RuntimeError, "same dtype"),
    "dot bool": (lambda L: L.dot(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
                 NotImplementedError, "Bool"),
    "cross without a size-3 dim": (lambda L: L.cross(_x(L, 2, 4), _x(L, 2, 4), dim=None),
                                   RuntimeError, "no dimension of size 3"),
    "cross dims": (lambda L: L.cross(_x(L, 2, 3), _x(L, 3), dim=-1), RuntimeError,
                   "same number of dimensions"),
    "cross dim length": (lambda L: L.cross(_x(L, 2, 3), _x(L, 2, 3), dim=0), RuntimeError,
                         "must have length 3"),
    "linalg.cross default dim": (lambda L: L.linalg.cross(_x(L, 3, 2), _x(L, 3, 2)),
                                 RuntimeError, "dimension -1 must have length 3"),
    "linalg.cross dim out of range": (lambda L: L.linalg.cross(_x(L, 3), _x(L, 3), dim=2),
                                      IndexError, "out of range"),
    "linalg.cross dtypes": (lambda L: L.linalg.cross(_x(L, 3), _x(L, 3, dtype="float32")),
                            RuntimeError, "expected scalar type"),
    "linalg.cross broadcast": (lambda L: L.linalg.cross(_x(L, 2, 3), _x(L, 4, 3)),
                               RuntimeError, "must match"),
    "cdist of a vector": (lambda L: L.cdist(_x(L, 3), _x(L, 2, 3)), RuntimeError,
                          "at least 2D"),
    "cdist columns": (lambda L: L.cdist(_x(L, 3, 4), _x(L, 2, 3)), RuntimeError,
                      "same number of columns"),
    "cdist negative p": (lambda L: L.cdist(_x(L, 3, 4), _x(L, 2, 4), -1.0), RuntimeError,
                         "non-negative p"),
    "cdist int": (lambda L: L.cdist(L.ones(2, 2, dtype=L.int64), L.ones(2, 2, dtype=L.int64)),
                  RuntimeError, "floating-point"),
    "cdist complex": (lambda L: L.cdist(_x(L, 2, 2, dtype="complex64"),
                                        _x(L, 2, 2, dtype="complex64")),
                      RuntimeError, "floating-point"),
    "cdist dtypes": (lambda L: L.cdist(_x(L, 3, 4, dtype="float32"), _x(L, 2, 4)),
                     RuntimeError, "expected scalar type"),
    "cdist dtypes through mm": (
        lambda L: L.cdist(_x(L, 3, 4, dtype="float32"), _x(L, 2, 4),
                          compute_mode="use_mm_for_euclid_dist"), RuntimeError, "same dtype"),
    "cdist batch": (lambda L: L.cdist(_x(L, 2, 3, 4), _x(L, 5, 2, 4)), RuntimeError,
                    "must match"),
    "cdist compute_mode": (lambda L: L.cdist(_x(L, 3, 4), _x(L, 2, 4), compute_mode="fast"),
                           ValueError, "not a valid value"),
    "block_diag of 3-d": (lambda L: L.block_diag(_x(L, 2, 2, 2)), RuntimeError,
                          "2 or fewer dimensions"),
    "cartesian_prod of a matrix": (lambda L: L.cartesian_prod(_x(L, 3, 4)), RuntimeError,
                                   "1D vector"),
    "cartesian_prod dtypes": (lambda L: L.cartesian_prod(_x(L, 3), _i(L, [1, 2])),
                              RuntimeError, "same dtype"),
    "combinations negative": (lambda L: L.combinations(_x(L, 3), -1), RuntimeError,
                              "non-negative"),
    "combinations of a matrix": (lambda L: L.combinations(_x(L, 3, 4)), RuntimeError,
                                 "1D vector"),
    "narrow_copy length": (lambda L: _x(L, 3, 4).narrow_copy(1, 3, 2), RuntimeError,
                           "exceeds dimension size"),
    "narrow_copy of a 0-dim": (lambda L: _x(L).narrow_copy(0, 0, 1), RuntimeError,
                               "0-dim"),
    "chain_matmul none": (lambda L: L.chain_matmul(), RuntimeError, "one or more"),
    "chain_matmul of a vector": (lambda L: L.chain_matmul(_x(L, 3), _x(L, 3, 4)),
                                 RuntimeError, "expected 2 instead"),
    "addmv dims": (lambda L: L.addmv(_x(L, 3, 1), _x(L, 3, 4), _x(L, 4)), RuntimeError,
                   "vector + matrix @ vector"),
    "addmv sizes": (lambda L: L.addmv(_x(L, 4), _x(L, 3, 4), _x(L, 4)), RuntimeError,
                    "size mismatch"),
    "addmv dtypes": (lambda L: L.addmv(_x(L, 3), _x(L, 3, 4, dtype="float32"), _x(L, 4)),
                     RuntimeError, "same dtype"),
    "addmv bool": (lambda L: L.addmv(L.ones(3, dtype=L.bool), L.ones(3, 4, dtype=L.bool),
                                     L.ones(4, dtype=L.bool)), NotImplementedError, "Bool"),
    "addmv complex alpha": (lambda L: L.addmv(_x(L, 3), _x(L, 3, 4), _x(L, 4), alpha=1j),
                            RuntimeError, "without overflow"),
    "addmv_ broadcast": (lambda L: _x(L, 1).addmv_(_x(L, 3, 4), _x(L, 4)), RuntimeError,
                         "Bad in-place call"),
    "addr vec1 of 2-d": (lambda L: L.addr(_x(L, 3, 4), _x(L, 3, 4), _x(L, 4)), RuntimeError,
                         "Expected 1-D argument vec1"),
    "addr input": (lambda L: L.addr(_x(L, 2), _x(L, 3), _x(L, 4)), RuntimeError,
                   "expanded size"),
    "addr input of 3-d": (lambda L: L.addr(_x(L, 2, 3, 4), _x(L, 3), _x(L, 4)),
                          RuntimeError, "number of sizes provided"),
    "addr float beta for int": (
        lambda L: L.addr(L.ones(3, 4, dtype=L.int64), L.ones(3, dtype=L.int64),
                         L.ones(4, dtype=L.int64), beta=2.5), RuntimeError,
        "must not be a floating point number"),
    "addr bool beta": (lambda L: L.addr(_x(L, 3, 4), _x(L, 3), _x(L, 4), beta=True),
                       RuntimeError, "Boolean beta"),
    "addr_ of a vector": (lambda L: _x(L, 4).addr_(_x(L, 3), _x(L, 4)), RuntimeError,
                          "2D tensor expected"),
    "addbmm batches": (lambda L: L.addbmm(_x(L, 3, 4), _x(L, 2, 3, 4), _x(L, 3, 4, 4)),
                       RuntimeError, "same number of batches"),
    "addbmm sizes": (lambda L: L.addbmm(_x(L, 3, 4), _x(L, 2, 3, 5), _x(L, 2, 4, 4)),
                     RuntimeError, "Incompatible matrix sizes"),
    "addbmm input": (lambda L: L.addbmm(_x(L, 2, 4), _x(L, 2, 3, 5), _x(L, 2, 5, 4)),
                     RuntimeError, "expanded size"),
    "addbmm dtypes": (lambda L: L.addbmm(_x(L, 3, 4, dtype="float32"), _x(L, 2, 3, 4),
                                         _x(L, 2, 4, 4)), RuntimeError, "same dtype"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    fn, exc, phrase = ERRORS[case]
    same_error(fn, phrase, exc, quiet=True)


def test_meshgrid_of_a_matrix():
    """torch's message then prints the tensor C++'s way; eagergrad's prints its repr."""
    same_error(lambda L: L.meshgrid(_x(L, 3, 4), _x(L, 2), indexing="ij"), "0D or 1D",
               messages=False)


def test_addbmm_inplace_resize_is_refused():
    """torch's addbmm_ resizes a tensor without the result's shape; eagergrad refuses."""
    with pytest.raises(NotImplementedError, match="addbmm_"):
        eg.zeros(4).addbmm_(eg.ones(2, 3, 5), eg.ones(2, 5, 4))


# ---- meshgrid, tril/triu_indices, repeat_interleave -----------------------------------------
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("shapes", [[(3,), (2,)], [(3,), (), (4,)], [(2,)], [(), ()]])
def test_meshgrid_indexing(indexing, shapes):
    """Values, shapes, views (strides and offsets) and graphs of both indexings; the old
    list form; gradients of every grid."""
    def f(L):
        ts = [_x(L, *s, rg=True, seed=i) for i, s in enumerate(shapes)]
        grids = L.meshgrid(*ts, indexing=indexing)
        return grids, L.meshgrid(ts, indexing=indexing), [_graph(g.grad_fn) for g in grids]
    same(f, layout=True)

    def grads(L):
        ts = [_x(L, *s, rg=True, seed=i) for i, s in enumerate(shapes)]
        grids = L.meshgrid(*ts, indexing=indexing)
        return L.autograd.grad(sum((g * (i + 1)).sum() for i, g in enumerate(grids)), ts)
    same(grads)


def test_meshgrid_default_indexing():
    """Without indexing: "ij" (its warning: test_warnings_once)."""
    def f(L):
        return L.meshgrid(_x(L, 3), _x(L, 2)), L.meshgrid(_x(L, 3), _x(L, 2), indexing="ij")
    same(f, quiet=True, layout=True)


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
def test_tril_triu_indices(fn):
    """Every offset from below the matrix to beyond it, empty and non-square shapes,
    int32; exact values, dtype and shape."""
    def f(L, log):
        for row, col in [(3, 3), (4, 2), (2, 5), (0, 3), (3, 0), (1, 1)]:
            for offset in range(-6, 7):
                log.append(getattr(L, fn)(row, col, offset))
        log.append(getattr(L, fn)(3, 4, 1, dtype=L.int32))
    same(f)


def test_repeat_interleave_output_size():
    """output_size with int and tensor repeats (it must equal the total), the one-argument
    form (indices, in the repeats' dtype), 0-dim inputs, negative dims."""
    def f(L, log):
        x = _x(L, 3, 4, rg=True)
        log.append(x.repeat_interleave(2, 0, output_size=6))
        log.append(x.repeat_interleave(L.tensor([1, 0, 2]), 0, output_size=3))
        log.append(x.repeat_interleave(L.tensor([3]), -1, output_size=12))
        log.append(x.repeat_interleave(L.tensor(2), output_size=24))
        log.append(L.repeat_interleave(L.tensor([1, 0, 3], dtype=L.int32)))
        log.append(L.repeat_interleave(L.tensor([2, 1]), output_size=3))
        log.append(L.repeat_interleave(L.tensor([], dtype=L.int64)))
        log.append(_x(L, rg=True).repeat_interleave(3))
        log.append(x.repeat_interleave(0, 1))
    same(f)


def test_repeat_interleave_under_jit():
    """With output_size, tensor repeats need no values: the function runs under jax.jit;
    without it, a traced repeats tensor has a data-dependent shape and is refused."""
    x = np.arange(6.0).reshape(3, 2)
    r = np.array([2, 0, 1])
    f = jax.jit(eg.jaxify(lambda a, b: a.repeat_interleave(b, 0, output_size=3)))
    got = np.asarray(f(jnp.asarray(x), jnp.asarray(r)))
    want = torch.tensor(x).repeat_interleave(torch.tensor(r), 0).numpy()
    np.testing.assert_array_equal(got, want)
    g = jax.jit(eg.jaxify(lambda a, b: a.repeat_interleave(b, 0)))
    with pytest.raises(NotImplementedError, match="output_size"):
        g(jnp.asarray(x), jnp.asarray(r))


# ---- views: storage and version counters shared with the base ---------------------------
VIEWS = {
    "tensor_split": lambda L, x: x.tensor_split(3, 1),
    "tensor_split indices": lambda L, x: L.tensor_split(x, [1, 3], dim=1),
    "hsplit": lambda L, x: x.hsplit(2),
    "vsplit": lambda L, x: x.vsplit([1]),
    "broadcast_tensors": lambda L, x: L.broadcast_tensors(x, L.zeros(2, 1, 1)),
    "broadcast_to": lambda L, x: (x.broadcast_to((2, 3, 4)),),
    "meshgrid": lambda L, x: L.meshgrid(x[0], x[:, 0], indexing="xy"),
    "atleast_3d": lambda L, x: (L.atleast_3d(x), L.atleast_3d(x[0])),
    "atleast_1d": lambda L, x: (L.atleast_1d(x[0, 0]),),
    "movedim": lambda L, x: (x.movedim(0, 1), L.moveaxis(x, (0, 1), (1, 0))),
    "swapaxes": lambda L, x: (x.swapaxes(0, 1), L.swapdims(x, 1, 0)),
    "unflatten": lambda L, x: (x.unflatten(1, (2, -1)),),
    "diagonal": lambda L, x: (x.diagonal(1), L.linalg.diagonal(x)),
    "view_as_real": lambda L, x: (L.view_as_real(L.view_as_complex(x[:, :2].contiguous())),),
    "repeat_interleave": lambda L, x: (x.repeat_interleave(2, 1),),
    "tensordot": lambda L, x: (L.tensordot(x, x.t(), 1),),
}


@pytest.mark.parametrize("case", sorted(VIEWS))
def test_views_share_storage_and_version(case):
    """Which results are views, their strides and offsets; an in-place write to the base
    shows through each view and bumps its version, and one through a view shows in the
    base (torch's aliasing, version counters shared)."""
    def f(L, log):
        x = _x(L, 3, 4)
        outs = VIEWS[case](L, x)
        log.append([(o._is_view(), o._version) for o in outs])
        x.add_(1)
        log.append(list(outs))
        log.append([o._version for o in outs])
        for i, o in enumerate(outs):
            attempt(log, i, lambda o=o: o.mul_(2)._version)
        log.append(x)
        log.append(x._version)
    same(f, layout=True)


def test_view_outputs_record_their_nodes():
    """tensor_split's outputs are SliceBackward0 views; an in-place op on one of them
    rebases its base's history (CopySlices), as in torch."""
    def f(L, log):
        x = _x(L, 3, 4, rg=True)
        y = x * 1
        a, b = y.tensor_split(2, 1)
        log.append([_graph(a.grad_fn), _graph(b.grad_fn)])
        a.mul_(3)
        log.append([_graph(y.grad_fn), y._version, b._version])
        log.append(L.autograd.grad(y.sum(), x))
    same(f, layout=True)


# ---- cross: the dim rules, the deprecation warning once ----------------------------------------
def test_cross_default_dim():
    """Without dim, torch.cross takes the first dimension of size 3 (linalg.cross: -1),
    with its node LinalgCrossBackward0; batches broadcast."""
    def f(L, log):
        for sa, sb in [((3, 4), (3, 4)), ((2, 3), (2, 3)), ((3, 3), (3, 3)),
                       ((4, 3, 3), (1, 3, 3)), ((2, 3, 1), (2, 3, 5))]:
            a, b = _x(L, *sa, rg=True, seed=1), _x(L, *sb, rg=True, seed=2)
            r = L.cross(a, b)
            log.append((r, _graph(r.grad_fn), L.autograd.grad(r.sum(), (a, b))))
            log.append(L.linalg.cross(a.transpose(0, -1).contiguous(),
                                      b.transpose(0, -1).contiguous())
                       if sa[0] == 3 and sa[-1] != 3 else None)
    same(f, quiet=True)


@pytest.mark.slow  # (starts processes: torch warns once per process)
def test_warnings_once():
    """torch.cross without dim, torch.chain_matmul and torch.meshgrid without indexing warn
    once per process (TORCH_WARN_ONCE), with torch's messages, in a fresh process each."""
    code = ("import warnings, {m} as t\n"
            "warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as ws:\n"
            "    for _ in range(2):\n"
            "        t.cross(t.ones(3), t.ones(3)); t.cross(t.ones(3), t.ones(3), dim=0)\n"
            "        t.chain_matmul(t.ones(2, 2)); t.chain_matmul(t.ones(2, 2), t.ones(2, 2))\n"
            "        t.meshgrid(t.ones(2), t.ones(3)); t.meshgrid(t.ones(2), indexing='xy')\n"
            "for w in ws:\n"
            "    print(repr((w.category.__name__, str(w.message).split(' (Triggered')[0])))\n")
    out = [subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True,
                          text=True, check=True).stdout for m in ("torch", "eagergrad")]
    assert out[0].count("\n") == 3
    assert out[1] == out[0]


def test_warn_once_state():
    """eagergrad's once-only warnings are keyed per message: the process's first only."""
    saved = set(tensor_ops._WARNED)
    tensor_ops._WARNED.difference_update({"cross", "meshgrid"})
    try:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            for _ in range(2):
                eg.cross(eg.ones(3), eg.ones(3))
                eg.meshgrid(eg.ones(2), eg.ones(3))
        assert [str(w.message).splitlines()[0] for w in ws] == [
            "Using torch.cross without specifying the dim arg is deprecated.",
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument."]
    finally:
        tensor_ops._WARNED.update(saved | {"cross", "meshgrid"})


# ---- cdist: which path, by p, mode and row counts ----------------------------------------------
_NEEDED = "use_mm_for_euclid_dist_if_necessary"


@pytest.mark.parametrize("rows,p,mode", [
    (25, 2.0, _NEEDED), (26, 2.0, _NEEDED), (26, 1.0, _NEEDED), (3, 2.0, "use_mm_for_euclid_dist"),
    (30, 2.0, "donot_use_mm_for_euclid_dist"), (0, 2.0, "use_mm_for_euclid_dist")])
def test_cdist_paths(rows, p, mode):
    """cdist's graph is CdistBackward0 or the matrix-product path's EuclideanDistBackward0
    under a view, as torch picks it; values and gradients agree either way."""
    def f(L):
        a, b = _x(L, rows, 3, rg=True, seed=1), _x(L, 4, 3, rg=True, seed=2)
        r = L.cdist(a, b, p, compute_mode=mode)
        return r, _graph(r.grad_fn), L.autograd.grad((r * r).sum(), (a, b))
    same(f)


# ---- values: dot and vdot's conjugation, kron, block_diag dtypes ------------------------------
def test_dot_vdot_complex():
    """dot conjugates nothing, vdot its first argument; gradients in torch's convention."""
    def f(L):
        a = _x(L, 4, dtype="complex128", rg=True, seed=1)
        b = _x(L, 4, dtype="complex128", rg=True, seed=2)
        d, v = L.dot(a, b), L.vdot(a, b)
        return d, v, L.autograd.grad(d.abs() + v.real * 2 + v.imag, (a, b))
    same(f)


def test_block_diag_dtypes_and_empty():
    """block_diag promotes as torch.result_type (a 0-dim does not widen), empty blocks
    still take a row, no tensors give a 1 x 0 matrix."""
    def f(L, log):
        log.append(L.block_diag(L.tensor(1.0, dtype=L.float64), L.ones(2)))
        log.append(L.block_diag(L.ones(2, dtype=L.int64), L.ones(1, dtype=L.bool)))
        log.append(L.block_diag(L.ones(0), L.ones(2, 0), L.ones(1, 2)))
        log.append(L.block_diag())
    same(f)


def test_varying_positions_compile_nothing(counting_compiles):
    """select_scatter's index, slice_scatter's and narrow_copy's start are traced scalars:
    after the first call, other positions reuse the forward kernels (as select's and
    slice's), with torch's values."""
    from eagergrad._cache import EXECUTABLES

    def run(L, i):
        x = L.arange(15.0).reshape(5, 3)
        return [r.numpy() for r in (L.select_scatter(x, L.ones(3), 0, i),
                                    L.slice_scatter(x, L.ones(2, 3), 0, i, i + 2),
                                    x.narrow_copy(0, i, 2))]
    run(eg, 0)
    before = EXECUTABLES.compiles_here()
    got = [run(eg, i) for i in (1, 2, 3)]
    assert EXECUTABLES.compiles_here() == before
    for i, g in zip((1, 2, 3), got):
        for a, b in zip(g, run(torch, i)):
            np.testing.assert_array_equal(a, b)
