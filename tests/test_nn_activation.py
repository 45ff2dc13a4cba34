"""The activation modules and functionals against real torch: outputs, the grad_fn graph
with every node's _saved_* values, gradients, reprs, PReLU's parameter (init, state dict),
in-place variants, dtype/complex errors and argument checks; F.one_hot, F.normalize,
Softmax2d/Softmin. RReLU's training slopes and gumbel_softmax's noise come from
eagergrad's generator, so those are checked by their structure and statistics."""
import numpy as np
import pytest
import torch
from conftest import same, same_error

import eagergrad as eg

# attributes eagergrad's existing nodes show beyond torch's (not this slice's ops):
# MulBackward0's `_saved_dtype`, ViewBackward0's / ExpandBackward0's `_saved_size`; and
# SoftmaxBackward0's `_saved_dim`, which ops/reduce.py saves wrapped (torch: dim -3 shows
# as 2**64 - 3)
_EXTRA = {"_saved_dtype", ("ViewBackward0", "_saved_size"), ("ExpandBackward0", "_saved_size"),
          ("SoftmaxBackward0", "_saved_dim"), ("ToCopyBackward0", "_saved_device")}


def _saved(fn):
    out = {}
    for k in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        v = getattr(fn, k)
        if k in _EXTRA or (fn.name(), k) in _EXTRA or callable(v):
            continue
        out[k] = v.detach() if hasattr(v, "shape") else v
    if out.get("_saved_training") is False:  # torch's noise is an uninitialized tensor then
        out.pop("_saved_noise")
    return out


def _walk(fn):
    """The graph below a node: (name, saved values, [children...])."""
    if fn is None:
        return None
    return (fn.name(), _saved(fn), [_walk(n) for n, _ in fn.next_functions])


def _arr(seed, *shape, lo=-3.0, hi=3.0, dtype="float32"):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


X = _arr(0, 2, 3, 4)


def _step(L, m, inplace=False, backward=False):
    """m(x) on a leaf (a non-leaf copy for in-place modules): output and graph; with
    backward, the input's and the parameters' gradients (the ops' gradients are tested by
    their samples, tests/_samples_activation.py)."""
    leaf = L.tensor(X, requires_grad=True)
    out = m(leaf * 1 if inplace else leaf)
    graph = _walk(out.grad_fn)
    if not backward:
        return out, graph
    (out * L.tensor(_arr(1, *out.shape))).sum().backward()
    return out, graph, leaf.grad, {k: p.grad for k, p in m.named_parameters()}


# (constructor, whether it works in place)
MODULES = {
    "ReLU6": (lambda L: L.nn.ReLU6(), False),
    "ReLU6 inplace": (lambda L: L.nn.ReLU6(inplace=True), True),
    "Hardtanh": (lambda L: L.nn.Hardtanh(-2.0, 1.5), False),
    "Hardtanh inplace": (lambda L: L.nn.Hardtanh(inplace=True), True),
    "LeakyReLU": (lambda L: L.nn.LeakyReLU(0.2), False),
    "LeakyReLU inplace": (lambda L: L.nn.LeakyReLU(inplace=True), True),
    "ELU": (lambda L: L.nn.ELU(0.5), False),
    "ELU inplace": (lambda L: L.nn.ELU(inplace=True), True),
    "SELU": (lambda L: L.nn.SELU(), False),
    "SELU inplace": (lambda L: L.nn.SELU(True), True),
    "CELU": (lambda L: L.nn.CELU(0.7), False),
    "CELU inplace": (lambda L: L.nn.CELU(1.3, inplace=True), True),
    "GELU": (lambda L: L.nn.GELU(), False),
    "GELU tanh": (lambda L: L.nn.GELU("tanh"), False),
    "SiLU": (lambda L: L.nn.SiLU(), False),
    "SiLU inplace": (lambda L: L.nn.SiLU(inplace=True), True),
    "Mish": (lambda L: L.nn.Mish(), False),
    "Mish inplace": (lambda L: L.nn.Mish(True), True),
    "Softplus": (lambda L: L.nn.Softplus(2.0, 3.0), False),
    "Hardswish": (lambda L: L.nn.Hardswish(), False),
    "Hardswish inplace": (lambda L: L.nn.Hardswish(True), True),
    "Hardsigmoid": (lambda L: L.nn.Hardsigmoid(), False),
    "Hardsigmoid inplace": (lambda L: L.nn.Hardsigmoid(inplace=True), True),
    "LogSigmoid": (lambda L: L.nn.LogSigmoid(), False),
    "Softmin": (lambda L: L.nn.Softmin(dim=1), False),
    "Softmax2d": (lambda L: L.nn.Softmax2d(), False),
    "GLU": (lambda L: L.nn.GLU(), False),
    "GLU dim 0": (lambda L: L.nn.GLU(0), False),
    "Threshold": (lambda L: L.nn.Threshold(0.5, -2.0), False),
    "Threshold inplace": (lambda L: L.nn.Threshold(0.5, -2.0, inplace=True), True),
    "Softsign": (lambda L: L.nn.Softsign(), False),
    "Tanhshrink": (lambda L: L.nn.Tanhshrink(), False),
    "Hardshrink": (lambda L: L.nn.Hardshrink(1.0), False),
    "Softshrink": (lambda L: L.nn.Softshrink(), False),
    "RReLU eval": (lambda L: L.nn.RReLU(0.1, 0.3).eval(), False),
    "RReLU eval inplace": (lambda L: L.nn.RReLU(inplace=True).eval(), True),
    "PReLU": (lambda L: L.nn.PReLU(), False),
    "PReLU per channel": (lambda L: L.nn.PReLU(3, init=0.1), False),
}


@pytest.mark.parametrize("kind", sorted(MODULES))
def test_modules_match_torch(kind):
    make, inplace = MODULES[kind]

    def f(L):
        m = make(L)
        if kind == "PReLU per channel":  # weights from the test, not the init
            m.load_state_dict({"weight": L.tensor(np.array([0.3, -0.2, 1.5], "float32"))})
        return _step(L, m, inplace, backward=kind.startswith("PReLU")), repr(m)
    same(f)


def test_reprs_match_torch():
    def f(L):
        n = L.nn
        return [repr(m) for m in (
            n.ReLU6(), n.ReLU6(True), n.Hardtanh(), n.Hardtanh(-2, 3.5, True), n.LeakyReLU(),
            n.LeakyReLU(0.2, True), n.PReLU(), n.PReLU(3), n.ELU(), n.ELU(2, True),
            n.CELU(0.5, True), n.SELU(), n.SELU(True), n.GELU(), n.GELU("tanh"), n.SiLU(True),
            n.Mish(), n.Softplus(), n.Softplus(2, 10), n.Hardswish(True), n.Hardsigmoid(),
            n.LogSigmoid(), n.Softmin(), n.Softmin(1), n.Softmax2d(), n.GLU(), n.GLU(0),
            n.Threshold(0.1, 20), n.Threshold(0.1, 20, True), n.Softsign(), n.Tanhshrink(),
            n.Hardshrink(), n.Softshrink(0.3), n.RReLU(), n.RReLU(0.1, 0.3, True),
            n.Sequential(n.Linear(2, 2), n.GELU(), n.PReLU(2)))]
    same(f)


def test_prelu_parameter_and_state_dict():
    def f(L):
        m = L.nn.PReLU(4, init=0.5, dtype=L.float64)
        sd = m.state_dict()
        return (m.weight, type(m.weight).__name__, m.num_parameters, m.init, list(sd),
                sd["weight"], [n for n, _ in m.named_parameters()])
    same(f)
    t = torch.nn.PReLU(3)
    e = eg.nn.PReLU(3)
    e.load_state_dict({k: eg.tensor(v.detach().numpy() + 1) for k, v in t.state_dict().items()})
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy() + 1)


# ---- functionals -----------------------------------------------------------------------------
def test_functionals_match_torch():
    def f(L, log):
        F = L.nn.functional
        x = L.tensor(X[0], requires_grad=True)
        for name, fn in (
                ("leaky default", lambda t: F.leaky_relu(t)),
                ("softplus default", lambda t: F.softplus(t)),
                ("torch.prelu 0-dim weight", lambda t: L.prelu(t, L.tensor(0.3))),
                ("Tensor.prelu", lambda t: t.prelu(L.tensor([0.1, 0.2, 0.3, 0.4]))),
                ("softmin dtype", lambda t: F.softmin(t, 0, dtype=L.float64)),
                ("normalize", lambda t: F.normalize(t)),
                ("normalize p=1 dim 0", lambda t: F.normalize(t, 1, 0)),
                ("normalize inf, eps", lambda t: F.normalize(t * 0, float("inf"), 1, 0.5)),
                ("gelu 0-dim", lambda t: F.gelu(t[0, 0]))):
            out = fn(x)
            log.append((name, out, _walk(out.grad_fn)))
            g, = L.autograd.grad(out.sum(), x)
            log.append(g)
    same(f)


def test_inplace_versions_and_leaf_error():
    def f(L, log):
        F = L.nn.functional
        for fn in (lambda t: F.elu(t, inplace=True), lambda t: F.leaky_relu_(t),
                   lambda t: F.hardtanh_(t), lambda t: F.silu(t, inplace=True)):
            t = L.tensor(X[0]).requires_grad_() * 1
            r = fn(t)
            log.append((r is t, t._version, r.grad_fn.name()))
            try:
                fn(L.tensor(X[0], requires_grad=True))
            except RuntimeError as e:
                log.append(str(e))
        with L.no_grad():  # no graph: the values only
            t = L.tensor(X[0])
            log.append((F.rrelu_(t, 0.1, 0.3), t._version))
    same(f)


def test_int_and_half_inputs():
    def f(L, log):
        F = L.nn.functional
        i = L.tensor([[-3, 0, 2, 9]])
        log.append(F.hardtanh(i))
        log.append(F.relu6(i))
        log.append(F.threshold(i, 1, -5))
        log.append(F.softsign(i))
        log.append(F.tanhshrink(i))
        h = L.tensor(X[0], dtype=L.float64)
        log.append(F.gelu(h))
        log.append(F.elu(h))
    same(f)


ERRORS = {
    "gelu int": (lambda L: L.nn.functional.gelu(L.ones(2, dtype=L.int64)), NotImplementedError,
                 '"GeluKernelImpl" not implemented for \'Long\''),
    "gelu complex": (lambda L: L.nn.functional.gelu(L.ones(2, dtype=L.complex64)),
                     NotImplementedError, "not implemented for 'ComplexFloat'"),
    "gelu approximate": (lambda L: L.nn.functional.gelu(L.ones(2), approximate="x"),
                         RuntimeError, "approximate argument must be either none or tanh."),
    "silu int": (lambda L: L.nn.functional.silu(L.ones(2, dtype=L.int32)), NotImplementedError,
                 "\"silu_cpu\" not implemented for 'Int'"),
    "silu complex grad": (lambda L: L.nn.functional.silu(
        L.ones(2, dtype=L.complex64, requires_grad=True)), RuntimeError,
        "silu does not support automatic differentiation for outputs with complex dtype."),
    "elu complex": (lambda L: L.nn.functional.elu(L.ones(2, dtype=L.complex128)),
                    NotImplementedError, "\"elu_cpu\" not implemented for 'ComplexDouble'"),
    "selu int": (lambda L: L.selu(L.ones(2, dtype=L.int64)), NotImplementedError,
                 "\"elu_cpu\" not implemented for 'Long'"),
    "celu alpha 0": (lambda L: L.celu(L.ones(2), 0.0), RuntimeError,
                     "ZeroDivisionError: alpha cannot be 0 for CELU"),
    "leaky bool": (lambda L: L.nn.functional.leaky_relu(L.ones(2, dtype=L.bool)),
                   NotImplementedError, "\"leaky_relu_cpu\" not implemented for 'Bool'"),
    "softplus int": (lambda L: L.nn.functional.softplus(L.ones(2, dtype=L.int64)),
                     NotImplementedError, "\"softplus_cpu\" not implemented for 'Long'"),
    "hardtanh complex": (lambda L: L.nn.functional.hardtanh(L.ones(2, dtype=L.complex64)),
                         NotImplementedError, "clamp is not supported for complex types"),
    "hardtanh min > max": (lambda L: L.nn.functional.hardtanh(L.ones(2), 2.0, 1.0),
                           ValueError, "min_val cannot be greater than max_val"),
    "Hardtanh min > max": (lambda L: L.nn.Hardtanh(2.0, 1.0), AssertionError,
                           "max_val (1.0) must be greater than min_val (2.0)"),
    "hardswish int": (lambda L: L.nn.functional.hardswish(L.ones(2, dtype=L.int64)),
                      NotImplementedError, "\"hardswish_cpu\" not implemented for 'Long'"),
    "logsigmoid complex": (lambda L: L.nn.functional.logsigmoid(L.ones(2, dtype=L.complex64)),
                           NotImplementedError, "\"log_sigmoid_cpu\" not implemented"),
    "glu 0-dim": (lambda L: L.nn.functional.glu(L.ones(())), RuntimeError,
                  "glu does not support scalars because halving size must be even"),
    "glu odd": (lambda L: L.nn.functional.glu(L.ones(2, 5)), RuntimeError,
                "Halving dimension must be even, but dimension 1 is size 5"),
    "glu dim": (lambda L: L.nn.functional.glu(L.ones(2, 4), 3), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    "threshold complex": (lambda L: L.threshold(L.ones(2, dtype=L.complex64), 0.0, 1.0),
                          NotImplementedError, "\"threshold_cpu\" not implemented"),
    "prelu channels": (lambda L: L.nn.functional.prelu(L.ones(2, 3), L.ones(4)), RuntimeError,
                       ("Mismatch of parameter numbers and input channel size. Found parameter "
                        "numbers = 4 and channel size = 3.")),
    "prelu 0-dim input": (lambda L: L.prelu(L.ones(()), L.ones(3)), RuntimeError,
                          "Not allow zero-dim input tensor."),
    "prelu 2-d weight": (lambda L: L.prelu(L.ones(2, 3), L.ones(3, 1)), RuntimeError,
                         ("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                          "ndim = 2")),
    "prelu dtypes": (lambda L: L.prelu(L.ones(2, 3), L.ones(3, dtype=L.float64)),
                     RuntimeError, "prelu: Type promoting not supported. Got Float and Double"),
    "prelu int": (lambda L: L.prelu(L.ones(2, 3, dtype=L.int64), L.ones(3, dtype=L.int64)),
                  NotImplementedError, "\"prelu_cpu\" not implemented for 'Long'"),
    "hardshrink int": (lambda L: L.hardshrink(L.ones(2, dtype=L.int64)), NotImplementedError,
                       "\"hardshrink_cpu\" not implemented for 'Long'"),
    "softshrink negative": (lambda L: L.nn.functional.softshrink(L.ones(2), -0.5),
                            RuntimeError, ("lambda must be in range [0, 3.40282e+38] for "
                                           "input dtype Float, but found -0.5")),
    "softshrink negative double": (
        lambda L: L.nn.functional.softshrink(L.ones(2, dtype=L.float64), -1), RuntimeError,
        "lambda must be in range [0, 1.79769e+308] for input dtype Double, but found -1"),
    "rrelu bounds": (lambda L: L.rrelu(L.ones(2), 0.5, 0.1), RuntimeError,
                     "Lower bound should be less than or equal to the upper bound"),
    "rrelu int": (lambda L: L.nn.functional.rrelu(L.ones(2, dtype=L.int64)),
                  NotImplementedError, "\"leaky_relu_cpu\" not implemented for 'Long'"),
    "rrelu training half": (lambda L: L.rrelu(L.ones(2, dtype=L.float16), training=True),
                            NotImplementedError,
                            "\"rrelu_with_noise_out_cpu\" not implemented for 'Half'"),
    "softmax2d dims": (lambda L: L.nn.Softmax2d()(L.ones(2)), ValueError,
                       "Softmax2d: expected input to be 3D or 4D, got 1D instead"),
    "leaky_ negative slope backward": (
        lambda L: L.nn.functional.leaky_relu_(L.ones(2, requires_grad=True) * 1, -0.5)
        .sum().backward(), RuntimeError,
        "In-place leakyReLu backward calculation is triggered with a negative slope"),
    "elu_ negative alpha backward": (
        lambda L: L.nn.functional.elu(L.ones(2, requires_grad=True) * 1, -0.5, True)
        .sum().backward(), RuntimeError,
        "In-place elu backward calculation is triggered with a negative slope"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    fn, exc, phrase = ERRORS[case]
    same_error(fn, phrase, exc)


# ---- one_hot -------------------------------------------------------------------------------
def test_one_hot():
    def f(L, log):
        F = L.nn.functional
        log.append(F.one_hot(L.tensor([0, 2, 1])))
        log.append(F.one_hot(L.tensor([[0, 2], [3, 1]]), 5))
        log.append(F.one_hot(L.tensor(2), 3))
        log.append(F.one_hot(L.tensor([], dtype=L.int64), 3))
        for bad in (lambda: F.one_hot(L.tensor([-1, 2])),
                    lambda: F.one_hot(L.tensor([-1, 2]), 4),
                    lambda: F.one_hot(L.tensor([0, 3]), 3),
                    lambda: F.one_hot(L.tensor([1]), -2),
                    lambda: F.one_hot(L.tensor([0, 1], dtype=L.int32), 4),
                    lambda: F.one_hot(L.tensor([0.0, 1.0]), 4),
                    lambda: F.one_hot(L.tensor([], dtype=L.int64))):
            try:
                bad()
            except RuntimeError as e:
                log.append(str(e))
    same(f)


# ---- random ones: structure ----------------------------------------------------------------
def test_rrelu_training_structure():
    x = eg.tensor(_arr(3, 50, 40), requires_grad=True)
    m = eg.nn.RReLU(0.1, 0.3)
    out = m(x)
    assert out.grad_fn.name() == "RreluWithNoiseBackward0"
    fn = out.grad_fn
    assert (fn._saved_lower, fn._saved_upper, fn._saved_training) == (0.1, 0.3, True)
    noise = fn._saved_noise.numpy()
    xv = x.detach().numpy()
    neg = xv <= 0
    np.testing.assert_array_equal(noise[~neg], 1.0)
    assert noise[neg].min() >= 0.1 and noise[neg].max() <= 0.3
    assert abs(noise[neg].mean() - 0.2) < 0.01  # ~1000 uniform draws
    np.testing.assert_allclose(out.detach().numpy(), xv * noise, rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), noise, rtol=1e-6)
    # the same module in eval mode: leaky_relu with the mean slope, as torch
    t = torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor(xv))
    np.testing.assert_allclose(m.eval()(x).detach().numpy(), t.numpy(), rtol=1e-6)
    # in place: RreluWithNoiseBackward1, the tensor itself
    y = x * 1
    r = eg.nn.functional.rrelu(y, 0.1, 0.3, training=True, inplace=True)
    assert r is y and y.grad_fn.name() == "RreluWithNoiseBackward1" and y._version == 1


def test_gumbel_softmax_structure():
    F = eg.nn.functional
    logits = eg.tensor(np.log(np.array([[0.6, 0.3, 0.1]] * 1000, "float32")),
                       requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    t_soft = torch.nn.functional.gumbel_softmax(torch.zeros(2, 3, requires_grad=True), tau=0.5)
    assert _walk(soft.grad_fn)[0] == t_soft.grad_fn.name() == "SoftmaxBackward0"
    assert soft.grad_fn.next_functions[0][0].name() == "DivBackward0"
    s = soft.detach().numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5)
    freq = np.bincount(s.argmax(-1), minlength=3) / len(s)  # argmax ~ softmax(logits)
    np.testing.assert_allclose(freq, [0.6, 0.3, 0.1], atol=0.05)  # > 3 sigma
    hard = F.gumbel_softmax(logits[:4], hard=True, dim=1)
    t_hard = torch.nn.functional.gumbel_softmax(torch.zeros(4, 3, requires_grad=True),
                                                hard=True)
    names = lambda o: (o.grad_fn.name(), [n and n.name() for n, _ in o.grad_fn.next_functions])
    assert names(hard) == names(t_hard)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(1) == 1).all()
    # straight through: the gradient is the soft sample's
    w = eg.tensor(_arr(5, 4, 3))
    y = hard.grad_fn.next_functions[1][0]  # SoftmaxBackward0 of the soft sample
    ys = y._saved_result.detach()
    g, = eg.autograd.grad((hard * w).sum(), logits)
    want = (ys * (w - (w * ys).sum(1, keepdim=True))).numpy()  # softmax's vjp, tau 1
    np.testing.assert_allclose(g.numpy()[:4], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(g.numpy()[4:], 0.0)
