"""Tensor methods and properties against torch: the in-place view ops (squeeze_,
unsqueeze_, t_, transpose_, swapaxes_, swapdims_, as_strided_: shape, strides, version,
grad_fn, aliasing and gradients, on bases and views), fill_diagonal_, baddbmm_,
conj_physical_, the host callbacks apply_ / map_ / map2_, the legacy constructor `new`,
dim_order, and the facts itemsize, nbytes, is_signed, is_nonzero, is_same_size, is_shared
and the device and layout predicates.

Every scenario is a function of the library `L` (torch or eagergrad), compared by
conftest.same with layout=True: tensors by values, dtype, shape, requires_grad, is_leaf,
grad_fn name, _version, _is_view(), strides, storage offset and contiguity; errors by
type and message.
"""
import functools
import itertools

import numpy as np
import pytest
import torch

import conftest
import eagergrad as eg

same = functools.partial(conftest.same, layout=True)
same_error = functools.partial(conftest.same_error, layout=True)


def _names(t):
    """The names of t's grad_fn and of the nodes it leads to."""
    fn = t.grad_fn
    return None if fn is None else (fn.name(), [None if n is None else n.name()
                                                for n, _ in fn.next_functions])


# ---- the in-place view ops -------------------------------------------------------------------
# (op call, input shape): each changes its tensor's shape, strides and offset in place
VIEW_OPS = {
    "squeeze_()": (lambda t: t.squeeze_(), (2, 1, 3)),
    "squeeze_(dim)": (lambda t: t.squeeze_(1), (2, 1, 3)),
    "squeeze_(-dim) not 1": (lambda t: t.squeeze_(-3), (2, 1, 3)),
    "squeeze_(dims)": (lambda t: t.squeeze_((0, 1)), (2, 1, 3)),
    "unsqueeze_": (lambda t: t.unsqueeze_(-1), (2, 3)),
    "unsqueeze_(0)": (lambda t: t.unsqueeze_(0), (2, 3)),
    "t_": (lambda t: t.t_(), (2, 3)),
    "t_ 1-d": (lambda t: t.t_(), (3,)),
    "transpose_": (lambda t: t.transpose_(0, 2), (2, 3, 4)),
    "swapaxes_": (lambda t: t.swapaxes_(axis0=-1, axis1=0), (2, 3, 4)),
    "swapdims_": (lambda t: t.swapdims_(1, 0), (2, 3)),
    "as_strided_": (lambda t: t.as_strided_((3, 2), (1, 3)), (2, 3)),
    "as_strided_ offset": (lambda t: t.as_strided_((2, 2), (1, 2), 1), (6,)),
}
VIEW_CASES = list(VIEW_OPS)


def _g(*grads):
    """Gradients, compared without their layout (the version counter of a `.grad` depends
    on how torch's engine happened to build the buffer)."""
    out = [None if g is None else conftest.T(g, conftest.Options()) for g in grads]
    return out[0] if len(out) == 1 else out


def _arange(L, shape, **kw):
    n = int(np.prod(shape))
    return (L.arange(float(n)) / 4 - 1).reshape(shape).requires_grad_(kw.get("rg", False))


def _weights(L, t):
    return L.arange(float(t.numel())).reshape(t.shape) + 1


@pytest.mark.parametrize("case", VIEW_CASES)
def test_inplace_view_op_on_a_base_without_grad(case):
    """The same object, its new shape, strides and offset, version 1, still not a view."""
    op, shape = VIEW_OPS[case]

    def f(L):
        x = _arange(L, shape)
        y = op(x)
        return y is x, x, x.dim_order()
    same(f)


@pytest.mark.parametrize("case", VIEW_CASES)
def test_inplace_view_op_on_a_non_leaf(case):
    """grad_fn becomes the op's own node (UnsqueezeBackward1...) over the old one; the
    gradient flows back through it."""
    op, shape = VIEW_OPS[case]

    def f(L):
        a = _arange(L, shape, rg=True)
        b = a * 2
        op(b)
        out = [b, _names(b)]
        (b * _weights(L, b)).sum().backward()
        return out + [_g(a.grad)]
    same(f, fused=True)


@pytest.mark.parametrize("case", [c for c in VIEW_CASES if not c.startswith("as_strided_")])
def test_inplace_view_op_on_a_view(case):
    """A view stays a view of its base, with the op's node over its old grad_fn; writes
    through it reach the base; gradients reach the base's inputs."""
    op, shape = VIEW_OPS[case]

    def f(L):
        a = _arange(L, (2,) + shape, rg=True)
        b = a * 2
        v = b[1]
        op(v)
        out = [v, b, _names(v), v._base is b]
        v.mul_(3)
        out += [v, b, _names(v), _names(b)]
        (b * _weights(L, b)).sum().backward()
        return out + [_g(a.grad)]
    same(f)


@pytest.mark.parametrize("case", VIEW_CASES)
def test_inplace_view_op_refused_on_a_leaf_requiring_grad(case):
    op, shape = VIEW_OPS[case]
    same_error(lambda L: op(_arange(L, shape, rg=True)), "a leaf Variable that requires grad")


def test_inplace_view_op_refusals():
    """torch's check_inplace: views of leaves, views made in no_grad mode, outputs of
    functions returning several views, inference tensors outside inference mode."""
    same_error(lambda L: _arange(L, (2, 3), rg=True)[0].unsqueeze_(0),
               "a view of a leaf Variable that requires grad")

    def no_grad_view(L):
        b = _arange(L, (2, 3), rg=True) * 2
        with L.no_grad():
            v = b[0]
        v.t_()
    same_error(no_grad_view, "A view was created in no_grad mode")
    same_error(lambda L: (_arange(L, (2, 3), rg=True) * 2).unbind(0)[0].unsqueeze_(0),
               "This view is the output of a function that returns multiple views")

    def inference(L):
        with L.inference_mode():
            x = L.zeros(3)
        x.unsqueeze_(0)
    same_error(inference, "Inplace update to inference tensor outside InferenceMode")


def test_inplace_view_op_argument_errors():
    same_error(lambda L: L.zeros(2, 3, 4).t_(), "t_() expects a tensor with <= 2 dimensions")
    same_error(lambda L: L.zeros(2, 3).transpose_(0, 2), "Dimension out of range", IndexError)
    same_error(lambda L: L.zeros(2, 3).unsqueeze_(3), "Dimension out of range", IndexError)
    same_error(lambda L: L.zeros(2, 3).squeeze_(-3), "Dimension out of range", IndexError)
    same_error(lambda L: L.zeros(1, 2, 1).squeeze_((2, 0, -1)), "dim 2 appears multiple times")
    same_error(lambda L: L.zeros(1, 2, 1).squeeze((2, 0, -1)), "dim 2 appears multiple times")
    same_error(lambda L: L.arange(6.0).as_strided_((6,), (1,), 2), "out of bounds for storage")


def test_inplace_view_ops_on_0_dim_and_chained():
    def f(L):
        out = [L.tensor(1.0).unsqueeze_(0), L.tensor(1.0).squeeze_(0),
               L.tensor(1.0).transpose_(0, -1), L.tensor(2.0).t_()]
        x = L.zeros(2, 1, 3)
        for step in (lambda: x.squeeze_(1), lambda: x.unsqueeze_(0), lambda: x.swapaxes_(0, 2),
                     lambda: x.squeeze_(), lambda: x.t_(), lambda: x.unsqueeze_(1)):
            step()
            out.append(x.tolist())
            out.append((tuple(x.shape), x.stride(), x._version))
        return out
    same(f)


def test_inplace_view_op_under_no_grad():
    """A leaf requiring grad may change shape under no_grad: it stays a leaf, and its
    gradient takes the new shape. A view made with grad mode on, changed under no_grad,
    regenerates its grad_fn from its base (AsStridedBackward0)."""
    def leaf(L):
        a = _arange(L, (3,), rg=True)
        with L.no_grad():
            a.unsqueeze_(0)
        (a * _weights(L, a)).sum().backward()
        return a, _g(a.grad)
    same(leaf)

    def view(L):
        a = _arange(L, (6,), rg=True)
        b = (a * 2).reshape(2, 3)
        v = b[0]
        with L.no_grad():
            v.unsqueeze_(0)
        out = [v, _names(v)]
        (v * _weights(L, v)).sum().backward()
        return out + [_g(a.grad)]
    same(view)


def test_inplace_view_op_aliasing():
    """Values written through the base or any view after the op (made before or after it)
    are seen by all of them."""
    def f(L):
        x = L.arange(6.0).reshape(2, 3)
        old = x[:, 1]
        v = x[0]
        v.unsqueeze_(0)
        x[0, 0] = 100
        v[0, 1] = 50
        x.t_()
        new = x[2]
        x[1, 0] = -1
        new.mul_(10)
        old.add_(0.5)
        return x, v, old, new
    same(f)

    def complex_parts(L):
        z = L.arange(6.0).reshape(2, 3) * (1 + 2j)
        r = z.real
        r.t_()
        r[0, 1] = 50
        c = z.conj()
        c.unsqueeze_(0)
        c[0, 1, 2] = 7j
        return z, r, c, c.is_conj()
    same(complex_parts)

    def detached(L):
        a = L.arange(6.0).reshape(2, 3)
        d = a[:, 1:].detach()  # (a view's alias, not a view for autograd)
        d.t_()
        d[0, 1] = 9
        w = d[1]
        d.requires_grad_()
        e = d[0] * 2  # (1-d: torch's output layout is eagergrad's)
        e.unsqueeze_(0)
        (e * _weights(L, e)).sum().backward()
        return a, d, w, e, _names(e), _g(d.grad)
    same(detached)


def test_views_made_before_and_after_the_base_changed():
    """Views made before the base's in-place view op regenerate their grad_fn
    (AsStridedBackward0) from its new history; in-place ops through old and new views
    rebase the base (CopySlices); the gradients are torch's, also of second order."""
    def siblings(L):
        a = _arange(L, (6,), rg=True)
        b = a * 2
        v = b[1:4]
        b.unsqueeze_(0)
        out = [v, _names(v), b, _names(b)]
        (v * _weights(L, v)).sum().backward()
        return out + [_g(a.grad)]
    same(siblings)

    def writes(L):
        a = _arange(L, (6,), rg=True)
        b = (a * 2).reshape(2, 3)
        old = b[:, 1]
        b.t_()
        old.mul_(10)
        new = b[1]
        new.mul_(3)
        out = [b, _names(b), old, _names(old), new, _names(new)]
        g = L.autograd.grad((b * b * _weights(L, b)).sum(), a, create_graph=True)[0]
        return out + [g, L.autograd.grad((g * g).sum(), a)[0]]
    same(writes)

    def base_then_mul(L):
        a = _arange(L, (6,), rg=True)
        b = (a * 2).reshape(2, 3)
        b.transpose_(0, 1)
        b.mul_(3)
        out = [b, _names(b)]
        (b * _weights(L, b)).sum().backward()
        return out + [_g(a.grad)]
    same(base_then_mul)


def test_inplace_view_op_version_checks_saved_tensors():
    def f(L):
        a = _arange(L, (6,), rg=True)
        b = (a * 2).reshape(2, 3)
        c = b * b
        b.t_()
        c.sum().backward()
    same_error(f, "modified by an inplace operation")


def test_inplace_view_op_retain_grad_and_hooks():
    def f(L, log):
        a = _arange(L, (4,), rg=True)
        b = (a * 1).reshape(2, 2)
        b.retain_grad()
        b.register_hook(lambda g: log.append(("hook", _g(g))))
        b.t_()
        (b * _weights(L, b)).sum().backward()
        log.append(("grads", _g(b.grad), _g(a.grad)))
    same(f)


def test_inplace_view_op_forward_ad():
    """The tangent changes with its primal (torch's self_t.t_()), the user's tangent
    object included."""
    def f(L):
        fwad = L.autograd.forward_ad
        t = L.ones(2, 3)
        with fwad.dual_level():
            x = fwad.make_dual(L.arange(6.0).reshape(2, 3), t)
            y = x * 2
            y.t_()
            v = y[0]
            v.unsqueeze_(0)
            x.transpose_(0, 1)
            return (fwad.unpack_dual(y).tangent, fwad.unpack_dual(v).primal,
                    fwad.unpack_dual(v).tangent, t, fwad.unpack_dual(x).tangent is t,
                    fwad.unpack_dual(y * 3).tangent.contiguous())
    same(f)


def test_inplace_view_op_in_func_transforms():
    def f(L):
        def g(x):
            y = x * 2
            y.unsqueeze_(0)
            y.t_()
            return y.sum(1)
        x = L.arange(3.0)
        return (L.func.grad(lambda x: (g(x) ** 2).sum())(x), L.func.vmap(g)(L.ones(2, 3)),
                L.func.jacrev(g)(x).tolist())  # (torch's jacobian is a view)
    same(f)


def test_as_strided_refusals_are_honest():
    """eagergrad's as_strided_ reads a view's own elements only, and a view made before
    as_strided_ changed its base has no chain from the base: both refuse (torch runs)."""
    x = eg.arange(6.0)
    with pytest.raises(NotImplementedError, match="as_strided_ beyond the elements"):
        x[:3].as_strided_((6,), (1,))
    a = eg.arange(6.0, requires_grad=True)
    b = a * 2
    v = b[1:3]
    b.as_strided_((2, 2), (1, 2))
    with pytest.raises(NotImplementedError, match="before as_strided_ changed its base"):
        v.grad_fn
    # (the values stay right)
    assert v.tolist() == [2.0, 4.0] and b.tolist() == [[0.0, 4.0], [2.0, 6.0]]


# ---- fill_diagonal_ ------------------------------------------------------------------------
FILL_SHAPES = [((7, 3), False), ((7, 3), True), ((3, 7), True), ((3, 3, 3), False),
               ((4, 4), True), ((8, 3), True), ((6, 2), True), ((20, 3), True), ((5, 1), True),
               ((5, 0), True), ((0, 0), False), ((2, 5), False)]


@pytest.mark.parametrize("shape,wrap", FILL_SHAPES, ids=str)
def test_fill_diagonal(shape, wrap):
    same(lambda L: L.zeros(shape).fill_diagonal_(1.5, wrap=wrap))


def test_fill_diagonal_values_and_errors():
    same(lambda L: [L.zeros(3, 3, dtype=L.int64).fill_diagonal_(2.7),
                    L.zeros(3, 3, dtype=L.bool).fill_diagonal_(2),
                    L.zeros(2, 2, dtype=L.complex64).fill_diagonal_(1 + 2j),
                    L.zeros(3, 3).fill_diagonal_(True),
                    L.zeros(3, 3).fill_diagonal_(L.tensor(2.0)),
                    L.zeros(3, 3).fill_diagonal_(fill_value=3, wrap=True)])
    same_error(lambda L: L.zeros(2, 3, 3).fill_diagonal_(1), "all dimensions of input must be")
    same_error(lambda L: L.zeros(3).fill_diagonal_(1), "dimensions must larger than 1")
    same_error(lambda L: L.zeros(3, 3).fill_diagonal_(L.tensor([2.0])), "must be Number",
               TypeError)
    same_error(lambda L: L.zeros(3, 3).fill_diagonal_(L.tensor(2.0, requires_grad=True)),
               "must be Number", TypeError)
    same_error(lambda L: L.zeros(3, 3).fill_diagonal_("a"), "must be Number", TypeError)
    same_error(lambda L: L.zeros(3, 3).fill_diagonal_(1 + 2j), "cannot be converted")
    same_error(lambda L: L.zeros(3, 3, dtype=L.int8).fill_diagonal_(300), "cannot be converted")


def test_fill_diagonal_on_views():
    """ATen's as_strided views over the storage: a row slice, a transpose, a column slice
    whose wrapped diagonal runs past its columns (into the base's), and one past the
    storage (torch's bounds error)."""
    same(lambda L: (lambda z: (z[1:].fill_diagonal_(7), z))(L.zeros(4, 3)))
    same(lambda L: (lambda z: (z.t().fill_diagonal_(7, wrap=True), z))(L.zeros(7, 2)))
    same(lambda L: (lambda z: (z[:, :3].fill_diagonal_(7, wrap=True), z))(L.zeros(7, 5)))
    same(lambda L: (lambda z: (z[:, :2].fill_diagonal_(7, wrap=True), z))(L.zeros(9, 5)))
    same_error(lambda L: L.zeros(2, 7).t().fill_diagonal_(7, wrap=True), "out of bounds")
    # complex bases: their real and imaginary parts, a conj view
    same(lambda L: (lambda z: (z.real.fill_diagonal_(7), z))(L.zeros(3, 3, dtype=L.complex64)))
    same(lambda L: (lambda z: (z.imag.fill_diagonal_(7, wrap=True), z))(
        L.zeros(5, 2, dtype=L.complex64)))
    same(lambda L: (lambda z: (z.conj().fill_diagonal_(1j), z))(L.zeros(2, 2, dtype=L.complex64)))


def test_fill_diagonal_autograd():
    def f(L):
        out = []
        for shape, wrap, view in (((3, 4), False, None), ((7, 3), True, None),
                                  ((3, 4), False, "t"), ((9, 5), True, "cols")):
            a = _arange(L, shape, rg=True)
            b = a * 1
            v = b.t() if view == "t" else b[:, :2] if view == "cols" else b
            v.fill_diagonal_(5.0, wrap=wrap)
            out += [v, _names(v), b, _names(b)]
            (b * _weights(L, b)).sum().backward()
            out.append(_g(a.grad))
        return out
    same(f)
    same_error(lambda L: L.zeros(2, 2, requires_grad=True).fill_diagonal_(1),
               "a view of a leaf Variable")

    def no_grad_view(L):
        b = _arange(L, (9, 5), rg=True) * 1
        with L.no_grad():
            v = b[:, :2]
        v.fill_diagonal_(7.0, wrap=True)
    same_error(no_grad_view, "created in no_grad mode")


# ---- baddbmm_, conj_physical_ ---------------------------------------------------------------
def test_baddbmm_():
    def f(L):
        x = _arange(L, (2, 3, 4), rg=True)
        b1 = _arange(L, (2, 3, 5), rg=True)
        b2 = _arange(L, (2, 5, 4), rg=True)
        y = x * 1
        r = y.baddbmm_(b1, b2, beta=0.5, alpha=2)
        out = [r is y, y, _names(y)]
        (y * _weights(L, y)).sum().backward()
        return out + _g(x.grad, b1.grad, b2.grad)
    same(f)
    same(lambda L: L.ones(2, 3, 4, dtype=L.int64).baddbmm_(
        L.ones(2, 3, 5, dtype=L.int64), L.ones(2, 5, 4, dtype=L.int64), alpha=2, beta=3))


@pytest.mark.parametrize("dtypes", [("float64", "float64", "float32"),
                                    ("float32", "float32", "float64"),
                                    ("float64", "float32", "float32")])
def test_baddbmm_dtype_errors(dtypes):
    def args(L):
        a, b, c = (getattr(L, d) for d in dtypes)
        return L.zeros(2, 3, 4, dtype=a), L.ones(2, 3, 5, dtype=b), L.ones(2, 5, 4, dtype=c)
    same(lambda L: L.baddbmm(*args(L)))
    same(lambda L: (lambda s, b1, b2: s.baddbmm_(b1, b2))(*args(L)))


def test_baddbmm_shape_errors():
    same_error(lambda L: L.zeros(3, 4).baddbmm_(L.ones(2, 3, 5), L.ones(2, 5, 4)),
               "Bad in-place call: input tensor size [3, 4]")
    same_error(lambda L: L.zeros(5, 3, 4).baddbmm_(L.ones(2, 3, 5), L.ones(2, 5, 4)),
               "The expanded size of the tensor")
    same_error(lambda L: L.zeros(2, 3, 4).baddbmm_(L.ones(2, 3, 5), L.ones(2, 4, 4)),
               "Expected size for first two dimensions of batch2")
    same_error(lambda L: L.zeros(2, 3, 4, requires_grad=True).baddbmm_(
        L.ones(2, 3, 5), L.ones(2, 5, 4)), "a leaf Variable that requires grad")


def test_conj_physical_():
    """ConjPhysicalBackward1, on complex and (values unchanged, version moved) real
    tensors; torch.conj_physical_ too."""
    def f(L):
        z = L.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        w = z * 1
        w.conj_physical_()
        q = _arange(L, (3,), rg=True)
        r = q * 1
        r.conj_physical_()
        out = [w, _names(w), r, _names(r), L.conj_physical_(L.tensor([1j, 2.0]))]
        ((w * L.tensor([1j, 2.0])).sum().abs() + r.sum()).backward()
        return out + _g(z.grad, q.grad)
    same(f)


# ---- apply_, map_, map2_ ---------------------------------------------------------------------
def _recording(calls, fn):
    def f(*args):
        calls.append(tuple((type(a).__name__, a) for a in args))
        return fn(*args)
    return f


def test_apply_():
    """Row-major order over the shape, Python numbers of the dtype's kind, results stored
    at once (an expanded tensor sees its own earlier results), the version unchanged."""
    def f(L):
        calls = []
        x = L.arange(6.0).reshape(2, 3)
        y = x.t()
        r = y.apply_(_recording(calls, lambda v: v * 2 + 1))
        e = L.ones(2, 3)[:, :1].expand(2, 3)
        e.apply_(_recording(calls, lambda v: v + 1))
        z = L.arange(3.0)
        z[1:].apply_(lambda v: v * 100)
        t = L.arange(6.0).reshape(2, 3)
        t.t_()  # (a base read through its own new layout)
        t.apply_(_recording(calls, lambda v: -v))
        return r is y, x, y, e, z, t, calls, L.tensor([]).apply_(lambda v: 1 / 0), \
            L.tensor(2.0).apply_(lambda v: v + 1)
    same(f)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool",
                                   "float16", "bfloat16", "float32", "float64", "complex64",
                                   "complex128"])
def test_apply_element_types(dtype):
    def f(L):
        calls = []
        x = L.tensor([0, 1, 3]).to(getattr(L, dtype))
        x.apply_(_recording(calls, lambda v: v))
        return x, calls
    same(f)


# (dtype, result of the callable): torch's store_scalar conversions and their errors
STORES = [("int64", 1.7), ("int64", True), ("int8", 200), ("uint8", 300), ("uint8", -255),
          ("uint8", -256), ("uint8", -0.5), ("uint8", 255.9), ("uint8", 256.0),
          ("int64", 2.0 ** 63), ("int64", 1e19), ("int64", 2 ** 64), ("int32", float("inf")),
          ("int32", float("nan")), ("int64", 1j), ("int64", "a"), ("int64", np.float32(2.5)),
          ("int16", np.int64(7)), ("float32", "a"), ("float32", None), ("float32", 1j),
          ("float32", 10 ** 400), ("float32", 1e300), ("float32", np.float32(7.5)),
          ("float16", 1e6), ("float16", 1.0004882812500001), ("bfloat16", 1.00390625000001),
          ("bool", "x"), ("bool", None), ("bool", 2 ** 70), ("bool", 0.0), ("bool", 0j),
          ("bool", 5), ("bool", np.float32(2.5)), ("complex64", "s"), ("complex64", 3),
          ("complex128", 1 + 2j)]


@pytest.mark.parametrize("dtype,value", STORES, ids=str)
def test_apply_stores_results_as_torch(dtype, value):
    def f(L):
        x = L.tensor([1, 2]).to(getattr(L, dtype))
        try:
            x.apply_(lambda v: value)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            return x, type(e).__name__, conftest.msg(e)
        return x
    same(f)


def test_apply_errors_and_partial_results():
    same_error(lambda L: L.tensor([1.0], requires_grad=True).apply_(lambda v: v),
               "Can't call apply_() on Variable that requires grad")
    same_error(lambda L: L.tensor([1.0]).apply_(3), "not callable", TypeError)

    def partial(L):
        x = L.arange(3.0)

        def fn(v):
            if v == 1:
                raise ValueError("stop")
            return v + 10
        try:
            x.apply_(fn)
        except ValueError as e:
            return x, str(e)
    same(partial)


def test_apply_through_complex_views():
    """A conj view is read and written as its memory holds it; real and imaginary parts
    write into their complex base."""
    def f(L):
        calls = []
        z = L.tensor([1 + 2j, 3 + 4j])
        c = z.conj()
        c.apply_(_recording(calls, lambda v: v * 2))
        w = L.tensor([1 + 2j, 3 + 4j])
        w.real.apply_(lambda v: v * 10)
        w.imag.apply_(lambda v: v + 0.5)
        u = L.tensor([1 + 2j, 3 + 4j])
        u.conj().imag.apply_(_recording(calls, lambda v: v + 1))
        return z, c, w, u, calls
    same(f)


def test_map_and_map2():
    def f(L):
        calls = []
        y = L.zeros(2, 3)
        y.map_(L.tensor([1.0, 2.0, 3.0]), _recording(calls, lambda a, b: a + b + 10))
        z = L.arange(4.0).reshape(2, 2)
        z.map_(z.t(), _recording(calls, lambda a, b: a * 10 + b))  # (sees its own writes)
        s = L.ones(2)
        s.map_(s, lambda a, b: a + b + 1)
        m = L.zeros(2, 2).map2_(L.ones(2), L.full((2, 1), 3.0),
                                _recording(calls, lambda a, b, c: a + b * c + 1))
        k = L.zeros(2).map_(other=L.ones(2), callable=lambda a, b: b)
        return y, z, s, m, k, calls, y._version
    same(f)


def test_map_errors():
    same_error(lambda L: L.zeros(2).map_(L.zeros(2, dtype=L.float64), lambda a, b: a),
               "map_: expected torch.FloatTensor for 'other'", TypeError)
    same_error(lambda L: L.zeros(2).map_(L.zeros(3), lambda a, b: a), "The expanded size")
    same_error(lambda L: L.zeros(1).map_(L.zeros(3), lambda a, b: a), "The expanded size")
    same_error(lambda L: L.zeros(2).map_(L.zeros(2, requires_grad=True), lambda a, b: a),
               "Can't call map_() on Variable that requires grad")
    same_error(lambda L: L.zeros(2).map_(3, lambda a, b: a), "must be Tensor, not int",
               TypeError)
    same_error(lambda L: L.zeros(2).map2_(L.zeros(2), L.zeros(2, dtype=L.int64),
                                          lambda a, b, c: a),
               "for argument 'y'", TypeError)
    same_error(lambda L: L.zeros(2).map2_(L.zeros(2, dtype=L.int64), L.zeros(2),
                                          lambda a, b, c: a),
               "for argument 'x'", TypeError)
    same_error(lambda L: L.zeros(2).map2_(L.zeros(2), L.zeros(2, requires_grad=True),
                                          lambda a, b, c: a),
               "Can't call map2_() on Variable that requires grad")
    same_error(lambda L: L.zeros(2).map2_(L.zeros(2), 3, lambda a, b, c: a),
               "must be Tensor, not int", TypeError)


# ---- new, dim_order, facts -------------------------------------------------------------------
NEW_ARGS = ["2, 3", "[1, 2]", "(2, 3)", "", "L.Size([2])", "L.tensor([1, 2])",
            "L.tensor([1.0, 2.0], dtype=L.float64)", "'a'", "2.5", "3, 'a'",
            "np.array([1, 2])", "-1", "[[1, 2], [3, 4]]", "L.tensor(3.0)",
            "2, device='cpu'", "2, device='meta'"]


@pytest.mark.parametrize("args", NEW_ARGS)
def test_new(args):
    """The legacy constructor in the tensor's dtype (sizes are compared, not the values
    torch leaves uninitialized)."""
    def f(L):
        out = eval(f"L.zeros(2, dtype=L.float64).new({args})", {"L": L, "np": np})
        return (tuple(out.shape), out.dtype, out.requires_grad) if args[:1].isdigit() else out
    same(f)


def test_new_of_a_tensor_is_an_alias():
    def f(L):
        r = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.zeros(1).new(r)
        t = L.tensor([1.0, 2.0])
        u = L.zeros(1).new(t)
        u[0] = 5
        return (y, y._base is r, _names(y), u, u._base is t, t, L.tensor([1, 2]).new([1.5, 2]),
                L.tensor([True]).new([0, 2]), L.ones(2, requires_grad=True).new([1.0]))
    same(f)


def _dim_order_tensor(L, shape, perm, sliced, expanded):
    x = L.zeros(shape)
    if expanded and x.ndim >= 2 and shape[0] == 1:
        x = x.expand((3,) + tuple(shape[1:]))
    x = x.permute(perm)
    return x[..., ::2] if sliced and x.ndim and x.shape[-1] > 1 else x


DIM_ORDER_CHECKS = [False, True, [], ["contiguous_format"], ["channels_last"],
                    ["contiguous_format", "channels_last"], ["channels_last_3d"],
                    ["preserve_format"], ["contiguous_format", "preserve_format"]]


@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (1, 2, 3, 4), (2, 1, 3, 1), (3, 3, 3), (2, 2),
                                   (4,), (), (2, 0, 3), (1, 3, 1, 5), (2, 3, 1, 4, 5)], ids=str)
def test_dim_order(shape):
    """Orders and ambiguity errors of permuted, sliced and expanded tensors."""
    perms = list(itertools.permutations(range(len(shape))))[::5][:5]

    def f(L):
        out = []
        for perm, sliced, expanded, check in itertools.product(
                perms, (False, True), (False, True), DIM_ORDER_CHECKS):
            x = _dim_order_tensor(L, shape, perm, sliced, expanded)
            c = check if isinstance(check, bool) else [getattr(L, n) for n in check]
            try:
                out.append(x.dim_order(ambiguity_check=c))
            except RuntimeError as e:
                out.append(str(e))
        return out
    same(f)
    same_error(lambda L: L.zeros(2).dim_order(ambiguity_check="x"), "must be a bool",
               TypeError)
    same_error(lambda L: L.zeros(2).dim_order(ambiguity_check=[1]), "must be a bool",
               TypeError)
    same_error(lambda L: L.zeros(2).dim_order(True), "positional argument", TypeError)


PREDICATES = ["is_meta", "is_mps", "is_xla", "is_xpu", "is_ipu", "is_maia", "is_mtia",
              "is_vulkan", "is_mkldnn", "is_nested", "is_quantized", "is_sparse",
              "is_sparse_csr"]


def test_sizes_and_predicates():
    def f(L):
        out = []
        for x in (L.zeros(2, 3), L.zeros(2, 3, dtype=L.int16)[0], L.tensor(1j),
                  L.zeros(1, 3).expand(4, 3), L.zeros(0, dtype=L.float64)):
            out.append([x.itemsize, x.nbytes, x.is_shared()] +
                       [getattr(x, p) for p in PREDICATES])
        return out
    same(f)


def test_is_signed_nonzero_same_size():
    def f(L):
        dts = (L.uint8, L.int8, L.int64, L.bool, L.float16, L.bfloat16, L.complex64)
        return ([L.zeros(1, dtype=d).is_signed() for d in dts],
                [L.is_signed(L.zeros(1, dtype=d)) for d in dts],
                [L.tensor(v).is_nonzero() for v in (0.0, [1.5], float("nan"), [[False]],
                                                     1j, -0.0, [[[0]]])],
                L.tensor(3.0, requires_grad=True).is_nonzero(),
                L.zeros(2, 3).is_same_size(L.ones(2, 3, dtype=L.int64)),
                L.zeros(2, 3).is_same_size(L.ones(3, 2)),
                L.is_same_size(L.zeros(2), L.zeros(2)))
    same(f)
    for v in ([], [1, 2]):
        same(lambda L: L.tensor(v).is_nonzero())
        same(lambda L: bool(L.tensor(v)))
    same_error(lambda L: L.zeros(2).is_same_size(3), "argument 'other' (position 1)",
               TypeError)


def test_share_memory_is_refused():
    """A storage is a jax array of this process: never shared (torch's share_memory_
    moves it to shared memory for other processes; eagergrad cannot)."""
    x = eg.zeros(2)
    assert x.is_shared() is False and torch.zeros(2).is_shared() is False
    with pytest.raises(NotImplementedError, match="share_memory_"):
        x.share_memory_()
