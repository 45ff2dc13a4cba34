"""nn.Linear, nn.Bilinear, F.linear, F.bilinear and torch.addmm against real torch: the
same weights (copied through load_state_dict), the same inputs; outputs, the whole
grad_fn graph (names, recursively, and AddmmBackward0's saved values), parameter and
input gradients, repr, initialisation bounds, dtype, and torch's errors."""
import math

import numpy as np
import pytest
import torch
from conftest import same, same_error

import eagergrad as eg


def _walk(fn):
    """The graph below a node: (name, [children...]), None for a missing edge."""
    if fn is None:
        return None
    return (fn.name(), [_walk(n) for n, _ in fn.next_functions])


def _arrays(seed, *shapes, dtype="float32"):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.uniform(-1, 1, s)
        if "complex" in dtype:
            a = a + 1j * rng.uniform(-1, 1, s)
        out.append(a.astype(dtype))
    return out


def _copy_weights(L, m, seed, dtype="float32"):
    """Load seeded weights into module m (torch's and eagergrad's get the same values)."""
    names = [k for k, _ in m.named_parameters()]
    arrays = _arrays(seed, *[tuple(p.shape) for _, p in m.named_parameters()], dtype=dtype)
    m.load_state_dict({k: L.tensor(a) for k, a in zip(names, arrays)})
    return m


def _step(L, m, *inputs):
    """Forward, then backward of a weighted sum: output, graph, every gradient."""
    out = m(*inputs)
    v = L.tensor(_arrays(99, tuple(out.shape), dtype=str(out.dtype).split(".")[-1])[0])
    (out * v).sum().abs().backward() if out.is_complex() else (out * v).sum().backward()
    grads = {k: p.grad for k, p in m.named_parameters()}
    return out, _walk(out.grad_fn), grads, [x.grad for x in inputs if x.is_leaf and x.requires_grad]


# ---- nn.Linear: the graphs F.linear records --------------------------------------------------
LINEAR_INPUTS = {  # the leaf's shape, then the input made from it
    "1-d": ((4,), lambda x: x),
    "2-d": ((6, 4), lambda x: x),
    "3-d": ((3, 2, 4), lambda x: x),
    "3-d non-contiguous": ((2, 3, 4), lambda x: x.transpose(0, 1)),
    "4-d": ((1, 3, 2, 4), lambda x: x),
    "4-d non-contiguous": ((3, 2, 1, 4), lambda x: x.permute(2, 0, 1, 3)),
    "2-d, no grad": ((6, 4), lambda x: x.detach()),
    "empty batch": ((0, 4), lambda x: x),
}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", sorted(LINEAR_INPUTS))
def test_linear_matches_torch(kind, bias):
    def f(L):
        m = _copy_weights(L, L.nn.Linear(4, 3, bias=bias), 0)
        shape, make = LINEAR_INPUTS[kind]
        leaf = L.tensor(_arrays(1, shape)[0], requires_grad=True)
        out = _step(L, m, make(leaf))
        return out[:3], leaf.grad
    same(f)


@pytest.mark.fast_first
@pytest.mark.parametrize("dtype", ["float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4,), (2, 4), (2, 2, 4)])
def test_linear_dtypes(shape, dtype):
    """F.linear in float64 and complex (nn.Linear(dtype=complex) needs a complex
    uniform_, which eagergrad lacks so far)."""
    def f(L):
        x, w, b = [L.tensor(a, requires_grad=True) for a in
                   _arrays(3, shape, (3, 4), (3,), dtype=dtype)]
        out = L.nn.functional.linear(x, w, b)
        out.abs().sum().backward()
        return out, _walk(out.grad_fn), x.grad, w.grad, b.grad
    same(f)


def test_linear_saved_values_of_addmm():
    """AddmmBackward0's _saved_* as torch's node shows them, for each pattern of inputs
    needing a gradient (strides kept only for a matrix that needs one)."""
    def f(L):
        out = []
        for rg in [(True, True, True), (True, False, False), (False, True, False),
                   (False, False, True)]:
            x, w, b = [L.tensor(a, requires_grad=r) for a, r in
                       zip(_arrays(4, (2, 4), (3, 4), (3,)), rg)]
            node = L.nn.functional.linear(x, w, b).grad_fn
            out.append([node._saved_alpha, node._saved_beta, node._saved_mat1_sym_sizes,
                        node._saved_mat1_sym_strides, node._saved_mat2_sym_sizes,
                        node._saved_mat2_sym_strides, node._saved_mat1, node._saved_mat2])
        return out
    same(f)


def test_linear_double_backward_graph():
    """create_graph: the gradients' own graphs follow torch's mm_mat1/mat2_backward (the
    column-major branch for weight.t())."""
    def f(L):
        m = _copy_weights(L, L.nn.Linear(4, 3), 5)
        x = L.tensor(_arrays(6, (2, 4))[0], requires_grad=True)
        out = m(x)
        gx, gw, gb = L.autograd.grad(out.sum() * 1.0, [x, m.weight, m.bias],
                                     create_graph=True)
        second = L.autograd.grad((gx * gx).sum() + (gw * gw).sum(), [x, m.weight],
                                 allow_unused=True)
        return [_walk(g.grad_fn) for g in (gx, gw, gb)], second
    same(f)


def test_linear_bias_shapes_pick_torch_path():
    """2-d bias, (1, n) bias, 0-dim bias and a non-contiguous bias on 3-d input: torch
    flattens only for a (squeezable-to) 1-d contiguous bias, else matmul + add_."""
    def f(L):
        out = []
        for bshape, tr in [((2, 3), False), ((1, 3), False), ((), False), ((3, 2), True)]:
            x, w, b = [L.tensor(a, requires_grad=True) for a in
                       _arrays(7, (5, 2, 4), (3, 4), bshape)]
            y = L.nn.functional.linear(x, w, b[:, 0] if tr else b)
            y.sum().backward()
            out.append((y, _walk(y.grad_fn), x.grad, w.grad, b.grad))
        return out
    same(f)


def test_linear_repr_and_parameters():
    def f(L):
        a, b = L.nn.Linear(3, 2), L.nn.Linear(5, 1, bias=False)
        return (repr(a), repr(b), [(k, tuple(p.shape), p.requires_grad, p.is_leaf, p.dtype)
                                   for k, p in a.named_parameters()],
                [k for k, _ in b.named_parameters()], b.bias, list(a.state_dict()),
                a.in_features, a.out_features, repr(L.nn.Sequential(a, L.nn.ReLU(), b)))
    same(f)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_dtype_argument(dtype):
    def f(L):
        m = L.nn.Linear(3, 2, dtype=getattr(L, dtype))
        return m.weight.dtype, m.bias.dtype, m(L.ones(4, 3, dtype=getattr(L, dtype))).dtype
    same(f)


@pytest.mark.parametrize("fan_in", [1, 3, 20, 300])
def test_linear_reset_parameters_bounds(fan_in):
    """kaiming_uniform_(a=sqrt(5)) and the bias's U(-1/sqrt(fan_in), ...): the bound is
    torch's, every value lies within it and the values fill it (uniform)."""
    t_bound = torch.nn.init.calculate_gain("leaky_relu", math.sqrt(5)) * math.sqrt(3 / fan_in)
    e_bound = eg.nn.init.calculate_gain("leaky_relu", math.sqrt(5)) * math.sqrt(3 / fan_in)
    assert e_bound == t_bound
    assert math.isclose(t_bound, 1 / math.sqrt(fan_in))
    eg.manual_seed(0)
    m = eg.nn.Linear(fan_in, 4000 // fan_in + 50)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= t_bound and np.abs(b).max() <= t_bound
    assert np.abs(w).max() > 0.9 * t_bound
    assert abs(w.std() - t_bound / math.sqrt(3)) < 0.1 * t_bound
    assert abs(w.mean()) < 0.1 * t_bound
    eg.manual_seed(1)
    before = m.weight.detach().numpy().copy()
    m.reset_parameters()
    assert not np.array_equal(before, m.weight.detach().numpy())
    assert m.weight._version > 0 and m.weight.is_leaf and m.weight.requires_grad


def test_linear_zero_in_features():
    def f(L):
        m = L.nn.Linear(0, 3)
        return m.weight.shape, m.bias, m(L.ones(2, 0))
    same(f, quiet=True)


LINEAR_ERRORS = {
    "input features": (lambda L: L.nn.Linear(4, 3)(L.ones(2, 5)),
                       "mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)"),
    "input features 3-d": (lambda L: L.nn.Linear(4, 3)(L.ones(2, 2, 5)),
                           "mat1 and mat2 shapes cannot be multiplied (4x5 and 4x3)"),
    "input features no bias": (lambda L: L.nn.Linear(4, 3, bias=False)(L.ones(2, 5)),
                               "mat1 and mat2 shapes cannot be multiplied"),
    "input features 1-d": (lambda L: L.nn.Linear(4, 3)(L.ones(5)),
                           "mat1 and mat2 shapes cannot be multiplied (1x5 and 4x3)"),
    "0-dim input": (lambda L: L.nn.Linear(4, 3)(L.ones(())),
                    "both arguments to linear need to be at least 1D, but they are 0D and 2D"),
    "input dtype": (lambda L: L.nn.Linear(4, 3)(L.ones(2, 4, dtype=L.float64)),
                    "mat1 and mat2 must have the same dtype, but got Double and Float"),
    "bias size": (lambda L: L.nn.functional.linear(L.ones(2, 4), L.ones(3, 4), L.ones(4)),
                  "The expanded size of the tensor (3) must match the existing size (4)"),
    "bias size 3-d": (lambda L: L.nn.functional.linear(L.ones(2, 2, 4), L.ones(3, 4),
                                                       L.ones(4)),
                      "Target sizes: [4, 3].  Tensor sizes: [4]"),
    "bias too big": (lambda L: L.nn.functional.linear(L.ones(2, 2, 4), L.ones(3, 4),
                                                      L.ones(7, 2, 2, 3)),
                     "output with shape [2, 2, 3] doesn't match the broadcast shape"),
    "bias dtype": (lambda L: L.nn.functional.linear(L.ones(2, 4), L.ones(3, 4),
                                                    L.ones(3, dtype=L.float64)),
                   "self and mat2 must have the same dtype, but got Double and Float"),
    "3-d weight": (lambda L: L.nn.functional.linear(L.ones(2, 4), L.ones(2, 3, 4)),
                   "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    "1-d weight with bias": (lambda L: L.nn.functional.linear(L.ones(2, 4), L.ones(4),
                                                              L.ones(())),
                             "mat2 must be a matrix, got 1-D tensor"),
}


@pytest.mark.parametrize("case", sorted(LINEAR_ERRORS))
def test_linear_errors(case):
    fn, phrase = LINEAR_ERRORS[case]
    same_error(fn, phrase)


def test_linear_version_counter_and_inplace_use():
    """The output of the matmul path was written in place by add_ (version 1, as torch);
    a saved weight modified in place makes backward fail with torch's message."""
    def f(L, log):
        x = L.tensor(_arrays(8, (2, 3, 4))[0], requires_grad=True).transpose(0, 1)
        w, b = L.ones(3, 4, requires_grad=True), L.ones(3, requires_grad=True)
        y = L.nn.functional.linear(x, w, b)
        log.append((y._version, y.grad_fn.name()))
        m = L.nn.Linear(4, 3)
        x2 = L.ones(2, 4, requires_grad=True)
        out = m(x2)
        with L.no_grad():
            m.weight.mul_(2)
        try:
            out.sum().backward()
        except RuntimeError as e:
            log.append("one of the variables needed for gradient computation" in str(e))
    same(f)


# ---- torch.addmm -------------------------------------------------------------------------------
ADDMM_CALLS = {
    "default": lambda L, s, a, b: L.addmm(s, a, b),
    "beta alpha": lambda L, s, a, b: L.addmm(s, a, b, beta=0.5, alpha=-2),
    "beta 0 ignores nan": lambda L, s, a, b: L.addmm(s * float("nan"), a, b, beta=0),
    "float beta": lambda L, s, a, b: L.addmm(s, a, b, beta=1.0, alpha=1.0),
    "bool beta": lambda L, s, a, b: L.addmm(s, a, b, beta=True),
    "method": lambda L, s, a, b: s.addmm(a, b, alpha=3),
    "keywords": lambda L, s, a, b: L.addmm(input=s, mat1=a, mat2=b),
    "in place": lambda L, s, a, b: (s.expand(2, 3) * 1).addmm_(a, b, beta=2),
    "transposed": lambda L, s, a, b: L.addmm(s, b.t(), a.t()[:, :2]),
}


@pytest.mark.parametrize("case", sorted(ADDMM_CALLS))
def test_addmm_matches_torch(case):
    def f(L):
        s, a, b = [L.tensor(x, requires_grad=True) for x in _arrays(9, (3,), (2, 4), (4, 3))]
        out = ADDMM_CALLS[case](L, s, a, b)
        out.backward(L.ones_like(out))
        return out, out._version, _walk(out.grad_fn), s.grad, a.grad, b.grad
    same(f)


def test_addmm_integer_and_complex():
    def f(L):
        si, ai, bi = [L.tensor(np.round(x * 4), dtype=L.int64) for x in
                      _arrays(10, (3,), (2, 4), (4, 3))]
        s, a, b = [L.tensor(x, requires_grad=True) for x in
                   _arrays(11, (3,), (2, 4), (4, 3), dtype="complex128")]
        out = L.addmm(s, a, b, beta=1 - 2j, alpha=0.5j)
        out.abs().sum().backward()
        return (L.addmm(si, ai, bi, beta=2, alpha=-1), L.addmm(si, ai, bi, beta=0.5),
                out, s.grad, a.grad, b.grad)
    same(f)


ADDMM_ERRORS = {
    "self size": (lambda L: L.addmm(L.ones(4), L.ones(2, 4), L.ones(4, 3)),
                  ("The expanded size of the tensor (3) must match the existing size (4) at "
                  "non-singleton dimension 1.  Target sizes: [2, 3].  Tensor sizes: [4]")),
    "self 3-d": (lambda L: L.addmm(L.ones(1, 2, 3), L.ones(2, 4), L.ones(4, 3)),
                 ("the number of sizes provided (2) must be greater or equal to the number of "
                 "dimensions in the tensor (3)")),
    "mat1 1-d": (lambda L: L.addmm(L.ones(3), L.ones(4), L.ones(4, 3)),
                 "mat1 must be a matrix, got 1-D tensor"),
    "mat2 3-d": (lambda L: L.addmm(L.ones(3), L.ones(2, 4), L.ones(1, 4, 3)),
                 "mat2 must be a matrix, got 3-D tensor"),
    "shapes": (lambda L: L.addmm(L.ones(3), L.ones(2, 5), L.ones(4, 3)),
               "mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)"),
    "self dtype": (lambda L: L.addmm(L.ones(3, dtype=L.float64), L.ones(2, 4), L.ones(4, 3)),
                   "self and mat2 must have the same dtype, but got Double and Float"),
    "mat1 dtype": (lambda L: L.addmm(L.ones(3), L.ones(2, 4, dtype=L.float64), L.ones(4, 3)),
                   "mat1 and mat2 must have the same dtype, but got Double and Float"),
    "complex alpha on float": (lambda L: L.addmm(L.ones(3), L.ones(2, 4), L.ones(4, 3),
                                                 alpha=1j),
                               "value cannot be converted to type float without overflow"),
    "in place broadcast": (lambda L: L.ones(3).addmm_(L.ones(2, 4), L.ones(4, 3)),
                           ("Bad in-place call: input tensor size [3] and output tensor size "
                           "[2, 3] should match")),
    "in place leaf": (lambda L: L.ones(2, 3, requires_grad=True).addmm_(L.ones(2, 4),
                                                                        L.ones(4, 3)),
                      ("a leaf Variable that requires grad is being used in an in-place "
                      "operation.")),
}


@pytest.mark.parametrize("case", sorted(ADDMM_ERRORS))
def test_addmm_errors(case):
    fn, phrase = ADDMM_ERRORS[case]
    same_error(fn, phrase)


def test_addmm_bool_not_implemented():
    same_error(lambda L: L.addmm(*(L.ones(s, dtype=L.bool) for s in ((3,), (2, 4), (4, 3)))),
               "\"addmm_impl_cpu_\" not implemented for 'Bool'", NotImplementedError)


@pytest.mark.fast_first
# ---- nn.Bilinear / F.bilinear ------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(4,), (2, 4), (3, 2, 4)])
def test_bilinear_matches_torch(shape, bias):
    def f(L):
        m = _copy_weights(L, L.nn.Bilinear(4, 3, 5, bias=bias), 12)
        a1, a2 = _arrays(13, shape, shape[:-1] + (3,))
        x1, x2 = L.tensor(a1, requires_grad=True), L.tensor(a2, requires_grad=True)
        out, graph, grads, xgrads = _step(L, m, x1, x2)
        node = out.grad_fn if not bias else out.grad_fn.next_functions[0][0]
        tri = node.next_functions[0][0]
        return out, graph, grads, xgrads, [tri._saved_expand1, tri._saved_expand2,
                                           tri._saved_expand3, tri._saved_sumdim, tri._saved_i1]
    same(f)


def test_bilinear_double_backward_and_repr():
    def f(L):
        m = _copy_weights(L, L.nn.Bilinear(2, 3, 2), 14, "float64")
        x1 = L.tensor(_arrays(15, (2, 2), dtype="float64")[0], requires_grad=True)
        x2 = L.tensor(_arrays(16, (2, 3), dtype="float64")[0], requires_grad=True)
        g1, gw = L.autograd.grad(m(x1, x2).sum(), [x1, m.weight], create_graph=True)
        second = L.autograd.grad((g1 ** 2).sum() + (gw ** 2).sum(), [x2, m.weight])
        return repr(m), repr(L.nn.Bilinear(1, 2, 3, bias=False)), _walk(g1.grad_fn), second
    same(f)


def test_bilinear_reset_parameters_bound():
    eg.manual_seed(0)
    m = eg.nn.Bilinear(16, 3, 40)
    bound = 1 / math.sqrt(16)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound
    same_error(lambda L: L.nn.Bilinear(0, 2, 3), "in1_features must be > 0, but got "
               "(in1_features=0)", ValueError)


BILINEAR_ERRORS = {
    "dims": (lambda L: L.nn.functional.bilinear(L.ones(2, 4), L.ones(3), L.ones(5, 4, 3)),
             "bilinear(): input dimensions do not match: got 2 and 1"),
    "batch": (lambda L: L.nn.functional.bilinear(L.ones(2, 4), L.ones(3, 3), L.ones(5, 4, 3)),
              "bilinear(): input batch dimensions do not match at dim 0: got 2 and 3"),
    "input1": (lambda L: L.nn.Bilinear(4, 3, 5)(L.ones(2, 5), L.ones(2, 3)),
               "bilinear(): input1 size does not match weight size: got 5 but expected 4"),
    "input2": (lambda L: L.nn.Bilinear(4, 3, 5)(L.ones(2, 4), L.ones(2, 4)),
               "bilinear(): input2 size does not match weight size: got 4 but expected 3"),
    "bias": (lambda L: L.nn.functional.bilinear(L.ones(2, 4), L.ones(2, 3), L.ones(5, 4, 3),
                                                L.ones(4)),
             "bilinear(): bias size does not match weight size: got 4 but expected 5"),
    "dtype": (lambda L: L.nn.Bilinear(4, 3, 5)(L.ones(2, 4), L.ones(2, 3, dtype=L.float64)),
              ("All tensors must have the same dtype, got input1: float, input2: double, "
              "weight: float, bias: float")),
    "complex under autograd": (lambda L: L.nn.functional.bilinear(
        L.ones(2, 4, dtype=L.complex64), L.ones(2, 3, dtype=L.complex64),
        L.ones(5, 4, 3, dtype=L.complex64, requires_grad=True)),
        ("_trilinear does not support automatic differentiation for outputs with complex "
        "dtype.")),
}


@pytest.mark.parametrize("case", sorted(BILINEAR_ERRORS))
def test_bilinear_errors(case):
    fn, phrase = BILINEAR_ERRORS[case]
    same_error(fn, phrase)


def test_bilinear_complex_without_grad():
    def f(L):
        a1, a2, w, b = _arrays(17, (2, 4), (2, 3), (5, 4, 3), (5,), dtype="complex64")
        return L.nn.functional.bilinear(L.tensor(a1), L.tensor(a2), L.tensor(w), L.tensor(b))
    same(f)


def test_linear_under_jit_and_grad():
    """Tracer-safe: nn.Linear's forward and backward under jax.jit via eagergrad.jaxify
    gives the eager numbers."""
    import jax
    m = eg.nn.Linear(4, 3)
    x = eg.tensor(_arrays(18, (5, 2, 4))[0])

    def loss(xv):
        return (m(xv) ** 2).sum()
    eager = loss(x)
    traced = jax.jit(eg.jaxify(loss))(x.detach().numpy())
    np.testing.assert_allclose(np.asarray(traced), eager.item(), rtol=1e-5)
