"""Devices on a CPU-only machine against torch's CPU build: torch.cuda and torch.accelerator
answers and errors, Tensor.cuda/.cpu/.to/.type, device parsing, the legacy tensor types
(torch.FloatTensor(...), isinstance), and the factories' default device."""
import jax
import pytest
from conftest import same, same_error

import eagergrad as eg

pytestmark = pytest.mark.skipif(bool(eg.cuda.is_available()), reason="a GPU is present")


def test_cuda_and_accelerator_answers():
    def f(L):
        return (L.cuda.is_available(), L.cuda.device_count(), L.cuda.is_initialized(),
                L.cuda.manual_seed(1), L.cuda.manual_seed_all(1), L.cuda.seed(),
                L.cuda.memory_allocated(), L.cuda.is_bf16_supported(),
                L.accelerator.is_available(), L.accelerator.current_accelerator(),
                L.accelerator.device_count())
    same(f)


@pytest.mark.parametrize("make", [
    lambda L: L.cuda.current_device(), lambda L: L.cuda.synchronize(),
    lambda L: L.cuda.get_device_name(), lambda L: L.cuda.get_device_name(0),
    lambda L: L.cuda.initial_seed(),
    lambda L: L.zeros(2).cuda(), lambda L: L.zeros(2).cuda("cuda:0"),
    lambda L: L.zeros(2).cuda(device="cuda"), lambda L: L.zeros(2).to("cuda"),
    lambda L: L.zeros(2).to("cuda:1"), lambda L: L.zeros(2).to(L.device("cuda")),
    lambda L: L.tensor([1.0], device="cuda"), lambda L: L.zeros(2, device="cuda"),
    lambda L: L.ones(2, device="cuda:0"), lambda L: L.arange(3, device="cuda"),
    lambda L: L.randn(2, device="cuda"),
])
def test_no_cuda_errors(make):
    same_error(make, "Torch not compiled with CUDA enabled", AssertionError)


@pytest.mark.parametrize("make,phrase", [
    (lambda L: L.zeros(2).cuda(0), "Cannot access accelerator device when none is available"),
    (lambda L: L.device(1), "Cannot access accelerator device when none is available"),
    (lambda L: L.zeros(2).pin_memory(), "Cannot access accelerator device"),
    (lambda L: L.accelerator.current_device_index(), "Cannot access accelerator device"),
    (lambda L: L.accelerator.set_device_index(0), "Cannot access accelerator device"),
    (lambda L: L.accelerator.synchronize(), "Cannot access accelerator device"),
    (lambda L: L.zeros(2).cuda("cpu"), "Invalid device, must be cuda device"),
    (lambda L: L.zeros(2).to("xla"), "PyTorch is not linked with support for xla devices"),
    (lambda L: L.zeros(2).to("mps"), "PyTorch is not linked with support for mps devices"),
    (lambda L: L.zeros(2).type("torch.cuda.FloatTensor"), "Cannot initialize CUDA without"),
    (lambda L: L.zeros(2).type(L.cuda.LongTensor), "Cannot initialize CUDA without"),
    (lambda L: L.device("cuda:0:1"), "Invalid device string: 'cuda:0:1'"),
    (lambda L: L.device("cuda:-1"), "Invalid device string"),
    (lambda L: L.device("cuda:01"), "Invalid device string"),
    (lambda L: L.device("CPU"), "Expected one of cpu, cuda, ipu"),
    (lambda L: L.device("cuda", -1), "Device index must not be negative"),
    (lambda L: L.Tensor(2, device="cuda"), "legacy constructor expects device type: cpu"),
    (lambda L: L.Generator(device="cuda"), "Cannot get CUDA generator without ATen_cuda"),
])
def test_device_runtime_errors(make, phrase):
    same_error(make, phrase, RuntimeError)


def test_devices_and_cpu():
    def f(L):
        t = L.arange(3.0)
        return (L.device("cuda:1"), L.device("cpu", 1), L.device("mps"),
                L.device("cpu") == L.device("cpu:0"), L.device("cuda") == L.device("cuda:0"),
                L.device("cpu") == "cpu", L.device("cuda", 1) == L.device("cuda:1"),
                t.cpu() is t, t.cpu().device, t.is_cuda, t.is_cpu, t.get_device(),
                t.is_pinned(), t.to("cpu") is t, t.to("cpu:0") is t, t.to("cpu:0").device,
                L.zeros(2, device="cpu:1").device, L.zeros(1, device=L.device("cpu", 0)).device)
    same(f)


def test_type():
    def f(L, log):
        t = L.tensor([1.5, 2.5], requires_grad=True)
        log.append((t.type(), t.long().type(), t.bool().type(), t.double().type(),
                    L.zeros(1, dtype=L.bfloat16).type(), L.zeros(1, dtype=L.uint8).type()))
        for arg in (L.float64, L.int32, "torch.LongTensor", "torch.FloatTensor", L.HalfTensor,
                    L.FloatTensor, L.Tensor, "torch.Tensor", L.ByteTensor):
            u = t.type(arg)
            log.append((u, u is t, u.grad_fn and u.grad_fn.name()))
        log.append(t.type(dtype=L.int16))
        log.append(t.type(L.float64, non_blocking=True).type())
    same(f)


@pytest.mark.parametrize("make,exc,phrase", [
    (lambda L: L.zeros(2).type("foo"), ValueError, "invalid type: 'foo'"),
    (lambda L: L.zeros(2).type("torch.float64"), ValueError, "invalid type: 'torch.float64'"),
    (lambda L: L.zeros(2).type(5), TypeError, "dtype must be a type, str, or dtype object"),
    (lambda L: L.zeros(2).type(L.zeros(1)), TypeError, "dtype must be a type, str, or dtype"),
])
def test_type_errors(make, exc, phrase):
    same_error(make, phrase, exc)


def test_legacy_constructors():
    def f(L, log):
        for cls in (L.FloatTensor, L.DoubleTensor, L.HalfTensor, L.BFloat16Tensor,
                    L.LongTensor, L.IntTensor, L.ShortTensor, L.CharTensor, L.ByteTensor,
                    L.BoolTensor):
            log.append((cls.__name__, cls.dtype, cls.is_cuda, cls([1, 0, 2]), cls(2, 3).shape,
                        cls(2, 3).dtype))
        for cls in (L.FloatTensor, L.LongTensor):
            log.append((cls((2, 3)), cls(L.Size([4])).shape, cls().shape, cls([]).shape))
        log.append((L.IntTensor([1.7, -2.2]), L.FloatTensor([[1, 2], [3, 4]]),
                    L.Tensor(2, 3).shape, L.Tensor([1]), L.Tensor().shape,
                    L.FloatTensor(2, device="cpu").shape, L.Tensor(L.Size([2])).dtype))
        x = L.tensor([1.0, 2.0])
        y = L.FloatTensor(x)
        log.append((y, y is x, L.Tensor(L.zeros(2, dtype=L.float64)),
                    L.Tensor(L.tensor([1, 2]))))
        t, i = L.zeros(2), L.zeros(2, dtype=L.int64)
        log.append((isinstance(t, L.FloatTensor), isinstance(t, L.DoubleTensor),
                    isinstance(i, L.LongTensor), isinstance(i, L.FloatTensor),
                    isinstance(t, L.cuda.FloatTensor), isinstance(1.0, L.FloatTensor),
                    issubclass(L.FloatTensor, L.Tensor), type(L.FloatTensor([1])) is L.Tensor,
                    L.FloatTensor.__name__, L.cuda.FloatTensor.is_cuda))
    same(f)


@pytest.mark.parametrize("make,exc,phrase", [
    (lambda L: L.FloatTensor(L.zeros(2, dtype=L.int64)), TypeError,
     "expected TensorOptions(dtype=float, device=cpu"),
    (lambda L: L.FloatTensor("a"), TypeError, "new(): invalid data type 'str'"),
    (lambda L: L.FloatTensor(2.5), TypeError, "new(): data must be a sequence (got float)"),
    (lambda L: L.FloatTensor(2, 3.0), TypeError,
     "new(): argument 'size' failed to unpack the object at pos 2"),
    (lambda L: L.LongTensor(2, -1), RuntimeError, "Trying to create tensor with negative"),
    (lambda L: L.cuda.FloatTensor(2), TypeError,
     "type torch.cuda.FloatTensor not available. Torch not compiled with CUDA enabled."),
])
def test_legacy_constructor_errors(make, exc, phrase):
    same_error(make, phrase, exc)


def test_legacy_constructor_of_a_tensor_is_an_alias():
    x = eg.tensor([1.0, 2.0])
    y = eg.FloatTensor(x)
    y.add_(1)
    assert x.tolist() == [2.0, 3.0] and y._version == x._version


def test_default_device():
    def f(L, log):
        log.append(L.get_default_device())
        L.set_default_device("cpu")
        try:
            log.append((L.get_default_device(), L.zeros(2).device, L.arange(2).device,
                        L.tensor([1]).device))
        finally:
            L.set_default_device(None)
        log.append(L.get_default_device())
        with L.device("cpu") as d:
            log.append((d, L.get_default_device(), L.ones(1).device))
        with L.device("cpu", 0):
            log.append(L.get_default_device())
        log.append(L.get_default_device())
        L.set_default_device("cuda:0")
        try:
            log.append(L.get_default_device())
        finally:
            L.set_default_device(None)
    same(f)


@pytest.mark.parametrize("make", [
    lambda L: L.get_default_device(), lambda L: L.zeros(2), lambda L: L.tensor([1.0]),
    lambda L: L.arange(3), lambda L: L.rand(2),
])
def test_default_device_cuda_errors(make):
    def f(L):
        L.set_default_device("cuda")
        try:
            make(L)
        finally:
            L.set_default_device(None)
    same_error(f, "Torch not compiled with CUDA enabled", AssertionError)


def test_default_device_is_per_thread_and_cached_constants_follow_it():
    import threading
    eg.set_default_device("cuda")
    try:
        seen = []
        th = threading.Thread(target=lambda: seen.append(eg.zeros(2).device))
        th.start()
        th.join()
        assert seen == [eg.device("cpu")]
        with pytest.raises(AssertionError):
            eg.zeros(2)  # (a cached constant must not bypass the default device)
    finally:
        eg.set_default_device(None)
    with pytest.raises(NotImplementedError, match="meta"):
        eg.set_default_device("meta")
    with pytest.raises(NotImplementedError, match="meta"):
        eg.zeros(2, device="meta")
    assert eg.get_default_device() == eg.device("cpu") == eg.zeros(1).device
    assert jax.devices()[0].platform == "cpu"


def test_set_default_tensor_type():
    def f(L, log):
        try:
            L.set_default_tensor_type(L.DoubleTensor)
            log.append((L.get_default_dtype(), L.Tensor(1).dtype, L.tensor([1.0]).dtype))
            L.set_default_tensor_type("torch.FloatTensor")
            log.append(L.get_default_dtype())
            for bad in (L.LongTensor, "torch.cuda.FloatTensor", L.float64, L.Tensor, "foo"):
                try:
                    L.set_default_tensor_type(bad)
                except (TypeError, ModuleNotFoundError) as e:
                    log.append((type(e).__name__, str(e)))
        finally:
            L.set_default_dtype(L.float32)
    same(f, quiet=True)


def test_module_cuda_raises_torch_s_error_without_a_gpu():
    same_error(lambda m: m.nn.Linear(2, 2).cuda(), "Torch not compiled with CUDA enabled",
               AssertionError)
