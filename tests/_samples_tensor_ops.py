"""Samples for the shape and small linear-algebra ops of eagergrad/ops/tensor_ops.py and
eagergrad/ops/products.py (merged into _samples.SAMPLES), same format as _samples.py.

The ops with a node of their own (flip, roll, rot90, diag_embed, the *_scatter ops, trace,
take, block_diag, narrow_copy, vdot, linalg_cross, addmv, addr, addbmm, cdist) have their
samples under their names. torch's compositions are filed under the op their graph is
built around: hstack & co. under cat, tensor_split & co. under slice, take_along_dim under
gather, broadcast_tensors and meshgrid under expand, tile under repeat, kron under mul,
tensordot and inner under mm / dot / sum, cartesian_prod and combinations under stack,
repeat_interleave under view and index_select, atleast_*d under view / unsqueeze.
SPECIAL holds cdist's kinks (equal rows, equal coordinates, inf-norm ties) and take's
duplicate indices.
"""
import math

from _samples import POS, C, F, I, S, T, V  # noqa: F401

INF = math.inf
_LAYOUT = ("torch's rot90 by an odd k is flip + transpose_: a non-contiguous result; "
           "eagergrad's results are contiguous (README: Memory layout of results)")


def _cdist_grad(m, x1, x2, p=2.0):
    out = m.cdist(x1, x2, p)
    v = m.ones(out.shape, dtype=x1.dtype, requires_grad=True)
    return m.autograd.grad(out, (x1, x2), v, create_graph=True)


def _inplace(name, *args, **kw):
    return lambda m, s, *ts: getattr(s * 1, name)(*ts, *args, **kw)


SAMPLES = {
    # ---- one node each ------------------------------------------------------------------
    "flip": [
        S(lambda m, x: x.flip(0, 1), F(3, 4)),
        S(lambda m, x: m.flip(x, dims=[-1]), F(2, 3, 4), name="dims keyword, negative"),
        S(lambda m, x: x.flip([]), F(3, 4), name="no dims"),
        S(lambda m, x: x.flip(0), F(), name="0-dim"),
        S(lambda m, x: x.fliplr(), F(3, 4), name="fliplr"),
        S(lambda m, x: m.flipud(x), F(3, 2, 2), name="flipud"),
        S(lambda m, x: x.flip(1), C(2, 3), name="complex"),
        S(lambda m, x: x.flip(0), T("int64", 4), nondiff=True, name="int"),
    ],
    "roll": [
        S(lambda m, x: x.roll(1, 0), F(3, 4)),
        S(lambda m, x: m.roll(x, 5), F(3, 4), name="flattened"),
        S(lambda m, x: x.roll((1, -2), (0, -1)), F(3, 4), name="two dims"),
        S(lambda m, x: x.roll(-7, dims=1), F(2, 3), name="shift beyond the size"),
        S(lambda m, x: x.roll(2), F(), name="0-dim"),
        S(lambda m, x: x.roll(1, 1), C(2, 3), name="complex"),
        S(lambda m, x: x.roll(2), T("int64", 5), nondiff=True, name="int"),
    ],
    "rot90": [
        S(lambda m, x: x.rot90(2), F(3, 4)),
        S(lambda m, x: x.rot90(), F(3, 4), name="k 1", xfail={"is_view": _LAYOUT}),
        S(lambda m, x: m.rot90(x, -1), F(3, 4), name="k -1", xfail={"is_view": _LAYOUT}),
        S(lambda m, x: x.rot90(0), F(3, 4), name="k 0"),
        S(lambda m, x: x.rot90(5, [2, 0]), F(2, 3, 4), name="k 5, dims [2, 0]",
          xfail={"is_view": _LAYOUT}),
        S(lambda m, x: x.rot90(2, [-1, -2]), C(2, 3), name="complex, negative dims"),
    ],
    "diag_embed": [
        S(lambda m, x: x.diag_embed(), F(2, 3)),
        S(lambda m, x: m.diag_embed(x, 1, 0, 2), F(2, 3), name="offset 1, dims 0 and 2"),
        S(lambda m, x: x.diag_embed(-1, 2, 0), F(2, 3), name="offset -1, dims 2 and 0"),
        S(lambda m, x: x.diag(), F(3), name="diag of a vector"),
        S(lambda m, x: m.diag(x, -2), F(3), name="diag of a vector, below"),
        S(lambda m, x: x.diagflat(1), F(2, 3), name="diagflat"),
        S(lambda m, x: x.t().diagflat(), F(2, 3), name="diagflat of a transpose (clone)"),
        S(lambda m, x: m.diagflat(x), F(), name="diagflat of a 0-dim"),
        S(lambda m, x: x.diag_embed(), C(2, 2), name="complex"),
        S(lambda m, x: x.diag(1), T("int64", 3), nondiff=True, name="int"),
    ],
    "diagonal_copy": [
        S(lambda m, x: x.diag(), F(3, 4)),
        S(lambda m, x: m.diag(x, -1), F(3, 4), name="below"),
        S(lambda m, x: x.diag(5), F(3, 4), name="out of the matrix: empty"),
        S(lambda m, x: x.diag(1), C(3, 3), name="complex"),
    ],
    "diagonal_scatter": [
        S(lambda m, x, s: m.diagonal_scatter(x, s), F(3, 4), F(3)),
        S(lambda m, x, s: x.diagonal_scatter(s, 1), F(3, 4), F(3), name="offset 1"),
        S(lambda m, x, s: m.diagonal_scatter(x, s, -1, 2, 0), F(3, 4, 2), F(4, 1),
          name="offset -1, dims 2 and 0"),
        S(lambda m, x, s: m.diagonal_scatter(x, s), F(3, 3), F(3, rg=False),
          name="src constant"),
        S(lambda m, x, s: m.diagonal_scatter(x, s), C(2, 2), C(2), name="complex"),
    ],
    "select_scatter": [
        S(lambda m, x, s: m.select_scatter(x, s, 0, 1), F(3, 4), F(4)),
        S(lambda m, x, s: x.select_scatter(s, -1, -1), F(3, 4), F(3), name="negative"),
        S(lambda m, x, s: m.select_scatter(x, s, 1, 0), F(2, 3, 2), T("float64", 2, 2),
          name="src of another dtype"),
        S(lambda m, x, s: m.select_scatter(x, s, 0, 0), C(2, 3, rg=False), C(3, rg=False),
          nondiff=True, name="complex (torch has no complex autograd for it)"),
    ],
    "slice_scatter": [
        S(lambda m, x, s: m.slice_scatter(x, s, 1, 1, 3), F(3, 4), F(3, 2)),
        S(lambda m, x, s: x.slice_scatter(s, 1, step=2), F(3, 4), F(3, 2), name="step 2"),
        S(lambda m, x, s: m.slice_scatter(x, s, start=-2), F(3, 4), F(2, 4),
          name="negative start"),
        S(lambda m, x, s: m.slice_scatter(x, s), F(3, 4), F(3, 4), name="everything"),
        S(lambda m, x, s: m.slice_scatter(x, s, 0, 0, 1), C(3, 2, rg=False), C(1, 2, rg=False),
          nondiff=True, name="complex (torch has no complex autograd for it)"),
    ],
    "trace": [
        S(lambda m, x: x.trace(), F(3, 3)),
        S(lambda m, x: m.trace(x), F(3, 5), name="wide"),
        S(lambda m, x: x.trace(), F(4, 2), name="tall"),
        S(lambda m, x: x.trace(), C(3, 3), name="complex"),
        S(lambda m, x: x.trace(), T("int32", 3, 3), nondiff=True, name="int32 -> int64"),
    ],
    "take": [
        S(lambda m, x, i: x.take(i), F(3, 4), I([0, 5, 11])),
        S(lambda m, x, i: m.take(x, i), F(3, 4), I([[-1, 2], [2, -12]]),
          name="negative, repeated, 2-D index"),
        S(lambda m, x, i: x.take(i), F(), I(0), name="0-dim"),
        S(lambda m, x, i: x.take(i), C(2, 3), I([1, 4]), name="complex"),
    ],
    "block_diag": [
        S(lambda m, a, b, c: m.block_diag(a, b, c), F(2, 3), F(), F(2)),
        S(lambda m, a, b: m.block_diag(a, b), F(2, 2), T("float64", 1, 3),
          name="promoted dtypes"),
        S(lambda m, a, b: m.block_diag(a, b), F(2), T("int64", 2, 2), name="int block"),
        S(lambda m, a, b: m.block_diag(a, b), C(2, 2), F(1, 2), name="complex and real"),
    ],
    "narrow_copy": [
        S(lambda m, x: x.narrow_copy(1, 1, 2), F(3, 4)),
        S(lambda m, x: m.narrow_copy(x, -1, -3, 2), F(3, 4), name="negative dim and start"),
        S(lambda m, x: x.narrow_copy(0, 1, 1), C(3, 2), name="complex"),
    ],
    "vdot": [
        S(lambda m, x, y: m.vdot(x, y), F(4), F(4)),
        S(lambda m, x, y: x.vdot(y), C(4), C(4), name="complex: the first conjugated"),
        S(lambda m, x, y: m.vdot(x, y), T("int64", 3), T("int64", 3), nondiff=True,
          name="int"),
    ],
    "linalg_cross": [
        S(lambda m, x, y: m.cross(x, y, dim=1), F(4, 3), F(4, 3)),
        S(lambda m, x, y: m.linalg.cross(x, y), F(4, 1, 3), F(1, 2, 3),
          name="linalg.cross, broadcast"),
        S(lambda m, x, y: x.cross(y), F(3, 4), F(3, 4),
          name="no dim: the first of size 3 (warned)"),
        S(lambda m, x, y: m.linalg.cross(x, y, dim=0), F(3, 2), F(3, 2, rg=False),
          name="other constant"),
        S(lambda m, x, y: m.linalg.cross(x, y, dim=-2), C(2, 3, 2), C(2, 3, 2),
          name="complex"),
        S(lambda m, x, y: m.linalg.cross(x, y), T("int64", 3), T("int64", 3), nondiff=True,
          name="int"),
    ],
    "addmv": [
        S(lambda m, s, a, v: m.addmv(s, a, v), F(3), F(3, 4), F(4)),
        S(lambda m, s, a, v: m.addmv(s, a, v, beta=2, alpha=0.5), F(1), F(3, 4), F(4),
          name="beta, alpha, broadcast input"),
        S(lambda m, s, a, v: s.addmv(a, v, beta=0), F(), F(3, 4), F(4),
          name="beta 0, 0-dim input"),
        S(_inplace("addmv_", alpha=2), F(3), F(3, 4), F(4), name="in place"),
        S(lambda m, s, a, v: m.addmv(s, a, v, alpha=1j), C(3), C(3, 4), C(4),
          name="complex, complex alpha"),
        S(lambda m, s, a, v: m.addmv(s, a, v, beta=2), T("int64", 3), T("int64", 3, 4),
          T("int64", 4), nondiff=True, name="int"),
    ],
    "addr": [
        S(lambda m, s, a, b: m.addr(s, a, b), F(3, 4), F(3), F(4)),
        S(lambda m, s, a, b: s.addr(a, b, beta=2, alpha=0.5), F(4), F(3), F(4),
          name="beta, alpha, broadcast input"),
        S(lambda m, s, a, b: m.addr(s, a, b), T("float32", 3, 4), T("float64", 3),
          T("float32", 4, rg=False),
          name="promoted", backward_error="addmv input tensors must have the same dtype"),
        S(lambda m, s, a, b: m.addr(s, a, b), T("float64", 3, 4), F(3, rg=False),
          F(4, rg=False), name="promoted, only input requires grad"),
        S(_inplace("addr_", beta=0), F(3, 4), F(3), F(4), name="in place, beta 0"),
        S(lambda m, s, a, b: m.addr(s, a, b, beta=1j), C(3, 4), C(3), C(4), name="complex"),
        S(lambda m, s, a, b: m.addr(s, a, b, alpha=3), T("int64", 3, 4), T("int64", 3),
          T("int64", 4), nondiff=True, name="int"),
        S(lambda m, s, a, b: m.addr(s, a, b), T("bool", 3, 4), T("bool", 3), T("bool", 4),
          nondiff=True, name="bool"),
    ],
    "addbmm": [
        S(lambda m, s, a, b: m.addbmm(s, a, b), F(3, 4), F(2, 3, 5), F(2, 5, 4)),
        S(lambda m, s, a, b: s.addbmm(a, b, beta=0.5, alpha=2), F(4), F(2, 3, 5), F(2, 5, 4),
          name="beta, alpha, broadcast input"),
        S(_inplace("addbmm_"), F(3, 4), F(2, 3, 5), F(2, 5, 4), name="in place"),
        S(lambda m, s, a, b: m.addbmm(s, a, b), F(3, 4), F(0, 3, 5), F(0, 5, 4),
          name="empty batch"),
        S(lambda m, s, a, b: m.addbmm(s, a, b, alpha=1 - 1j), C(3, 4), C(2, 3, 5), C(2, 5, 4),
          name="complex"),
    ],
    "_cdist_forward": [
        S(lambda m, a, b: m.cdist(a, b), F(3, 4), F(2, 4), double_backward=False),
        *[S(lambda m, a, b, p=p: m.cdist(a, b, p), F(3, 4), F(2, 4), double_backward=False,
            name=f"p {p}") for p in (0.0, 0.5, 1.0, 1.5, 3.0, INF)],
        S(lambda m, a, b: m.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
          F(2, 1, 3, 4), F(5, 2, 4), double_backward=False, name="broadcast batch"),
        S(lambda m, a, b: m.cdist(a, b, 1.0), F(2, 3, 2), F(2, 2, rg=False),
          double_backward=False, name="x2 constant, x1 batched"),
        S(lambda m, a, b: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), F(0, 4),
          F(2, 4), double_backward=False, name="empty x1 (never through mm)"),
    ],
    "_cdist_backward": [
        S(_cdist_grad, F(3, 4), F(2, 4), backward_error="the derivative for '_cdist_backward' "
          "is not implemented.", name="its double backward raises, as torch's"),
    ],
    "_euclidean_dist": [
        S(lambda m, a, b: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), F(3, 4),
          F(2, 4)),
        S(lambda m, a, b: m.cdist(a, b), F(27, 3), F(2, 3), name="more than 25 rows"),
        S(lambda m, a, b: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), F(2, 1, 3, 4),
          F(5, 2, 4), name="broadcast batch: expand, contiguous, view"),
        S(lambda m, a, b: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), F(1, 3, 4),
          F(2, 4), name="batch of one"),
    ],
    # ---- compositions, filed under their nodes' ops --------------------------------------
    "cat": [
        S(lambda m, a, b: m.hstack([a, b]), F(3, 4), F(3, 2), name="hstack"),
        S(lambda m, a, b: m.hstack((a, b)), F(), F(3), name="hstack of a 0-dim and a vector"),
        S(lambda m, a, b: m.vstack([a, b]), F(4), F(2, 4), name="vstack"),
        S(lambda m, a, b: m.row_stack([a, b]), F(3, 4), T("float64", 4), name="row_stack"),
        S(lambda m, a, b: m.dstack([a, b]), F(3), F(1, 3, 2), name="dstack"),
        S(lambda m, a, b, c: m.column_stack([a, b, c]), F(3), F(3, 2), F(3),
          name="column_stack"),
    ],
    "slice": [
        S(lambda m, x: x.tensor_split(3, 1), F(3, 4), name="tensor_split sections"),
        S(lambda m, x: m.tensor_split(x, [1, -1], dim=1), F(3, 4),
          name="tensor_split indices"),
        S(lambda m, x: x.tensor_split(m.tensor([2])), F(4, 2), jax=False,
          name="tensor_split tensor (its values read: not under jax.jit)"),
        S(lambda m, x: x.hsplit(2), F(3, 4), name="hsplit"),
        S(lambda m, x: m.hsplit(x, [1]), F(3), name="hsplit of a vector"),
        S(lambda m, x: x.vsplit([1, 2]), F(3, 4), name="vsplit"),
        S(lambda m, x: m.dsplit(x, 2), F(2, 3, 4), name="dsplit"),
    ],
    "gather": [
        S(lambda m, x, i: x.take_along_dim(i, 1), F(3, 4), I([[0], [3], [1]]),
          name="take_along_dim"),
        S(lambda m, x, i: m.take_along_dim(x, i, -2), F(3, 4), I([[2, 0, 1, 1]]),
          name="take_along_dim broadcast"),
        S(lambda m, x, i: x.take_along_dim(i), F(3, 4), I([0, 11, 5]),
          name="take_along_dim flattened"),
    ],
    "expand": [
        S(lambda m, a, b: m.broadcast_tensors(a, b), F(3, 1), F(1, 4), name="broadcast_tensors"),
        S(lambda m, a, b: m.broadcast_tensors(a, b), F(3, 4), F(4),
          name="broadcast_tensors, one already full"),
        S(lambda m, a, b: m.meshgrid(a, b, indexing="ij"), F(3), F(2), name="meshgrid ij"),
        S(lambda m, a, b, c: m.meshgrid([a, b, c], indexing="xy"), F(3), F(2), F(),
          name="meshgrid xy"),
    ],
    "repeat": [
        S(lambda m, x: x.tile(2), F(3, 4), name="tile"),
        S(lambda m, x: m.tile(x, (2, 1, 3)), F(3, 4), name="tile with more dims"),
    ],
    "view": [
        S(lambda m, x: x.repeat_interleave(2), F(3, 4), name="repeat_interleave"),
        S(lambda m, x: m.repeat_interleave(x, 3, dim=-1, output_size=12), F(3, 4),
          name="repeat_interleave dim, output_size"),
        S(lambda m, x: m.atleast_1d(x), F(), name="atleast_1d"),
        S(lambda m, a, b: m.atleast_3d([a, b]), F(), F(3, 4), name="atleast_3d"),
        S(lambda m, x, y: m.kron(x, y), F(3, 4), F(2, 3), name="kron (_unsafe_view, mul)"),
    ],
    "unsqueeze": [
        S(lambda m, a, b: m.atleast_2d(a, b), F(3), F(), name="atleast_2d"),
        S(lambda m, x: m.atleast_3d(x), F(3), name="atleast_3d of a vector"),
    ],
    "index_select": [
        S(lambda m, x, r: x.repeat_interleave(r, 0), F(3, 4), I([1, 0, 2]),
          name="repeat_interleave tensor"),
        S(lambda m, x, r: m.repeat_interleave(x, r, output_size=24), F(3, 4), I([2]),
          name="repeat_interleave flattened, one repeat"),
    ],
    "mul": [
        S(lambda m, x, y: x.kron(y), F(3), F(2, 3), name="kron of a vector and a matrix"),
        S(lambda m, x, y: m.kron(x, y), C(2, 2), C(2), name="kron complex"),
        S(lambda m, x, y: m.inner(x, y), F(), F(4), name="inner of a 0-dim"),
    ],
    "mm": [
        S(lambda m, x, y: m.tensordot(x, y, 1), F(3, 4), F(4, 2), name="tensordot"),
        S(lambda m, x, y: m.tensordot(x, y, ([1, 2], [0, 1])), F(2, 3, 4), F(3, 4, 5),
          name="tensordot dims lists"),
        S(lambda m, x, y: m.tensordot(x, y, ([1], [1])), F(3, 1), F(2, 4),
          name="tensordot broadcast dim summed"),
        S(lambda m, x, y: m.inner(x, y), F(3, 4), F(2, 4), name="inner"),
        S(lambda m, x, y: m.tensordot(x, y, 0), C(3), C(2), name="tensordot outer, complex"),
        S(lambda m, a, b, c: m.chain_matmul(a, b, c), F(3, 4), F(4, 3), F(3, 4),
          name="chain_matmul"),
    ],
    "dot": [
        S(lambda m, x, y: m.tensordot(x, y, 2), F(3, 4), F(3, 4),
          name="tensordot full contraction (contiguous)"),
        S(lambda m, x, y: x.inner(y), F(4), F(4), name="inner of vectors"),
        S(lambda m, x, y: m.dot(x, y), C(4), C(4), name="dot complex: nothing conjugated"),
    ],
    "sum": [
        S(lambda m, x, y: m.tensordot(x, y, ([1, 0], [1, 0])), F(3, 4), F(3, 4),
          name="tensordot full contraction (not contiguous)"),
    ],
    "stack": [
        S(lambda m, a, b: m.cartesian_prod(a, b), F(3), F(2), name="cartesian_prod"),
        # (masked_select with a mask made inside the function: a tracer under jax.jit)
        S(lambda m, x: m.combinations(x), F(4), jax=False, name="combinations"),
        S(lambda m, x: m.combinations(x, 3, with_replacement=True), F(3), jax=False,
          name="combinations with replacement"),
    ],
    "clone": [
        S(lambda m, x: m.chain_matmul(x), F(3, 4), name="chain_matmul of one matrix"),
    ],
}

_EQUAL = [[0.5, -1.0, 2.0], [1.0, 1.0, 0.0]]
_ROWS2 = [[0.5, -1.0, 2.0], [0.5, 3.0, 2.0], [-1.0, 1.0, 0.0]]
SPECIAL = {
    # equal rows (distance 0) and equal coordinates (a zero difference) at every p
    "_cdist_forward": [
        S(lambda m, a, b, p=p: m.cdist(a, b, p), V(_EQUAL), V(_ROWS2), double_backward=False,
          jax=False, fd=False, name=f"equal rows and coordinates, p {p}")
        for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, INF)] + [
        S(lambda m, a, b: m.cdist(a, b, INF), V([[0.0, 0.0]]), V([[1.0, -1.0], [2.0, 0.5]]),
          double_backward=False, jax=False, fd=False, name="inf-norm ties")],
    "_cdist_backward": [
        S(_cdist_grad, V(_EQUAL), V(_ROWS2), backward_error="is not implemented", jax=False,
          fd=False, name="equal rows")],
    "_euclidean_dist": [
        S(lambda m, a, b: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), V(_EQUAL),
          V([[0.5, -1.0, 2.0], [1.0, 1.0, 0.0]]), jax=False, fd=False,
          name="equal rows: distance 0 (its gradient masked to 0)")],
    "take": [
        S(lambda m, x, i: x.take(i), V([1.0, 2.0, 3.0]), I([1, 1, -2]),
          name="duplicate indices accumulate")],
}

_LINEAR = "linear: the same gradient at every point"
_BILINEAR = "linear in each input: the same formula at every point"
SMOOTH = {
    **dict.fromkeys(("flip", "roll", "rot90", "diag_embed", "diagonal_copy",
                     "diagonal_scatter", "select_scatter", "slice_scatter", "trace",
                     "block_diag", "narrow_copy"), _LINEAR),
    **dict.fromkeys(("vdot", "linalg_cross", "addmv", "addr", "addbmm"), _BILINEAR),
}
