"""Complex tensors where torch rejects them: every op torch 2.13's CPU kernels refuse
for complex64/complex128 raises torch's exception type and message here too, instead
of computing something (jnp.maximum, sign, comparisons... accept complex numbers).
The ops torch does support for complex are covered by the complex samples of the op
tables (tests/_samples.py: torch, jax.vjp under the conj conversion, gradcheck)."""
import pytest

from conftest import same

_CALLS = {
    "amax": lambda L, x: x.amax(), "amin": lambda L, x: x.amin(0),
    "max": lambda L, x: x.max(), "min": lambda L, x: L.min(x),
    "max(dim)": lambda L, x: x.max(0), "min(dim)": lambda L, x: x.min(-1, keepdim=True),
    "maximum": lambda L, x: L.maximum(x, x), "minimum": lambda L, x: x.minimum(x),
    "argmax": lambda L, x: x.argmax(), "argmin": lambda L, x: x.argmin(0),
    "ceil": lambda L, x: x.ceil(), "floor": lambda L, x: L.floor(x),
    "trunc": lambda L, x: x.trunc(), "frac": lambda L, x: x.frac(),
    "round": lambda L, x: x.round(), "round(decimals)": lambda L, x: x.round(decimals=2),
    "sign": lambda L, x: x.sign(), "erf": lambda L, x: x.erf(),
    "relu": lambda L, x: x.relu(), "clamp": lambda L, x: x.clamp(0, 1),
    "clamp_min": lambda L, x: x.clamp_min(0), "clamp_max": lambda L, x: x.clamp(max=1),
    "clamp(tensor)": lambda L, x: x.clamp(x, x), "clip": lambda L, x: x.clip(0, 1),
    "softmax(last)": lambda L, x: x.softmax(-1), "softmax": lambda L, x: x.softmax(0),
    "log_softmax(last)": lambda L, x: x.log_softmax(1), "log_softmax": lambda L, x:
    x.log_softmax(0),
    "ge": lambda L, x: x >= x, "gt": lambda L, x: x > 1, "le": lambda L, x: x.real <= x,
    "lt": lambda L, x: L.lt(x, x),
    "floor_divide": lambda L, x: x // x, "floor_divide(scalar)": lambda L, x:
    L.floor_divide(x, 2), "div(floor)": lambda L, x: L.div(x, x, rounding_mode="floor"),
    "div(trunc)": lambda L, x: L.div(x, 2, rounding_mode="trunc"),
    "remainder": lambda L, x: x % 2, "atan2": lambda L, x: L.atan2(x, x),
    "bitwise_and": lambda L, x: x & x, "bitwise_or": lambda L, x: x | x,
    "bitwise_xor": lambda L, x: x ^ x, "bitwise_not": lambda L, x: ~x,
    "clamp_": lambda L, x: x.detach().clamp_(0, 1), "floor_": lambda L, x: x.detach().floor_(),
    "relu_": lambda L, x: L.relu_(x.detach()), "sign_": lambda L, x: x.detach().sign_(),
    "real < complex scalar": lambda L, x: x.real < 1j,
    "cdist": lambda L, x: L.cdist(x, x), "cdist(mm)": lambda L, x: L.cdist(
        x, x, compute_mode="use_mm_for_euclid_dist"),
    "exponential_": lambda L, x: x.detach().exponential_(),
    "cauchy_": lambda L, x: x.detach().cauchy_(),
    "log_normal_": lambda L, x: x.detach().log_normal_(),
    "geometric_": lambda L, x: x.detach().geometric_(0.5),
    "random_": lambda L, x: x.detach().random_(), "bernoulli": lambda L, x: L.bernoulli(x),
    "bernoulli_": lambda L, x: x.detach().bernoulli_(0.5), "poisson": lambda L, x: L.poisson(x),
    "_standard_gamma": lambda L, x: L._standard_gamma(x),
    "multinomial": lambda L, x: L.multinomial(x, 1),
    # (the 3-d pools, fractional pools, unpooling, conv_tbc's autograd)
    "max_pool3d": lambda L, x: L.nn.functional.max_pool3d(x.view(1, 1, 1, 3), 1),
    "max_pool3d(indices)": lambda L, x: L.nn.functional.max_pool3d(
        x.view(1, 1, 1, 3), 1, return_indices=True),
    "avg_pool3d": lambda L, x: L.nn.functional.avg_pool3d(x.view(1, 1, 1, 3), 1),
    "adaptive_avg_pool3d": lambda L, x: L.nn.functional.adaptive_avg_pool3d(
        x.view(1, 1, 1, 3), (1, 1, 2)),
    "adaptive_max_pool3d": lambda L, x: L.nn.functional.adaptive_max_pool3d(
        x.view(1, 1, 1, 3), 1),
    "fractional_max_pool2d": lambda L, x: L.nn.functional.fractional_max_pool2d(
        x.view(1, 1, 3), 1, output_size=1, _random_samples=L.zeros(1, 1, 2, dtype=x.dtype)),
    "max_unpool2d": lambda L, x: L.nn.functional.max_unpool2d(
        x.view(1, 1, 3), L.tensor([[[0, 1, 2]]]), 1),
    "max_unpool3d": lambda L, x: L.nn.functional.max_unpool3d(
        x.view(1, 1, 1, 3), L.tensor([[[[0, 1, 2]]]]), 1),
    "conv_tbc(autograd)": lambda L, x: L.conv_tbc(x.view(3, 1, 1), x[:, :1].view(1, 1, 1),
                                                   x[0, :1]),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_CALLS))
def test_complex_inputs_torch_rejects(name, dtype):
    call = _CALLS[name]

    def f(L):
        x = L.tensor([[1 + 2j, -0.5 + 1j, 0.3 - 0.2j]], dtype=getattr(L, dtype),
                     requires_grad=True)
        return call(L, x)
    same(f)


def test_casting_complex_to_real_warns_once_as_torch():
    """torch's TORCH_WARN_ONCE: the first complex -> real cast or copy_ in a process
    warns, later ones don't (torch is run in a fresh process to see its first one)."""
    import subprocess
    import sys
    import warnings

    import eagergrad as eg
    from eagergrad import _dtypes

    code = ("import warnings, torch\nwith warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n    x = torch.tensor([1 + 2j])\n"
            "    x.double(); torch.zeros(1).copy_(x)\n"
            "print(repr([str(m.message) for m in w]))")
    torch_msgs = eval(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                     text=True, check=True).stdout)
    _dtypes._warned_imag.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x = eg.tensor([1 + 2j])
        y = x.double()
        z = eg.zeros(1).copy_(x)
    msgs = [str(m.message) for m in w]
    assert len(msgs) == len(torch_msgs) == 1
    assert torch_msgs[0].startswith(msgs[0] + " (Triggered internally")
    assert y.tolist() == z.tolist() == [1.0]


_BOUNDARIES = {
    # R -> C -> R: the real leaf's gradient is real (torch takes the real part)
    "R->C->R": lambda L: L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True),
    # C -> R: a complex leaf under a real loss gets the conjugate Wirtinger gradient
    "C->R": lambda L: L.tensor([3 + 4j, 1 - 2j], dtype=L.complex128, requires_grad=True),
}


@pytest.mark.parametrize("name", sorted(_BOUNDARIES))
def test_real_and_complex_boundaries(name):
    def f(L):
        x = _BOUNDARIES[name](L)
        z = x * (1 + 2j) if not x.is_complex() else x
        w = L.polar(L.ones(2, dtype=L.float64), L.tensor([0.3, 1.1], dtype=L.float64))
        loss = (z * w).abs().pow(2).sum() + L.view_as_real(z * z).sum()
        loss.backward()
        return x.grad, x.grad.dtype
    same(f)


def test_complex_scalar_backward_needs_a_gradient():
    def f(L):
        z = L.tensor([3 + 4j], requires_grad=True)
        (z * z).sum().backward()
    same(f)

    def g(L):  # with one, it runs: the gradient is v * conj(dz^2/dz) = v * 2 conj(z)
        z = L.tensor([3 + 4j], requires_grad=True)
        (z * z).sum().backward(L.tensor(1 - 1j))
        return z.grad
    same(g)
