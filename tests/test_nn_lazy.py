"""Lazy modules and uninitialized parameters, differentially against torch: reprs, state
dicts, the class a module becomes, shapes inferred on the first forward, loading a state
dict into a lazy module, errors."""
import numpy as np
import pytest
from conftest import same, same_error

X = np.random.default_rng(3).standard_normal((2, 3, 6))


def _state(m):
    return [(k, type(v).__name__, tuple(v.shape) if type(v).__name__ in ("Tensor", "Parameter")
             else repr(v)) for k, v in m.state_dict().items()]


LAZY = [
    ("LazyLinear", lambda L: L.nn.LazyLinear(4), (2, 3, 6)),
    ("LazyLinear-nobias", lambda L: L.nn.LazyLinear(4, bias=False), (5, 6)),
    ("LazyConv1d", lambda L: L.nn.LazyConv1d(4, 3, padding=1), (2, 3, 6)),
    ("LazyConv1d-unbatched", lambda L: L.nn.LazyConv1d(2, 2, bias=False), (3, 6)),
    ("LazyConv2d", lambda L: L.nn.LazyConv2d(4, 2, stride=2), (1, 2, 4, 4)),
    ("LazyConv2d-groups", lambda L: L.nn.LazyConv2d(4, 1, groups=2), (1, 2, 3, 3)),
    ("LazyConv3d", lambda L: L.nn.LazyConv3d(2, 2), (1, 1, 2, 3, 3)),
    ("LazyConvTranspose1d", lambda L: L.nn.LazyConvTranspose1d(2, 3, stride=2), (1, 3, 4)),
    ("LazyConvTranspose2d", lambda L: L.nn.LazyConvTranspose2d(2, 2), (1, 3, 2, 2)),
]


@pytest.mark.parametrize("case", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_module_initializes_on_first_forward(case):
    _, make, shape = case

    def f(L, log):
        m = make(L)
        log.append((repr(m), type(m).__name__, m.has_uninitialized_params(), _state(m),
                    repr(m.weight), [n for n, _ in m.named_parameters()]))
        x = L.ones(shape)
        y = m(x)
        log.append((repr(m), type(m).__name__, tuple(y.shape), _state(m),
                    y.grad_fn.name(), m.weight.requires_grad, type(m.weight).__name__,
                    hasattr(m, "_initialize_hook")))
        # the weights from torch, loaded into the now materialized module: same output
        torch_like = {k: L.tensor(np.linspace(-1, 1, int(np.prod(v.shape))).reshape(v.shape),
                                  dtype=L.float32) for k, v in m.state_dict().items()}
        m.load_state_dict(torch_like)
        log.append(m(x))
    same(f)


def test_load_state_dict_materializes():
    def f(L, log):
        m = L.nn.LazyLinear(2)
        sd = {"weight": L.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]]),
              "bias": L.tensor([0.5, -0.5])}
        log.append(repr(m.load_state_dict(sd)))
        log.append((type(m).__name__, type(m.weight).__name__, m.in_features,
                    m.has_uninitialized_params()))
        y = m(L.ones(1, 3))
        log.append((y, type(m).__name__, repr(m)))
        # an uninitialized module loads another uninitialized module's state dict
        a, b = L.nn.LazyConv2d(3, 2), L.nn.LazyConv2d(3, 2)
        log.append(repr(a.load_state_dict(b.state_dict())))
        log.append((type(a).__name__, a.has_uninitialized_params()))
    same(f)


def test_uninitialized_parameter_and_buffer():
    def f(L, log):
        p = L.nn.UninitializedParameter()
        b = L.nn.UninitializedBuffer()
        log.append((repr(p), repr(b), p.requires_grad, b.requires_grad,
                    L.nn.parameter.is_lazy(p), L.nn.parameter.is_lazy(b),
                    L.nn.parameter.is_lazy(L.ones(1)), isinstance(p, L.nn.Parameter)))
        p.materialize((2, 3))
        b.materialize((4,), dtype=L.float64)
        log.append((type(p).__name__, tuple(p.shape), p.requires_grad, type(b).__name__,
                    tuple(b.shape), b.dtype, L.nn.parameter.is_lazy(p)))
    same(f)


def test_errors():
    same_error(lambda L: L.nn.UninitializedParameter().shape,
               "Can't access the shape of an uninitialized parameter or buffer.")

    def load_lazy_into_initialized(L):
        L.nn.Linear(3, 2).load_state_dict(L.nn.LazyLinear(2).state_dict())
    same_error(load_lazy_into_initialized,
               "Can't access the shape of an uninitialized parameter")
    same_error(lambda L: L.nn.LazyConv2d(4, 2)(L.ones(2, 3)),
               "Expected 3D (unbatched) or 4D (batched) input to LazyConv2d, but got input of "
               "size: torch.Size([2, 3])")
    same_error(lambda L: L.nn.LazyConv2d(4, 1, groups=2)(L.ones(1, 3, 2, 2)),
               "in_channels must be divisible by groups", ValueError)
