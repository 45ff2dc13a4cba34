"""The torch namespace's non-op names against torch: constants, finfo/iinfo/can_cast, the
tensor predicates (is_signed, is_nonzero, ...), typename, set_printoptions (repr strings),
the global switches (threads, matmul precision, deterministic algorithms, warn-always,
anomaly, flush-denormal), the sym_* helpers, the window functions, range, frombuffer,
dlpack, rms_norm, frobenius_norm and get_device_module; values, dtypes and errors."""
import array
import math
import os
import re
import subprocess
import sys
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import attempt, msg, same, same_error

LIBS = (torch, eg)


def _warnings(fn):
    """fn()'s warnings (messages, every one, without the C++ source torch's name), and its
    result."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return [re.sub(r" \(Triggered internally at .*\)$", "", str(x.message)) for x in w], out


def attempt_type(log, tag, fn):
    """attempt() for Python's argument-binding errors: the type only (the wording is
    CPython's for eagergrad's functions, torch's argument parser's for torch's)."""
    try:
        log.append((tag, fn()))
    except Exception as e:  # noqa: BLE001 - compared with torch's
        log.append((tag, type(e).__name__))


# ---- constants, finfo, iinfo, can_cast --------------------------------------------------------
def test_constants():
    for name in ("e", "pi", "inf"):
        assert getattr(eg, name) == getattr(torch, name)
    assert math.isnan(eg.nan) and eg.newaxis is None is torch.newaxis
    same(lambda L: L.arange(6).reshape(2, 3)[L.newaxis, :, L.newaxis].shape)


FLOATS = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
INTS = ("uint8", "int8", "int16", "int32", "int64")


def _info(i):
    return {k: getattr(i, k) for k in dir(i) if not k.startswith("_")}, repr(i), str(i)


def test_finfo():
    def f(L):
        out = [_info(L.finfo(getattr(L, d))) for d in FLOATS]
        out += [_info(L.finfo()), _info(L.finfo(float)), _info(L.finfo(complex)),
                _info(L.finfo(type=L.float16)), L.finfo(L.float32) == L.finfo(L.float32),
                L.finfo(L.float32) == L.finfo(L.float64), L.finfo(L.float32).eps.hex()]
        return out
    same(f)


def test_finfo_follows_the_default_dtype():
    def f(L):
        L.set_default_dtype(L.float64)
        try:
            return _info(L.finfo())
        finally:
            L.set_default_dtype(L.float32)
    same(f)


@pytest.mark.parametrize("arg,phrase", [
    ("int32", "requires a floating point input type"), ("bool", "requires a floating point"),
    (3, "must be torch.dtype, not int"), ("float32", "must be torch.dtype, not str"),
    (None, "must be torch.dtype, not NoneType"), (np.float32, "must be torch.dtype, not type")])
def test_finfo_errors(arg, phrase):
    same_error(lambda L: L.finfo(getattr(L, arg) if arg in ("int32", "bool") else arg), phrase,
               TypeError)


def test_finfo_is_unhashable():
    for L in LIBS:
        with pytest.raises(TypeError):
            hash(L.finfo(L.float32))


def test_iinfo():
    same(lambda L: [_info(L.iinfo(getattr(L, d))) for d in INTS]
         + [_info(L.iinfo(int)), L.iinfo(L.int8) == L.iinfo(L.int8)])


@pytest.mark.parametrize("arg,phrase", [
    ("bool", "torch.bool is not supported by torch.iinfo"),
    ("float32", "requires an integer input type"), ("pyfloat", "requires an integer")])
def test_iinfo_errors(arg, phrase):
    same_error(lambda L: L.iinfo(float if arg == "pyfloat" else getattr(L, arg)), phrase,
               TypeError)
    same_error(lambda L: L.iinfo(), "missing", TypeError, messages=False)


def test_can_cast():
    names = ("bool",) + INTS + FLOATS

    def f(L):
        ds = [getattr(L, n) for n in names]
        return ([[L.can_cast(a, b) for b in ds] for a in ds]
                + [L.can_cast(float, int), L.can_cast(int, float),
                   L.can_cast(complex, L.complex64), L.can_cast(from_=L.int8, to=L.bool)])
    same(f)
    same_error(lambda L: L.can_cast(L.float32, 3), "argument 'to' (position 2) must be "
               "torch.dtype, not int", TypeError)
    same_error(lambda L: L.can_cast(np.float32, L.int32), "argument 'from_' (position 1)",
               TypeError)


# ---- the tensor predicates and typename ---------------------------------------------------
def test_tensor_predicates():
    def f(L):
        x = L.ones(2, 3)
        dts = [getattr(L, d) for d in ("bool",) + INTS + FLOATS]
        return ([L.is_signed(x.to(d)) for d in dts],
                [L.is_nonzero(L.tensor(v)) for v in ([0.0], [1.5], 0j, [[True]], float("nan"),
                                                     [-0.0], [[0]])],
                L.is_same_size(x, L.zeros(2, 3)), L.is_same_size(x, L.zeros(3, 2)),
                L.is_same_size(x, other=x), L.is_signed(input=x), L.get_device(x),
                L.is_inference(x))
    same(f)


def test_is_inference_and_detach():
    def f(L, log):
        with L.inference_mode():
            y = L.ones(2)
        log.append((L.is_inference(y), L.is_inference(y[:1])))
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = x * 2
        d = L.detach(z)
        log.append((d, d.requires_grad, d.grad_fn is None, d._version))
        d.add_(1)  # (shares z's storage and version counter)
        log.append((z, z._version, d._version))
    same(f)


@pytest.mark.parametrize("fn,call,phrase", [
    ("is_signed", lambda L: L.is_signed(3), "is_signed(): argument 'input' (position 1) "
     "must be Tensor, not int"),
    ("is_nonzero", lambda L: L.is_nonzero(L.tensor([])), "with no values is ambiguous"),
    ("is_nonzero", lambda L: L.is_nonzero(L.tensor([1, 2])), "more than one value"),
    ("is_nonzero", lambda L: L.is_nonzero(2), "must be Tensor, not int"),
    ("is_same_size", lambda L: L.is_same_size(L.ones(1), 3), "argument 'other' (position 2)"),
    ("is_inference", lambda L: L.is_inference([1]), "must be Tensor, not list"),
    ("get_device", lambda L: L.get_device(3.0), "must be Tensor, not float"),
    ("detach", lambda L: L.detach(3), "detach(): argument 'input'"),
])
def test_tensor_predicate_errors(fn, call, phrase):
    exc = RuntimeError if "ambiguous" in phrase or "more than" in phrase else TypeError
    same_error(call, phrase, exc)


def test_typename():
    def f(L):
        return [msg(L.typename(o)).replace("eagergrad", "torch") for o in (
            L.ones(1), L.ones(1, dtype=L.float64), L.ones(1, dtype=L.bool),
            L.ones(1, dtype=L.bfloat16), L.ones(1, dtype=L.complex64), L.arange(3), 3, None,
            "s", L.nn.Linear(2, 2), L.nn.Parameter(L.ones(1)), L.Tensor, L.nn.Linear,
            L.nn.Parameter)]
    same(f)
    assert eg.typename(eg.ones(1)) == "torch.FloatTensor"  # (as .type(): torch's spelling)


# ---- set_printoptions -------------------------------------------------------------------
@pytest.fixture
def default_printoptions():
    yield
    for L in LIBS:
        L.set_printoptions(profile="default")


PRINT_CASES = [dict(precision=2), dict(precision=8), dict(threshold=5),
               dict(edgeitems=1, threshold=5), dict(edgeitems=0, threshold=5),
               dict(linewidth=30), dict(profile="short"), dict(profile="full"),
               dict(sci_mode=True), dict(sci_mode=False), dict(profile="short", precision=6),
               dict(linewidth=200, threshold=10), dict(profile="default")]
PRINT_VALUES = [np.arange(10.0), np.arange(10), np.linspace(0, 1, 7),
                np.array([1e-6, 1.0, 1e5]), np.arange(2000.0).reshape(40, 50) / 7,
                np.arange(24.0).reshape(2, 3, 4) * 1.5, np.array([1 + 2j, 3.5 - 1j]),
                np.array([0.0, float("nan"), float("inf")]),
                np.array([[1, 2], [3, 4]], dtype=np.int32), np.array([True, False]),
                np.zeros((0, 3)), np.array(3.25), np.arange(1200.0), np.arange(30.0) * 1e9]


@pytest.mark.parametrize("options", PRINT_CASES, ids=lambda o: ",".join(
    f"{k}={v}" for k, v in o.items()))
def test_set_printoptions(options, default_printoptions):
    def f(L):
        L.set_printoptions(**options)
        out = [repr(L.tensor(v)) for v in PRINT_VALUES]
        out.append(repr(L.tensor([1.5, 2.5], requires_grad=True) * 2))
        out.append(str(L.tensor([[1.0, 2.0]], dtype=L.float64)))
        return out
    same(f, runs=1)


def test_printoptions_accumulate_and_reset(default_printoptions):
    def f(L):
        L.set_printoptions(precision=2)
        L.set_printoptions(threshold=4)  # (precision stays; sci_mode back to None)
        a = repr(L.arange(10.0) / 3)
        L.set_printoptions(sci_mode=True)
        b = repr(L.tensor([1.5]))
        L.set_printoptions(profile="default")
        return a, b, repr(L.arange(10.0) / 3), repr(L.tensor([1.5]))
    same(f, runs=1)


# ---- threads, matmul precision, flush denormal, build facts --------------------------------
@pytest.fixture
def restore_settings(monkeypatch):
    from eagergrad import _settings
    for name in ("_threads", "_deterministic"):
        monkeypatch.setattr(_settings, name, dict(getattr(_settings, name)))
    for name in ("_matmul_precision", "_warn_always"):
        monkeypatch.setattr(_settings, name, list(getattr(_settings, name)))
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)
    for L in LIBS:
        L.set_float32_matmul_precision("highest")
        L.use_deterministic_algorithms(False)
        L.set_warn_always(False)
        L.set_anomaly_enabled(False)


def test_num_threads(restore_settings):
    def f(L, log):
        log.append((L.get_num_threads() >= 1, L.get_num_interop_threads() >= 1))
        L.set_num_threads(3)
        log.append(L.get_num_threads())
        log.append(L.init_num_threads())
        for n in (0, -1, 1.5, "a", True):
            attempt(log, ("set_num_threads", n), lambda: L.set_num_threads(n))
            attempt(log, ("set_num_interop_threads", n), lambda: L.set_num_interop_threads(n))
        attempt_type(log, "no argument", lambda: L.set_num_threads())
        attempt_type(log, "keyword", lambda: L.set_num_threads(int=2))
    same(f)
    # unset: the CPUs this process may run on
    from eagergrad import _settings
    _settings._threads.update(intra=None, inter=None)
    assert eg.get_num_threads() == eg.get_num_interop_threads() == len(os.sched_getaffinity(0))


def test_num_interop_threads_set_once(restore_settings):
    def f(L):
        try:  # (torch refuses once parallel work has started: the first may fail too)
            L.set_num_interop_threads(L.get_num_interop_threads())
        except RuntimeError:
            pass
        return L.set_num_interop_threads(2)
    same_error(f, "cannot set number of interop threads after parallel work has started")


def test_float32_matmul_precision(restore_settings):
    def f(L, log):
        L.set_float32_matmul_precision("highest")
        log.append(L.get_float32_matmul_precision())
        for p in ("high", "medium", "High", "highest"):
            log.append(_warnings(lambda: L.set_float32_matmul_precision(p)))
            log.append(L.get_float32_matmul_precision())
        attempt(log, "int", lambda: L.set_float32_matmul_precision(3))
        L.set_float32_matmul_precision(precision="medium")
        log.append(L.get_float32_matmul_precision())
    same(f)


def test_flush_denormal_and_build_facts():
    same(lambda L: (L.set_flush_denormal(True), L.compiled_with_cxx11_abi(),
                    type(L.has_lapack), type(L.has_mkl), type(L.has_openmp)))
    same_error(lambda L: L.set_flush_denormal(1), "flush_denormal expects a bool, but got int")
    same_error(lambda L: L.set_flush_denormal(mode=True), "keyword argument", TypeError,
               messages=False)
    # XLA:CPU flushes denormals whatever is asked: so True reports a working mode, and False
    # reports that it was not turned off
    assert (eg.tensor([1e-40]) * 1.5).item() == 0.0
    assert eg.set_flush_denormal(False) is False
    # the facts eagergrad reports: LAPACK-backed linalg and FFTs, no MKL or OpenMP
    assert eg.has_lapack and eg.has_spectral and not eg.has_mkl and not eg.has_openmp
    assert eg.linalg.inv(eg.eye(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert eg.fft.fft(eg.ones(2)).shape == (2,)


# ---- deterministic algorithms, warn-always, anomaly -------------------------------------
def test_deterministic_flags(restore_settings):
    def f(L, log):
        L.use_deterministic_algorithms(False)

        def state():
            return (L.are_deterministic_algorithms_enabled(),
                    L.is_deterministic_algorithms_warn_only_enabled(),
                    L.get_deterministic_debug_mode())
        log.append(state())
        L.use_deterministic_algorithms(True, warn_only=True)
        log.append(state())
        L.use_deterministic_algorithms(False, warn_only=True)
        log.append(state())
        for mode in ("error", "warn", "default", 2, 1, 0, True):
            L.set_deterministic_debug_mode(mode)
            log.append((mode, state()))
        for bad in (3, -1, "x", 1.0):
            attempt(log, bad, lambda: L.set_deterministic_debug_mode(bad))
        attempt(log, "int mode", lambda: L.use_deterministic_algorithms(1))
        attempt(log, "str mode", lambda: L.use_deterministic_algorithms("x"))
        attempt(log, "warn_only", lambda: L.use_deterministic_algorithms(False, warn_only=1))
        attempt_type(log, "positional", lambda: L.use_deterministic_algorithms(True, True))
        L.use_deterministic_algorithms(False)
    same(f)
    same_error(lambda L: L.set_deterministic_debug_mode(3), "expected 0, 1, or 2, but got 3")
    same_error(lambda L: L.set_deterministic_debug_mode(1.0), "debug_mode must be str or int",
               TypeError)
    same_error(lambda L: L.use_deterministic_algorithms(1), "argument 'mode' (position 1) "
               "must be bool, not int", TypeError)


def test_deterministic_empty_fills_memory(restore_settings):
    def f(L):
        L.use_deterministic_algorithms(True)
        dts = [getattr(L, d) for d in ("bool", "uint8", "int8", "int32", "int64", "float16",
                                       "bfloat16", "float32", "float64", "complex64")]
        return ([L.empty(2, dtype=d) for d in dts] + [L.empty_like(L.ones(2, 1)),
                L.ones(1, dtype=L.int16).new_empty(3), L.ones(1).new_empty((2,))])
    same(f)


def test_deterministic_alerts(restore_settings):
    def f(L, log):
        def put():
            return L.zeros(3).put_(L.tensor([0]), L.tensor([1.0]))

        def unpool():
            return L.nn.functional.max_unpool1d(L.ones(1, 1, 2), L.tensor([[[0, 2]]]), 2)

        def unpool3d():
            return L.nn.functional.max_unpool3d(L.ones(1, 1, 1, 1, 1),
                                                L.zeros(1, 1, 1, 1, 1, dtype=L.int64), 2)
        L.use_deterministic_algorithms(True)
        for fn in (put, unpool, unpool3d):
            attempt(log, fn.__name__, fn)
        log.append(L.zeros(3).put_(L.tensor([0]), L.tensor([1.0]), accumulate=True))
        L.use_deterministic_algorithms(True, warn_only=True)
        for fn in (put, unpool):
            log.append(_warnings(fn))
        L.use_deterministic_algorithms(False)
        log.append(_warnings(put))
    same(f)


_WARN_ALWAYS = """
import warnings
import {lib} as L


def count(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call()
        call()
    return len(w)


x = L.ones(2)
calls = {{"meshgrid": lambda: L.meshgrid(x, x),
          "cross": lambda: L.cross(L.ones(3, 3), L.ones(3, 3)),
          "cholesky": lambda: L.cholesky(L.eye(2)),
          "imag": lambda: L.ones(2, dtype=L.complex64).float()}}
log = [(n, count(c)) for n, c in calls.items()]
L.set_warn_always(True)
log.append(L.is_warn_always_enabled())
log += [(n, count(c)) for n, c in calls.items()]
L.set_warn_always(False)
log += [(n, count(c)) for n, c in calls.items()]
for bad in (1, "x"):
    try:
        L.set_warn_always(bad)
    except Exception as e:
        log.append((type(e).__name__, str(e).splitlines()[0]))
print(log)
"""


@pytest.mark.slow  # (two processes)
def test_warn_always_repeats_warn_once_warnings():
    """Once-per-process warnings: once each, then every time while set_warn_always(True),
    and once-done again after (fresh processes, one per library: the once-state is the
    process's)."""
    outs = [subprocess.run([sys.executable, "-c", _WARN_ALWAYS.format(lib=lib)],
                           capture_output=True, text=True, check=True).stdout
            for lib in ("torch", "eagergrad")]
    assert outs[0] == outs[1] and "('meshgrid', 2)" in outs[0]
    same_error(lambda L: L.set_warn_always(1), "setWarnOnlyOnce expects a bool, but got int")
    for L in (torch, eg):
        with pytest.raises(TypeError):
            L.set_warn_always(b=False)


def test_set_anomaly_enabled(restore_settings):
    def f(L, log):
        for args in ((True,), (True, False), (False,), (True, True)):
            log.append(L.set_anomaly_enabled(*args))
            log.append((L.is_anomaly_enabled(), L.is_anomaly_check_nan_enabled()))
        x = L.tensor([0.0], requires_grad=True)
        attempt(log, "nan", lambda: (x.sqrt() * 0).sum().backward())
        L.set_anomaly_enabled(False)
        attempt(log, "int", lambda: L.set_anomaly_enabled(1))
        attempt(log, "check_nan", lambda: L.set_anomaly_enabled(True, 1))
        attempt_type(log, "none", lambda: L.set_anomaly_enabled())
        log.append(L.is_anomaly_enabled())
    same(f, runs=1, quiet=True)
    same_error(lambda L: L.set_anomaly_enabled(1), "argument 'enabled' (position 1) must be "
               "bool, not int", TypeError)


# ---- sym_* ------------------------------------------------------------------------------
def test_sym_functions():
    def f(L, log):
        for a, b in ((2, 3), (2, 3.0), (4.5, 1), (np.int64(2), 7), (np.float32(1.5), 1),
                     (True, 2), (-1, -1)):
            log.append((L.sym_max(a, b), L.sym_min(a, b)))
            log.append((type(L.sym_max(a, b)).__name__, type(L.sym_min(a, b)).__name__))
        log.append((L.sym_float(3), L.sym_float(L.tensor(2.5)), L.sym_int(2.7), L.sym_int(-2.7),
                    L.sym_int(L.tensor(4)), L.sym_not(True), L.sym_not(0),
                    L.sym_not(L.tensor(False)), L.sym_sqrt(16), L.sym_sqrt(L.tensor(2.25)),
                    L.sym_sum([1, 2, 3]), L.sym_sum(1, 2.5), L.sym_sum(()), L.sym_sum([L.tensor(1),
                                                                                      2]),
                    L.sym_ite(True, 1, 2), L.sym_ite(False, "a", "b")))
        attempt(log, "max tensor", lambda: L.sym_max(L.tensor(1), 2))
        attempt(log, "min str", lambda: L.sym_min(1, "2"))
        attempt(log, "ite int", lambda: L.sym_ite(1, 2, 3))
        attempt(log, "ite types", lambda: L.sym_ite(True, 2, 3.0))
    same(f, messages=False)
    assert eg.sym_sqrt.__name__ == torch.sym_sqrt.__name__


# ---- the window functions -----------------------------------------------------------------
WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window")


@pytest.mark.parametrize("name", WINDOWS)
def test_window_values(name):
    def f(L):
        fn = getattr(L, name)
        out = [fn(n, p, dtype=dt) for n in (0, 1, 2, 3, 5, 8, 17, 64)
               for p in (True, False) for dt in (L.float32, L.float64)]
        return out + [fn(5), fn(6, periodic=False), fn(window_length=4)]
    same(f, runs=1)


@pytest.mark.parametrize("name", WINDOWS)
def test_window_values_in_half_types(name):
    # ATen computes each step in float and rounds it (its scalars too): the same bits
    def f(L):
        fn = getattr(L, name)
        return [fn(n, p, dtype=dt) for n in (2, 3, 5, 8, 17, 100) for p in (True, False)
                for dt in (L.float16, L.bfloat16)]
    same(f, runs=1, exact=True)


def test_window_parameters():
    def f(L):
        return ([L.hamming_window(n, p, a, b) for n in (1, 5, 6) for p in (True, False)
                 for a, b in ((0.54, 0.46), (0.3, 0.2), (1.0, 0.5))]
                + [L.hamming_window(5, True, 0.5), L.kaiser_window(5, True, 3.0)]
                + [L.kaiser_window(n, p, b, dtype=L.float64) for n in (1, 2, 7)
                   for p in (True, False) for b in (0.0, 2.0, -2.0, 12.0)])
    same(f, runs=1)


def test_window_is_a_leaf():
    def f(L):
        w = L.hann_window(4, dtype=L.float64, requires_grad=True)
        (w * L.arange(4.0, dtype=L.float64)).sum().backward()
        return w, w.grad, L.kaiser_window(1, False, requires_grad=True), \
            L.bartlett_window(0, requires_grad=True)
    same(f)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("case", ["negative", "int", "bool", "sparse", "sparse_given",
                                  "int_strided", "float_length", "bool_length",
                                  "float_tensor_length", "complex", "periodic_int",
                                  "requires_grad_int"])
def test_window_errors(name, case):
    kind = {"negative": (RuntimeError, "requires non-negative window_length"),
            "int": (RuntimeError, "expects floating point dtypes, got: TensorOptions"),
            "bool": (RuntimeError, "expects floating point dtypes"),
            "sparse": (RuntimeError, "is not implemented for sparse types"),
            "sparse_given": (RuntimeError, "is not implemented for sparse types"),
            "int_strided": (RuntimeError, "layout=Strided, requires_grad"),
            "float_length": (TypeError, "argument 'window_length' (position 1) must be int, "
                             "not float"),
            "bool_length": (TypeError, "must be int, not bool"),
            "float_tensor_length": (TypeError, "must be int, not Tensor"),
            "complex": (NotImplementedError, "\"arange_cpu\" not implemented for "
                        "'ComplexFloat'"),
            "periodic_int": (TypeError, "received an invalid combination of arguments"),
            "requires_grad_int": (RuntimeError, "expects floating point dtypes")}[case]

    def f(L):
        fn = getattr(L, name)
        return {"negative": lambda: fn(-1), "int": lambda: fn(3, dtype=L.int64),
                "bool": lambda: fn(3, dtype=L.bool),
                "sparse": lambda: fn(3, layout=L.sparse_coo),
                "sparse_given": lambda: fn(3, True, layout=L.sparse_coo, dtype=L.float64),
                "int_strided": lambda: fn(-3, dtype=L.int32, layout=L.strided),
                "float_length": lambda: fn(4.0), "bool_length": lambda: fn(True),
                "float_tensor_length": lambda: fn(L.tensor(3.0)),
                "complex": lambda: fn(4, dtype=L.complex64),
                "periodic_int": lambda: fn(3, 1),
                "requires_grad_int": lambda: fn(3, dtype=L.int32, requires_grad=True)}[case]()
    same_error(f, kind[1], kind[0])


def test_window_length_from_an_int_tensor():
    same(lambda L: (L.hann_window(L.tensor(3)), L.kaiser_window(np.int64(4)),
                    L.blackman_window(1, dtype=L.complex64), L.hann_window(0, dtype=L.complex64)))


# ---- rms_norm, frobenius_norm -----------------------------------------------------------
def test_rms_norm_is_the_functional_one():
    assert eg.rms_norm is eg.nn.functional.rms_norm

    def f(L):
        x = L.arange(12.0, dtype=L.float64).reshape(3, 4).requires_grad_()
        w = L.linspace(0.5, 2.0, 4, dtype=L.float64).requires_grad_()
        y = L.rms_norm(x, [4], w, 1e-3)
        y.sum().backward()
        return y, x.grad, w.grad, L.rms_norm(x, (4,)), L.rms_norm(x.float(), [3, 4])
    same(f)
    same_error(lambda L: L.rms_norm(L.ones(2, 3), [4]), "Given normalized_shape=[4]")


def test_frobenius_norm():
    def f(L, log):
        x = L.arange(12.0, dtype=L.float64).reshape(3, 4).requires_grad_()
        for args in (((0, 1),), (1,), ([1], True), ((),), ((-1,),), ((0,), True)):
            y = L.frobenius_norm(x, *args)
            y.sum().backward()
            log.append((y, x.grad))
            x.grad = None
        log.append(L.frobenius_norm(x.cdouble(), (0,)))
        log.append(L.frobenius_norm(L.tensor(-3.0, requires_grad=True), (0,)))
        log.append(L.frobenius_norm(L.ones(0, 3, requires_grad=True), (0,)))
        for name, call in (("dup", lambda: L.frobenius_norm(x, (0, 0))),
                           ("range", lambda: L.frobenius_norm(x, (0, 5))),
                           ("three", lambda: L.frobenius_norm(x, (0, 1, 2))),
                           ("int", lambda: L.frobenius_norm(x.int(), (0, 5))),
                           ("keepdim", lambda: L.frobenius_norm(x, (1,), keepdim=1))):
            attempt(log, name, call)
        attempt_type(log, "no dim", lambda: L.frobenius_norm(x))
    same(f, quiet=True)
    same_error(lambda L: L.frobenius_norm(L.ones(2, 2), (0, 1, 2)), "Expected at most 2 "
               "dimensions, but got 3 dimensions instead.", quiet=True)
    same_error(lambda L: L.frobenius_norm(L.ones(2, 2), (0, 5)), "Dimension out of range",
               IndexError, quiet=True)


def test_frobenius_norm_warns_once(restore_settings):
    def f(L):
        L.set_warn_always(True)  # (torch warns once per process: this test may not be first)
        return _warnings(lambda: L.frobenius_norm(L.ones(2, 2), (0,)))[0]
    same(f)


# ---- range, frombuffer ------------------------------------------------------------------
def test_range():
    def f(L, log):
        cases = [(1, 4), (1, 4, 0.5), (0, 1, 0.1), (4, 1, -1), (0, 10, 3), (0, 0),
                 (0.5, 3), (1, 4, 1.5), (L.tensor(0), L.tensor(3))]
        for c in cases:
            log.append(_warnings(lambda: L.range(*c)))
        for dt in ("int64", "int32", "float16", "bfloat16", "float64", "uint8"):
            log.append(_warnings(lambda: L.range(0.5, 3.7, dtype=getattr(L, dt))))
        log.append(_warnings(lambda: L.range(0.1, 1.1, 0.1, dtype=L.float16)))
        log.append(_warnings(lambda: L.range(start=0, end=3, step=2)))
        log.append(_warnings(lambda: L.range(1.0, 4.0, requires_grad=True)))
        for name, call in (("inconsistent", lambda: L.range(4, 1)),
                           ("sign", lambda: L.range(1, 4, -1)),
                           ("zero step", lambda: L.range(1, 4, 0)),
                           ("inf", lambda: L.range(0, float("inf"))),
                           ("bool", lambda: L.range(0, 3, dtype=L.bool)),
                           ("complex", lambda: L.range(0, 3, dtype=L.complex64)),
                           ("int grad", lambda: L.range(0, 3, dtype=L.int64,
                                                        requires_grad=True))):
            attempt(log, name, call)
    same(f, quiet=True)


def test_frombuffer():
    data = bytes(range(1, 17))

    def f(L, log):
        b = bytearray(data)
        for dt, kw in ((L.uint8, {}), (L.int32, {}), (L.int32, dict(count=1, offset=4)),
                       (L.int16, dict(offset=2, count=3)), (L.float32, dict(count=-1)),
                       (L.bool, {}), (L.float64, dict(offset=8)), (L.int8, dict(count=16))):
            log.append(L.frombuffer(b, dtype=dt, **kw))
        log.append(L.frombuffer(array.array("f", [1.5, 2.5]), dtype=L.float32,
                                requires_grad=True))
        log.append(L.frombuffer(np.arange(3, dtype=np.int16), dtype=L.int16))
        log.append(L.frombuffer(memoryview(b)[4:8], dtype=L.uint8))
        for name, call in (("multiple", lambda: L.frombuffer(b, dtype=L.int16, offset=1)),
                           ("too many", lambda: L.frombuffer(b, dtype=L.int32, count=5)),
                           ("offset", lambda: L.frombuffer(b, dtype=L.int32, offset=16)),
                           ("negative offset", lambda: L.frombuffer(b, dtype=L.int8,
                                                                    offset=-1)),
                           ("count 0", lambda: L.frombuffer(b, dtype=L.int32, count=0)),
                           ("empty", lambda: L.frombuffer(bytearray(), dtype=L.uint8)),
                           ("not a buffer", lambda: L.frombuffer([1, 2], dtype=L.uint8)),
                           ("strided", lambda: L.frombuffer(memoryview(b)[::2],
                                                            dtype=L.uint8)),
                           ("int grad", lambda: L.frombuffer(b, dtype=L.int64,
                                                             requires_grad=True))):
            attempt(log, name, call)
        attempt_type(log, "positional dtype", lambda: L.frombuffer(b, L.uint8))
    same(f, quiet=True)
    # a copy (README: jax arrays cannot share the buffer): later writes stay in the buffer
    b = bytearray(data)
    t = eg.frombuffer(b, dtype=eg.uint8)
    b[0] = 99
    assert t[0].item() == 1


# ---- dlpack, get_device_module ---------------------------------------------------------
def test_from_dlpack():
    src = np.arange(6.0).reshape(2, 3)
    for ext in (src, torch.tensor(src), jnp.asarray(src), torch.tensor(src).t(),
                np.arange(4, dtype=np.int16)):
        want = torch.from_dlpack(ext)
        got = eg.from_dlpack(ext)
        assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype)
    t = eg.tensor([[1.5, 2.0]], dtype=eg.float64)
    assert eg.from_dlpack(eg.to_dlpack(t)).tolist() == t.tolist()
    assert torch.from_dlpack(eg.to_dlpack(t)).tolist() == t.tolist()
    assert eg.from_dlpack(torch.to_dlpack(torch.ones(2))).tolist() == [1.0, 1.0]
    # a copy: a later write to the source does not reach the tensor
    a = np.zeros(3)
    e = eg.from_dlpack(a)
    a[0] = 5
    assert e.tolist() == [0.0, 0.0, 0.0]


def test_dlpack_errors():
    same_error(lambda L: L.to_dlpack(3), "_to_dlpack(): argument 'data' (position 1) must be "
               "Tensor, not int", TypeError)
    same_error(lambda L: L.from_dlpack(3), "from_dlpack received an invalid capsule")

    def used_twice(L):
        c = L.to_dlpack(L.ones(2))
        L.from_dlpack(c)
        return L.from_dlpack(c)
    same_error(used_twice, "from_dlpack received an invalid capsule", messages=False)


def test_get_device_module():
    same(lambda L: [L.get_device_module(d).__name__.replace("eagergrad", "torch")
                    for d in (None, "cpu", L.device("cpu"))])
    assert eg.get_device_module("cuda") is eg.cuda
    for bad, phrase in (("ipu", "does not have a corresponding module registered as "
                         "'torch.ipu'"), ("meta", "registered as 'torch.meta'"),
                        (3, "Invalid value of device '3'")):
        with pytest.raises(RuntimeError, match=phrase):
            eg.get_device_module(bad)
        with pytest.raises(RuntimeError, match=phrase):
            torch.get_device_module(bad)


# ---- default_generator, torch.random, return_types, small facts ----------------------------
def test_default_generator_is_the_global_stream():
    g = eg.default_generator
    assert isinstance(g, eg.Generator) and g is eg.random.default_generator
    assert g.manual_seed(4) is g and g.initial_seed() == eg.initial_seed() == 4
    a = eg.rand(3)
    eg.manual_seed(4)
    assert eg.rand(3, generator=g).tolist() == a.tolist()  # the global stream's draws
    state = g.get_state()
    assert state.tolist() == eg.get_rng_state().tolist()
    b = eg.randn(2)
    assert g.set_state(state) is g and eg.randn(2).tolist() == b.tolist()
    s = g.seed()
    assert isinstance(s, int) and s == eg.initial_seed()
    same(lambda L: (type(L.seed()).__name__, L.default_generator.device,
                    isinstance(L.default_generator, L.Generator)))


def test_fork_rng():
    def f(L, log):
        L.manual_seed(1)
        with L.random.fork_rng():
            a = L.rand(3)
        log.append(L.rand(3).tolist() == a.tolist())
        with L.random.fork_rng(enabled=False):
            b = L.rand(3)
        log.append(L.rand(3).tolist() == b.tolist())
        L.random.manual_seed(2)
        log.append(L.random.initial_seed())
        s = L.random.get_rng_state()
        c = L.rand(1)
        L.random.set_rng_state(s)
        log.append(L.rand(1).tolist() == c.tolist())
    same(f)


def test_return_types():
    def f(L):
        x = L.tensor([[3.0, 1.0, 2.0]])
        rs = [x.max(1), x.min(1), x.sort(), x.topk(2), x.kthvalue(1), x.median(1), x.mode(1),
              x.cummax(1), x.aminmax(), L.frexp(x), L.linalg.svd(L.eye(2))]
        return [(type(r) is getattr(L.return_types, type(r).__name__), type(r).__name__,
                 msg(type(r).__module__)) for r in rs]
    same(f)
    r = eg.return_types.max((eg.ones(1), eg.zeros(1, dtype=eg.int64)))
    assert r.values.tolist() == [1.0] and r.indices.tolist() == [0]


def test_small_facts():
    same(lambda L: (L.is_vulkan_available(), L.is_distributed(L.ones(1)),
                    L.legacy_contiguous_format is L.contiguous_format,
                    L.ones(2).clone(memory_format=L.legacy_contiguous_format)))
    same_error(lambda L: L.is_distributed(3), "is_distributed(): argument 'input' (position 1)"
               " must be Tensor, not int", TypeError)


def test_torch_functional_names_the_top_level_functions():
    import torch.functional
    for name in torch.functional.__all__:
        assert getattr(torch.functional, name) is getattr(torch, name)
        if hasattr(eg, name):
            assert getattr(eg.functional, name) is getattr(eg, name)
        else:
            with pytest.raises(NotImplementedError, match=f"torch.functional.{name}"):
                getattr(eg.functional, name)
    same(lambda L: L.functional.einsum("ij->j", L.ones(2, 3)))


def test_tensor_from_python_data_numpy_cannot_type():
    """None, strings, other objects and ints beyond int64: torch's errors (numpy would
    give NaN, an object array, or wrap 2**63 to -2**63), or floats where the data or the
    dtype asked for is floating."""
    cases = [(None, None), (2**70, None), ([1, None], None), ("a", None), ((1, "a"), None),
             (object(), None), ([1, 2.5j, None], None), (-2**63 - 1, None), ([2**63], None),
             ([True, 2**63], None), (2**63, "uint8"), ([2**70], "float64"),
             ([2**63], "float32"), ([1.0, 2**64], None), ([1.5, 2**70], None),
             ([1, 2**64, 3j], None), ([2**62, 3], None), ([2**63 - 1, -2**63], "int64")]

    def f(L, log):
        for i, (v, dt) in enumerate(cases):
            kw = {} if dt is None else {"dtype": getattr(L, dt)}
            attempt(log, i, lambda: L.tensor(v, **kw))
            attempt(log, f"as_tensor {i}", lambda: L.as_tensor(v, **kw))
    same(f)


def test_numbers_written_into_integer_tensors_never_wrap():
    """__setitem__ (basic, advanced and mask indices), full and fill_ with a number out of
    the dtype's range: torch's checked conversion errors (numpy would wrap 70000 into int16
    as 4464); a negative int in uint8 range is written as its two's complement."""
    values = [70000, -1, -255, -256, 300, 2.5, 1e10, float("nan"), 2**63, 2**64, True,
              -2**63]

    def f(L, log):
        for v in values:
            for d in ("int16", "uint8", "int32", "int64", "bool", "float32"):
                dt = getattr(L, d)
                for idx in (1, slice(0, 2), [0], L.tensor([True, False, True])):
                    t = L.zeros(3, dtype=dt)

                    def write():
                        t[idx] = v
                        return t
                    attempt(log, (v, d, str(idx)), write)
                attempt(log, (v, d, "full"), lambda: L.full((2,), v, dtype=dt))
                attempt(log, (v, d, "fill_"), lambda: L.zeros(2, dtype=dt).fill_(v))
    same(f, runs=1)
