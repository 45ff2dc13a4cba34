"""Samples for the out-of-place forms of the view and fill ops (eagergrad/ops/copies.py:
view_copy & co., fill, as_strided_scatter), merged into _samples.SAMPLES; same format as
_samples.py. The view ops they copy are linear, so are they: SMOOTH says so.

as_strided_scatter's gradient for self is torch's formula (as_strided_scatter_backward):
the gradient at the elements the slice covers, zero elsewhere. That is not the
derivative of the forward (which keeps self's other elements), so its samples with self
requiring grad are compared against torch only (jax=False, fd=False).

ravel, split_with_sizes and resolve_neg make no node of their own: their samples sit
under the ops their graphs are made of (view, clone, split_with_sizes).
"""
from _samples import C, F, S, T

_TORCH_ONLY = dict(jax=False, fd=False)
# torch's pieces are columns of the input (strided, aliasing it): eagergrad's are new,
# contiguous tensors, as unsafe_split's (README: Known differences)
_STRIDED = {"is_view": "torch's result is not contiguous; eagergrad's is"}


def _slice_inverse_of_offset_view(m, b):
    """slice_inverse of a slice of a view that starts at a storage offset: b[1:, 1:] again."""
    v = b[1:, 1:]
    return m.slice_inverse(v[:, 2:], v, 1, 2)


SAMPLES = {
    "view_copy": [
        S(lambda m, x: m.view_copy(x, (4, 3)), F(3, 4)),
        S(lambda m, x: m.view_copy(x.t(), (-1,)), F(3, 4), name="of a transpose"),
        S(lambda m, x: m.view_copy(x, (1, 1)), F(), name="0-dim"),
        S(lambda m, x: m.view_copy(x, (2, 6)), C(3, 4), name="complex"),
    ],
    "alias_copy": [
        S(lambda m, x: m.alias_copy(x), F(3, 4)),
        S(lambda m, x: m.alias_copy(x), C(3), name="complex"),
    ],
    "as_strided_copy": [
        S(lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2)), F(3, 4)),
        S(lambda m, x: m.as_strided_copy(x, (2, 3), (1, 1), 1), F(3, 4),
          name="overlapping, offset"),
        S(lambda m, x: m.as_strided_copy(x, (2,), (3,)), C(3, 3), name="complex"),
    ],
    "diagonal_copy": [
        S(lambda m, x: m.diagonal_copy(x, -1, 2, 0), F(3, 2, 4), name="diagonal_copy dims"),
        S(lambda m, x: m.diagonal_copy(x, 1), C(3, 3), name="diagonal_copy complex"),
    ],
    "expand_copy": [
        S(lambda m, x: m.expand_copy(x, (2, 3, 4)), F(3, 1)),
        S(lambda m, x: m.expand_copy(x, [3, -1]), F(1, 4), name="-1"),
        S(lambda m, x: m.expand_copy(x, (2,)), F(), name="0-dim"),
        S(lambda m, x: m.expand_copy(x, (2, 3)), C(3), name="complex"),
    ],
    "permute_copy": [
        S(lambda m, x: m.permute_copy(x, (2, 0, 1)), F(2, 3, 4)),
        S(lambda m, x: m.permute_copy(x, [-1, 0]), C(3, 4), name="complex, negative dim"),
    ],
    "squeeze0_copy": [
        S(lambda m, x: m.squeeze_copy(x), F(3, 1, 4, 1)),
        S(lambda m, x: m.squeeze_copy(x), C(1, 2), name="complex"),
    ],
    "squeeze1_copy": [
        S(lambda m, x: m.squeeze_copy(x, -2), F(3, 1, 4)),
        S(lambda m, x: m.squeeze_copy(x, 0), F(3, 4), name="not size 1"),
        S(lambda m, x: m.squeeze_copy(x, 1), C(2, 1), name="complex"),
    ],
    "squeeze2_copy": [
        S(lambda m, x: m.squeeze_copy(x, (0, 2)), F(1, 3, 1, 4)),
        S(lambda m, x: m.squeeze_copy(x, [0, -1]), C(1, 2), name="complex"),
    ],
    "t_copy": [
        S(lambda m, x: m.t_copy(x), F(3, 4)),
        S(lambda m, x: m.t_copy(x), F(4), name="1-d"),
        S(lambda m, x: m.t_copy(x), C(2, 3), name="complex"),
    ],
    "transpose_copy": [
        S(lambda m, x: m.transpose_copy(x, 0, -1), F(2, 3, 4)),
        S(lambda m, x: m.transpose_copy(x, 1, 0), C(3, 2), name="complex"),
    ],
    "unfold_copy": [
        S(lambda m, x: m.unfold_copy(x, 1, 2, 1), F(3, 4)),
        S(lambda m, x: m.unfold_copy(x, 0, 2, 2), F(5, 2), name="step 2"),
        S(lambda m, x: m.unfold_copy(x, 0, 1, 1), F(), name="0-dim"),
        S(lambda m, x: m.unfold_copy(x, -1, 3, 1), C(2, 4), name="complex"),
    ],
    "unsqueeze_copy": [
        S(lambda m, x: m.unsqueeze_copy(x, 1), F(3, 4)),
        S(lambda m, x: m.unsqueeze_copy(x, -1), F(), name="0-dim"),
        S(lambda m, x: m.unsqueeze_copy(x, 0), C(3), name="complex"),
    ],
    "unbind_copy": [
        S(lambda m, x: m.unbind_copy(x, 1), F(3, 4)),
        S(lambda m, x: m.unbind_copy(x), C(2, 3), name="complex"),
    ],
    "split_with_sizes_copy": [
        S(lambda m, x: m.split_with_sizes_copy(x, [1, 3], 1), F(3, 4)),
        S(lambda m, x: m.split_with_sizes_copy(x, (2, 0, 1)), F(3, 2), name="an empty piece"),
        S(lambda m, x: m.split_with_sizes_copy(x, [1, 1], -1), C(3, 2), name="complex"),
    ],
    "detach_copy": [
        S(lambda m, x: m.detach_copy(x), F(3, 4),
          backward_error="derivative for aten::detach_copy is not implemented"),
        S(lambda m, x: m.detach_copy(x.t()), T("int64", 3, 2), nondiff=True,
          name="int, of a transpose"),
    ],
    "select_copy": [
        S(lambda m, x: m.select_copy(x, 1, -1), F(3, 4)),
        S(lambda m, x: m.select_copy(x, 0, 1), C(2, 3, rg=False), nondiff=True,
          name="complex (no autograd in torch)"),
    ],
    "slice_copy": [
        S(lambda m, x: m.slice_copy(x, 1, -3, 100, 2), F(3, 4)),
        S(lambda m, x: m.slice_copy(x), C(3, 2, rg=False), nondiff=True,
          name="complex, defaults (no autograd in torch)"),
    ],
    "split_copy": [
        S(lambda m, x: m.split_copy(x, 3, 1), F(3, 4)),
        S(lambda m, x: m.split_copy(x, 2), C(3, 2), name="complex"),
    ],
    "view_as_real_copy": [
        S(lambda m, z: m.view_as_real_copy(z), C(3)),
        S(lambda m, z: m.view_as_real_copy(z.conj()), C(2, 3), name="of a conjugate"),
    ],
    "view_as_complex_copy": [
        S(lambda m, x: m.view_as_complex_copy(x), F(3, 2, rg=False), nondiff=True),
        S(lambda m, x: m.view_as_complex_copy(x.view(2, 2, 2)[1]), F(4, 2, rg=False),
          nondiff=True, name="of a view"),
    ],
    "unsafe_split_with_sizes": [
        S(lambda m, x: m.unsafe_split_with_sizes(x, [1, 2]), F(3, 4)),
        S(lambda m, x: x.unsafe_split_with_sizes([1, 3], -1), F(3, 4),
          name="method, columns", xfail=_STRIDED),
        S(lambda m, x: m.unsafe_split_with_sizes(x, (2, 0)), C(2, 3), name="complex, empty"),
    ],
    "slice_inverse": [
        S(lambda m, x: m.slice_inverse(x[:, 1::2], x, 1, 1, None, 2), F(3, 4)),
        S(lambda m, x: _slice_inverse_of_offset_view(m, x * 2), F(4, 5),
          name="views with storage offsets"),
        S(lambda m, x, y: x.slice_inverse(y, 0), F(3, 4), F(3, 4),
          name="method, of a base: y's layout over x's storage"),
        S(lambda m, z: m.slice_inverse(z[1:], z, 0, 1), C(3, 2, rg=False), nondiff=True,
          name="complex (no autograd in torch)"),
    ],
    "fill_functional": [
        S(lambda m, x: m.fill(x, 2.5), F(3, 4)),
        S(lambda m, x: m.fill(x.expand(2, 3, 4), -1), F(3, 4), name="expanded input, int"),
        S(lambda m, x: m.fill(x, 1 - 2j), C(3), name="complex"),
    ],
    "fill_tensor_functional": [
        S(lambda m, x, v: m.fill(x, v), F(3, 4), F()),
        S(lambda m, x, v: m.fill(x, v), F(3, rg=False), F(), name="only value requires grad"),
        S(lambda m, x, v: m.fill(x, v), C(3), C(), name="complex"),
    ],
    "as_strided_scatter": [
        S(lambda m, x, s: m.as_strided_scatter(x, s, (2, 2), (1, 2), 1), F(3, 3, rg=False),
          F(2, 2)),
        S(lambda m, x, s: x.as_strided_scatter(s, (2, 2), (1, 2), 1), F(3, 3), F(2, 2),
          name="self: torch's gradient", **_TORCH_ONLY),
        S(lambda m, x, s: m.as_strided_scatter(x, s, (2, 3), (1, 1)), F(3, 3), F(2, 3),
          name="overlapping", **_TORCH_ONLY),
        S(lambda m, x, s: m.as_strided_scatter(x, s, (3,), (3,)), F(3, 3, rg=False),
          T("float64", 3), name="src of another dtype"),
        S(lambda m, x, s: m.as_strided_scatter(x, s, (), ()), C(2, rg=False), C(),
          name="complex, 0-dim src"),
    ],
    # ---- no node of their own --------------------------------------------------------------
    "view": [
        S(lambda m, x: x.ravel(), F(3, 4), name="ravel"),
        S(lambda m, x: m.ravel(x), F(), name="ravel of a 0-dim"),
    ],
    "clone": [
        S(lambda m, x: m.ravel(x.t()), F(3, 4), name="ravel of a transpose (contiguous)"),
        S(lambda m, z: z.conj().imag.resolve_neg(), C(3), name="resolve_neg of a negative view"),
    ],
    "split_with_sizes": [
        S(lambda m, x: m.split_with_sizes(x, [2, 1]), F(3, 4), name="split_with_sizes"),
        S(lambda m, x: x.split_with_sizes((1, 3), dim=-1), C(2, 4),
          name="split_with_sizes method, complex"),
    ],
}

_LINEAR = "linear: the same gradient at every point"
SMOOTH = dict.fromkeys(("view_copy", "alias_copy", "as_strided_copy", "expand_copy",
                        "permute_copy", "squeeze0_copy", "squeeze1_copy", "squeeze2_copy",
                        "t_copy", "transpose_copy", "unfold_copy", "unsqueeze_copy",
                        "unbind_copy", "split_with_sizes_copy", "fill_functional",
                        "fill_tensor_functional", "as_strided_scatter", "select_copy",
                        "slice_copy", "split_copy", "view_as_real_copy",
                        "unsafe_split_with_sizes", "slice_inverse"), _LINEAR)
SMOOTH["detach_copy"] = "no gradient: torch's backward raises (NotImplemented)"
SMOOTH["view_as_complex_copy"] = "no gradient: torch's autograd refuses it"
