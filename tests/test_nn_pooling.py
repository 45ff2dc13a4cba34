"""The layers added with the 3-d pools against real torch: MaxPool3d / AvgPool3d /
AdaptiveMax/AvgPool3d, LPPool1d/2d/3d, MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d (given
samples against torch; drawn samples structurally and statistically), LocalResponseNorm,
CrossMapLRN2d, ChannelShuffle, ConvTranspose3d and the lazy norms / LazyConvTranspose3d,
AdaptiveLogSoftmaxWithLoss, LinearCrossEntropyLoss, NLLLoss2d, Container, conv_tbc, and
their nn.functional forms: the same weights and inputs; outputs, the grad_fn graph with its
saved values, parameter and input gradients, buffers, reprs, state dicts, warnings and
torch's errors."""
import functools
import math
import warnings

import numpy as np
import pytest
import torch
from _nn_helpers import arrays, copy_weights, saved, walk
from conftest import same, same_error

import eagergrad as eg

# the nodes of this slice's ops: their saved values are compared; other nodes in the graphs
# (composites' views, reductions, losses) by name only (their own tests check their values)
_MINE = ("MaxPool3D", "AvgPool3D", "AdaptiveAvgPool3D", "AdaptiveMaxPool3D", "FractionalMaxPool",
         "MaxUnpool", "ChannelShuffle", "ConvTbc", "CrossMapLRN2d", "MaxPool2D", "AvgPool2D")


def _saved_if_mine(fn):
    return saved(fn) if fn.name().startswith(_MINE) else {}


_walk = functools.partial(walk, saved_of=_saved_if_mine)


def _x(L, seed, *shape, dtype="float64", rg=True):
    return L.tensor(arrays(seed, shape, dtype=dtype)[0], requires_grad=rg)


def _step(L, m, x, *args, out_index=None):
    """Output, graph, parameter grads, the input's grad after a seeded weighted sum."""
    out = m(x, *args)
    o = out if out_index is None else out[out_index]
    graph = _walk(o.grad_fn)
    v = L.tensor(arrays(99, tuple(o.shape), dtype=str(o.dtype).split(".")[-1])[0])
    (o * v).sum().backward()
    return out, graph, {k: p.grad for k, p in m.named_parameters()}, x.grad


# ---- 3-d pooling ------------------------------------------------------------------------------
POOLS3D = {
    "MaxPool3d": (lambda L: L.nn.MaxPool3d(2, return_indices=True), (2, 2, 4, 5, 5), 0),
    "MaxPool3d padding dilation ceil": (
        lambda L: L.nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2), padding=(1, 1, 0),
                                 dilation=(1, 2, 1), ceil_mode=True), (1, 2, 5, 6, 5), None),
    "MaxPool3d unbatched": (lambda L: L.nn.MaxPool3d(2, stride=1), (2, 3, 3, 4), None),
    "AvgPool3d": (lambda L: L.nn.AvgPool3d(2), (2, 2, 4, 4, 5), None),
    "AvgPool3d padding ceil no count": (
        lambda L: L.nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True,
                                 count_include_pad=False), (1, 2, 5, 6, 5), None),
    "AvgPool3d divisor unbatched": (
        lambda L: L.nn.AvgPool3d((1, 2, 3), stride=1, padding=(0, 1, 1), divisor_override=5),
        (2, 3, 4, 5), None),
    "AdaptiveAvgPool3d": (lambda L: L.nn.AdaptiveAvgPool3d((2, None, 3)), (2, 2, 4, 5, 7), None),
    "AdaptiveAvgPool3d 1": (lambda L: L.nn.AdaptiveAvgPool3d(1), (2, 3, 4, 5), None),
    "AdaptiveMaxPool3d": (lambda L: L.nn.AdaptiveMaxPool3d((3, 2, 4), return_indices=True),
                          (1, 2, 5, 5, 7), 0),
    "AdaptiveMaxPool3d unbatched": (lambda L: L.nn.AdaptiveMaxPool3d(2), (2, 3, 4, 5), None),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("kind", sorted(POOLS3D))
def test_3d_pool_modules_match_torch(kind):
    make, shape, out_index = POOLS3D[kind]

    def f(L):
        m = make(L)
        return repr(m), _step(L, m, _x(L, 1, *shape), out_index=out_index)
    same(f)


def test_3d_pool_double_backward_and_float32():
    def f(L):
        res = []
        for i, fn in enumerate((
                lambda F, x: F.max_pool3d(x, 2, padding=1),
                lambda F, x: F.avg_pool3d(x, 2, padding=1, count_include_pad=False),
                lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
                lambda F, x: F.adaptive_max_pool3d(x, 2))):
            x = _x(L, 10 + i, 1, 2, 3, 4, 4)
            y = fn(L.nn.functional, x)
            v = _x(L, 20 + i, *y.shape)
            g, = L.autograd.grad(y, x, v, create_graph=True)
            gg, = L.autograd.grad((g * g).sum(), v)
            x32 = _x(L, 30 + i, 2, 1, 4, 4, 3, dtype="float32")
            res.append((y, g, _walk(g.grad_fn), gg, fn(L.nn.functional, x32)))
        return res
    same(f)


def test_integer_pooling_matches_torch():
    """max and avg pooling of integer tensors (ATen's integer kernels: the dtype's minimum
    as padding, truncating division), 2-d and 3-d."""
    def f(L):
        x = L.tensor([[[[-3, 2, 5, -8, 7], [1, 1, 1, 2, -9], [4, -4, 0, 3, 3]]]])
        F = L.nn.functional
        return (F.max_pool2d(x, 2, padding=1, return_indices=True), F.avg_pool2d(x, 2),
                F.avg_pool2d(x, 3, stride=1, padding=1), F.max_pool3d(x, (1, 2, 2)),
                F.avg_pool3d(x, (1, 2, 2), padding=(0, 1, 1)),
                F.avg_pool3d(x, (1, 3, 2), ceil_mode=True, count_include_pad=False))
    same(f)


def test_max_pool_nan_takes_the_last_nan_as_torch():
    """ATen's CPU max pools keep `val > max || isnan(val)`: the last nan of a window."""
    def f(L):
        n = float("nan")
        x = L.tensor([[[[n, 1.0, n, 2.0], [3.0, n, 0.0, 1.0]]]])
        F = L.nn.functional
        return (F.max_pool2d(x, (1, 4), return_indices=True),
                F.max_pool2d(x, 2, return_indices=True),
                F.max_pool3d(x.unsqueeze(0), (1, 2, 2), return_indices=True),
                F.adaptive_max_pool2d(x, (1, 1), return_indices=True),
                F.adaptive_max_pool3d(x.unsqueeze(0), 1, return_indices=True))
    same(f)


POOL3D_ERRORS = [
    (lambda F, x: F.max_pool3d(x[0, 0], 2), "non-empty 4D or 5D"),
    (lambda F, x: F.max_pool3d(x, 0), "stride should not be zero"),
    (lambda F, x: F.max_pool3d(x, (2, 2)), "kernel_size must either be a single int"),
    (lambda F, x: F.max_pool3d(x, 2, padding=2), "pad should be at most half"),
    (lambda F, x: F.max_pool3d(x, 2, padding=2, dilation=3), "pad should be smaller than"),
    (lambda F, x: F.max_pool3d(x, 2, dilation=0), "dilation should be greater than zero"),
    (lambda F, x: F.max_pool3d(x, 2, stride=-1), "stride should be greater than zero"),
    (lambda F, x: F.max_pool3d(x, 5), "Output size is too small"),
    (lambda F, x: F.max_pool3d(x[:, :0], 2), "non-batch dimensions to have positive length"),
    (lambda F, x: F.avg_pool3d(x[0, 0], 2), "non-empty 4D or 5D"),
    (lambda F, x: F.avg_pool3d(x, (2, 2)), "kernel_size must be a single int"),
    (lambda F, x: F.avg_pool3d(x, 2, padding=2), "pad should be at most half"),
    (lambda F, x: F.avg_pool3d(x, 5), "smaller than kernel size"),
    (lambda F, x: F.avg_pool3d(x, 2, divisor_override=0), "divisor must be not zero"),
    (lambda F, x: F.adaptive_avg_pool3d(x[0, 0], 2), "Expected 4D or 5D tensor"),
    (lambda F, x: F.adaptive_avg_pool3d(x, (2, 2)), "output_size must be 3"),
    (lambda F, x: F.adaptive_avg_pool3d(x, (2, 2, -1)), "greater than or equal to 0"),
    (lambda F, x: F.adaptive_avg_pool3d(x[:, :, :0], 2), "non-zero size"),
    (lambda F, x: F.adaptive_max_pool3d(x[0, 0], 2), "Expected 4D or 5D tensor"),
    (lambda F, x: F.adaptive_max_pool3d(x, (2, 2)), "output_size.size() must be 3"),
    (lambda F, x: F.adaptive_max_pool3d(x[:, :, :0], 2), "non-zero size"),
]


@pytest.mark.parametrize("k", range(len(POOL3D_ERRORS)))
def test_3d_pool_errors(k):
    fn, phrase = POOL3D_ERRORS[k]
    same_error(lambda L: fn(L.nn.functional, L.ones(1, 2, 4, 4, 4)), phrase)


@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool3d(x, 2), lambda F, x: F.avg_pool3d(x, 2),
    lambda F, x: F.adaptive_avg_pool3d(x, 2), lambda F, x: F.adaptive_max_pool3d(x, 2)])
@pytest.mark.parametrize("dtype", ["complex64", "int64", "bool"])
def test_3d_pool_dtypes_torch_refuses(call, dtype):
    def f(L):
        return call(L.nn.functional, L.ones(1, 2, 4, 4, 4).to(getattr(L, dtype)))
    same(f)


# ---- power-average pooling, LRN, channel shuffle ------------------------------------------------
LPPOOLS = {
    "LPPool1d": (lambda L: L.nn.LPPool1d(1.5, 2), (1, 3, 7)),
    "LPPool1d stride unbatched": (lambda L: L.nn.LPPool1d(2, 3, stride=2, ceil_mode=True),
                                  (3, 8)),
    "LPPool2d": (lambda L: L.nn.LPPool2d(2, (2, 3), stride=1), (2, 2, 5, 6)),
    "LPPool2d inf": (lambda L: L.nn.LPPool2d(float("inf"), 2), (1, 2, 4, 4)),
    "LPPool3d": (lambda L: L.nn.LPPool3d(3, 2), (1, 2, 4, 4, 4)),
    "LPPool3d -inf": (lambda L: L.nn.LPPool3d(-float("inf"), (1, 2, 2)), (2, 3, 4, 4)),
}


@pytest.mark.parametrize("kind", sorted(LPPOOLS))
def test_lp_pool_matches_torch(kind):
    make, shape = LPPOOLS[kind]

    def f(L):
        m = make(L)
        x = L.tensor(np.abs(arrays(2, shape, dtype="float64")[0]) + 0.1, requires_grad=True)
        return repr(m), _step(L, m, x)
    same(f)


@pytest.mark.slow  # (seconds in the fast tier)
def test_local_response_norm_matches_torch():
    def f(L):
        res = []
        for i, (args, shape) in enumerate((((3,), (2, 5, 7)), ((2,), (1, 5, 4, 4)),
                                           ((1, 1.0, 0.5, 2.0), (1, 5, 3, 3, 3)),
                                           ((4, 0.1), (2, 6, 2, 3, 2, 2)))):
            m = L.nn.LocalResponseNorm(*args)
            res.append((repr(m), _step(L, m, _x(L, 3 + i, *shape))))
        res.append(L.nn.functional.local_response_norm(L.ones(2, 0, 3), 2).shape)
        return res
    same(f)
    same_error(lambda L: L.nn.functional.local_response_norm(L.ones(2, 3), 2),
               "Expected 3D or higher dimensionality", ValueError)


@pytest.mark.slow  # (seconds in the fast tier)
def test_cross_map_lrn2d_matches_torch():
    """torch's legacy Function: its forward (channel 0 stays in every window, as its loop
    has it) and its hand-written backward (CrossMapLRN2dBackward)."""
    def f(L):
        res = []
        for size, shape in ((3, (2, 5, 3, 3)), (4, (1, 7, 2, 2)), (2, (1, 3, 2, 2)),
                            (5, (1, 2, 3, 1))):
            m = L.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.6, k=1.5)
            x = _x(L, size, *shape)
            out = m(x)
            v = _x(L, 7, *shape, rg=False)
            (out * v).sum().backward()
            res.append((repr(m), out, out.grad_fn.name(), x.grad))
        return res
    same(f)
    same_error(lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4)), "Expected input to be 4D",
               ValueError)
    # size 1: torch's backward narrows past the end of its padded buffer
    same_error(lambda L: L.nn.CrossMapLRN2d(1)(_x(L, 1, 1, 3, 2, 2)).sum().backward(),
               "start (1) + length (3) exceeds dimension size (3).")


def test_channel_shuffle_matches_torch():
    def f(L):
        m = L.nn.ChannelShuffle(3)
        x = _x(L, 4, 2, 6, 2, 3)
        z = L.tensor(arrays(5, (1, 4, 3))[0] + 1j * arrays(6, (1, 4, 3))[0],
                     requires_grad=True)
        zc = L.channel_shuffle(z, 2)
        zc.abs().sum().backward()
        # (its NotImplemented node: eagergrad names it "NotImplemented", torch
        # "torch::autograd::NotImplemented", as for every such node of the op table)
        y = L.nn.functional.native_channel_shuffle(_x(L, 8, 1, 4, 2, 2), 2)
        return (repr(m), _step(L, m, x), zc, z.grad, y.detach(), y.requires_grad,
                L.channel_shuffle(L.arange(8).view(1, 4, 2), 2))
    same(f)
    same_error(lambda L: L.nn.functional.native_channel_shuffle(
        _x(L, 8, 1, 4, 2, 2), 2).sum().backward(), "derivative for aten::native_channel_shuffle")
    same_error(lambda L: L.channel_shuffle(L.ones(2, 3, 2), 2), "must be divisible by groups")
    same_error(lambda L: L.channel_shuffle(L.ones(2, 4, 2), 0), "must be positive")
    same_error(lambda L: L.channel_shuffle(L.ones(2, 4), 2), "expects input with > 2 dims")


# ---- unpooling -------------------------------------------------------------------------------
def test_max_unpool_round_trips_match_torch():
    def f(L):
        res = []
        for nd, shape, k, stride, padding, size in (
                (1, (2, 3, 7), 2, None, 0, None), (2, (2, 2, 5, 6), 2, 1, 0, None),
                (2, (3, 7, 7), 2, None, 0, (7, 7)), (3, (1, 2, 4, 5, 6), 2, None, 0, None),
                (3, (2, 4, 4, 5), 2, None, (0, 1, 0), (3, 6, 4))):
            x = _x(L, nd, *shape, rg=False)
            pool = getattr(L.nn, f"MaxPool{nd}d")(k, stride, padding, return_indices=True)
            out, ind = pool(x)
            out.requires_grad_()
            unpool = getattr(L.nn, f"MaxUnpool{nd}d")(k, stride, padding)
            y = unpool(out, ind, output_size=size)
            v = _x(L, 9, *y.shape, rg=False)
            g, = L.autograd.grad(y, out, v)
            res.append((repr(unpool), y, _walk(y.grad_fn), g))
        return res
    same(f)


UNPOOL_ERRORS = [
    (lambda F, o, i: F.max_unpool2d(o, i, 2, output_size=(9, 6)), "invalid output_size",
     ValueError),
    (lambda F, o, i: F.max_unpool2d(o, i, 2, output_size=(7,)), "should be a sequence",
     ValueError),
    # (which invalid index torch reports depends on its threads: the message's start only)
    (lambda F, o, i: F.max_unpool2d(o, i * 100, 2), "Found an invalid max index", RuntimeError),
    (lambda F, o, i: F.max_unpool2d(o, i.int(), 2), "should be type int64", RuntimeError),
    (lambda F, o, i: F.max_unpool2d(o, i[:1], 2), "Expected shape of indices", RuntimeError),
    (lambda F, o, i: F.max_unpool2d(o[0, 0], i[0, 0], 2), "3d or 4d Tensor", RuntimeError),
    (lambda F, o, i: F.max_unpool2d(o.double().long(), i, 2), "not implemented for 'Long'",
     NotImplementedError),
    (lambda F, o, i: F.max_unpool3d(o.unsqueeze(2), i.unsqueeze(2), (1, 2, 2), stride=0),
     "strides should be greater than zero", RuntimeError),
    (lambda F, o, i: F.max_unpool3d(o[0], i[0], 2), "4d or 5d Tensor", RuntimeError),
    (lambda F, o, i: F.max_unpool1d(o[0], i[0], 2, padding=5), "non-negative spatial",
     ValueError),
]


@pytest.mark.parametrize("k", range(len(UNPOOL_ERRORS)))
def test_max_unpool_errors(k):
    fn, phrase, exc = UNPOOL_ERRORS[k]

    def f(L):
        F = L.nn.functional
        o, i = F.max_pool2d(_x(L, 1, 2, 3, 7, 6, rg=False), 2, return_indices=True)
        return fn(F, o, i)
    same_error(f, phrase, exc, messages="invalid max index" not in phrase)


# ---- fractional max pooling --------------------------------------------------------------------
FRACTIONAL = {
    "2d output_size": (2, (2, 3), {"output_size": (4, 3)}, (2, 3, 7, 6)),
    "2d output_ratio indices": (2, 2, {"output_ratio": 0.5, "return_indices": True},
                                (1, 3, 5, 7)),
    "2d unbatched": (2, (2, 3), {"output_size": (4, 3)}, (3, 7, 6)),
    "3d output_size": (3, (4, 2, 3), {"output_size": (10, 3, 2)}, (2, 4, 16, 7, 5)),
    "3d output_ratio indices": (3, 2, {"output_ratio": 0.5, "return_indices": True},
                                (2, 4, 5, 5, 5)),
    "3d unbatched": (3, 2, {"output_size": (4, 4, 4)}, (4, 7, 7, 7)),
}


@pytest.mark.parametrize("kind", sorted(FRACTIONAL))
def test_fractional_max_pool_with_samples_matches_torch(kind):
    nd, kernel, kw, shape = FRACTIONAL[kind]

    def f(L):
        samples = L.tensor(np.random.default_rng(nd).random((2, shape[-nd - 1], nd)))
        m = getattr(L.nn, f"FractionalMaxPool{nd}d")(kernel, _random_samples=samples, **kw)
        out = _step(L, m, _x(L, 4, *shape), out_index=0 if kw.get("return_indices") else None)
        return repr(m), sorted(m.state_dict()), m._random_samples, out
    same(f)


def test_fractional_max_pool_float32_and_double_backward():
    def f(L):
        res = []
        for nd, shape, size in ((2, (2, 2, 6, 5), 3), (3, (1, 2, 5, 6, 5), (2, 3, 2))):
            fn = getattr(L.nn.functional, f"fractional_max_pool{nd}d")
            samples = np.random.default_rng(3).random((shape[0], shape[1], nd))
            x32 = _x(L, 5, *shape, dtype="float32")
            y32 = fn(x32, 2, output_size=size, return_indices=True,
                     _random_samples=L.tensor(samples, dtype=L.float32))
            x = _x(L, 6, *shape)
            y = fn(x, 2, output_size=size, _random_samples=L.tensor(samples))
            v = _x(L, 7, *y.shape)
            g, = L.autograd.grad(y, x, v, create_graph=True)
            gg, = L.autograd.grad((g * g).sum(), v)
            res.append((y32, y, g, _walk(g.grad_fn), gg))
        return res
    same(f)


def _5d(x):
    return x.unsqueeze(2).expand(2, 3, 6, 7, 6).contiguous()  # (T, H, W) = (6, 7, 6)


def _samples3(s):
    return s[..., :1].expand(2, 3, 3).contiguous()


FRACTIONAL_ERRORS = [
    (lambda F, x, s: F.fractional_max_pool2d(x, 2), "requires specifying either", ValueError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=(7, 6), _random_samples=s),
     "pool height 2 too large", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=(3, 6), _random_samples=s),
     "pool width 2 too large", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s[..., :1]),
     "size(2) equals to 2", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s[:1]),
     "size(0) no less then", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s[:, :2]),
     "size(1) equals to input channel", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s.float()),
     "same dtype as input", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s[0]),
     "to have 3 dimensions", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, (2, 2, 2), output_size=3, _random_samples=s),
     "kernel_size must either be", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)),
     "output_ratio to either be", ValueError),
    (lambda F, x, s: F.fractional_max_pool2d(x[:, :0], 2, output_size=3), "non-zero size",
     RuntimeError),
    (lambda F, x, s: F.fractional_max_pool2d(x.long(), 2, output_size=3,
                                             _random_samples=s.long()),
     "not implemented for 'Long'", NotImplementedError),
    (lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3,
                                             _random_samples=s.requires_grad_()),
     "not differentiable with respect to argument 'random_samples'", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool3d(_5d(x), 2, output_size=(3, 3, 5),
                                             _random_samples=_samples3(s)),
     "pool width 2 too large", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool3d(_5d(x), 2, output_size=(3, 6, 3),
                                             _random_samples=_samples3(s)),
     "pool height 2 too large", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool3d(_5d(x), 2, output_size=(5, 3, 3),
                                             _random_samples=_samples3(s)),
     "pool time 2 too large", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool3d(_5d(x), 2, output_size=3, _random_samples=s),
     "size(2) equals to 3", RuntimeError),
    (lambda F, x, s: F.fractional_max_pool3d(x[0], 2, output_size=3,
                                             _random_samples=_samples3(s)),
     "Expected 4D or 5D tensor", RuntimeError),
]


@pytest.mark.parametrize("k", range(len(FRACTIONAL_ERRORS)))
def test_fractional_max_pool_errors(k):
    fn, phrase, exc = FRACTIONAL_ERRORS[k]

    def f(L):
        x = _x(L, 1, 2, 3, 7, 6, rg=False)
        s = L.tensor(np.random.default_rng(0).random((2, 3, 2)))
        return fn(L.nn.functional, x, s)
    same_error(f, phrase, exc)


def test_fractional_module_errors():
    same_error(lambda L: L.nn.FractionalMaxPool2d(2), "requires specifying either", ValueError)
    same_error(lambda L: L.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
               "only one of output_size", ValueError)
    same_error(lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=1.5),
               "output_ratio must be between 0 and 1", ValueError)
    same_error(lambda L: L.nn.FractionalMaxPool3d(0, output_size=2),
               "kernel_size must be greater than 0", ValueError)


def _interval_starts(u, n, o, k):
    """The window starts ATen's generate_intervals gives for sample u (independently
    written: alpha = (n - k) / (o - 1), start_i = floor((i + u) alpha) - floor(u alpha))."""
    alpha = (n - k) / (o - 1)
    return [math.floor((i + u) * alpha) - math.floor(u * alpha) for i in range(o - 1)] + [n - k]


def test_fractional_max_pool_draws_its_samples_from_the_global_generator():
    """Without _random_samples the steps come from eagergrad's global generator: the same
    seed gives the same windows, the windows are the formula's for some u in [0, 1), every
    index lies in its window, and over many draws the windows occur with the frequencies
    the formula gives for u uniform (a chi-square bound)."""
    n, k, o = 11, 2, 4
    x = eg.arange(float(n)).view(1, 1, 1, n).expand(1, 1, 2, n).contiguous()

    def draw():
        _, ind = eg.nn.functional.fractional_max_pool2d(x, (2, k), output_size=(1, o),
                                                        return_indices=True)
        return tuple((ind.flatten() % n - (k - 1)).tolist())  # the window starts

    eg.manual_seed(7)
    first = [draw() for _ in range(3)]
    eg.manual_seed(7)
    assert [draw() for _ in range(3)] == first
    grid = np.linspace(0, 1, 20001)[:-1]
    expected = {}
    for u in grid:
        key = tuple(_interval_starts(u, n, o, k))
        expected[key] = expected.get(key, 0) + 1 / len(grid)
    draws = 600
    counts = {}
    for _ in range(draws):
        s = draw()
        assert s in expected, f"windows {s} are no u's"
        counts[s] = counts.get(s, 0) + 1
    chi2 = sum((counts.get(s, 0) - draws * p) ** 2 / (draws * p) for s, p in expected.items())
    assert chi2 < 30, (chi2, counts, expected)  # ~5 dof: p < 1e-5 by chance


def test_fractional_max_pool_drawn_windows_are_maxima():
    """Structure of a drawn pooling (3-d, unbatched): shapes, indices inside the input
    plane, and each output the input's value at its index."""
    eg.manual_seed(0)
    x = eg.tensor(arrays(3, (2, 6, 7, 5), dtype="float64")[0])
    out, ind = eg.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.6, 0.5),
                                         return_indices=True)(x)
    assert tuple(out.shape) == (2, 3, 4, 2) and ind.dtype == eg.int64
    flat = x.view(2, -1)
    assert bool(((ind >= 0) & (ind < 6 * 7 * 5)).all())
    np.testing.assert_array_equal(flat.gather(1, ind.view(2, -1)).view(out.shape).numpy(),
                                  out.numpy())


# ---- convolution, lazy layers --------------------------------------------------------------------
def test_conv_transpose3d_and_lazy_forms_match_torch():
    def f(L):
        m = copy_weights(L, L.nn.ConvTranspose3d(2, 4, (2, 3, 2), stride=(2, 1, 1),
                                                 padding=(0, 1, 1), output_padding=(1, 0, 0),
                                                 groups=2, dilation=(1, 1, 2)), 1,
                         dtype="float64").double()
        lazy = L.nn.LazyConvTranspose3d(3, 2, stride=2)
        r0 = repr(lazy)
        x = _x(L, 2, 1, 2, 3, 3, 3)
        y = lazy(x)
        return (repr(m), _step(L, m, _x(L, 1, 1, 2, 3, 4, 4)), r0, repr(lazy),
                type(lazy).__name__, y.shape, sorted(lazy.state_dict()),
                m(_x(L, 3, 1, 2, 3, 4, 4), output_size=(8, 4, 4)).shape)
    same(f)


@pytest.mark.parametrize("kind", ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d",
                                  "InstanceNorm2d", "InstanceNorm3d"])
def test_lazy_norms_match_torch(kind):
    shape = {"1d": (4, 3, 5), "2d": (2, 3, 4, 4), "3d": (2, 3, 2, 3, 3)}[kind[-2:]]

    def f(L):
        m = getattr(L.nn, "Lazy" + kind)(momentum=0.3).double()
        before = (repr(m), m.has_uninitialized_params(),
                  [type(p).__name__ for p in m.parameters()],
                  [type(b).__name__ for b in m.buffers()])
        x = _x(L, 5, *shape)
        out = m(x)
        (out * _x(L, 6, *shape, rg=False)).sum().backward()
        m2 = getattr(L.nn, "Lazy" + kind)(affine=False, track_running_stats=False)
        out2 = m2(_x(L, 7, *shape, dtype="float32"))
        return (before, repr(m), type(m).__name__, out, x.grad, m.weight.grad, m.bias.grad,
                {k: v for k, v in m.state_dict().items()}, repr(m2), out2,
                sorted(m2.state_dict()))
    same(f)


def test_lazy_norm_loads_a_state_dict():
    def f(L):
        src = L.nn.BatchNorm2d(3)
        src.running_mean.fill_(0.5)
        m = L.nn.LazyBatchNorm2d()
        m.load_state_dict(src.state_dict())
        return (m.weight.shape, m.running_mean, type(m).__name__,
                m(L.ones(2, 3, 2, 2)).shape, type(m).__name__)
    same(f)


@pytest.mark.slow  # (seconds in the fast tier)
def test_conv_tbc_matches_torch():
    def f(L):
        res = []
        for pad, shapes in ((1, ((5, 2, 3), (3, 3, 4), (4,))), (0, ((4, 1, 2), (2, 2, 3), (3,))),
                            (-1, ((6, 2, 2), (2, 2, 2), (2,)))):
            x, w, b = (_x(L, 10 + i, *s) for i, s in enumerate(shapes))
            y = L.conv_tbc(x, w, b, pad)
            v = _x(L, 20, *y.shape)
            gs = L.autograd.grad(y, (x, w, b), v, create_graph=True)
            gg = L.autograd.grad(sum((g * g).sum() for g in gs), (x, w, v))
            res.append((y, _walk(y.grad_fn), gs, gg, L.nn.functional.conv_tbc(
                x.detach().float(), w.detach().float(), b.detach().float(), pad)))
        return res
    same(f)


TBC_ERRORS = [
    (lambda L: L.conv_tbc(L.ones(5, 2), L.ones(3, 3, 4), L.ones(4)), "Input must have 3 dims"),
    (lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(3, 4), L.ones(4)), "Weight tensor must have"),
    (lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(3, 3, 4), L.ones(4, 1)), "Bias must be 1-D"),
    (lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(3, 2, 4), L.ones(4)), "Input dim 2"),
    (lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(3, 3, 4), L.ones(5)), "Bias size must"),
    (lambda L: L.conv_tbc(L.ones(5, 2, 3).double(), L.ones(3, 3, 4), L.ones(4)),
     "must have the same dtype"),
    (lambda L: L.conv_tbc(L.ones(5, 2, 3, dtype=L.complex64, requires_grad=True),
                          L.ones(3, 3, 4, dtype=L.complex64), L.ones(4, dtype=L.complex64)),
     "does not support automatic differentiation"),
]


@pytest.mark.parametrize("k", range(len(TBC_ERRORS)))
def test_conv_tbc_errors(k):
    fn, phrase = TBC_ERRORS[k]
    same_error(fn, phrase)


# ---- losses, containers ------------------------------------------------------------------------
@pytest.mark.slow  # (seconds in the fast tier)
def test_adaptive_log_softmax_matches_torch():
    def f(L):
        m = copy_weights(L, L.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0,
                                                            head_bias=True), 2,
                         dtype="float64").double()
        x = _x(L, 3, 7, 8)
        t = L.tensor([0, 4, 11, 2, 5, 9, 8])
        out = m(x, t)
        graph = _walk(out.loss.grad_fn)
        out.loss.backward()
        grads = {k: p.grad for k, p in m.named_parameters()}
        return (repr(m), type(out).__name__, out._fields, out.output, out.loss, graph, grads,
                x.grad, m.log_prob(x.detach()), m.predict(x.detach()),
                m.predict(_x(L, 9, 5, 8, rg=False) * 10))
    same(f)


def test_adaptive_log_softmax_unbatched():
    """One target: nonzero().squeeze() gives a 0-d index to index_copy_ / index_fill_."""
    def f(L):
        m = copy_weights(L, L.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7]), 2,
                         dtype="float64").double()
        x = _x(L, 4, 8)
        out = m(x, L.tensor(5))
        out.loss.backward()
        return tuple(out), x.grad
    same(f)


ASM_ERRORS = [
    (lambda L, m: m(L.ones(3, 8), L.tensor([0, 1])), "same size in the batch dimension"),
    (lambda L, m: m(L.ones(3, 8), L.tensor([0, 1, 12])), "Target values should be in"),
    (lambda L, m: m(L.ones(1), L.tensor([0])), "1D target tensor expects 2D input"),
    (lambda L, m: m(L.ones(2, 8), L.tensor(0)), "0D target tensor expects 1D input"),
    (lambda L, m: m(L.ones(2, 8), L.tensor([[0]])), "multi-target not supported"),
]


@pytest.mark.parametrize("k", range(len(ASM_ERRORS)))
def test_adaptive_log_softmax_errors(k):
    fn, phrase = ASM_ERRORS[k]
    same_error(lambda L: fn(L, L.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7])), phrase)


def test_adaptive_log_softmax_constructor_errors():
    for cutoffs in ([], [3, 3], [7, 3], [0, 5], [3, 12], [2.5]):
        same_error(lambda L, c=cutoffs: L.nn.AdaptiveLogSoftmaxWithLoss(8, 12, c),
                   "cutoffs should be", ValueError)


LCE_CASES = {
    "indices": (dict(), (4,), "long", {}),
    "unbatched, bias, sum": (dict(bias=True, reduction="sum"), (), "long", {}),
    "out_features, weight, ignore_index": (
        dict(out_features=(2, 3), weight=True, ignore_index=1, reduction="none"), (4,), "long",
        {}),
    "probabilities, label_smoothing": (dict(label_smoothing=0.2, bias=True), (4,), "prob", {}),
    "options fall back (label_smoothing)": (dict(label_smoothing=0.1, options=True), (4,),
                                            "long", {}),
}


@pytest.mark.parametrize("kind", sorted(LCE_CASES))
def test_linear_cross_entropy_matches_torch(kind):
    kw, batch, target_kind, _ = LCE_CASES[kind]

    def f(L, log):
        args = dict(kw)
        if args.pop("weight", False):
            args["weight"] = L.tensor([1.0, 0.5, 2.0, 1.5, 0.25], dtype=L.float64)
        if args.pop("options", False):
            args["options"] = L.nn.LinearCrossEntropyOptions()
        m = copy_weights(L, L.nn.LinearCrossEntropyLoss(6, 5, dtype=L.float64, **args), 4,
                         dtype="float64")
        x = _x(L, 5, *batch, 6)
        out_shape = batch + tuple(args.get("out_features", ()))
        if target_kind == "long":
            t = L.tensor(np.random.default_rng(1).integers(0, 5, out_shape))
        else:
            t = L.tensor(np.random.default_rng(1).dirichlet(np.ones(5), batch)).double()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = m(x, t)
        log.append([str(x.message) for x in w])
        log.append(repr(m))
        log.append(loss)
        log.append(_walk(loss.grad_fn))
        (loss * _x(L, 6, *loss.shape, rg=False)).sum().backward()
        log.append(x.grad)
        log.append({k: p.grad for k, p in m.named_parameters()})
    same(f)


def test_linear_cross_entropy_chunked_path_is_refused():
    """options on a configuration torch chunks: NotImplementedError (torch's option checks
    first, then the refusal); the functional form alike."""
    opts = eg.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    m = eg.nn.LinearCrossEntropyLoss(4, 3, options=opts)
    with pytest.raises(NotImplementedError, match="chunked path"):
        m(eg.ones(5, 4), eg.tensor([0, 1, 2, 0, 1]))
    with pytest.raises(NotImplementedError, match="chunked path"):
        eg.nn.functional.linear_cross_entropy(eg.ones(4), eg.ones(3, 4), eg.tensor(1),
                                              options=eg.nn.LinearCrossEntropyOptions())
    bad = eg.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")
    with pytest.raises(ValueError, match="give different chunk sizes"):
        eg.nn.functional.linear_cross_entropy(eg.ones(8, 4), eg.ones(3, 4), eg.zeros(8).long(),
                                              options=bad)


LCE_ERRORS = [
    (lambda L, F: F.linear_cross_entropy(L.ones(2, 3, 4), L.ones(3, 4), L.zeros(2).long()),
     "dimensionality 1 or 2", RuntimeError),
    (lambda L, F: F.linear_cross_entropy(L.ones(2, 4), L.ones(4), L.zeros(2).long()),
     "linear_weight with dimensionality at least 2", RuntimeError),
    (lambda L, F: F.linear_cross_entropy(L.ones(2, 4), L.ones(3, 5), L.zeros(2).long()),
     "expected equal input and linear_weight last dimensions", RuntimeError),
    (lambda L, F: F.linear_cross_entropy(L.ones(2, 4), L.ones(3, 4), L.zeros(2).long(),
                                         linear_bias=L.ones(2)),
     "expected linear_bias shape", RuntimeError),
    (lambda L, F: F.linear_cross_entropy(L.ones(4), L.ones(3, 2, 4), L.zeros(2).long()),
     "requires batched input", RuntimeError),
    (lambda L, F: F.linear_cross_entropy(L.ones(2, 4), L.ones(3, 4), L.ones(2, 3),
                                         ignore_index=1),
     "ignore_index cannot be specified", RuntimeError),
    (lambda L, F: L.nn.LinearCrossEntropyLoss(4, 3, weight=L.ones(2)),
     "expected weight shape", RuntimeError),
    (lambda L, F: L.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5),
     "label_smoothing to be in range", RuntimeError),
    (lambda L, F: L.nn.LinearCrossEntropyOptions(chunking_method="aspect"),
     "invalid chunking_method", ValueError),
    (lambda L, F: L.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
     "batch_chunk_size must be positive", ValueError),
    (lambda L, F: L.nn.LinearCrossEntropyOptions(acc_dtype=L.int64), "acc_dtype must be one of",
     ValueError),
]


@pytest.mark.parametrize("k", range(len(LCE_ERRORS)))
def test_linear_cross_entropy_errors(k):
    fn, phrase, exc = LCE_ERRORS[k]
    same_error(lambda L: fn(L, L.nn.functional), phrase, exc)


def test_deprecated_nll_loss2d_and_container_warn_as_torch():
    def f(L, log):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = L.nn.NLLLoss2d(weight=L.tensor([1.0, 2.0, 0.5]), ignore_index=1)
            c = L.nn.Container(a=L.nn.ReLU(), b=L.nn.Tanh())
        log.append([(x.category.__name__, str(x.message)) for x in w])
        log.append((repr(m), repr(c), isinstance(m, L.nn.NLLLoss), list(c._modules)))
        x = L.tensor(arrays(1, (2, 3, 2, 2))[0], requires_grad=True)
        t = L.tensor([[[0, 2], [1, 0]], [[2, 2], [0, 1]]])
        loss = m(x, t)
        loss.backward()
        log.append((loss, loss.grad_fn.name(), x.grad))
    same(f)


def test_functional_names_torch_exposes():
    F, G = eg.nn.functional, torch.nn.functional
    assert F.Tensor is eg.Tensor
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == G.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == G.GRID_SAMPLE_PADDING_MODES
    for k in (1, 2, 3):
        lst = getattr(F, f"BroadcastingList{k}")
        assert lst[int] is None and getattr(G, f"BroadcastingList{k}")[int] is None
    assert F.channel_shuffle is eg.channel_shuffle and F.conv_tbc is eg.conv_tbc
    for name in ("has_torch_function", "handle_torch_function"):
        # (torch.overrides' helpers: eagergrad's own functions never dispatch through them)
        assert getattr(F, name) is getattr(eg.overrides, name)


@pytest.mark.parametrize("name", [
    "MaxPool3d", "AvgPool3d", "AdaptiveMaxPool3d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d",
    "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
    "FractionalMaxPool3d", "LocalResponseNorm", "CrossMapLRN2d", "ChannelShuffle",
    "ConvTranspose3d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "AdaptiveLogSoftmaxWithLoss", "NLLLoss2d", "LinearCrossEntropyLoss",
    "LinearCrossEntropyOptions", "Container"])
def test_new_layers_live_in_torchs_modules(name):
    assert getattr(eg.nn, name).__module__ == \
        getattr(torch.nn, name).__module__.replace("torch.", "eagergrad.")
    assert name in eg.nn.modules.__all__ and name in eg.nn.__all__
