"""torch.nn.grad, the torch.overrides helpers (and nn.functional's names for them) and the
torch.<name> forms of nn.functional ops (torch.conv2d, torch.max_pool2d, torch.dropout,
...) against real torch: ATen's signatures (pooling's `stride=[]`, dropout's positional
`train`), values, gradients and grad_fn names; dropout at p 0 and 1 and not training,
where the values are not random."""
import numpy as np
import pytest
import torch

import eagergrad as eg


def _pair(seed, shape, rg=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (torch.tensor(a, requires_grad=rg), eg.tensor(a, requires_grad=rg))


def _compare(call):
    outs, grads = [], []
    for L, k in ((torch, 0), (eg, 1)):
        xs = [p[k] for p in call.inputs]
        y = call.fn(L)(*xs)
        y = y[0] if isinstance(y, tuple) else y
        outs.append((np.asarray(y.detach().numpy()), None if y.grad_fn is None
                     else y.grad_fn.name()))
        if y.requires_grad:
            y.sum().backward()
            grads.append([np.asarray(x.grad.numpy()) for x in xs])
    assert outs[0][1] == outs[1][1]
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12, atol=1e-12)
    for gt, ge in zip(*grads):
        np.testing.assert_allclose(ge, gt, rtol=1e-12, atol=1e-12)


class _Call:
    def __init__(self, fn, *shapes):
        self.fn = fn
        self.inputs = [_pair(i, s) for i, s in enumerate(shapes)]


CALLS = {
    "conv1d": _Call(lambda L: lambda x, w: L.conv1d(x, w, None, 2, 1), (2, 3, 9), (4, 3, 3)),
    "conv2d": _Call(lambda L: lambda x, w, b: L.conv2d(x, w, b, 1, 0, 1, 1),
                    (1, 2, 5, 5), (3, 2, 2, 2), (3,)),
    "conv3d": _Call(lambda L: L.conv3d, (1, 2, 4, 4, 4), (2, 2, 2, 2, 2)),
    "conv_transpose2d": _Call(lambda L: lambda x, w: L.conv_transpose2d(x, w, None, 2, 1, 1),
                              (1, 2, 4, 4), (2, 3, 3, 3)),
    "bilinear": _Call(lambda L: L.bilinear, (3, 2), (3, 4), (5, 2, 4)),
    "avg_pool1d": _Call(lambda L: lambda x: L.avg_pool1d(x, 3, 2, 1), (2, 3, 8)),
    "adaptive_avg_pool1d": _Call(lambda L: lambda x: L.adaptive_avg_pool1d(x, 3), (2, 7)),
    "max_pool1d": _Call(lambda L: lambda x: L.max_pool1d(x, 2), (2, 3, 8)),
    "max_pool2d": _Call(lambda L: lambda x: L.max_pool2d(x, 2, []), (1, 2, 6, 6)),
    "max_pool2d_args": _Call(lambda L: lambda x: L.max_pool2d(x, [3, 2], [2, 1], [1, 0], 1,
                                                              True), (1, 2, 7, 6)),
    "max_pool3d": _Call(lambda L: lambda x: L.max_pool3d(x, 2, 1), (1, 1, 4, 4, 4)),
    "max_pool1d_with_indices": _Call(lambda L: lambda x: L.max_pool1d_with_indices(x, 3),
                                     (2, 9)),
}
for _name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
    for _p, _train in ((0.0, True), (1.0, True), (0.5, False)):
        CALLS[f"{_name}-{_p}-{_train}"] = _Call(
            lambda L, n=_name, p=_p, t=_train: lambda x: getattr(L, n)(x * 1, p, t), (2, 3, 4))


@pytest.mark.parametrize("name", list(CALLS))
def test_torch_level_function_as_torch(name):
    _compare(CALLS[name])


@pytest.mark.parametrize("name", ["dropout_", "feature_dropout_", "alpha_dropout_",
                                  "feature_alpha_dropout_"])
def test_inplace_dropout_writes_the_input(name):
    for p in (0.0, 1.0):
        xs = [L.ones(2, 3) + 1 for L in (torch, eg)]
        ys = [getattr(L, name)(x, p, True) for L, x in zip((torch, eg), xs)]
        assert ys[1] is xs[1] and ys[0] is xs[0]
        np.testing.assert_array_equal(xs[1].numpy(), xs[0].numpy())


def test_max_pool_takes_no_return_indices_and_dropout_needs_train():
    for L in (torch, eg):
        with pytest.raises(TypeError, match="unexpected keyword argument 'return_indices'"):
            L.max_pool2d(L.ones(1, 1, 4, 4), 2, return_indices=True)
        with pytest.raises(TypeError):
            L.dropout(L.ones(3), 0.5)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("wrt", ["input", "weight"])
@pytest.mark.parametrize("needs_grad", [False, True])
def test_nn_grad_convolution_gradients_as_torch(n, wrt, needs_grad):
    """torch.nn.grad.conv{n}d_input/_weight: values, and the double-backward node when an
    input requires grad (None otherwise)."""
    rng = np.random.default_rng(n)
    xs, ws = (2, 4) + (7,) * n, (6, 2) + (3,) * n
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    res = []
    for L in (torch, eg):
        X, W = L.tensor(x, requires_grad=needs_grad), L.tensor(w, requires_grad=needs_grad)
        y = getattr(L.nn.functional, f"conv{n}d")(X, W, None, 2, 1, 1, 2)
        go = L.tensor(rng.standard_normal(tuple(y.shape)))
        f = getattr(L.nn.grad, f"conv{n}d_{wrt}")
        r = f(xs, W, go, 2, 1, 1, 2) if wrt == "input" else f(X, ws, go, 2, 1, 1, 2)
        res.append((r.detach().numpy(), None if r.grad_fn is None else r.grad_fn.name()))
        rng = np.random.default_rng(n)
        rng.standard_normal(xs), rng.standard_normal(ws)
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12, atol=1e-12)
    assert res[1][1] == res[0][1]
    assert eg.nn.functional.grad is eg.nn.grad


class _Overrides:
    def __init__(self, log):
        self.log = log

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        args[0].log.append((cls.__name__, func.__name__, [t.__name__ for t in types]))
        return NotImplemented if cls.__name__ == "_Declines" else cls.__name__


class _Sub(_Overrides):
    pass


class _Declines(_Overrides):
    pass


def test_overrides_helpers_as_torch():
    """has_torch_function*, handle_torch_function: which arguments count, the calling order
    (subclasses first, then left to right, one per type) and the TypeError when every
    override declines."""
    for L in (torch, eg):
        def api(*a):
            return a
        F = L.nn.functional
        assert not F.has_torch_function((1, L.ones(1)))
        assert F.has_torch_function_unary(_Overrides([]))
        assert F.has_torch_function_variadic(1, _Sub([]))
    logs = []
    for L in (torch, eg):
        log = []
        base, sub, dec = _Overrides(log), _Sub(log), _Declines(log)
        r = L.overrides.handle_torch_function(api, (dec, base, sub, base), dec, 2)
        assert r == "_Sub"
        with pytest.raises(TypeError, match="no implementation found for .*api"):
            L.overrides.handle_torch_function(api, (dec,), dec)
        logs.append(log)
    assert logs[0] == logs[1]


def test_boolean_dispatch_and_assert_int_or_pair_as_torch():
    for L in (torch, eg):
        F = L.nn.functional

        def yes(x, flag=False):
            """doc"""
            return ("yes", x)

        def no(x, flag=False):
            return ("no", x)
        f = F.boolean_dispatch("flag", 1, False, yes, no, "mod", "f")
        assert (f(1), f(1, True), f(1, flag=True), f.__doc__, f.__name__, f.__module__) == \
            (("no", 1), ("yes", 1), ("yes", 1), "doc", "f", "mod")
        with pytest.raises(RuntimeError, match="only one function can have a docstring"):
            F.boolean_dispatch("flag", 1, False, yes, yes, None, None)
        F.assert_int_or_pair(3, "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            F.assert_int_or_pair((1, 2, 3), "k", "{} bad")


def test_scaled_mm_enums_as_torch():
    """F.ScalingType / F.SwizzleType: the same members, values, reprs and lookups by value
    (eagergrad has no scaled_mm; the enums are its arguments' types)."""
    for name in ("ScalingType", "SwizzleType"):
        a, b = getattr(eg.nn.functional, name), getattr(torch.nn.functional, name)
        assert [(n, m.value) for n, m in a.__members__.items()] == \
            [(n, m.value) for n, m in b.__members__.items()]
        assert [repr(a(v)) for v in range(2)] == [repr(b(v)) for v in range(2)]
        assert a.__name__ == b.__name__
