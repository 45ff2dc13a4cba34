"""torch.testing: `assert_close`, with torch's signature, defaults and messages; and
eagergrad's `crosscheck` (gradients by the tape, jax.vjp, finite differences and torch).

It reads values (a test utility): not for use on jax tracers.
"""
import collections.abc
import math

import numpy as np

from .. import _dtypes as D
from ..tensor import Tensor

from ._crosscheck import CrosscheckError, CrosscheckReport, crosscheck

__all__ = ["assert_close", "crosscheck", "CrosscheckError", "CrosscheckReport"]

# torch's default (rtol, atol) per dtype; every other dtype compares exactly
_TOLERANCES = {D.float16: (1e-3, 1e-5), D.bfloat16: (1.6e-2, 1e-5),
               D.float32: (1.3e-6, 1e-5), D.float64: (1e-7, 1e-7),
               D.complex64: (1.3e-6, 1e-5), D.complex128: (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: D.int64, float: D.float64, complex: D.complex128}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and torch's message. structural:
    the inputs' structure differs (types, lengths, keys, tolerance arguments), where torch
    does not put the caller's `msg` in place of its own."""

    def __init__(self, exc, msg, structural=False):
        super().__init__(msg)
        self.exc, self.msg, self.structural = exc, msg, structural


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that `actual` and `expected` are close, as torch.testing.assert_close: tensors
    (shape, device, dtype, layout, optionally strides, then values within
    `atol + rtol * |expected|`, defaults by dtype), Python numbers, and sequences or
    mappings of them, compared item by item.

    >>> import eagergrad as torch
    >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    >>> torch.testing.assert_close(torch.tensor([1.0]), torch.tensor([1.1]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 1 (100.0%)
    Greatest absolute difference: 0.10000002384185791 at index (0,) (up to 1e-05 allowed)
    Greatest relative difference: 0.09090910851955414 at index (0,) (up to 1.3e-06 allowed)
    """
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), opts)
    except _Mismatch as m:
        text = m.msg
        if msg is not None and not m.structural:
            text = msg(text) if callable(msg) else msg
        raise m.exc(text) from None


def _compare(actual, expected, path, opts):
    try:
        _compare_leaf_or_container(actual, expected, path, opts)
    except _Mismatch as m:
        if path and "\n\nThe failure occurred for item" not in m.msg:
            where = "".join(f"[{p!r}]" for p in path)
            m.msg += f"\n\nThe failure occurred for item {where}"
        raise


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _compare_leaf_or_container(actual, expected, path, opts):
    if actual is None and expected is None:
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}", True)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), opts)
        return
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: "
                            f"{sorted(set(expected) - set(actual))}\n"
                            f"Additional keys in the actual mapping: "
                            f"{sorted(set(actual) - set(expected))}", True)
        for k in expected:
            _compare(actual[k], expected[k], path + (k,), opts)
        return
    if type(actual) is bool and type(expected) is bool:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        return _compare_tensors(actual, expected, opts)
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        return _compare_arrays(actual, expected, None, None, opts)
    if type(actual) in _NUMBER_DTYPES and type(expected) in _NUMBER_DTYPES:
        return _compare_numbers(actual, expected, opts)
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.", True)


def _tolerances(opts):
    """The rtol and atol given (both or neither, else torch's ValueError)."""
    rtol, atol = opts["rtol"], opts["atol"]
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, f"Both 'rtol' and 'atol' must be either specified or "
                                    f"omitted, but got no {'rtol' if rtol is None else 'atol'}.",
                        True)
    return rtol, atol


def _attribute(name, a, e):
    if a != e:
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: "
                                        f"{a} != {e}.")


def _compare_tensors(actual, expected, opts):
    _tolerances(opts)
    _attribute("shape", actual.shape, expected.shape)
    if opts["check_device"]:
        _attribute("device", actual.device, expected.device)
    if opts["check_dtype"]:
        _attribute("dtype", actual.dtype, expected.dtype)
    if opts["check_stride"]:
        _attribute("stride()", actual.stride(), expected.stride())
    a = actual.detach().resolve_conj().numpy()
    e = expected.detach().resolve_conj().numpy()
    _compare_arrays(a, e, actual.dtype, expected.dtype, opts)


def _dtype_of_array(a):
    return next(d for d in D.ALL if d.np == a.dtype)


def _compare_arrays(a, e, a_dt, e_dt, opts):
    """Values of two arrays of one shape (tensors' arrays, or numpy arrays)."""
    if a.shape != e.shape:
        _attribute("shape", f"torch.Size({list(a.shape)})", f"torch.Size({list(e.shape)})")
    a_dt = a_dt or _dtype_of_array(a)
    e_dt = e_dt or _dtype_of_array(e)
    if opts["check_dtype"]:
        _attribute("dtype", a_dt, e_dt)
    rtol, atol = _tolerances(opts)
    if rtol is None:
        rtol, atol = (max(x, y) for x, y in zip(_TOLERANCES.get(a_dt, (0.0, 0.0)),
                                                _TOLERANCES.get(e_dt, (0.0, 0.0))))
    if a_dt is not e_dt:
        common = D.promote_types(a_dt, e_dt).np
        a, e = a.astype(common), e.astype(common)
    if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
        matches = a == e if rtol == 0 and atol == 0 else _isclose(
            a.astype(np.int64), e.astype(np.int64), rtol, atol, False)
    else:
        matches = _isclose(a, e, rtol, atol, opts["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_msg(a.item(), e.item(), rtol, atol))
    raise _Mismatch(AssertionError, _tensor_msg(a, e, matches, rtol, atol))


def _isclose(a, e, rtol, atol, equal_nan):
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == e
        if rtol or atol:
            finite = np.isfinite(a) & np.isfinite(e)
            diff = np.abs(a - e)
            close |= finite & (diff <= atol + rtol * np.abs(e))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close


def _compare_numbers(actual, expected, opts):
    _tolerances(opts)
    if opts["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                        f"{type(expected)}.")
    rtol, atol = opts["rtol"], opts["atol"]
    if rtol is None:
        rtol, atol = (max(x, y) for x, y in zip(
            _TOLERANCES.get(_NUMBER_DTYPES[type(actual)], (0.0, 0.0)),
            _TOLERANCES.get(_NUMBER_DTYPES[type(expected)], (0.0, 0.0))))
    if actual == expected or (opts["equal_nan"] and _isnan(actual) and _isnan(expected)):
        return
    diff = abs(actual - expected)
    if (rtol or atol) and math.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _isnan(x):
    return x != x


# ---- torch's messages (torch/testing/_comparison.py) ------------------------------------
def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        text = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"
    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    text += diff_msg("absolute", abs_diff, abs_idx, atol)
    text += diff_msg("relative", rel_diff, rel_idx, rtol)
    return text.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


def _tensor_msg(a, e, matches, rtol, atol):
    n = matches.size
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    a, e, m = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.complexfloating)):
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[m] = 0
        rel_diff = abs_diff / np.abs(e)
    if abs_diff.dtype == np.int64:  # torch divides integers in the default dtype
        rel_diff = rel_diff.astype(D.get_default_dtype().np)
    rel_diff[m] = 0
    i, j = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))

    def index(k):
        return tuple(int(x) for x in np.unravel_index(k, matches.shape))
    return _mismatch_msg("Tensor-likes", extra, abs_diff[i].item(), index(i), atol,
                         rel_diff[j].item(), index(j), rtol)
