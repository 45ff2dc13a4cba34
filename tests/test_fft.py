"""torch.fft against real torch: every public function over the norms, n / s / dim
variants, real and complex inputs in single and double precision (values, dtypes, the
whole graph, the result's strides, gradients, or torch's error), the graphs with their
saved values, second-order gradients, gradcheck / gradgradcheck in float64, forward AD and
torch.func, the dtype rules, torch's errors, fftfreq / rfftfreq and fftshift / ifftshift."""
import numpy as np
import pytest
import torch
from _nn_helpers import walk
from conftest import msg, same, same_error

import eagergrad as eg

ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2",
       "ihfft2", "hfftn", "ihfftn")
ONE_D_ARGS = [{}, {"n": 3}, {"n": 9}, {"dim": 0, "norm": "ortho"},
              {"dim": -2, "n": 4, "norm": "forward"}, {"norm": "backward"}]
N_D_ARGS = [{}, {"s": (3, 6)}, {"dim": (0, 2), "norm": "ortho"},
            {"dim": (2, 0), "s": (4, -1), "norm": "forward"}, {"dim": (1,)}, {"dim": -1},
            {"s": (2, 3, 5), "norm": "backward"}]
DTYPES = ("float64", "complex128", "float32", "complex64")


def _array(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if "complex" in dtype:
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a).astype(dtype)


def _name(dtype):
    return str(dtype).split(".")[-1]


def _graph(fn):
    """The whole graph below fn as nested (name, (children...)) tuples."""
    if fn is None:
        return None
    return (type(fn).__name__, tuple(_graph(n) for n, _ in fn.next_functions))


def _np(t):
    return np.asarray(t.detach().resolve_conj().numpy())


def _layout(t):
    """What torch shows of a result's memory (the gradients' layouts are not compared:
    eagergrad's are contiguous)."""
    return t._is_view(), t.is_conj(), t.is_contiguous(), tuple(t.stride()), t.storage_offset()


def _tol(dtype):
    return (1e-10, 1e-10) if dtype in ("float64", "complex128") else (1e-4, 1e-4)


# ---- every transform, against torch ---------------------------------------------------------
def _transform(L, name, kw, dtype, shape=(3, 4, 5)):
    x = L.tensor(_array(dtype, shape, 0), requires_grad=True)
    out = getattr(L.fft, name)(x, **kw)
    v = L.tensor(_array(_name(out.dtype), tuple(out.shape), 1))
    (g,) = L.autograd.grad(out, x, v)
    return out, g


def _cases():
    out = []
    for names, variants in ((ONE_D, ONE_D_ARGS), (N_D, N_D_ARGS)):
        for name in names:
            for i, kw in enumerate(variants):
                for dtype in DTYPES:
                    fast = i == 0 and dtype in ("float64", "complex128")
                    out.append(pytest.param(name, kw, dtype, id=f"{name}-{kw}-{dtype}",
                                            marks=[] if fast else [pytest.mark.slow]))
    return out


@pytest.mark.parametrize("name,kw,dtype", _cases())
def test_transform(name, kw, dtype):
    """Values, dtype, shape, the whole graph, strides and view-ness of the result, and
    the gradient for seeded grad_outputs; or torch's error, type and message."""
    try:
        t_out, t_g = _transform(torch, name, kw, dtype)
    except Exception as e:  # noqa: BLE001 - eagergrad must raise the same
        with pytest.raises(type(e)) as info:
            _transform(eg, name, kw, dtype)
        assert msg(info.value) == msg(e)
        return
    e_out, e_g = _transform(eg, name, kw, dtype)
    rtol, atol = _tol(dtype)
    assert _name(e_out.dtype) == _name(t_out.dtype)
    assert tuple(e_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(_np(e_out), _np(t_out), rtol=rtol, atol=atol)
    assert _graph(e_out.grad_fn) == _graph(t_out.grad_fn)
    assert _layout(e_out) == _layout(t_out)
    assert _name(e_g.dtype) == _name(t_g.dtype)
    np.testing.assert_allclose(_np(e_g), _np(t_g), rtol=rtol, atol=atol)


# ---- graphs with their saved values, in torch's harness (node by node, then fused) --------
def _x(L, shape, dtype="float64", seed=0, rg=True):
    return L.tensor(_array(dtype, shape, seed), requires_grad=rg)


# eagergrad's FftC2RBackward0 also shows the kernel's last_dim_size (torch's node keeps
# only what the formula needs), and its ToCopyBackward0 the _to_copy op's attributes
_EXTRA = frozenset({("FftC2RBackward0", "_saved_last_dim_size"),
                    ("ToCopyBackward0", "_saved_dtype"), ("ToCopyBackward0", "_saved_device")})
GRAPHS = {
    "rfft": (lambda L, x: L.fft.rfft(x), "float64"),
    "rfft n trims": (lambda L, x: L.fft.rfft(x, n=3, dim=0), "float64"),
    "fft of real, padded": (lambda L, x: L.fft.fft(x, n=7), "float64"),
    "ifft of real": (lambda L, x: L.fft.ifft(x, norm="ortho"), "float64"),
    "fft2 of real": (lambda L, x: L.fft.fft2(x), "float64"),
    "fftn s": (lambda L, x: L.fft.fftn(x, s=(2, 7)), "complex128"),
    "ifftn no dims": (lambda L, x: L.fft.ifftn(x, dim=()), "complex128"),
    "irfft": (lambda L, x: L.fft.irfft(x, n=7), "complex128"),
    "irfftn": (lambda L, x: L.fft.irfftn(x, norm="forward"), "complex128"),
    "hfft of real": (lambda L, x: L.fft.hfft(x), "float64"),
    "hfft2": (lambda L, x: L.fft.hfft2(x, s=(3, 4)), "complex128"),
    "ihfft": (lambda L, x: L.fft.ihfft(x, dim=0), "float64"),
    "ihfft2": (lambda L, x: L.fft.ihfft2(x), "float64"),
    "ihfftn 3 dims": (lambda L, x: L.fft.ihfftn(x, dim=(2, 0, 1)), "float64", (2, 2, 3)),
    "fftshift": (lambda L, x: L.fft.fftshift(x), "float64"),
    "ifftshift dim": (lambda L, x: L.fft.ifftshift(x, dim=1), "complex128"),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_graph_and_saved_values(case):
    fn, dtype, *shape = GRAPHS[case]

    def f(L):
        x = _x(L, shape[0] if shape else (4, 3), dtype)
        out = fn(L, x)
        w = L.tensor(_array(_name(out.dtype), tuple(out.shape), 1))
        return out, _layout(out), walk(out.grad_fn, _EXTRA), L.autograd.grad(out, x, w)
    same(f)


def test_saved_values_are_torchs():
    """_saved_dim, _saved_normalization (ATen's fft_norm_mode: 0 none, 1 by_root_n, 2 by_n),
    _saved_forward / _saved_onesided, and FftR2CBackward0's _saved_self."""
    def f(L):
        x, z = _x(L, (3, 4)), _x(L, (3, 4), "complex128")
        r2c, c2r, c2c = (L.fft.rfft(x, norm="ortho").grad_fn, L.fft.irfft(z, dim=0).grad_fn,
                         L.fft.ifft2(z, norm="forward").grad_fn)
        return ((r2c._saved_dim, r2c._saved_normalization, r2c._saved_onesided,
                 r2c._saved_self), (c2r._saved_dim, c2r._saved_normalization),
                (c2c._saved_dim, c2c._saved_normalization, c2c._saved_forward))
    assert same(f)[1] == ((0,), 2)  # irfft's default norm: 1/n on the inverse


# ---- non-contiguous inputs: the result's layout follows torch's MKL kernels ------------------
LAYOUTS = {
    "fft dim 0 of transposed": lambda L, x: L.fft.fft(x.transpose(0, 2), dim=0),
    "rfftn permuted": lambda L, x: L.fft.rfftn(x.permute(2, 0, 1), dim=(0, 2)),
    "irfftn of a slice": lambda L, x: L.fft.irfftn(x[:, 1:] * 1j, dim=(0, 1)),
    "ifft of real, dim 1": lambda L, x: L.fft.ifft(x, dim=1),
    "hfftn": lambda L, x: L.fft.hfftn(x, dim=(2, 0)),
    "ihfftn": lambda L, x: L.fft.ihfftn(x, dim=(1, 0, 2)),
    "fftn chained": lambda L, x: L.fft.fftn(L.fft.rfft(x, dim=1), dim=(0, 2)),
    "irfft of size-1 dims": lambda L, x: L.fft.irfft(x.reshape(1, 3, 1, 4, 1) + 0j, dim=3),
}


@pytest.mark.parametrize("case", sorted(LAYOUTS))
def test_result_layout(case):
    def f(L):
        x = _x(L, (2, 3, 4))
        out = LAYOUTS[case](L, x)
        return out, _layout(out), L.autograd.grad(out, x, L.ones_like(out))
    same(f)


# ---- second order, gradcheck, forward AD, torch.func -------------------------------------
SECOND = [("fft", {"n": 5}, "float64"), ("ifft", {}, "complex128"),
          ("rfft", {"dim": 0}, "float64"), ("irfft", {"n": 5}, "complex128"),
          ("hfft", {"norm": "ortho"}, "complex128"), ("ihfft", {}, "float64"),
          ("fftn", {"s": (2, 5)}, "complex128"), ("rfft2", {}, "float64"),
          ("irfftn", {"norm": "forward"}, "complex128"), ("hfftn", {}, "float64"),
          ("ihfftn", {"dim": (1, 0)}, "float64"), ("fftshift", {}, "complex128")]


@pytest.mark.fast_first
@pytest.mark.parametrize("name,kw,dtype", SECOND, ids=[f"{n}-{d}" for n, _, d in SECOND])
def test_double_backward(name, kw, dtype):
    """Gradients of the first-order gradients (w.r.t. the input and grad_outputs), so the
    formulas' own nodes run."""
    def f(L):
        x = _x(L, (3, 4), dtype)
        out = getattr(L.fft, name)(x, **kw)
        v = L.tensor(_array(_name(out.dtype), tuple(out.shape), 1), requires_grad=True)
        (g,) = L.autograd.grad(out, x, v, create_graph=True)
        w = L.tensor(_array(_name(g.dtype), tuple(g.shape), 2))
        return g, _graph(g.grad_fn) is not None, L.autograd.grad(g, (x, v), w, allow_unused=True)
    same(f)


@pytest.mark.fast_first
@pytest.mark.parametrize("name,kw,dtype", SECOND, ids=[f"{n}-{d}" for n, _, d in SECOND])
def test_gradcheck(name, kw, dtype):
    """Numerical derivatives (torch's conjugate convention for complex inputs), first and
    second order, and forward AD against them."""
    x = _x(eg, (2, 4), dtype)

    def fn(t):
        return getattr(eg.fft, name)(t, **kw)
    assert eg.autograd.gradcheck(fn, (x,), check_forward_ad=True)
    assert eg.autograd.gradgradcheck(fn, (x,))


def test_torch_func():
    def f(L):
        x, z = _x(L, (2, 3, 4), rg=False), _x(L, (3, 4), "complex128", rg=False)
        t = _x(L, (3, 4), "complex128", seed=3, rg=False)
        return (L.func.vmap(L.fft.rfft)(x),
                L.func.vmap(lambda r: L.fft.fft2(r, norm="ortho"), in_dims=2)(x),
                L.func.grad(lambda u: L.fft.fft(u).abs().sum())(z),
                L.func.grad(lambda u: L.fft.irfft(u, n=5).pow(2).sum())(z),
                L.func.jvp(lambda u: L.fft.hfft(u), (z,), (t,)),
                L.func.jacrev(lambda u: L.fft.rfft(u))(x[0, 0]))
    same(f)


def test_forward_ad():
    def f(L):
        z, t = _x(L, (3, 4), "complex128", rg=False), _x(L, (3, 4), "complex128", 1, rg=False)
        with L.autograd.forward_ad.dual_level():
            d = L.autograd.forward_ad.make_dual(z, t)
            outs = [L.fft.fft(d), L.fft.irfft(d, n=5), L.fft.ihfft2(d.real),
                    L.fft.fftshift(d)]
            return [L.autograd.forward_ad.unpack_dual(o) for o in outs]
    same(f)


# ---- dtypes -----------------------------------------------------------------------------------
def test_dtype_rules():
    """Integers and bool compute in the default float dtype; float32 gives complex64,
    float64 complex128; the Hermitian-to-real transforms give the real dtype."""
    def f(L):
        i = L.arange(6).reshape(2, 3)
        b = L.tensor([True, False, True, True])
        outs = [L.fft.fft(i), L.fft.rfft(i.int()), L.fft.irfft(i), L.fft.hfft2(i),
                L.fft.ihfftn(i), L.fft.fftn(b), L.fft.ifftshift(i),
                L.fft.fft(i.float()), L.fft.fft(i.double()), L.fft.irfft(i.float()),
                L.fft.rfftn(i.double()), L.fft.hfft(i.double() + 1j)]
        old = L.get_default_dtype()
        L.set_default_dtype(L.float64)
        try:
            outs += [L.fft.fft(i), L.fft.irfftn(i), L.fft.fftfreq(3), L.fft.rfftfreq(3)]
        finally:
            L.set_default_dtype(old)
        return outs
    same(f)


# ---- errors ---------------------------------------------------------------------------------
def _ones(L, *shape, dtype=None):
    return L.ones(*shape, dtype=dtype or L.float32)


ERRORS = {
    "bad norm": (lambda L: L.fft.fft(_ones(L, 3), norm="bad"),
                 'Invalid normalization mode: "bad"', RuntimeError),
    "norm is case-sensitive": (lambda L: L.fft.ifft(_ones(L, 3), norm="ORTHO"),
                               'Invalid normalization mode: "ORTHO"', RuntimeError),
    "n 0": (lambda L: L.fft.fft(_ones(L, 3), n=0),
            "Invalid number of data points (0) specified", RuntimeError),
    "n negative": (lambda L: L.fft.rfft(_ones(L, 3), n=-1),
                   "Invalid number of data points (-1) specified", RuntimeError),
    "irfft of size 1": (lambda L: L.fft.irfft(_ones(L, 4, 1, dtype=L.complex64)),
                        "Invalid number of data points (0) specified", RuntimeError),
    "hfft n 0": (lambda L: L.fft.hfft(_ones(L, 4), n=0),
                 "Invalid number of data points (0) specified", RuntimeError),
    "empty signal": (lambda L: L.fft.fft(L.zeros(2, 0)),
                     "Invalid number of data points (0) specified", RuntimeError),
    "s 0": (lambda L: L.fft.fftn(_ones(L, 3, 4), s=(0, 3)),
            "Invalid number of data points (0) specified", RuntimeError),
    "s -2": (lambda L: L.fft.ifftn(_ones(L, 3, 4), s=(-2, 3)),
             "Invalid number of data points (-2) specified", RuntimeError),
    "hfftn s 0": (lambda L: L.fft.hfftn(_ones(L, 3, 4), s=(2, 0)),
                  "Invalid number of data points (0) specified", RuntimeError),
    "dim out of range": (lambda L: L.fft.fft(_ones(L, 3, 4), dim=2),
                         "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
                         IndexError),
    "dim out of range, negative": (lambda L: L.fft.ihfft(_ones(L, 3, 4), dim=-3),
                                   "but got -3)", IndexError),
    "0-dim input": (lambda L: L.fft.fft(L.tensor(1.0)),
                    "Dimension specified as -1 but tensor has no dimensions", IndexError),
    "0-dim fftn dim": (lambda L: L.fft.fftn(L.tensor(1.0), dim=(0,)),
                       "Dimension specified as 0 but tensor has no dimensions", IndexError),
    "fft2 of 1-d": (lambda L: L.fft.fft2(_ones(L, 3)), "but got -2)", IndexError),
    "dims not unique": (lambda L: L.fft.fftn(_ones(L, 3, 4), dim=(0, -2)),
                        "FFT dims must be unique", RuntimeError),
    "s and dim lengths": (lambda L: L.fft.irfftn(_ones(L, 3, 4), s=(3,), dim=(0, 1)),
                          "When given, dim and shape arguments must have the same length",
                          RuntimeError),
    "fft2 s of 3": (lambda L: L.fft.fft2(_ones(L, 3, 4, 5), s=(2, 2, 2)),
                    "When given, dim and shape arguments must have the same length",
                    RuntimeError),
    "s too long": (lambda L: L.fft.fftn(_ones(L, 3, 4), s=(3, 3, 3)),
                   "Got shape with 3 values but input tensor only has 2 dimensions.",
                   RuntimeError),
    "rfft complex": (lambda L: L.fft.rfft(_ones(L, 3, dtype=L.complex64)),
                     "rfft expects a real input tensor, but got ComplexFloat", RuntimeError),
    "ihfft complex": (lambda L: L.fft.ihfft(_ones(L, 3, dtype=L.complex128)),
                      "ihfft expects a real input tensor, but got ComplexDouble", RuntimeError),
    "rfft2 complex": (lambda L: L.fft.rfft2(_ones(L, 3, 3, dtype=L.complex64)),
                      "rfftn expects a real-valued input tensor, but got ComplexFloat",
                      RuntimeError),
    "ihfftn complex": (lambda L: L.fft.ihfftn(_ones(L, 3, dtype=L.complex64)),
                       "Only supports floating-point dtypes, but found: ComplexFloat",
                       RuntimeError),
    "rfftn no dims": (lambda L: L.fft.rfftn(L.tensor(1.0)),
                      "rfftn must transform at least one axis", RuntimeError),
    "irfftn no dims": (lambda L: L.fft.irfftn(_ones(L, 3), dim=()),
                       "irfftn must transform at least one axis", RuntimeError),
    "hfft2 no dims": (lambda L: L.fft.hfft2(_ones(L, 3), dim=()),
                      "hfftn must transform at least one axis", RuntimeError),
    "ihfftn no dims": (lambda L: L.fft.ihfftn(_ones(L, 3), dim=()),
                       "ihfftn must transform at least one axis", RuntimeError),
    "half": (lambda L: L.fft.fft(_ones(L, 3, dtype=L.float16), dim=4),
             "Unsupported dtype Half", RuntimeError),
    "bfloat16 n-d": (lambda L: L.fft.fftn(_ones(L, 3, dtype=L.bfloat16)),
                     "Unsupported dtype BFloat16", RuntimeError),
    "empty batch (MKL)": (lambda L: L.fft.rfft(L.zeros(0, 4)), "MKL FFT error", RuntimeError),
    "empty batch n-d (MKL)": (lambda L: L.fft.fftn(L.zeros(2, 0), dim=0), "MKL FFT error",
                              RuntimeError),
    "input not a tensor": (lambda L: L.fft.fft([1.0, 2.0]),
                           "fft_fft(): argument 'input' (position 1) must be Tensor, not list",
                           TypeError),
    "n float": (lambda L: L.fft.fft(_ones(L, 3), n=2.5),
                "fft_fft(): argument 'n' must be int, not float", TypeError),
    "dim bool": (lambda L: L.fft.rfft(_ones(L, 3, 4), dim=True),
                 "fft_rfft(): argument 'dim' must be int, not bool", TypeError),
    "norm int": (lambda L: L.fft.fftn(_ones(L, 3), norm=1),
                 "fft_fftn(): argument 'norm' must be str, not int", TypeError),
    "s float": (lambda L: L.fft.fftn(_ones(L, 3, 4), s=2.5),
                "fft_fftn(): argument 's' must be tuple of ints, not float", TypeError),
    "fft2 dim None": (lambda L: L.fft.fft2(_ones(L, 3, 4), dim=None),
                      "fft_fft2(): argument 'dim' must be tuple of ints, not NoneType", TypeError),
    "fftshift of 0-dim": (lambda L: L.fft.fftshift(L.tensor(1.0)), "`shifts` required",
                          RuntimeError),
    "fftshift no dims": (lambda L: L.fft.ifftshift(_ones(L, 3), dim=()), "`shifts` required",
                         RuntimeError),
    "fftshift dim out of range": (lambda L: L.fft.fftshift(_ones(L, 3, 4), dim=5),
                                  "but got 5)", IndexError),
    "fftshift dim float": (lambda L: L.fft.fftshift(_ones(L, 3), dim=1.0),
                           "fft_fftshift(): argument 'dim' must be tuple of ints, not float",
                           TypeError),
    "fftfreq negative": (lambda L: L.fft.fftfreq(-1),
                         "Trying to create tensor with negative dimension -1: [-1]",
                         RuntimeError),
    "rfftfreq negative": (lambda L: L.fft.rfftfreq(-4),
                          "Trying to create tensor with negative dimension -1: [-1]",
                          RuntimeError),
    "fftfreq int dtype": (lambda L: L.fft.fftfreq(4, dtype=L.int64),
                          "fftfreq requires a floating point or complex dtype", RuntimeError),
    "rfftfreq bool dtype": (lambda L: L.fft.rfftfreq(4, dtype=L.bool),
                            "rfftfreq requires a floating point or complex dtype",
                            RuntimeError),
    "fftfreq complex dtype": (lambda L: L.fft.fftfreq(4, dtype=L.complex64),
                              "\"arange_cpu\" not implemented for 'ComplexFloat'",
                              NotImplementedError),
    "fftfreq n float": (lambda L: L.fft.fftfreq(4.5),
                        "fft_fftfreq(): argument 'n' (position 1) must be int, not float",
                        TypeError),
    "fftfreq d str": (lambda L: L.fft.fftfreq(4, d="a"),
                      "fft_fftfreq(): argument 'd' must be float, not str", TypeError),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    fn, phrase, exc = ERRORS[case]
    same_error(fn, phrase, exc)


def test_out_is_not_supported():
    x = eg.ones(4)
    for name in ONE_D + N_D:
        with pytest.raises(NotImplementedError, match=rf"torch\.fft\.{name}\(out=\.\.\.\)"):
            getattr(eg.fft, name)(x.reshape(2, 2), out=eg.empty(2, 2, dtype=eg.complex64))
    for name in ("fftfreq", "rfftfreq"):
        with pytest.raises(NotImplementedError, match=rf"torch\.fft\.{name}\(out=\.\.\.\)"):
            getattr(eg.fft, name)(4, out=x)


# ---- frequencies and shifts ---------------------------------------------------------------
FREQS = [(5, {}), (4, {}), (1, {}), (0, {}), (7, {"d": 0.3}), (6, {"d": -2}),
         (8, {"d": 0.1, "dtype": "float64"}), (7, {"d": 0.3, "dtype": "float16"}),
         (7, {"d": 0.3, "dtype": "bfloat16"}), (4, {"d": 0.0}), (3, {"d": -0.0}),
         (5, {"requires_grad": True}), (9, {"d": 1e-3, "dtype": "float32"})]


@pytest.mark.parametrize("n,kw", FREQS, ids=[f"{n}-{kw}" for n, kw in FREQS])
def test_fftfreq_and_rfftfreq(n, kw):
    """Bit for bit: ATen's arange, then mul_(1 / (n * d)) in the op's math type."""
    def f(L):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(L, k["dtype"])
        return L.fft.fftfreq(n, **k), L.fft.rfftfreq(n, **k)
    same(f, exact=True, layout=True)


def test_rfftfreq_of_negative_n():
    """rfftfreq's size is C++'s n / 2 + 1 (truncated): n = -1 gives one entry, -3 none."""
    same(lambda L: [L.fft.rfftfreq(n) for n in (-1, -2, -3)], exact=True)


SHIFTS = {
    "fftshift all dims": lambda L, x: L.fft.fftshift(x),
    "ifftshift all dims": lambda L, x: L.fft.ifftshift(x),
    "fftshift dim": lambda L, x: L.fft.fftshift(x, dim=1),
    "ifftshift dims": lambda L, x: L.fft.ifftshift(x, dim=(0, -1)),
    "fftshift repeated dim": lambda L, x: L.fft.fftshift(x, dim=(2, 2)),
    "round trip": lambda L, x: L.fft.ifftshift(L.fft.fftshift(x, dim=(0, 2)), dim=(0, 2)),
    "spectrum centred": lambda L, x: L.fft.fftshift(L.fft.fftn(x), dim=(-2, -1)),
}


@pytest.mark.parametrize("case", sorted(SHIFTS))
def test_shifts(case):
    def f(L):
        x = _x(L, (3, 4, 5))
        out = SHIFTS[case](L, x)
        w = L.tensor(_array(_name(out.dtype), tuple(out.shape), 1))
        return out, _layout(out), walk(out.grad_fn, _EXTRA), L.autograd.grad(out, x, w)
    same(f)


def test_shifts_of_integers_and_empty_tensors():
    def f(L):
        i = L.arange(10).reshape(2, 5)
        return (L.fft.fftshift(i), L.fft.ifftshift(i, dim=1), L.fft.fftshift(L.zeros(0, 3)),
                L.fft.fftshift(L.fft.fftfreq(6)))
    same(f, exact=True)


# ---- the namespace ------------------------------------------------------------------------
def test_every_public_function_of_torch_fft():
    public = sorted(n for n in dir(torch.fft) if not n.startswith("_") and
                    callable(getattr(torch.fft, n)) and n != "Tensor")
    assert sorted(eg.fft.__all__) == public
    for name in public:
        assert callable(getattr(eg.fft, name))
    assert eg.fft is eg.__dict__["fft"]
    with pytest.raises(NotImplementedError, match=r"torch\.fft\.nonexistent"):
        _ = eg.fft.nonexistent
