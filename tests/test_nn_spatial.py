"""Spatial layers and functionals against real torch: padding modules and F.pad's modes,
Conv padding_mode, Upsample / F.interpolate, adaptive max pooling, EmbeddingBag,
Fold / Unfold / PixelShuffle, grid_sample / affine_grid. The same weights (copied from
numpy through load_state_dict), the same inputs; outputs, the whole grad_fn graph with
every node's _saved_* values, gradients, reprs and errors."""
import functools
import warnings

import pytest
from _nn_helpers import arrays, copy_weights, saved, walk
from conftest import same, same_error

# attributes eagergrad's existing nodes show beyond torch's (not this slice's ops)
_EXTRA = {"_saved_dtype", ("AddBackward1", "_saved_other")}


_saved = functools.partial(saved, extra=_EXTRA)
_walk = functools.partial(walk, extra=_EXTRA)


def _step(L, m, x, *args):
    """Output, its graph, parameter grads and the input's grad after a weighted sum."""
    out = m(x, *args)
    graph = _walk(out.grad_fn)
    v = L.tensor(arrays(99, tuple(out.shape), dtype=str(out.dtype).split(".")[-1])[0])
    (out * v).sum().backward()
    return out, graph, {k: p.grad for k, p in m.named_parameters()}, x.grad


def _x(L, seed, *shape, dtype="float32"):
    return L.tensor(arrays(seed, shape, dtype=dtype)[0], requires_grad=True)


# ---- padding ------------------------------------------------------------------------------
PADS = {
    "ZeroPad1d": ((1, 2), (2, 3, 4)), "ZeroPad2d": (1, (1, 2, 3, 3)),
    "ZeroPad3d": ((1, 0, 0, 1, 1, 0), (1, 2, 2, 2)),
    "ConstantPad1d": (((2, 1), 0.5), (2, 3, 4)), "ConstantPad2d": ((1, 2), (2, 2, 3)),
    "ConstantPad3d": ((1, -2.0), (1, 1, 2, 2, 3)),
    "ReflectionPad1d": ((2, 1), (2, 3, 4)), "ReflectionPad2d": (1, (1, 2, 3, 3)),
    "ReflectionPad3d": ((1, 0, 1, 1, 0, 1), (1, 2, 2, 3)),
    "ReplicationPad1d": (3, (3, 4)), "ReplicationPad2d": ((1, 2, 0, 3), (2, 1, 2, 3)),
    "ReplicationPad3d": (1, (1, 1, 2, 2, 2)),
    "CircularPad1d": ((1, 2), (2, 2, 3)), "CircularPad2d": ((1, 0, 2, 1), (1, 2, 3, 3)),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("group", ["Zero", "Constant", "Reflection", "Replication",
                                   "Circular"])
def test_padding_modules_match_torch(group):
    def f(L):
        res = []
        for i, (name, (args, shape)) in enumerate(sorted(PADS.items())):
            if not name.startswith(group):
                continue
            m = getattr(L.nn, name)(*args) if isinstance(args, tuple) and \
                name.startswith("Constant") else getattr(L.nn, name)(args)
            res.append((repr(m), m.padding, getattr(m, "value", None),
                        _step(L, m, _x(L, i, *shape))))
        return res
    same(f)


def test_pad_modes_float64_complex_and_double_backward():
    def f(L):
        res = []
        for i, (mode, p, shape) in enumerate((
                ("reflect", (2, -1), (2, 4)), ("replicate", (1, 2, 0, 1), (1, 2, 3)),
                ("reflect", (1, 1, 2, 0, 1, 1), (1, 1, 2, 3, 2)))):
            x = _x(L, 10 + i, *shape, dtype="float64")
            y = L.nn.functional.pad(x, p, mode=mode)
            v = _x(L, 30 + i, *y.shape, dtype="float64")
            g, = L.autograd.grad(y, x, v, create_graph=True)
            gg, = L.autograd.grad((g * g).sum(), v)
            res.append((y, _walk(y.grad_fn), g, _walk(g.grad_fn), gg))
        z = L.tensor(arrays(3, (2, 4))[0] + 1j * arrays(4, (2, 4))[0],
                     requires_grad=True)
        y = L.nn.functional.pad(z, (1, 2), mode="reflect")
        y.abs().sum().backward()
        res.append((y, z.grad))
        return res
    same(f)


CONVS = {
    "Conv2d reflect": lambda L: L.nn.Conv2d(2, 3, (2, 3), padding=(1, 2), stride=2,
                                            padding_mode="reflect"),
    "Conv1d circular": lambda L: L.nn.Conv1d(2, 2, 3, padding=2, stride=2,
                                             padding_mode="circular"),
    "Conv2d replicate same": lambda L: L.nn.Conv2d(1, 2, (2, 3), padding="same",
                                                   padding_mode="replicate", bias=False),
    "Conv3d reflect": lambda L: L.nn.Conv3d(1, 2, 2, padding=1, padding_mode="reflect"),
}
_CONV_SHAPES = {"Conv1d": (2, 2, 4), "Conv2d": (1, 2, 4, 5), "Conv3d": (1, 1, 3, 3, 3)}


@pytest.mark.parametrize("kind", sorted(CONVS))
def test_conv_padding_mode_matches_torch(kind):
    def f(L):
        m = copy_weights(L, CONVS[kind](L), 1)
        x = _x(L, 2, *_CONV_SHAPES[kind.split()[0]])
        return _step(L, m, x), repr(m), m._reversed_padding_repeated_twice
    same(f)


def test_pad_errors():
    def pad(shape, p, mode="constant", value=None):
        return lambda L: L.nn.functional.pad(L.ones(shape), p, mode=mode, value=value)
    same_error(pad((1, 2, 5), (5, 1), "reflect"), "Padding size should be less than")
    same_error(pad((1, 2, 4, 4), (1, 1, 4, 1), "reflect"), "at dimension 2 of input")
    same_error(pad((1, 2, 3, 4, 4), (1, 1, 1, 1, 3, 1), "reflect"), "Argument #8")
    same_error(pad((1, 2, 5), (1,), "reflect"), "Padding length must be divisible by 2")
    same_error(pad((1, 2, 5), (1,) * 8, "replicate"), "Padding length should be less")
    same_error(pad((1, 2, 5), (1,) * 6, "reflect"), "is not supported for 3D input",
               NotImplementedError)
    same_error(pad((5,), (1, 1), "circular"), "not supported for 1D", NotImplementedError)
    same_error(pad((1, 2, 5), (1, 1), "reflect", 1.0), "doesn't take in value argument")
    same_error(pad((1, 2, 5), (1, 1), "bogus"), "Unrecognised padding mode bogus",
               NotImplementedError)
    same_error(pad((1, 2, 5), (6, 2), "circular"), "wrapping around more than once")
    same_error(pad((1, 2, 4), (-3, -2), "circular"), "resulting in an empty dimension")
    same_error(pad((1, 2, 0), (1, 1), "reflect"), "Expected 2D or 3D (batch mode) tensor")
    same_error(pad((1, 2, 4, 0), (1, 1, 1, 1), "replicate"), "Expected 3D or 4D")
    same_error(pad((1, 2, 5), (-3, -3), "replicate"), "input (W: 5) is too small")
    same_error(pad((1, 2, 4, 4), (-3, -3, 1, 1), "replicate"),
               "Trying to create tensor with negative dimension")
    same_error(pad((1, 2, 5), (1.5, 1)), "must be tuple of ints", TypeError)
    same_error(lambda L: L.nn.CircularPad2d(1)(L.ones(2, 3)), "expected 3D or 4D input",
               ValueError)


# ---- upsampling ---------------------------------------------------------------------------
UPSAMPLES = {
    "nearest scale": (lambda L: L.nn.Upsample(scale_factor=2), (1, 2, 2, 3)),
    "nearest-exact 3-d": (lambda L: L.nn.Upsample(scale_factor=(1.5, 2, 0.5),
                                                  mode="nearest-exact"), (1, 1, 2, 2, 4)),
    "bilinear": (lambda L: L.nn.Upsample(size=(3, 5), mode="bilinear"), (1, 2, 2, 3)),
    "bilinear align_corners": (lambda L: L.nn.Upsample(scale_factor=1.5, mode="bilinear",
                                                       align_corners=True), (2, 1, 3, 3)),
    "bicubic recompute": (lambda L: L.nn.Upsample(scale_factor=1.7, mode="bicubic",
                                                  recompute_scale_factor=True), (1, 1, 3, 3)),
    "trilinear": (lambda L: L.nn.Upsample(size=(2, 3, 3), mode="trilinear"), (1, 1, 2, 2, 2)),
    "linear": (lambda L: L.nn.Upsample(scale_factor=2.5, mode="linear"), (1, 2, 3)),
    "area": (lambda L: L.nn.Upsample(size=(2, 2), mode="area"), (1, 2, 3, 4)),
    "UpsamplingBilinear2d": (lambda L: L.nn.UpsamplingBilinear2d(size=(3, 4)), (1, 2, 2, 2)),
}


@pytest.mark.slow
def test_upsample_modules_match_torch():
    def f(L):
        res = []
        for i, (name, (make, shape)) in enumerate(sorted(UPSAMPLES.items())):
            m = make(L)
            res.append((name, repr(m), m.scale_factor, m.size, m.mode, m.align_corners,
                        _step(L, m, _x(L, i, *shape))))
        m = L.nn.UpsamplingNearest2d(scale_factor=3)
        res.append((repr(m), m.name, L.nn.Upsample(size=5).extra_repr()))
        return res
    same(f)


def test_interpolate_double_backward_float64():
    def f(L):
        res = []
        for i, (mode, shape, kw) in enumerate((
                ("bilinear", (1, 2, 3, 3), {"scale_factor": (1.3, 2.0)}),
                ("bicubic", (1, 1, 2, 3), {"scale_factor": (1.3, 1.2)}),
                ("nearest", (1, 2, 3), {"scale_factor": 0.6}),
                ("trilinear", (1, 1, 2, 3, 2), {"scale_factor": (1.3, 2, 1.5),
                                                    "align_corners": True}))):
            x = _x(L, 20 + i, *shape, dtype="float64")
            y = L.nn.functional.interpolate(x, mode=mode, **kw)
            v = _x(L, 30 + i, *y.shape, dtype="float64")
            g, = L.autograd.grad(y, x, v, create_graph=True)
            graph = _walk(g.grad_fn)
            gg, = L.autograd.grad((g * g).sum(), v)
            res.append((y, _walk(y.grad_fn), g, graph, gg))
        return res
    same(f)


def test_interpolate_errors_and_warnings():
    def interp(shape, dtype=None, **kw):
        return lambda L: L.nn.functional.interpolate(
            L.ones(shape, dtype=dtype and getattr(L, dtype)), **kw)
    same_error(interp((1, 2, 3), size=4, align_corners=True), "align_corners option",
               ValueError)
    same_error(interp((1, 2, 3), size=4, scale_factor=2), "only one of size", ValueError)
    same_error(interp((1, 2, 3)), "either size or scale_factor", ValueError)
    same_error(interp((1, 2, 3), size=(4, 4)), "same number of spatial dimensions",
               ValueError)
    same_error(interp((1, 2, 3), scale_factor=(2, 2)), "same number of spatial dimensions",
               ValueError)
    same_error(interp((1, 2, 3), size=(2.0,)), "expected size to be one of int", TypeError)
    same_error(interp((1, 2, 3), size=4, recompute_scale_factor=True),
               "recompute_scale_factor is not meaningful", ValueError)
    same_error(interp((1, 2, 3), size=4, mode="bilinear"), "Got 3D input, but bilinear",
               NotImplementedError)
    same_error(interp((2, 3), size=4), "Only 3D, 4D and 5D input", NotImplementedError)
    same_error(interp((1, 2, 3), size=4, mode="bilinear", antialias=True), "Anti-alias",
               ValueError)
    same_error(interp((1, 2, 0, 5), size=(3, 4)), "Input and output sizes should be greater")
    same_error(interp((1, 2, 3), scale_factor=0.1, mode="linear"),
               "input (W: 3) and output (W: 0)")
    same_error(interp((1, 2, 3, 3), "int64", scale_factor=2), "not implemented for 'Long'",
               NotImplementedError)
    same_error(interp((1, 2, 3, 3), "complex64", scale_factor=2, mode="bilinear"),
               "upsample_bilinear2d_channels_last", NotImplementedError)

    def f(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = L.ones(1, 1, 2, 2)
            out = [L.nn.functional.upsample(x, scale_factor=2),
                   L.nn.functional.upsample_nearest(x, 3),
                   L.nn.functional.upsample_bilinear(x, size=(3, 3))]
        return out, [str(x.message) for x in w]
    same(f)


# ---- adaptive max pooling -------------------------------------------------------------------
def test_adaptive_max_pool_modules_match_torch():
    def f(L):
        res = []
        for i, (m, shape) in enumerate((
                (L.nn.AdaptiveMaxPool2d((2, None)), (1, 2, 5, 3)),
                (L.nn.AdaptiveMaxPool2d(3, return_indices=True), (2, 4, 5)),
                (L.nn.AdaptiveMaxPool1d(2, return_indices=True), (2, 2, 5)))):
            x = _x(L, 40 + i, *shape)
            out = m(x)
            y, ind = out if isinstance(out, tuple) else (out, None)
            v = L.tensor(arrays(7, tuple(y.shape))[0])
            (y * v).sum().backward()
            res.append((repr(m), y, ind, _walk(y.grad_fn), x.grad))
        return res
    same(f)


def test_adaptive_max_pool_errors():
    same_error(lambda L: L.nn.functional.adaptive_max_pool2d(L.randn(2, 5), 2),
               "Expected 3D or 4D tensor")
    same_error(lambda L: L.nn.functional.adaptive_max_pool2d(L.randn(1, 0, 5, 7), 2),
               "dimension 1 being empty")
    same_error(lambda L: L.nn.functional.adaptive_max_pool2d(L.randn(1, 2, 5, 7), (2, 2, 2)),
               "output_size.size() must be 2")
    same_error(lambda L: L.nn.functional.adaptive_max_pool2d(L.randn(2, 5), (2, 2, 2)),
               "Input dimension should be at least", ValueError)
    same_error(lambda L: L.nn.functional.adaptive_max_pool2d(
        L.ones(1, 2, 5, 7, dtype=L.int64), 2), "not implemented for 'Long'",
        NotImplementedError)
    same_error(lambda L: L.nn.functional.adaptive_max_pool1d(L.randn(5), 2),
               "Expected 2 to 3 dimensions")
    same_error(lambda L: L.nn.functional.adaptive_max_pool1d(L.randn(2, 5), (2, 2)),
               "should contain one int")


# ---- EmbeddingBag ---------------------------------------------------------------------------
BAGS = {
    "mean": ({}, False), "sum padding_idx": ({"mode": "sum", "padding_idx": -2}, False),
    "max include_last_offset": ({"mode": "max", "include_last_offset": True}, False),
    "sum per_sample_weights": ({"mode": "sum"}, True),
    "mean max_norm": ({"max_norm": 0.5}, False),
    # torch's CPU kernel divides the k-th distinct index by the count of sorted index k
    "sum scale_grad_by_freq": ({"mode": "sum", "scale_grad_by_freq": True}, False),
}


def test_embedding_bag_matches_torch():
    def f(L):
        res = []
        for k, (kw, psw) in sorted(BAGS.items()):
            m = copy_weights(L, L.nn.EmbeddingBag(6, 3, **kw), 3)
            i = L.tensor([0, 2, 5, 5, 1, 2, 2, 4])
            offsets = L.tensor([0, 3, 3, 8] if kw.get("include_last_offset") else [0, 3, 3])
            p = _x(L, 5, 8) if psw else None
            out = m(i, offsets, p)
            v = L.tensor(arrays(4, tuple(out.shape))[0])
            (out * v).sum().backward()
            res.append((k, repr(m), out, _walk(out.grad_fn), m.weight.grad,
                        p.grad if psw else None, m.weight.detach()))
        m = L.nn.EmbeddingBag.from_pretrained(L.tensor(arrays(6, (4, 2))[0]), mode="max")
        res.append((repr(m), m.weight.requires_grad, m(L.tensor([[0, 3], [2, 2]]))))
        return res
    same(f)


def test_embedding_bag_errors():
    E = lambda *a, **k: lambda L: L.nn.functional.embedding_bag(
        *[x(L) if callable(x) else x for x in a],
        **{n: x(L) if callable(x) else x for n, x in k.items()})
    i, w = (lambda L: L.tensor([1, 2, 4])), (lambda L: L.randn(6, 3))
    same_error(E(i, w, lambda L: L.tensor([1, 2])), "offsets[0] has to be 0")
    same_error(E(i, w, lambda L: L.tensor([0, 4])), "offsets[-1] can not be greater")
    same_error(E(lambda L: L.tensor([1, 9]), w, lambda L: L.tensor([0])),
               "Index 1 of input takes value 9")
    same_error(E(lambda L: L.tensor([1, 9]), w, lambda L: L.tensor([0]), mode="max"),
               "Expected idx >= 0 && idx < num_embeddings")
    same_error(E(i, w, lambda L: L.tensor([0]), padding_idx=7), "padding_idx must be within")
    same_error(E(lambda L: L.tensor([1.0]), w, lambda L: L.tensor([0])),
               "Expected tensor for argument #1 'indices'")
    same_error(E(i, w, lambda L: L.tensor([0]), mode="max",
                 per_sample_weights=lambda L: L.ones(3)), "only supported for mode='sum'",
               NotImplementedError)
    same_error(E(i, w), "offsets has to be a 1D Tensor but got None", ValueError)
    same_error(E(lambda L: L.tensor([[1, 2]]), w, lambda L: L.tensor([0])),
               "if input is 2D, then offsets has to be None", ValueError)
    same_error(E(i, w, lambda L: L.tensor([0]), mode="bogus"), "mode has to be one of",
               ValueError)
    same_error(E(i, lambda L: L.randn(6), lambda L: L.tensor([0])), "weight has to be a 2D",
               ValueError)
    same_error(lambda L: L.nn.EmbeddingBag(3, 2, padding_idx=3), "padding_idx must be within",
               AssertionError)

    def f(L):  # torch's embedding_bag backward has no derivative
        w = L.randn(6, 3, requires_grad=True)
        y = L.nn.functional.embedding_bag(L.tensor([[1, 2]]), w)
        g, = L.autograd.grad((y * y).sum(), w, create_graph=True)
        return g.grad_fn.name(), L.autograd.grad(g.sum(), w)
    same_error(f, "the derivative for '_embedding_bag_backward' is not implemented",
               NotImplementedError)


# ---- Fold / Unfold / PixelShuffle -----------------------------------------------------------
def test_fold_unfold_pixel_shuffle_modules_match_torch():
    def f(L):
        res = []
        for i, (m, shape) in enumerate((
                (L.nn.Unfold((2, 3), padding=1, stride=(1, 2)), (2, 2, 3, 4)),
                (L.nn.Fold((3, 4), 2, dilation=(1, 2)), (1, 8, 2)),
                (L.nn.PixelShuffle(2), (1, 4, 2, 3)),
                (L.nn.PixelUnshuffle(2), (3, 2, 4)))):
            res.append((repr(m), _step(L, m, _x(L, 50 + i, *shape))))
        return res
    same(f)


def test_fold_unfold_pixel_shuffle_errors():
    F = lambda name, shape, *a: lambda L: getattr(L.nn.functional, name)(
        L.ones(shape), *a)
    same_error(F("fold", (1, 11, 15), (4, 5), (2, 3), 1, 1, (1, 2)),
               "divisible by the product of kernel_size")
    same_error(F("fold", (1, 12, 6), (4, 5), (2, 3), 1, 1, (1, 2)),
               "calculated number of sliding blocks 5 * 3 = 15")
    same_error(F("fold", (2, 1, 3, 3), (2, 3), 1), "Expected 2D or 3D (batch mode) tensor")
    same_error(F("unfold", (1, 2, 1, 1), (2, 3)), "calculated shape of the array of sliding")
    same_error(F("pixel_shuffle", (1, 7, 2, 3), 2), "is not divisible by 4")
    same_error(F("pixel_shuffle", (7, 2), 2), "at least 3 dimensions")
    same_error(F("pixel_unshuffle", (1, 2, 3, 4), 2), "expects height to be divisible")


@pytest.mark.slow
# ---- grid_sample / affine_grid --------------------------------------------------------------
def test_affine_grid_then_grid_sample_matches_torch():
    def f(L):
        res = []
        theta = _x(L, 60, 2, 2, 3)
        x = _x(L, 61, 2, 2, 3, 4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            grid = L.nn.functional.affine_grid(theta, (2, 2, 2, 3))
            out = L.nn.functional.grid_sample(x, grid, padding_mode="border")
        res.append([str(m.message) for m in w])
        out2 = L.nn.functional.grid_sample(x, grid, mode="nearest", align_corners=True)
        ((out * out).sum() + out2.sum()).backward()
        res += [out, out2, _walk(out.grad_fn), _walk(out2.grad_fn), theta.grad, x.grad]
        return res
    same(f)


def test_grid_sample_affine_grid_errors():
    G = lambda xs, gs, **k: lambda L: L.nn.functional.grid_sample(
        L.ones(xs), L.zeros(gs), align_corners=False, **k)
    same_error(G((1, 1, 2, 2), (1, 1, 1, 2), mode="bogus"), "expected mode to be", ValueError)
    same_error(G((1, 1, 2, 2), (1, 1, 1, 2), padding_mode="bogus"),
               "expected padding_mode to be", ValueError)
    same_error(G((1, 1, 2, 2), (1, 1, 1, 3)), "expected grid to have size 2 in last dimension")
    same_error(G((1, 1, 2, 2), (2, 1, 1, 2)), "to have same batch size")
    same_error(G((1, 1, 2, 2), (1, 1, 2)), "expected 4D input and grid")
    same_error(G((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), mode="bicubic"),
               "bicubic interpolation only supports 4D input")
    same_error(G((1, 1, 2, 2, 2), (1, 1, 1, 1, 2)), "expected grid to have size 3")
    S3 = lambda xs, gs, *a, gdt=None: lambda L: L.grid_sampler_3d(
        L.ones(xs), L.zeros(gs, dtype=gdt and getattr(L, gdt)), *a)
    same_error(S3((1, 1, 0, 2, 2), (1, 1, 1, 1, 3), 0, 0, False),
               "with dimension 2 being empty")
    same_error(S3((1, 1, 2, 2), (1, 1, 1, 2), 0, 0, False), "expected 5D input and grid")
    same_error(S3((2, 1, 2, 2, 2), (1, 1, 1, 1, 3), 0, 0, False), "same batch size")
    same_error(S3((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), 2, 0, False), "bicubic interpolation")
    same_error(S3((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), 0, 0, False, gdt="float64"),
               "expected scalar type Float but found Double")
    A = lambda t, size: lambda L: L.nn.functional.affine_grid(
        t(L), size, align_corners=False)
    same_error(A(lambda L: L.ones(1, 2, 3, dtype=L.int64), (1, 1, 2, 2)),
               "Expected theta to have floating point type", ValueError)
    same_error(A(lambda L: L.ones(1, 3, 3), (1, 1, 2, 2)), "Nx2x3", ValueError)
    same_error(A(lambda L: L.ones(1, 2, 3), (1, 2, 2)), "only supports 4D and 5D sizes",
               NotImplementedError)
    same_error(A(lambda L: L.ones(1, 2, 3), (1, 1, 0, 2)), "non-zero, positive output size",
               ValueError)
