"""eagergrad.testing.assert_close against torch.testing.assert_close: the same outcome
(passes, or the same exception type and message) for tensors of every dtype, numbers,
containers and bad arguments."""
import math

import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import msg, same


def outcome(L, fn):
    try:
        fn(L)
        return "ok"
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, msg(e)


def T(L, values, dtype="float32", **kw):
    return L.tensor(values, dtype=getattr(L, dtype), **kw)


CASES = {
    "equal": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0])),
    "within_default_tolerance": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0 + 1e-6])),
    "float32_one_off": lambda L: (T(L, [1.0, 2.0, 3.0]), T(L, [1.0, 2.0, 3.1])),
    "float32_2d": lambda L: (T(L, [[1.0, 2.0], [3.0, 4.0]]), T(L, [[1.0, 2.5], [3.0, 4.0]])),
    "float64": lambda L: (T(L, [1.0, 2.0], "float64"), T(L, [1.0, 2.0 + 1e-6], "float64")),
    "float16": lambda L: (T(L, [1.0, 2.0], "float16"), T(L, [1.0, 2.01], "float16")),
    "several_mismatches": lambda L: (T(L, [1.0, -2.0, 3.0, 0.0]), T(L, [1.5, -2.0, 2.0, 1e-3])),
    "int": lambda L: (T(L, [1, 2, 3], "int64"), T(L, [1, 2, 4], "int64")),
    "int_2d": lambda L: (T(L, [[1, 2]], "int64"), T(L, [[1, 5]], "int64")),
    "bool": lambda L: (T(L, [True], "bool"), T(L, [False], "bool")),
    "complex": lambda L: (T(L, [1 + 1j], "complex64"), T(L, [1 + 2j], "complex64")),
    "zero_dim": lambda L: (T(L, 1.0), T(L, 2.0)),
    "nan": lambda L: (T(L, [math.nan, 1.0]), T(L, [math.nan, 1.0])),
    "inf": lambda L: (T(L, [math.inf]), T(L, [math.inf])),
    "finite_vs_inf": lambda L: (T(L, [1.0]), T(L, [math.inf])),
    "dtype": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0], "float64")),
    "shape": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0, 3.0])),
    "numbers": lambda L: (1.0, 1.1),
    "ints": lambda L: (1, 2),
    "int_and_float": lambda L: (1, 1.0),
    "complex_numbers": lambda L: (1 + 1j, 1 + 2j),
    "booleans": lambda L: (True, False),
    "nones": lambda L: (None, None),
    "tensor_and_number": lambda L: (T(L, [1.0]), 1.0),
    "strings": lambda L: ("a", "a"),
    "list": lambda L: ([T(L, 1.0), T(L, 2.0)], [T(L, 1.0), T(L, 3.0)]),
    "list_tuple": lambda L: ([1.0], (1.0,)),
    "lengths": lambda L: ([1.0, 2.0], [1.0, 2.0, 3.0]),
    "dict": lambda L: ({"a": T(L, 1.0)}, {"a": T(L, 3.0)}),
    "dict_keys": lambda L: ({"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 2.0}),
    "nested": lambda L: ({"a": [1.0, {"b": T(L, [1.0, 2.0])}]},
                         {"a": [1.0, {"b": T(L, [1.0, 2.5])}]}),
    "requires_grad": lambda L: (T(L, [1.0]), T(L, [1.0], requires_grad=True)),
    "transposed": lambda L: (L.zeros(2, 3).t(), L.zeros(3, 2)),
}
OPTIONS = {
    "default": {},
    "tolerances": dict(rtol=1e-3, atol=1e-2),
    "exact": dict(rtol=0, atol=0),
    "rtol_only": dict(rtol=1e-3),
    "atol_only": dict(atol=1e-3),
    "equal_nan": dict(equal_nan=True),
    "no_dtype_check": dict(check_dtype=False),
    "stride": dict(check_stride=True),
    "msg": dict(msg="custom message"),
    "msg_callable": dict(msg=lambda m: "prefix: " + m[:16]),
}


@pytest.mark.parametrize("option", sorted(OPTIONS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_assert_close_matches_torch(case, option):
    def f(L):
        actual, expected = CASES[case](L)
        return outcome(L, lambda L: L.testing.assert_close(actual, expected, **OPTIONS[option]))
    same(f)


def test_numpy_arrays_compare_as_tensors():
    a, e = np.array([1.0, 2.0], np.float32), np.array([1.0, 2.5], np.float32)
    assert outcome(torch, lambda L: L.testing.assert_close(a, e)) == \
        outcome(eg, lambda L: L.testing.assert_close(a, e))


def test_doctest_example():
    import doctest
    import eagergrad.testing as mod
    assert doctest.testmod(mod).failed == 0
