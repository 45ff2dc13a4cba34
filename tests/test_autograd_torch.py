"""The autograd API and engine behaviours with real ops, differentially against torch.

Every scenario is a function of the library `L` (torch or eagergrad); it runs with
both and the results (values, dtypes, requires_grad, grad_fn names, object identities
the scenario reports) or the errors (type and message) are compared.
"""
import functools
import math

import numpy as np
import pytest
import torch

import eagergrad as eg

LIBS = (torch, eg)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True",
    "ignore:The .grad attribute of a Tensor that is not a leaf")


import conftest  # noqa: E402
from conftest import T, same_error  # noqa: E402

same = functools.partial(conftest.same, messages=False)


# ---------------------------------------------------------------------------------------
# backward(gradient=, retain_graph=, create_graph=, inputs=) and autograd.backward
# ---------------------------------------------------------------------------------------

def test_backward_scalar_and_gradient_argument():
    def f(L):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = (w * x).tanh() * 3 + x.exp()
        y.backward(L.tensor([[1.0, -1.0, 0.5], [2.0, 0.0, 1.0]]))
        gx, gw = x.grad, w.grad
        x.grad = None
        (x * x).sum().backward()
        return gx, gw, x.grad
    r = same(f)
    # independent check of the last one: d/dx sum(x^2) = 2x
    assert np.allclose(r[2].values, [1.0, -2.0, 4.0])


def test_backward_0dim_gradient_and_scalar_tensor_gradient():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward(L.tensor(3.0))
        return x.grad
    assert np.allclose(same(f).values, [6.0, 12.0])


def test_gradient_of_other_float_dtype_is_accepted():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward(L.tensor([1.0, 1.0], dtype=L.float64))
        return x.grad
    assert same(f).dtype == "torch.float32"


def test_autograd_backward_multiple_roots_and_grad_tensors():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x * 3
        b = (x ** 2).sum()
        L.autograd.backward([a, b], [L.tensor([1.0, 10.0]), None])
        g1 = x.grad.clone()
        L.autograd.backward((x * 5).sum())
        L.autograd.backward(x * 7, grad_tensors=L.ones(2))
        return g1, x.grad
    r = same(f)
    assert np.allclose(r[0].values, [3 + 2, 30 + 4])
    assert np.allclose(r[1].values, [5 + 5 + 7, 34 + 5 + 7])


def test_retain_graph_allows_second_backward_and_accumulates():
    def f(L):
        x = L.tensor([0.3, 0.7], requires_grad=True)
        y = (x.sin() * x).sum()
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        y.backward()
        return g1, x.grad
    r = same(f)
    assert np.allclose(r[1].values, 2 * r[0].values)


@pytest.mark.parametrize("expr,raises", [
    ("x * x", True),          # MulBackward0 saves self and other
    ("x.exp()", True),        # ExpBackward0 saves result
    ("x ** 3", True),         # PowBackward0 saves self
    ("x.sin()", True),
    ("x * 2", True),          # MulBackward0 saves the wrapped number as a tensor too
    ("x + 1", False),         # AddBackward0 saves nothing
    ("-x", False),
    ("x - x * 0", True),
    ("x.sum() + x.sum()", False),
])
def test_second_backward_through_freed_graph(expr, raises):
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = eval(expr, {"x": x}).sum()
        y.backward()
        y.backward()
        return x.grad
    r = same(f)
    if raises:
        assert r[0] == "err" and r[1] is RuntimeError
        assert "Trying to backward through the graph a second time" in r[2]
    else:
        assert isinstance(r, T)


def test_freed_saved_tensor_access_raises():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.sum().backward()
        return y.grad_fn._saved_self
    same_error(f, "Trying to backward through the graph a second time")


def test_autograd_grad_frees_graph_unless_retained():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        L.autograd.grad(y, x)
        L.autograd.grad(y, x)
    same_error(f, "Trying to backward through the graph a second time")

    def g(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        return L.autograd.grad(y, x, retain_graph=True), L.autograd.grad(y, x)
    same(g)


def test_create_graph_double_and_triple_backward():
    def f(L):
        x = L.tensor([0.5, 1.5, -0.7], requires_grad=True)
        y = (x.sin() * x ** 3 + (x * 2).exp() / (x * x + 1)).sum()
        (g1,) = L.autograd.grad(y, x, create_graph=True)
        (g2,) = L.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = L.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    r = same(f)
    assert r[0].requires_grad and r[1].requires_grad and not r[2].requires_grad
    # independent: third derivative of x^3 sin x + e^{2x}/(x^2+1) by finite differences
    def d2(v, h=1e-3):
        def f0(t):
            return t ** 3 * math.sin(t) + math.exp(2 * t) / (t * t + 1)
        def f2(t):
            return (f0(t + h) - 2 * f0(t) + f0(t - h)) / h ** 2
        return f2(v)
    fd3 = [(d2(v + 1e-3) - d2(v - 1e-3)) / 2e-3 for v in (0.5, 1.5, -0.7)]
    assert np.allclose(r[2].values, fd3, rtol=2e-2, atol=2e-2)


def test_backward_create_graph_then_grad_of_grad():
    def f(L):
        x = L.tensor([1.0, -2.0], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        first = (g.requires_grad, g.grad_fn is not None, g.is_leaf)
        x.grad = None
        g.sum().backward()
        return first, g, x.grad
    r = same(f)
    assert r[0] == (True, True, False)
    assert np.allclose(r[2].values, [6.0, -12.0])


def test_copy_backwards_node_name():
    def f(L):
        x = L.tensor([1.0, -2.0], requires_grad=True)
        y = L.zeros(2)
        y.copy_(x)
        (x ** 3).sum().backward(create_graph=True)
        return y.grad_fn.name(), x.grad.grad_fn.name()
    assert same(f) == ("torch::autograd::CopyBackwards",) * 2


def test_backward_create_graph_on_leaf_copies_gradient():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        v = L.tensor([3.0, 4.0])
        x.backward(v, create_graph=True)
        return x.grad is v, x.grad, x.grad.grad_fn is None
    assert same(f)[0] is False


def test_create_graph_accumulation_out_of_place_then_in_place():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward(create_graph=True)
        g0 = x.grad
        (x * x * x).sum().backward(create_graph=True)  # grad mode on: out of place
        g1 = x.grad
        (x * 3).sum().backward()                       # grad mode off: in place
        return g0 is g1, g1 is x.grad, g0, g1, x.grad
    r = same(f)
    assert r[0] is False and r[1] is True


def test_backward_inputs_real_ops():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, -1.0], requires_grad=True)
        h = x * w
        out = (h.tanh() + w ** 2).sum()
        out.backward(inputs=[w], retain_graph=True)
        gw, gx = w.grad, x.grad
        out.backward(inputs=h)
        return gw, gx, h.grad, h.retains_grad, x.grad, w.grad
    r = same(f)
    assert r[1] is None and r[4] is None and r[3] is True


def test_inputs_argument_errors():
    same_error(lambda L: (L.ones(2, requires_grad=True) * 2).sum().backward(inputs=[]),
               "`inputs` argument to `backward()` cannot be empty.")
    same_error(lambda L: (L.ones(2, requires_grad=True) * 2).sum().backward(
        inputs=[L.ones(2)]), "can't retain_grad on Tensor that has requires_grad=False")


# ---------------------------------------------------------------------------------------
# autograd.grad
# ---------------------------------------------------------------------------------------

def test_grad_basic_and_grad_outputs():
    def f(L):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = L.tensor([0.5, -0.5], requires_grad=True)
        out1 = (x @ y).sin()
        out2 = (x * x).sum()
        gs = L.autograd.grad([out1, out2], [x, y], [L.tensor([1.0, 2.0]), L.tensor(0.5)])
        return gs, x.grad, y.grad
    r = same(f)
    assert r[1] is None and r[2] is None  # grad() does not accumulate


def test_grad_returns_tuple_and_detached_results():
    def f(L):
        x = L.tensor(2.0, requires_grad=True)
        g = L.autograd.grad(x ** 3, x)
        return type(g).__name__, len(g), g[0], g[0].requires_grad, g[0].is_leaf
    r = same(f)
    assert r[0] == "tuple" and np.isclose(r[2].values, 12.0)


def test_grad_wrt_nonleaf():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()
        y = (h * h).sum()
        return L.autograd.grad(y, [h, x])
    same(f)


def test_grad_create_graph_results_require_grad():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (g,) = L.autograd.grad((x ** 4).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g[1], x)
        return g, gg
    r = same(f)
    assert r[0].requires_grad
    assert np.allclose(r[1].values, [0.0, 12 * 4.0])


def test_grad_allow_unused_and_materialize_grads():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.tensor([3.0], requires_grad=True)
        y = (x * 2).sum()
        a = L.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
        b = L.autograd.grad(y, [x, z], materialize_grads=True, retain_graph=True)
        c = L.autograd.grad(y, [z, x], allow_unused=True, materialize_grads=True)
        return a, b, c
    r = same(f)
    assert r[0][1] is None and np.allclose(r[1][1].values, [0.0])


def test_grad_unused_input_errors():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.tensor([3.0], requires_grad=True)
        return L.autograd.grad((x * 2).sum(), [x, z])
    same_error(f, "The differentiated Tensor at index 1 appears to not have been used in "
                  "the graph. Set allow_unused=True if this is the desired behavior.")

    def g(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        return L.autograd.grad((x * 2).sum(), [x], materialize_grads=True, allow_unused=False)
    same_error(g, "Expected allow_unused to be True or not passed when materialize_grads=True",
               exc=ValueError)


def test_grad_input_not_requiring_grad():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        return L.autograd.grad((x * 2).sum(), [x, L.ones(2)])
    same_error(f, "One of the differentiated Tensors does not require grad")


def test_grad_empty_inputs():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        return L.autograd.grad((x * 2).sum(), [])
    same_error(f, "`inputs` argument to `grad()` cannot be empty.")


def test_grad_outputs_count_mismatch():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        return L.autograd.grad([x * 2, x * 3], [x], [L.ones(2)])
    same_error(f, "got 2 tensors and 1 gradients")

    def g(L):  # a lone tensor is one gradient, not one per output
        x = L.tensor([1.0, 2.0], requires_grad=True)
        L.autograd.backward([x * 2, x * 3], L.ones(2))
    same_error(g, "got 2 tensors and 1 gradients")


@pytest.mark.parametrize("which", ["backward", "grad"])
def test_wrong_shape_gradient(which):
    def f(L):
        x = L.ones(3, requires_grad=True)
        y = x * 2
        if which == "backward":
            y.backward(L.ones(2))
        else:
            L.autograd.grad(y, x, L.ones(3, 1))
    same_error(f, "Mismatch in shape: grad_output[0] has a shape of torch.Size([")


@pytest.mark.parametrize("which", ["backward", "grad"])
@pytest.mark.parametrize("out_dt,grad_dt", [("float32", "complex64"),
                                            ("complex64", "float32")])
def test_wrong_dtype_gradient(which, out_dt, grad_dt):
    def f(L):
        x = L.ones(3, dtype=getattr(L, out_dt), requires_grad=True)
        y = x * 2
        g = L.ones(3, dtype=getattr(L, grad_dt))
        if which == "backward":
            y.backward(g)
        else:
            L.autograd.grad(y, x, g)
    same_error(f, "For complex Tensors, both grad_output and output are required to "
               "have the same dtype. Mismatch in dtype: grad_output[0] has a dtype of")


# ---------------------------------------------------------------------------------------
# misuse errors
# ---------------------------------------------------------------------------------------

def test_backward_on_tensor_without_grad():
    same_error(lambda L: L.ones(3).sum().backward(),
               "element 0 of tensors does not require grad and does not have a grad_fn")
    same_error(lambda L: L.autograd.grad(L.ones(3).sum(), [L.ones(1, requires_grad=True)]),
               "element 0 of tensors does not require grad and does not have a grad_fn")

    def second(L):
        x = L.ones(3, requires_grad=True)
        L.autograd.backward([(x * 2).sum(), L.ones(2).sum()])
    same_error(second, "element 1 of tensors does not require grad and does not have a grad_fn")

    def under_no_grad(L):
        x = L.ones(3, requires_grad=True)
        with L.no_grad():
            y = (x * 2).sum()
        y.backward()
    same_error(under_no_grad, "element 0 of tensors does not require grad")


def test_implicit_gradient_for_non_scalar():
    same_error(lambda L: (L.ones(3, requires_grad=True) * 2).backward(),
               "grad can be implicitly created only for scalar outputs")
    same_error(lambda L: L.autograd.grad(L.ones(3, requires_grad=True) * 2,
                                         [L.ones(1)]),
               "grad can be implicitly created only for scalar outputs")


def test_implicit_gradient_for_complex_scalar():
    same_error(lambda L: (L.ones(3, dtype=L.complex64, requires_grad=True) * 2)
               .sum().backward(),
               "grad can be implicitly created only for real scalar outputs but got "
               "torch.complex64")


def test_requires_grad_on_integer_tensors():
    def check(make, expected):
        assert same_error(make, expected) == expected

    factory = "Only Tensors of floating point and complex dtype can require gradients"
    check(lambda L: L.tensor([1, 2], requires_grad=True), factory)
    check(lambda L: L.zeros(2, dtype=L.int64, requires_grad=True), factory)
    check(lambda L: L.arange(3, requires_grad=True), factory)
    check(lambda L: L.ones(2, dtype=L.bool, requires_grad=True), factory)
    check(lambda L: L.tensor([1, 2]).requires_grad_(),
          "only Tensors of floating point dtype can require gradients")
    check(lambda L: setattr(L.tensor([1, 2]), "requires_grad", True),
          "only Tensors of floating point and complex dtype can require gradients")
    # allowed: complex, and switching it off on an integer tensor
    same(lambda L: (L.tensor([1j], requires_grad=True).requires_grad,
                    L.tensor([1, 2]).requires_grad_(False).requires_grad))


def test_requires_grad_false_on_non_leaf():
    def f(L):
        y = L.ones(2, requires_grad=True) * 2
        y.requires_grad = False
    same_error(f, "you can only change requires_grad flags of leaf variables.")

    def g(L):
        y = L.ones(2, requires_grad=True) * 2
        y.requires_grad_(False)
    same_error(g, "you can only change requires_grad flags of leaf variables.")

    def h(L):  # setting True on a non-leaf is a no-op
        y = L.ones(2, requires_grad=True) * 2
        y.requires_grad_(True)
        return y
    same(h)


def test_numpy_on_tensor_requiring_grad():
    same_error(lambda L: L.ones(2, requires_grad=True).numpy(),
               "Can't call numpy() on Tensor that requires grad.")


def test_detach_inplace_of_view_errors():
    def f(L):
        y = L.ones(4, requires_grad=True) * 2
        y[1:3].detach_()
    # eagergrad's message stops after torch's first sentence (no DDP advice)
    same_error(f, "Can't detach views in-place. Use detach() instead.", messages=False)


# ---------------------------------------------------------------------------------------
# accumulation into .grad, retain_grad, requires_grad_, detach, is_leaf
# ---------------------------------------------------------------------------------------

def test_grad_accumulates_in_place_across_calls():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        g = x.grad
        first = g.clone()
        (x * 3).sum().backward()
        return g is x.grad, first, g, x.grad.requires_grad, x.grad.grad_fn
    r = same(f)
    assert r[0] is True
    assert np.allclose(r[2].values, [2 + 3, 4 + 3])


def test_grad_zeroed_then_accumulates():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        g = x.grad
        g.zero_()
        (x * 5).sum().backward()
        out = [g is x.grad, x.grad.clone()]
        x.grad = None
        (x * 7).sum().backward()
        out += [g is x.grad, x.grad]
        return out
    r = same(f)
    assert r[0] is True and r[2] is False


def test_user_gradient_is_not_aliased_by_grad():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        v = L.tensor([1.0, 1.0])
        (x * 1).backward(v)
        x.grad.add_(10)       # in place on .grad must not change v
        (x * 1).backward(v)
        return v, x.grad
    r = same(f)
    assert np.allclose(r[0].values, [1.0, 1.0])


def test_retain_grad_and_retains_grad():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        before = (y.retains_grad, x.retains_grad)
        y.retain_grad()
        y.retain_grad()  # idempotent
        x.retain_grad()  # no-op on a leaf
        z = (y * y).sum()
        z.backward(retain_graph=True)
        g = y.grad
        z.backward()
        return before, (y.retains_grad, x.retains_grad), g is y.grad, y.grad, x.grad
    r = same(f)
    assert r[1] == (True, False)
    assert np.allclose(r[3].values, [8.0, 16.0])


def test_retain_grad_on_tensor_without_grad():
    same_error(lambda L: L.ones(2).retain_grad(),
               "can't retain_grad on Tensor that has requires_grad=False")


def test_requires_grad_():
    def f(L):
        x = L.tensor([1.0, 2.0])
        r = x.requires_grad_()
        out = [r is x, x.requires_grad, x.is_leaf]
        x.requires_grad_(False)
        out.append(x.requires_grad)
        x.requires_grad = True
        out.append(x.requires_grad)
        y = x * 2
        out += [y.requires_grad, y.is_leaf]
        return out
    assert same(f) == [True, True, True, False, True, True, False]


def test_is_leaf():
    def f(L):
        a = L.ones(2)
        b = L.ones(2, requires_grad=True)
        c = b * 2
        d = a * 2
        e = c.detach()
        with L.no_grad():
            g = b * 2
        h = b[0]
        return [t.is_leaf for t in (a, b, c, d, e, g, h)]
    assert same(f) == [True, True, False, True, True, True, False]


def test_detach_shares_storage_and_version_counter():
    def f(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        v0 = (y._version, d._version)
        d.mul_(10)   # seen by y
        after = (y._version, d._version)
        y2 = L.tensor([5.0, 6.0])
        d2 = y2.detach()
        y2.add_(1)   # and the other way round
        return (d.requires_grad, d.is_leaf, d.grad_fn, v0, after, y, d, d2, d2._version,
                y.grad_fn.name())
    r = same(f)
    assert r[4] == (1, 1)
    assert np.allclose(r[5].values, [20.0, 40.0, 60.0])
    assert np.allclose(r[7].values, [6.0, 7.0]) and r[8] == 1


def test_detach_then_inplace_breaks_saved_tensor():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()          # saves its result
        y.detach().zero_()   # bumps y's version through the shared counter
        y.sum().backward()
    same_error(f, "one of the variables needed for gradient computation has been modified "
                  "by an inplace operation")


def test_detach_():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        r = y.detach_()
        return r is y, y.requires_grad, y.is_leaf, y.grad_fn, y
    assert same(f)[:4] == (True, False, True, None)


# ---------------------------------------------------------------------------------------
# the graph: grad_fn, next_functions, saved tensors
# ---------------------------------------------------------------------------------------

def _graph(fn, memo=None):
    """A library-independent picture of the graph below `fn`: names, output numbers,
    sharing (a node seen twice is referred to by its first index)."""
    if memo is None:
        memo = {}
    if fn is None:
        return None
    if id(fn) in memo:
        return ("seen", memo[id(fn)])
    memo[id(fn)] = len(memo)
    return (fn.name(), tuple((_graph(f, memo), nr) for f, nr in fn.next_functions))


def test_graph_structure_matches_torch():
    def f(L):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = L.tensor([0.5, -0.5], requires_grad=True)
        c = L.tensor([1.0, 1.0])
        h = (x @ w).tanh()
        a, b = x.unbind(0)
        y = (h * c + a * b).sum() + (w ** 2).mean() - x.exp().sum(dim=1).log().sum()
        return _graph(y.grad_fn)
    g = same(f)
    assert g[0] == "SubBackward0"


def test_leaf_accumulate_grad_node():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        n1 = (x * 2).grad_fn.next_functions[0][0]
        n2 = (x + 1).grad_fn.next_functions[0][0]
        return (n1 is n2, n1.name(), type(n1).__name__, n1.variable is x, n1.next_functions,
                x.grad_fn, (x * 2).grad_fn.next_functions[1])
    r = same(f)
    assert r[0] is True and r[1] == "torch::autograd::AccumulateGrad"


def test_output_nr_and_next_function_indices():
    def f(L):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a, b = x.unbind(0)
        z = b * a
        return ([(n.name(), nr) for n, nr in z.grad_fn.next_functions],
                a.output_nr, b.output_nr, z.output_nr, a.grad_fn is b.grad_fn)
    r = same(f)
    assert r[0] == [("UnbindBackward0", 1), ("UnbindBackward0", 0)]


def test_saved_self_and_exponent_for_pow():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 3
        fn = y.grad_fn
        return (fn.name(), fn._saved_self is x, fn._saved_exponent,
                type(fn._saved_exponent).__name__)
    assert same(f) == ("PowBackward0", True, 3, "int")


def test_saved_result_for_exp():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        r = y.grad_fn._saved_result
        return (r is y, r, y, r.grad_fn is y.grad_fn, r._version == y._version,
                y.grad_fn._saved_result is r)
    r = same(f)
    assert r[0] is False and r[3] is True and r[5] is False


def test_saved_self_and_other_for_mul():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0])
        u = L.tensor([5.0, 6.0], requires_grad=True)
        fn1 = (x * w).grad_fn  # only x needs a gradient: only `other` is saved
        fn2 = (x * u).grad_fn
        fn3 = (x * 2).grad_fn
        return (fn1._saved_other is w, fn1._saved_self, fn2._saved_self is x,
                fn2._saved_other is u, fn3._saved_other, fn3._saved_self)
    r = same(f)
    assert r[0] is True and r[1] is None and r[2] is True and r[3] is True


def test_saved_tensor_after_inplace_modification():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0])
        y = x * w
        w.add_(1)
        return y.grad_fn._saved_other
    same_error(f, "one of the variables needed for gradient computation has been modified by "
                  "an inplace operation")


def test_node_call_directly():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        return y.grad_fn(L.tensor([1.0, 1.0]))
    same(f)


def test_zero_norm_gives_no_gradient():
    """linalg_vector_norm's backward for ord=0 is undefined in torch: the input counts
    as unused (autograd.grad raises), .grad stays None, other paths still add up."""
    def grad(L):
        x = L.tensor([1.0, 0.0], requires_grad=True)
        L.autograd.grad(x.norm(p=0), x)
    same_error(grad, "appears to not have been used in the graph")

    def f(L):
        x = L.tensor([[1.0, 2.0], [3.0, 0.0]], requires_grad=True)
        x.norm(p=0).backward()
        alone = x.grad
        for _ in range(3):  # node by node, then fused
            x.grad = None
            (x.norm(p=0, dim=1).sum() + (x * x).sum()).backward()
        return alone, x.grad
    r = same(f)
    assert r[0] is None
