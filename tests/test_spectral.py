"""torch.stft / torch.istft against real torch: values, gradients (through a real-valued
loss of the complex output), the output node's name, warnings and errors with torch's
messages, over the options (center and pad modes, hop/win lengths, windows shorter than
n_fft, align_to_window, normalized, onesided, complex input, return_complex, length)."""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch

import eagergrad as eg

STFT = [
    dict(n_fft=8),
    dict(n_fft=8, hop_length=3, win_length=6, window="hann6", center=False),
    dict(n_fft=8, hop_length=3, win_length=4, window="hann4", center=False, align_to_window=True),
    dict(n_fft=7, hop_length=2, pad_mode="constant", normalized=True),
    dict(n_fft=8, window="hann8", onesided=False),
    dict(n_fft=6, hop_length=1, pad_mode="replicate", win_length=5),
    dict(n_fft=8, window="hann8", return_complex=False),
    dict(n_fft=8, window="hann8", complex_input=True),
]


def _window(L, spec, dtype):
    if not isinstance(spec, str):
        return spec
    return L.hann_window(int(spec[4:]), dtype=dtype) if hasattr(L, "hann_window") else \
        L.tensor(torch.hann_window(int(spec[4:]), dtype=torch.float64).numpy()).to(dtype)


def _run(L, x, kw, fn="stft"):
    kw = dict(kw)
    cplx = kw.pop("complex_input", False)
    dt = L.complex128 if cplx else L.float64
    t = L.tensor(x.astype(np.complex128) * (1 + 0.5j) if cplx else x, dtype=dt,
                 requires_grad=True)
    if "window" in kw:
        kw["window"] = _window(L, kw["window"], L.float64)
    kw.setdefault("return_complex", True)
    with warnings.catch_warnings():  # (their once-per-process: a test of its own)
        warnings.simplefilter("ignore")
        y = L.stft(t, **kw)
    yr = L.view_as_real(y) if y.is_complex() else y
    (yr * L.tensor(np.cos(np.arange(yr.numel())).reshape(tuple(yr.shape)))).sum().backward()
    return np.asarray(y.detach().numpy()), y.grad_fn.name(), np.asarray(t.grad.numpy())


def test_warnings_once_per_process_as_torch():
    """torch's TORCH_WARN_ONCE: each of these warns on its first call in the process only
    (fresh processes, one per library)."""
    script = textwrap.dedent("""
        import warnings, sys
        import {lib} as L
        x = L.arange(40.)
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(2):
                s = L.stft(x, 8, return_complex=True)
                L.stft(x, 8, return_complex=False)
                L.istft(s, 8, length=50)
        print(repr([str(m.message).split(" (Triggered internally")[0] for m in w]))
    """)
    outs = [subprocess.run([sys.executable, "-c", script.format(lib=lib)], capture_output=True,
                           text=True, check=True).stdout for lib in ("torch", "eagergrad")]
    assert outs[0] == outs[1] and outs[0].count("', '") == 3


@pytest.mark.parametrize("k", range(len(STFT)))
@pytest.mark.parametrize("shape", [(40,), (3, 33)])
def test_stft_as_torch(k, shape):
    x = np.random.default_rng(k).standard_normal(shape)
    want, got = _run(torch, x, STFT[k]), _run(eg, x, STFT[k])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-10)
    assert got[1] == want[1]


ISTFT = [
    dict(n_fft=8, window="hann8"),
    dict(n_fft=8, window="hann8", length=37),
    dict(n_fft=8, window="hann8", length=50),
    dict(n_fft=8, hop_length=2, win_length=6, window="hann6", normalized=True),
    dict(n_fft=8, onesided=False, return_complex=True, window="hann8"),
    dict(n_fft=8, center=False, window=None, hop_length=8),
]


@pytest.mark.parametrize("k", range(len(ISTFT)))
@pytest.mark.parametrize("batch", [False, True])
def test_istft_as_torch(k, batch):
    kw = dict(ISTFT[k])
    rng = np.random.default_rng(k)
    x = rng.standard_normal((2, 40) if batch else (40,))
    outs = []
    for L in (torch, eg):
        w = _window(L, kw.get("window"), L.float64)
        spec = L.stft(L.tensor(x), kw["n_fft"], hop_length=kw.get("hop_length"),
                      win_length=kw.get("win_length"), window=w, center=kw.get("center", True),
                      onesided=kw.get("onesided"), return_complex=True,
                      normalized=kw.get("normalized", False)).detach().requires_grad_()
        args = {**kw, "window": w}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = L.istft(spec, **args)
        yr = L.view_as_real(y) if y.is_complex() else y
        (yr * L.tensor(np.sin(np.arange(yr.numel())).reshape(tuple(yr.shape)))).sum().backward()
        outs.append((y.detach().numpy(), y.grad_fn.name(), spec.grad.numpy()))
    want, got = outs
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-10)
    assert got[1] == want[1]


ERRORS = [
    ("stft", (32,), dict(n_fft=0, return_complex=True)),
    ("stft", (32,), dict(n_fft=8, hop_length=0, return_complex=True)),
    ("stft", (32,), dict(n_fft=8, win_length=9, return_complex=True)),
    ("stft", (32,), dict(n_fft=8, window=("ones", 7), return_complex=True)),
    ("stft", (32,), dict(n_fft=8)),
    ("stft", (2, 2, 32), dict(n_fft=8, return_complex=True)),
    ("stft", (32,), dict(n_fft=8, align_to_window=True, return_complex=True)),
    ("stft", (32,), dict(n_fft=8, onesided=True, window=("ones_c", 8), return_complex=True)),
    ("istft", (5, 17), dict(n_fft=8, onesided=False)),
    ("istft", (5, 17), dict(n_fft=10)),
    ("istft", (5, 17), dict(n_fft=8, hop_length=9)),
    ("istft", (5, 17), dict(n_fft=8, window=("ones", 7))),
    ("istft", (5, 17), dict(n_fft=8, return_complex=True)),
    ("istft", (5, 17), dict(n_fft=8, center=False, window=("hann", 8))),
    ("istft", (5, 17, 2), dict(n_fft=8)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    fn, shape, kw = ERRORS[k]
    msgs = []
    for L in (torch, eg):
        args = dict(kw)
        if "window" in args:
            kind, n = args["window"]
            args["window"] = (L.hann_window(n, dtype=L.float64) if kind == "hann" else
                              L.ones(n, dtype=L.complex128 if kind == "ones_c" else L.float64))
        x = L.tensor(np.ones(shape), dtype=L.complex128 if fn == "istft" and len(shape) == 2
                     else L.float64)
        with pytest.raises(RuntimeError) as e, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(L, fn)(x, **args)
        msgs.append(str(e.value).replace("torch.DoubleTensor", "").replace("torch.", ""))
    assert msgs[1] == msgs[0].split("\n")[0] or msgs[1] in msgs[0]


def test_tensor_methods_are_the_functions():
    x = eg.arange(16.)
    w = eg.ones(4)
    np.testing.assert_array_equal(x.stft(4, window=w, return_complex=True).numpy(),
                                  eg.stft(x, 4, window=w, return_complex=True).numpy())
    s = eg.stft(x, 4, window=w, return_complex=True)
    np.testing.assert_array_equal(s.istft(4, window=w).numpy(), eg.istft(s, 4, window=w).numpy())
