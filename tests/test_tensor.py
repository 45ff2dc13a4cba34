"""Tensor basics vs torch: creation, dtype inference, attributes, repr, conversions,
devices, views sharing storage and versions, and the jax interop entry points."""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import conftest
import eagergrad as eg

LIBS = (torch, eg)

pytestmark = pytest.mark.filterwarnings("ignore:To copy construct from a tensor")


same = functools.partial(conftest.same, exact=True, messages=False)


# ---------------------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------------------

CREATION = {
    "tensor_list": lambda L: L.tensor([[1, 2], [3, 4]]),
    "tensor_float_dtype": lambda L: L.tensor([1, 2], dtype=L.float64),
    "tensor_nested_tensors": lambda L: L.tensor([L.tensor(1.5), L.tensor(2.5)]),
    "tensor_from_tensor": lambda L: L.tensor(L.tensor([1.0, 2.0]) * 2),
    "as_tensor_list": lambda L: L.as_tensor([1.0, 2.0]),
    "as_tensor_np_f64": lambda L: L.as_tensor(np.array([1.0, 2.0])),
    "as_tensor_dtype": lambda L: L.as_tensor([1, 2], dtype=L.float32),
    "from_numpy_f32": lambda L: L.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)),
    "from_numpy_i32": lambda L: L.from_numpy(np.array([1, 2], dtype=np.int32)),
    "from_numpy_bool": lambda L: L.from_numpy(np.array([True, False])),
    "zeros": lambda L: L.zeros(2, 3),
    "zeros_tuple": lambda L: L.zeros((2, 3), dtype=L.int32),
    "zeros_0": lambda L: L.zeros(0, 4),
    "ones": lambda L: L.ones(3, dtype=L.float64),
    "ones_rg": lambda L: L.ones(2, requires_grad=True),
    "full_int": lambda L: L.full((2, 2), 7),
    "full_float": lambda L: L.full((2,), 1.5),
    "full_bool": lambda L: L.full((2,), True),
    "full_complex": lambda L: L.full((1,), 1 + 2j),
    "full_dtype": lambda L: L.full((2,), 3, dtype=L.float32),
    "empty_shape": lambda L: L.empty(3, 2).shape,
    "empty_dtype": lambda L: L.empty(3, dtype=L.int16).dtype,
    "arange_int": lambda L: L.arange(5),
    "arange_start_end": lambda L: L.arange(2, 9, 3),
    "arange_float": lambda L: L.arange(0, 1, 0.25),
    "arange_float_end": lambda L: L.arange(3.0),
    "arange_neg_step": lambda L: L.arange(5, 0, -2),
    "arange_dtype": lambda L: L.arange(4, dtype=L.float64),
    "arange_empty": lambda L: L.arange(3, 3),
    "linspace": lambda L: L.linspace(0, 1, 5),
    "linspace_neg": lambda L: L.linspace(-2.0, 2.0, steps=3),
    "linspace_one": lambda L: L.linspace(3, 7, 1),
    "linspace_f64": lambda L: L.linspace(0, 1, 4, dtype=L.float64),
    "linspace_f64_7": lambda L: L.linspace(-0.3, 1.1, 7, dtype=L.float64),
    "linspace_int": lambda L: L.linspace(0, 10, 7, dtype=L.int64),
    "eye": lambda L: L.eye(3),
    "eye_rect": lambda L: L.eye(2, 4, dtype=L.int64),
    "zeros_like": lambda L: L.zeros_like(L.ones(2, 3, dtype=L.float64)),
    "ones_like_dtype": lambda L: L.ones_like(L.ones(2), dtype=L.int32),
    "full_like": lambda L: L.full_like(L.ones(2, dtype=L.int64), 4),
    "empty_like": lambda L: L.empty_like(L.ones(2, 2, dtype=L.bool)).shape,
    "zeros_like_rg": lambda L: L.zeros_like(L.ones(2, requires_grad=True)),
    "rand_like": lambda L: (L.rand_like(L.ones(2, 3)).shape, L.rand_like(L.ones(2)).dtype),
    "randn_like": lambda L: L.randn_like(L.ones(4, dtype=L.float64)).dtype,
    "rand": lambda L: (L.rand(2, 3).shape, L.rand(2, 3).dtype, L.rand(3, dtype=L.float64).dtype),
    "randn": lambda L: (L.randn(4).shape, L.randn(4).dtype, L.randn((2, 2)).shape),
    "randint": lambda L: (L.randint(0, 5, (3, 2)).shape, L.randint(0, 5, (3,)).dtype,
                          L.randint(4, (2,)).shape, L.randint(0, 5, (2,), dtype=L.int32).dtype,
                          L.randint(3, size=(2, 1)).shape, L.randint(3, 9, size=(1,)).shape),
    "randperm": lambda L: (L.randperm(5).dtype, sorted(L.randperm(5).tolist())),
    "negative_dim": lambda L: L.zeros(2, -1),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_matches_torch(name):
    same(CREATION[name])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_long_close_to_torch(dtype):
    # ATen vectorizes linspace (base + j * step per SIMD chunk), so beyond one vector
    # the last bit can differ; the values stay within an ulp of torch's
    t = torch.linspace(-3.3, 7.7, 1000, dtype=getattr(torch, dtype)).numpy()
    e = eg.linspace(-3.3, 7.7, 1000, dtype=getattr(eg, dtype)).numpy()
    assert e.dtype == t.dtype
    eps = np.finfo(t.dtype).eps
    np.testing.assert_allclose(e, t, rtol=2 * eps, atol=8 * eps * 7.7)
    assert e[0] == t[0] == np.asarray(-3.3, t.dtype) and e[-1] == t[-1]


def test_random_values_in_range():
    for L in LIBS:
        u = L.rand(1000)
        assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
        assert 0.4 < float(u.mean()) < 0.6
        n = L.randn(4000)
        assert abs(float(n.mean())) < 0.1 and 0.9 < float(n.std()) < 1.1
        r = L.randint(3, 7, (500,))
        assert set(r.tolist()) == {3, 4, 5, 6}


def test_manual_seed_makes_random_reproducible():
    for L in LIBS:
        L.manual_seed(1234)
        a = (L.rand(5).tolist(), L.randn(3).tolist(), L.randint(0, 100, (4,)).tolist())
        L.manual_seed(1234)
        b = (L.rand(5).tolist(), L.randn(3).tolist(), L.randint(0, 100, (4,)).tolist())
        assert a == b
        c = L.rand(5).tolist()
        assert c != a[0]  # the stream moves on
        L.manual_seed(99)
        assert L.rand(5).tolist() != a[0]
        assert L.initial_seed() == 99


# ---------------------------------------------------------------------------------------
# dtype inference
# ---------------------------------------------------------------------------------------

DTYPE_CASES = {
    "python_ints": lambda L: L.tensor([1, 2, 3]).dtype,
    "python_int_scalar": lambda L: L.tensor(5).dtype,
    "python_floats": lambda L: L.tensor([1.0, 2.5]).dtype,
    "mixed_int_float": lambda L: L.tensor([1, 2.5]),
    "python_complex": lambda L: L.tensor([1 + 2j]).dtype,
    "mixed_float_complex": lambda L: L.tensor([1.0, 2j]),
    "python_bools": lambda L: L.tensor([True, False]).dtype,
    "mixed_bool_int": lambda L: L.tensor([True, 2]),
    "numpy_f64": lambda L: L.tensor(np.array([1.0, 2.0])).dtype,
    "numpy_f32": lambda L: L.tensor(np.array([1.0], dtype=np.float32)).dtype,
    "numpy_i32": lambda L: L.tensor(np.array([1], dtype=np.int32)).dtype,
    "numpy_f64_scalar": lambda L: L.tensor(np.float64(1.5)).dtype,
    "numpy_c128": lambda L: L.tensor(np.array([1j])).dtype,
    "numpy_u8": lambda L: L.tensor(np.array([1], dtype=np.uint8)).dtype,
    "nested_empty": lambda L: L.tensor([[], []]),
    "empty_list": lambda L: L.tensor([]).dtype,
    "default_dtype": lambda L: L.get_default_dtype(),
}


@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_dtype_inference(name):
    same(DTYPE_CASES[name])


def test_dtype_inference_expected_values():
    # the rules, stated independently of torch
    assert eg.tensor([1, 2]).dtype is eg.int64
    assert eg.tensor([1.0]).dtype is eg.float32
    assert eg.tensor([1j]).dtype is eg.complex64
    assert eg.tensor([True]).dtype is eg.bool
    assert eg.tensor(np.array([1.0])).dtype is eg.float64


def test_default_dtype_switch():
    def f(L):
        old = L.get_default_dtype()
        L.set_default_dtype(L.float64)
        try:
            return (L.tensor([1.0]).dtype, L.tensor([1j]).dtype, L.zeros(1).dtype,
                    L.arange(1.0).dtype, repr(L.tensor([1.5])), repr(L.tensor([1.5],
                                                                         dtype=L.float32)))
        finally:
            L.set_default_dtype(old)
    r = same(f)
    assert r[0] == "torch.float64" and r[1] == "torch.complex128"


# ---------------------------------------------------------------------------------------
# attributes
# ---------------------------------------------------------------------------------------

def test_shape_size_dim_numel():
    def f(L):
        t = L.zeros(2, 3, 4)
        return (t.shape, t.size(), t.size(1), t.size(-1), t.dim(), t.ndim, t.numel(),
                t.shape[1:], len(t), L.tensor(3.0).shape, L.tensor(3.0).dim(),
                L.tensor(3.0).numel(), t.shape.numel(), t.nelement(), t.element_size())
    same(f)


def test_size_out_of_range():
    def f(L):
        return L.zeros(2, 3).size(2)
    r = same(f)
    assert r[1] is IndexError and "Dimension out of range" in r[2]


def test_item_tolist_numpy():
    def f(L):
        a = L.tensor([[1.5, 2.0], [3.0, 4.0]])
        return (L.tensor(2.5).item(), type(L.tensor(2.5).item()).__name__,
                L.tensor([7]).item(), type(L.tensor(7).item()).__name__,
                L.tensor(True).item(), L.tensor(1 + 2j).item(),
                a.tolist(), L.tensor(3).tolist(), a.numpy(), L.tensor([1, 2]).numpy(),
                L.tensor([1.0], requires_grad=True).detach().numpy(),
                float(L.tensor(1.5)), int(L.tensor(3)), bool(L.tensor([1])))
    same(f)


def test_item_and_numpy_errors():
    r = same(lambda L: L.tensor([1.0, 2.0]).item())
    assert r[0] == "err" and "a Tensor with 2 elements cannot be converted to Scalar" in r[2]
    r = same(lambda L: L.tensor([1.0], requires_grad=True).numpy())
    assert r[0] == "err" and "Can't call numpy() on Tensor that requires grad" in r[2]
    r = same(lambda L: bool(L.tensor([1.0, 2.0])))
    assert r[0] == "err" and "Boolean value of Tensor with more than one value is ambiguous" \
        in r[2]


def test_dtype_and_device_attributes():
    def f(L):
        t = L.ones(2)
        return (t.dtype, t.device, t.device.type, t.is_floating_point(), t.is_complex(),
                L.ones(1, dtype=L.complex64).is_complex(), t.is_cuda,
                t.dtype.is_floating_point, L.int64.is_floating_point, L.complex64.is_complex,
                L.float32 == L.float, L.float64 == L.double, L.int64 == L.long)
    same(f)


def test_T_stride_contiguous_storage_offset():
    def f(L):
        a = L.arange(24.0).reshape(2, 3, 4)
        b = L.arange(6.0).reshape(2, 3)
        out = []
        for v in (a, a[1], a[:, 1], a[..., 2], a[1, 1:], a.transpose(0, 2), a.permute(2, 0, 1),
                  a[:, ::2], b.T, b.t(), a.view(6, 4), a.narrow(2, 1, 2),
                  a.select(1, 2), a.unsqueeze(1), a[0].squeeze(), b.T.contiguous(),
                  a.expand(3, 2, 3, 4), b[1:, 1:]):
            out.append((v.shape, v.stride(), v.is_contiguous(), v.storage_offset(), v.tolist()))
        out.append(b.stride(0))
        out.append(b.stride(-1))
        return out
    same(f)


def test_view_requires_contiguous():
    r = same(lambda L: L.arange(6.0).reshape(2, 3).T.view(6))
    assert r[0] == "err" and "view size is not compatible with input tensor's size and stride" \
        in r[2]


# ---------------------------------------------------------------------------------------
# repr: identical to torch
# ---------------------------------------------------------------------------------------

REPRS = {
    "ints": lambda L: L.tensor([1, 2, 3]),
    "neg_ints_2d": lambda L: L.tensor([[-1, 20], [300, 4]]),
    "floats": lambda L: L.tensor([1.5, 2.25, -3.125]),
    "whole_floats": lambda L: L.tensor([1.0, 2.0, -3.0]),
    "large": lambda L: L.tensor([1e10, 1.0]),
    "large_whole_ratio": lambda L: L.tensor([5000.0, 1.0]),
    "small": lambda L: L.tensor([1e-5, 1.0]),
    "smalls": lambda L: L.tensor([1e-5, 2e-5]),
    "zero_and_small": lambda L: L.tensor([0.0, 1e-5, 123.456]),
    "ratio": lambda L: L.tensor([0.001, 10.0]),
    "nine_digits": lambda L: L.tensor([123456789.0, 1.5]),
    "nan_inf": lambda L: L.tensor([float("nan"), 1.0, float("inf")]),
    "nan_inf_frac": lambda L: L.tensor([float("nan"), 1.5, -float("inf")]),
    "all_nan": lambda L: L.tensor([float("nan")] * 3),
    "zeros": lambda L: L.zeros(3),
    "neg_zero": lambda L: L.tensor([-0.0, 1.0]),
    "2d": lambda L: L.tensor([[1.5, 2.0], [3.0, -4.25]]),
    "3d": lambda L: L.arange(12.0).reshape(2, 3, 2),
    "3d_frac": lambda L: L.arange(24.0).reshape(2, 3, 4) * 1.5,
    "4d_int": lambda L: L.arange(16).reshape(2, 2, 2, 2),
    "bool": lambda L: L.tensor([True, False]),
    "bool_2d": lambda L: L.tensor([[True], [False]]),
    "complex": lambda L: L.tensor([1 + 2j, -3.5 - 1j]),
    "complex_whole": lambda L: L.tensor([1 + 0j, 0 - 1j]),
    "complex_zero": lambda L: L.tensor([0j, -0.0 - 0.0j]),
    "complex128": lambda L: L.tensor([1 + 2j], dtype=L.complex128),
    "complex_0d": lambda L: L.tensor(1.5 - 2j),
    "float64": lambda L: L.tensor([1.5, 2.0], dtype=L.float64),
    "float16": lambda L: L.tensor([1.5, 1000.25], dtype=L.float16),
    "bfloat16": lambda L: L.tensor([1.5, 2.25], dtype=L.bfloat16),
    "int32": lambda L: L.tensor([1, 2], dtype=L.int32),
    "uint8": lambda L: L.tensor([1, 2], dtype=L.uint8),
    "int_large": lambda L: L.tensor([10 ** 12, 1]),
    "requires_grad": lambda L: L.tensor([1.5, 2.0], requires_grad=True),
    "grad_fn": lambda L: L.tensor([1.5, 2.0], requires_grad=True) * 2,
    "grad_fn_f64": lambda L: L.tensor([1.5, 2.0], requires_grad=True, dtype=L.float64) * 2,
    "grad_fn_sci_f64": lambda L: L.tensor([[1e-8, 1.0]], dtype=L.float64,
                                          requires_grad=True) * 1,
    "0d": lambda L: L.tensor(3.5),
    "0d_int": lambda L: L.tensor(3),
    "0d_whole": lambda L: L.tensor(3.0),
    "0d_big": lambda L: L.tensor(1e20),
    "0d_f64": lambda L: L.tensor(2.5, dtype=L.float64),
    "0d_grad_fn": lambda L: L.tensor([1.0, 2.0], requires_grad=True).sum(),
    "empty": lambda L: L.tensor([]),
    "empty_2d": lambda L: L.zeros(0, 3),
    "empty_int": lambda L: L.zeros(0, dtype=L.int64),
    "empty_2d_f64": lambda L: L.zeros(2, 0, dtype=L.float64),
    "empty_rg": lambda L: L.zeros(0, requires_grad=True),
    "summarized": lambda L: L.arange(2000.0),
    "summarized_int": lambda L: L.arange(2000),
    "summarized_2d": lambda L: L.arange(2000.0).reshape(40, 50),
    "summarized_rows": lambda L: L.arange(3000).reshape(3, 1000),
    "summarized_bool": lambda L: L.ones(1200, dtype=L.bool),
    "summarized_complex": lambda L: L.tensor([1 + 2j, -3.5 - 1j] * 600),
    "line_wrap": lambda L: L.tensor([123456.789] * 8, requires_grad=True) * 1,
    "line_wrap_complex": lambda L: L.tensor([1 + 2j, -3.5 - 1j] * 30),
    "linspace": lambda L: L.linspace(0, 1, 5),
    "view_grad_fn": lambda L: L.tensor([[1.0, 2.0]], requires_grad=True)[0],
}


@pytest.mark.parametrize("name", sorted(REPRS))
def test_repr_identical_to_torch(name):
    r = {L.__name__: REPRS[name](L) for L in LIBS}
    assert repr(r["eagergrad"]) == repr(r["torch"])
    assert str(r["eagergrad"]) == str(r["torch"])


def test_repr_expected_literals():
    # a few stated independently of torch
    assert repr(eg.tensor([1, 2, 3])) == "tensor([1, 2, 3])"
    assert repr(eg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(eg.tensor([1.5, 2.0], requires_grad=True)) == \
        "tensor([1.5000, 2.0000], requires_grad=True)"
    assert repr(eg.tensor([1.5], dtype=eg.float64)) == "tensor([1.5000], dtype=torch.float64)"
    assert repr(eg.ones(2, requires_grad=True) * 2) == \
        "tensor([2., 2.], grad_fn=<MulBackward0>)"


def test_repr_of_custom_function_output():
    def build(L):
        class Double(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return Double.apply(L.ones(2, requires_grad=True))
    assert repr(build(eg)) == repr(build(torch)) == "tensor([2., 2.], grad_fn=<DoubleBackward>)"


# ---------------------------------------------------------------------------------------
# conversions
# ---------------------------------------------------------------------------------------

def test_to_dtype_and_casts():
    def f(L):
        x = L.tensor([1.7, -2.5, 0.0])
        i = L.tensor([1, 0, 3])
        return (x.to(L.float64), x.to(L.int64), x.to(dtype=L.int32), x.double(), x.float(),
                x.long(), x.int(), x.bool(), x.half(), i.float(), i.to(L.complex64),
                i.bool(), x.to(L.float32) is x, x.to(L.float32, copy=True) is x,
                x.float() is x, x.to(x) is x, x.to(i))
    same(f)


def test_to_records_grad_and_cast_backward():
    def f(L):
        x = L.tensor([1.5, 2.5], requires_grad=True)
        y = x.double()
        (y * y).sum().backward()
        return y.grad_fn.name(), y.dtype, x.grad
    same(f)


def test_device_objects():
    def f(L):
        d = L.device("cpu")
        t = L.ones(2)
        return (d, d.type, d.index, L.device("cpu", 0), L.device("cuda:1").index,
                L.device("cuda", 2).type, d == L.device("cpu"), t.device == d,
                t.cpu().device, t.to("cpu") is t, t.cpu() is t, L.zeros(2, device="cpu").device,
                L.zeros(2, device=d).tolist(), t.to(d).device, str(L.device("cuda:1")))
    same(f)


def test_bad_device_string():
    r = same(lambda L: L.device("blah"))
    assert r[0] == "err" and r[1] is RuntimeError


@pytest.mark.skipif(bool(jax.devices()[0].platform == "gpu"), reason="a GPU is present")
def test_cuda_unavailable_is_a_clear_error():
    for make in (lambda: eg.zeros(2, device="cuda"), lambda: eg.ones(2).cuda(),
                 lambda: eg.ones(2).to("cuda:0"), lambda: eg.tensor([1.0], device="cuda")):
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
            make()  # (torch's CPU build's error)


# ---------------------------------------------------------------------------------------
# views share storage and version counters
# ---------------------------------------------------------------------------------------

def test_view_write_under_no_grad_is_seen_by_base():
    def f(L):
        base = L.arange(12.0).reshape(3, 4)
        v = base[1]
        w = base[:, 2]
        t = base.T
        vs = [base._version, v._version, w._version, t._version]
        with L.no_grad():
            v.mul_(10)
            w.add_(100)
            t[0].narrow(0, 0, 1).fill_(-1.0)
        return (base, v, w, t, vs, [base._version, v._version, w._version, t._version],
                v._is_view(), base._is_view(), v._base is base, t._base is base)
    r = same(f)
    assert r[5] == [3, 3, 3, 3]
    assert r[0].values[1].tolist() == [40.0, 50.0, 160.0, 70.0] and r[0].values[0][0] == -1.0


def test_base_write_is_seen_by_views_and_requires_grad_leaf_views():
    def f(L):
        base = L.zeros(2, 3)
        v = base[:, 1:]
        base.add_(1)
        base[0].narrow(0, 2, 1).fill_(5.0)
        x = L.ones(3, requires_grad=True)
        with L.no_grad():
            xv = x[1:]
            xv.mul_(3)
        return v, v._version, base._version, x, x._version, xv._version, x.is_leaf
    same(f)


def test_view_chain_base_is_root():
    def f(L):
        a = L.arange(8.0)
        b = a.view(2, 4)
        c = b[1]
        d = c[1:3]
        d.fill_(-1)
        return a, d._base is a, c._base is a, d._version, a._version
    r = same(f)
    assert r[1] is True and r[2] is True


def test_detach_and_data_share_storage():
    def f(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        d = x.detach()
        data = x.data
        d[0].fill_(10.0)
        data[1].fill_(20.0)
        return x, x._version, d._version, data._version, data.requires_grad
    same(f)


def test_setitem_writes_through():
    def f(L):
        base = L.zeros(2, 3)
        base[0, 1] = 5.0
        base[1] = L.tensor([1.0, 2.0, 3.0])
        base[:, 2] = 7
        return base, base._version
    r = same(f)
    assert r[0].values.tolist() == [[0.0, 5.0, 7.0], [1.0, 2.0, 7.0]]


# ---------------------------------------------------------------------------------------
# jax interop
# ---------------------------------------------------------------------------------------

def test_from_jax_and_jax_roundtrip():
    a = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    t = eg.from_jax(a)
    assert t.shape == (2, 3) and t.dtype is eg.float32 and not t.requires_grad
    assert t.jax() is a  # no copy
    r = eg.from_jax(jnp.ones(3, dtype=jnp.float64), requires_grad=True)
    assert r.requires_grad and r.is_leaf and r.dtype is eg.float64
    (r * r).sum().backward()
    assert isinstance(r.grad.jax(), jax.Array)
    np.testing.assert_array_equal(np.asarray(r.grad.jax()), [2.0, 2.0, 2.0])
    i = eg.from_jax(jnp.array([1, 2], dtype=jnp.int32))
    assert i.dtype is eg.int32
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        eg.from_jax(jnp.array([1, 2]), requires_grad=True)


def test_jax_of_views_and_after_inplace():
    base = eg.arange(6.0).reshape(2, 3)
    v = base[:, 1]
    np.testing.assert_array_equal(np.asarray(v.jax()), [1.0, 4.0])
    base.mul_(2)
    np.testing.assert_array_equal(np.asarray(v.jax()), [2.0, 8.0])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(base)), np.arange(6.0).reshape(2, 3) * 2)


def test_tensor_from_jax_array_copies_and_infers_dtype():
    a = jnp.array([1.0, 2.0], dtype=jnp.float64)
    t = eg.tensor(a)
    assert t.dtype is eg.float64 and t.tolist() == [1.0, 2.0]
    t.add_(1)
    np.testing.assert_array_equal(np.asarray(a), [1.0, 2.0])  # jax arrays are immutable
    assert eg.as_tensor(a).dtype is eg.float64


def test_select_compiles_one_kernel_for_every_index():
    """A Dataset reads x[i] for each i: one compiled kernel serves them all (the index is
    a traced scalar), and every value is torch's."""
    from eagergrad.ops.shape import SELECT
    x_np = np.arange(40.0).reshape(20, 2)
    x = eg.tensor(x_np)
    before = len(SELECT._jit)
    for i in range(-20, 20):
        np.testing.assert_array_equal(x[i].numpy(), torch.tensor(x_np)[i].numpy())
        np.testing.assert_array_equal(x.select(1, i % 2).numpy(), x_np[:, i % 2])
    assert len(SELECT._jit) - before <= 2  # (one per dim at most: dim is static)


def test_H_char_and_layout_as_torch():
    """Tensor.H (a conj-transpose view of a matrix, conj of a 0-d tensor with torch's
    warning, torch's errors otherwise), Tensor.char() and Tensor.layout."""
    def f(L, log):
        x = L.tensor([[1 + 2j, 3j], [4.0, 5 - 1j]], requires_grad=True)
        h = x.H
        log.append((h, h._is_view(), h.grad_fn.name()))
        h.abs().sum().backward()
        log.append(x.grad)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            log.append(L.tensor(2 + 1j).H)
        log.append([str(m.message).split(" (Triggered")[0] for m in w])
        for shape in ((3,), (2, 2, 2)):
            conftest.attempt(log, shape, lambda: L.zeros(shape).H)
        log.append((L.tensor([1.7, -3.2]).char(), L.zeros(2).layout is L.strided))
    conftest.same(f)


def test_overloads_of_to_squeeze_narrow_linspace():
    """torch's positional non_blocking/copy of Tensor.to, squeeze of a 0-d tensor by a
    tuple, narrow and linspace/logspace with 0-d tensor arguments, and their errors."""
    def f(L, log):
        x = L.arange(6.0).reshape(2, 3)
        log.append([x.to(L.float32, False, c) is x for c in (False, True)])
        log.append(x.to("cpu", L.float64, False, True, memory_format=L.preserve_format))
        log.append((L.tensor(3.0).squeeze((0,)), L.ones(2, 1, 1).squeeze((0, -1)).shape))
        log.append((x.narrow(1, L.tensor(1), 2), x.narrow(-1, L.tensor(-2), 1)))
        log.append((L.linspace(L.tensor(1), L.tensor(3), 3), L.logspace(L.tensor(0.5), 2, 4)))
        conftest.attempt(log, "float start", lambda: x.narrow(1, L.tensor(1.0), 1))
        conftest.attempt(log, "1-d start", lambda: L.linspace(L.ones(2), 3, 4))
        conftest.attempt(log, "1-d end", lambda: L.logspace(1, L.ones(2), 4))
    conftest.same(f)


def test_binary_functions_bind_their_arguments_as_torch():
    """A number where torch's overloads take a Tensor raises torch's TypeError (eq(2, t),
    rsub(2, t), logical_and(t, 2), remainder(2, 3)); the (Number self, Tensor other)
    overloads of remainder and bitwise_* and the Python operators still compute."""
    names = ["eq", "ne", "lt", "le", "gt", "ge", "rsub", "remainder", "bitwise_and",
             "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor"]

    def call(fn, *args):
        try:
            return fn(*args)
        except TypeError as e:  # (torch's message goes on to list its overloads)
            return "TypeError", conftest.msg(e).split(", but expected")[0]

    def f(L):
        t = L.tensor([1, 2, 3])
        return ([call(getattr(L, name), *args) for name in names
                 for args in ((2, t), (2, 3), (t, 2), (t, t))],
                (t == 2, 2 == t, t & 1, 1 | t, 2 - t, 7 % t))
    conftest.same(f)
