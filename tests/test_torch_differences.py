"""Smaller divergences from torch 2.13 (-0.0 and NaN in cache keys, dtype rules, missing
names, module-level in-place forms, ...), each compared with
torch (conftest.same: one torch run, three eagergrad runs in this process, so a cached
kernel or constant from run 1 serves runs 2-3)."""
import math

import pytest
import torch

import eagergrad as eg
from eagergrad import ops as eg_ops
from conftest import same


def run_both(f):
    """f(L) -> a value, once per library (for checks `same` cannot express)."""
    return f(torch), f(eg)


# ---- -0.0 and NaN in caches -------------------------------------------------------------
SIGNED = {
    "wrapped_scalar": lambda L, v: 1 / (L.ones(3) * v),
    "full": lambda L, v: 1 / L.full((2,), v),
    "fill_": lambda L, v: 1 / L.zeros(2).fill_(v),
    "masked_fill": lambda L, v: 1 / L.zeros(3).masked_fill(L.tensor([True, False, True]), v),
    "setitem": lambda L, v: (lambda t: (t.__setitem__(t > -1, v), 1 / t)[1])(L.zeros(2)),
    "clamp_min": lambda L, v: 1 / L.tensor([-1.0, 1.0]).clamp(min=v),
}


@pytest.mark.parametrize("name", sorted(SIGNED))
def test_signed_zero_is_not_zero_in_any_cache(name):
    def f(L):
        # 0.0 first: a cache keyed by value would hand -0.0 its kernel or constant
        return [SIGNED[name](L, v) for v in (0.0, -0.0, 0.0, float("nan"), -0.0)]
    same(f)


def test_nan_scalar_hits_the_caches():
    """Every fill_(nan) / clamp(nan) after the first reuses its kernel: no new entry in
    the op's kernel cache (each would be a ~40 ms compile, and the cache would grow)."""
    x = eg.zeros(4)
    x.clone().fill_(float("nan")), x.clamp(min=float("nan"))
    fill, clamp = eg_ops.FILL, eg_ops.P.CLAMP
    sizes = len(fill._fwd), len(clamp._fwd)
    for _ in range(5):
        got = x.clone().fill_(float("nan")), x.clamp(min=float("nan"))
        assert all(math.isnan(v) for t in got for v in t.tolist())
    assert (len(fill._fwd), len(clamp._fwd)) == sizes


# ---- integer inputs to float ops with a float64 default dtype ----------------------------
@pytest.mark.parametrize("op", ["sin", "exp", "sqrt", "log", "sigmoid", "tanh", "reciprocal",
                                "rsqrt", "erf", "atan", "expm1"])
def test_int_to_float_unary_follows_the_default_dtype(op):
    def f(L):
        old = L.get_default_dtype()
        L.set_default_dtype(L.float64)
        try:
            return getattr(L.tensor([1, 2, 3]), op)(), getattr(L, op)(L.tensor([True, False]))
        finally:
            L.set_default_dtype(old)
    same(f)


# ---- clamp's result dtype, alpha, integer division and powers -----------------------------
CASES = {
    "clamp_int_float_bounds": lambda L: L.tensor([3, -4]).clamp(0.5, 1.5),
    "clamp_int_min": lambda L: L.tensor([3, -4]).clamp(min=0.5),
    "clamp_min_int": lambda L: L.clamp_min(L.tensor([3, -4]), 0.5),
    "clamp_max_int": lambda L: L.clamp_max(L.tensor([3, -4]), 0.5),
    "clamp_int_int": lambda L: L.tensor([3, -4]).clamp(1, 2),
    "clamp_int_tensor_bound": lambda L: L.tensor([3, -4]).clamp(L.tensor(0.5)),
    "clamp_bool": lambda L: L.tensor([True, False]).clamp(0, 1),
    "clamp_half": lambda L: L.tensor([1.0], dtype=L.float16).clamp(0.5, 2.0),
    "clamp_in_place_cast": lambda L: L.tensor([3, -4]).clamp_(0.5, 1.5),
    "clamp_min_in_place_cast": lambda L: L.tensor([3, -4]).clamp_min_(0.5),
    "clamp_in_place_int": lambda L: L.tensor([3, -4]).clamp_(0, 1),
    "add_int_float_alpha": lambda L: L.add(L.tensor([1]), L.tensor([2]), alpha=1.5),
    "add_int_alpha_1.0": lambda L: L.add(L.tensor([1]), L.tensor([2]), alpha=1.0),
    "add_int_float_other": lambda L: L.add(L.tensor([1]), L.tensor([2.0]), alpha=1.5),
    "sub_int_float_alpha": lambda L: L.sub(L.tensor([1]), L.tensor([2]), alpha=1.5),
    "rsub_int_float_alpha": lambda L: L.rsub(L.tensor([1]), L.tensor([2]), alpha=1.5),
    "add__int_float_alpha": lambda L: L.tensor([1]).add_(L.tensor([2]), alpha=1.5),
    "add_real_complex_alpha": lambda L: L.add(L.tensor([1.0]), L.tensor([2.0]), alpha=1j),
    "sub_real_complex_alpha": lambda L: L.sub(L.tensor([1.0]), L.tensor([2.0]), alpha=1j),
    "add_complex_alpha": lambda L: L.add(L.tensor([1.0]), 1j, alpha=1j),
    "add_bool_bool_alpha_2": lambda L: L.add(L.tensor([True, False]), L.tensor([True, False]),
                                             alpha=2),
    "add_bool_alpha_float": lambda L: L.add(L.tensor([True]), L.tensor([True]), alpha=1.5),
    "add_int_bool_alpha": lambda L: L.add(L.tensor([1]), L.tensor([2]), alpha=True),
    "floordiv_int_zero": lambda L: L.tensor([3, -4]) // 0,
    "floordiv_int_zero_tensor": lambda L: L.tensor([3, -4]) // L.tensor([1, 0]),
    "floordiv_int_nonzero": lambda L: L.tensor([3, -4]) // L.tensor([2, 3]),
    "floordiv_float_zero": lambda L: L.tensor([3.0, -4.0]) // 0,
    "floordiv_bool": lambda L: L.tensor([True]) // L.tensor([True]),
    "remainder_int_zero": lambda L: L.tensor([3, -4]) % 0,
    "div_trunc_int_zero": lambda L: L.div(L.tensor([3, -4]), 0, rounding_mode="trunc"),
    "div_floor_int_zero": lambda L: L.div(L.tensor([3, -4]), 0, rounding_mode="floor"),
    "true_div_int_zero": lambda L: L.tensor([3, -4]) / 0,
    "int_pow_negative": lambda L: L.tensor([3, -4]) ** -1,
    "int_pow_method_negative": lambda L: L.tensor([3, -4]).pow(-2),
    "int_pow_negative_float": lambda L: L.tensor([3, -4]) ** -1.0,
    "int_pow_zero": lambda L: L.tensor([3, -4]) ** 0,
    "int_pow_tensor_negative": lambda L: L.tensor([3, -4, 1, -1, -1, 0]) ** L.tensor(
        [-1, 2, -3, -3, -2, 2]),
    "scalar_pow_int_tensor": lambda L: 2 ** L.tensor([-1, 0, 3]),
    "complex_mixed_dtypes": lambda L: L.complex(L.ones(2), L.ones(2, dtype=L.float64)),
    "complex_integer_parts": lambda L: L.complex(L.tensor([1]), L.tensor([2])),
    "complex_broadcast": lambda L: L.complex(L.ones(2, 1), L.zeros(3)),
    "complex_bad_shapes": lambda L: L.complex(L.ones(2), L.ones(3)),
    "polar_mixed_dtypes": lambda L: L.polar(L.ones(2), L.ones(2, dtype=L.float64)),
    "polar_double": lambda L: L.polar(L.tensor([2.0, 0.0], dtype=L.float64),
                                      L.tensor([0.5, 1.0], dtype=L.float64)),
    "cumsum_bool": lambda L: L.tensor([True, False, True]).cumsum(0),
    "cumsum_bad_dim": lambda L: L.ones(2, 3).cumsum(2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dtype_alpha_division_and_power_rules(name):
    same(CASES[name])


# ---- names eagergrad lacks: hasattr works, the message names the torch API -----------------
@pytest.mark.parametrize("where,name", [
    (lambda L: L, "export"), (lambda L: L.autograd, "forward_ad_not_there"),
    (lambda L: L.ones(2), "q_scale"), (lambda L: L.ones(2), "no_such_method")])
def test_missing_names(where, name):
    t, e = run_both(lambda L: hasattr(where(L), name))
    if t:  # torch has it and eagergrad does not: NotImplementedError naming it
        with pytest.raises(NotImplementedError, match=name):
            getattr(where(eg), name)
        assert getattr(where(eg), name, "default") == "default"
    else:
        assert not e
        with pytest.raises(AttributeError):
            getattr(where(eg), name)


def test_missing_names_raise_both_exception_types():
    for obj, name, qual in [(eg, "export", "torch.export"),
                            (eg.ones(1), "q_scale", "torch.Tensor.q_scale")]:
        with pytest.raises(NotImplementedError, match=qual):
            getattr(obj, name)
        with pytest.raises(AttributeError):
            getattr(obj, name)
        assert not hasattr(obj, name)


# ---- torch.<op>_ at module level ----------------------------------------------------------
def _module_inplace_names():
    return sorted(n for n in dir(torch) if n.endswith("_") and not n.startswith("_")
                  and callable(getattr(torch, n)) and callable(getattr(eg.ones(1), n, None))
                  and n not in ("detach_", "resize_as_"))


def test_every_module_level_inplace_form_we_can_offer_exists():
    names = _module_inplace_names()
    assert len(names) >= 30
    missing = [n for n in names if not callable(getattr(eg, n, None))]
    assert not missing


UNARY_INPLACE = ["abs_", "ceil_", "cos_", "exp_", "floor_", "neg_", "relu_", "round_",
                 "sigmoid_", "sin_", "tanh_", "trunc_", "zero_", "sqrt_", "log1p_"]


@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_module_level_inplace_forms_match_torch(name):
    def f(L):
        x = L.tensor([0.5, 1.5, 2.25], requires_grad=True)
        y = x * 1.0
        out = getattr(L, name)(y)
        assert out is y
        out.sum().backward()
        return y, x.grad, y._version
    same(f)


def test_module_level_clamp_and_fill_forms():
    same(lambda L: (L.clamp_(L.tensor([-1.0, 0.5, 3.0]), 0.0, 1.0),
                    L.fill_(L.zeros(2), 1.5), L.clamp_min_(L.tensor([-1.0, 2.0]), 0.0)))


def test_inf_and_nan_times_a_false_mask_is_nan():
    """IEEE: inf * 0 and nan * 0 are NaN, for a bool operand too (XLA would rewrite
    x * convert(mask) as select(mask, x, 0)); also inside a fused backward."""
    def f(L):
        x = L.tensor([1.0, float("nan"), float("inf"), -2.0], dtype=L.float64,
                     requires_grad=True)
        m = L.tensor([True, False, False, False])
        y = (x * 1) * m + m * (x * 2)
        g, = L.autograd.grad((y * 1).sum(), x)
        return y, g
    same(f)


def test_vector_matrix_matmul_bumps_the_version_as_squeeze_():
    """ATen's 1-D @ 2-D is mm(...).squeeze_(0): the result's version is 1 (2 after
    F.linear's in-place bias add)."""
    def f(L):
        x = L.ones(3, requires_grad=True)
        w = L.ones(3, 2)
        y = L.matmul(x, w)
        z = L.nn.functional.linear(x, w.t(), L.tensor(1.0))
        (y.sum() + z.sum()).backward()
        return y._version, z._version, x.grad
    same(f)
