"""torch.nn.utils (gradient clipping, parameter vectors, parametrizations, weight_norm,
spectral_norm) and the nn.init initialisers against torch. Module weights are fixed
arrays loaded into both libraries; random initialisers are checked by structure."""
import math
import warnings

import numpy as np
import pytest
import torch
from conftest import same, same_error

import eagergrad as eg

rng = np.random.default_rng(0)
W0 = rng.standard_normal((2, 3))
B0 = rng.standard_normal(2)
X0 = rng.standard_normal((4, 3))
U0 = rng.standard_normal(2)
V0 = rng.standard_normal(3)


def _linear(L, dtype="float32"):
    m = L.nn.Linear(3, 2).to(getattr(L, dtype))
    m.load_state_dict({"weight": L.tensor(W0, dtype=getattr(L, dtype)),
                       "bias": L.tensor(B0, dtype=getattr(L, dtype))})
    return m


def _x(L, dtype="float32"):
    return L.tensor(X0, dtype=getattr(L, dtype))


# ---- clip_grad -------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), 0.5])
def test_clip_grad_norm(norm_type):
    def f(L, log):
        m = _linear(L)
        extra = L.ones(2, requires_grad=True)  # no grad: skipped
        (m(_x(L)) ** 2).sum().backward()
        v = m.weight.grad._version
        total = L.nn.utils.clip_grad_norm_(list(m.parameters()) + [extra], max_norm=0.5,
                                           norm_type=norm_type)
        log.append((total, m.weight.grad, m.bias.grad, m.weight.grad._version - v))
        # already small: scaled by 1 (still an in-place mul)
        total = L.nn.utils.clip_grad_norm_(m.parameters(), 10.0, norm_type, foreach=True)
        log.append((total, m.weight.grad, m.weight.grad._version - v))
    same(f)


def test_clip_grad_value_total_norm_and_with_norm():
    def f(L, log):
        m = _linear(L, "float64")
        (m(_x(L, "float64")) ** 2).sum().backward()
        v = m.weight.grad._version
        log.append(L.nn.utils.clip_grad_value_(m.parameters(), 1.5))
        log.append((m.weight.grad, m.bias.grad, m.weight.grad._version - v))
        log.append(L.nn.utils.get_total_norm([m.weight.grad, m.bias.grad], 3.0))
        log.append(L.nn.utils.get_total_norm(m.bias.grad))
        log.append(L.nn.utils.get_total_norm([]))
        L.nn.utils.clip_grads_with_norm_(m.weight, 1.0, L.tensor(4.0, dtype=L.float64))
        log.append(m.weight.grad)
        log.append(L.nn.utils.clip_grad_norm_([], 1.0))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            log.append(L.nn.utils.clip_grad_norm_((p for p in []), 1.0))
            log.append(L.nn.utils.clip_grad_norm(m.parameters(), 1.0))
        log.append([(x.category.__name__, str(x.message)) for x in w])
    same(f)


def test_clip_grad_norm_nonfinite():
    def f(L, log):
        w = L.ones(3, requires_grad=True)
        w.grad = L.tensor([1.0, float("inf"), 2.0])
        log.append(L.nn.utils.clip_grad_norm_([w], 1.0))  # scaled by inf/inf -> nan
        log.append(w.grad)
        w.grad = L.tensor([1.0, float("nan"), 2.0])
        L.nn.utils.clip_grad_norm_(w, 1.0, error_if_nonfinite=True)  # RuntimeError
    same(f)


def test_parameters_vector_round_trip():
    def f(L, log):
        m = _linear(L)
        vec = L.nn.utils.parameters_to_vector(m.parameters())
        log.append(vec)
        L.nn.utils.vector_to_parameters(vec.detach() * 2, m.parameters())
        log.append((m.weight, m.bias, m(_x(L))))
        try:
            L.nn.utils.vector_to_parameters([1.0], m.parameters())
        except TypeError as e:
            log.append(str(e))
    same(f)


# ---- parametrize -----------------------------------------------------------------------
def _symmetric(L):
    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X + X.transpose(-1, -2)

        def right_inverse(self, A):
            return A / 2
    return Symmetric()


def _scale(L, k):
    class Scale(L.nn.Module):
        def forward(self, X):
            return X * k
    return Scale()


def test_register_parametrization():
    def f(L, log):
        P = L.nn.utils.parametrize
        m = L.nn.Linear(3, 3)
        m.load_state_dict({"weight": L.tensor(np.arange(9.0).reshape(3, 3) / 7),
                           "bias": L.tensor(B0.tolist() + [0.5])})
        log.append(P.is_parametrized(m))
        P.register_parametrization(m, "weight", _symmetric(L))
        log.append((type(m).__name__, P.type_before_parametrizations(m).__name__,
                    P.is_parametrized(m), P.is_parametrized(m, "weight"),
                    P.is_parametrized(m, "bias")))
        log.append((m.weight, m.parametrizations.weight.original, list(m.state_dict()),
                    [n for n, _ in m.named_parameters()], repr(m)))
        y = m(L.tensor(np.c_[X0, X0[:, :1]], dtype=L.float32))
        y.sum().backward()
        log.append((y, m.parametrizations.weight.original.grad, m.bias.grad))
        P.register_parametrization(m, "weight", _scale(L, 2.0))  # chained
        log.append((m.weight, list(m.state_dict()), repr(m.parametrizations)))
        with P.cached():
            log.append((m.weight is m.weight, m.weight))
        log.append(m.weight is m.weight)
        P.register_parametrization(m, "bias", _scale(L, 3.0))
        log.append((m.bias, list(m.state_dict())))
        P.remove_parametrizations(m, "bias", leave_parametrized=False)
        log.append((m.bias, type(m).__name__))
        P.remove_parametrizations(m, "weight")
        log.append((type(m).__name__, m.weight, list(m.state_dict()),
                    hasattr(m, "parametrizations")))
    same(f)


def test_parametrization_assignment_and_state_dict_load():
    def f(L, log):
        P = L.nn.utils.parametrize
        m = P.register_parametrization(_linear(L), "weight", _scale(L, 2.0))
        try:
            m.weight = L.ones(2, 3)  # Scale has no right_inverse
        except RuntimeError as e:
            log.append(str(e))
        m2 = P.register_parametrization(L.nn.Linear(3, 3), "weight", _symmetric(L))
        m2.weight = L.tensor(np.arange(9.0).reshape(3, 3))
        log.append((m2.weight, m2.parametrizations.weight.original))
        sd = m.state_dict()
        m3 = P.register_parametrization(L.nn.Linear(3, 2), "weight", _scale(L, 2.0))
        m3.load_state_dict(sd)
        log.append((m3.weight, m3(_x(L))))
    same(f)


@pytest.mark.parametrize("case", ["missing", "shape", "dtype", "not-tensor", "remove",
                                  "unsafe-shape"])
def test_parametrize_errors(case):
    def f(L):
        P = L.nn.utils.parametrize

        class Fn(L.nn.Module):
            def __init__(self, fn):
                super().__init__()
                self.fn = fn

            def forward(self, X):
                return self.fn(X)
        m = _linear(L)
        if case == "missing":
            P.register_parametrization(m, "nope", _scale(L, 1.0))
        elif case == "shape":
            P.register_parametrization(m, "weight", Fn(lambda X: X[:1]))
        elif case == "dtype":
            P.register_parametrization(m, "weight", Fn(lambda X: X.double()))
        elif case == "not-tensor":
            P.register_parametrization(m, "weight", Fn(lambda X: 3))
        elif case == "remove":
            P.remove_parametrizations(m, "weight")
        else:
            P.register_parametrization(m, "weight", Fn(lambda X: X[:1]), unsafe=True)
            return m.weight
    same(f)  # (torch's exception type and message, or the result)


# ---- weight_norm / spectral_norm -------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    def f(L, log):
        m = L.nn.utils.parametrizations.weight_norm(_linear(L, "float64"), dim=dim)
        pw = m.parametrizations.weight
        # (.detach(): torch records its fused WeightNormInterfaceBackward0 for dims 0 and -1,
        # eagergrad the composition v * (g / ||v||), MulBackward0, as torch for other dims)
        log.append((pw.original0, pw.original1, list(m.state_dict()), m.weight.detach()))
        y = m(_x(L, "float64"))
        (y ** 2).sum().backward()
        log.append((y, pw.original0.grad, pw.original1.grad))
    same(f)


def test_weight_norm_old_style_and_compat_load():
    def f(L, log):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = L.nn.utils.weight_norm(_linear(L), dim=1)
        log.append([(x.category.__name__, str(x.message)) for x in w])
        log.append((list(m.state_dict()), m.weight_g, m.weight_v, m.weight.detach()))
        with torch.no_grad() if L is torch else eg.no_grad():
            m.weight_g.mul_(2.0)
        y = m(_x(L))
        y.sum().backward()
        log.append((y, m.weight_g.grad, m.weight_v.grad))
        try:
            L.nn.utils.weight_norm(m, dim=1)
        except RuntimeError as e:
            log.append(str(e))
        # an old-style state dict loads into the parametrized module
        m2 = L.nn.utils.parametrizations.weight_norm(L.nn.Linear(3, 2), dim=1)
        m2.load_state_dict(m.state_dict())
        log.append((m2.weight.detach(), list(m2.state_dict())))
        L.nn.utils.remove_weight_norm(m)
        log.append((list(m.state_dict()), m.weight, m(_x(L))))
        try:
            L.nn.utils.remove_weight_norm(m)
        except ValueError as e:
            log.append(str(e)[:30])
    same(f)


def test_spectral_norm_parametrization():
    """_u and _v are random in __init__: both libraries load the same buffers."""
    def f(L, log):
        m = L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(3, 2))
        log.append(list(m.state_dict()))
        sd = {"bias": L.tensor(B0, dtype=L.float32),
              "parametrizations.weight.original": L.tensor(W0, dtype=L.float32),
              "parametrizations.weight.0._u": L.tensor(U0 / np.linalg.norm(U0),
                                                       dtype=L.float32),
              "parametrizations.weight.0._v": L.tensor(V0 / np.linalg.norm(V0),
                                                       dtype=L.float32)}
        m.load_state_dict(sd)
        sn = m.parametrizations.weight[0]
        for _ in range(2):  # training: one power iteration per access
            y = m(_x(L))
            log.append((y, sn._u, sn._v, sn._u._version))
        y.sum().backward()
        log.append((y, m.parametrizations.weight.original.grad))
        m.eval()
        log.append((m.weight, sn._u))
        log.append(round(float(np.linalg.norm(m.weight.detach().numpy(), 2)), 4))
        c = L.nn.utils.parametrizations.spectral_norm(L.nn.Conv1d(2, 3, 2), dim=1)
        log.append((list(c.state_dict()), c.parametrizations.weight[0]._u.shape,
                    c.parametrizations.weight[0]._v.shape))
    same(f)


def test_spectral_norm_errors():
    same_error(lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(3, 2), "nope"),
               "has no parameter or buffer with name 'nope'", ValueError)
    same_error(lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(3, 2), dim=2),
               "Dimension out of range", IndexError)
    same_error(lambda L: L.nn.utils.parametrizations.spectral_norm(
        L.nn.Linear(3, 2), n_power_iterations=0), "Expected n_power_iterations to be positive",
        ValueError)


# ---- nn.init ---------------------------------------------------------------------------
def test_dirac_matches_torch():
    def f(L, log):
        for shape, groups in [((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((3, 5, 1, 2, 3), 1)]:
            t = L.nn.init.dirac_(L.empty(*shape), groups)
            log.append(t)
        for bad in [lambda: L.nn.init.dirac_(L.empty(2, 2)),
                    lambda: L.nn.init.dirac_(L.empty(3, 2, 2), groups=2)]:
            try:
                bad()
            except ValueError as e:
                log.append(str(e))
    same(f)


@pytest.mark.parametrize("shape,gain", [((3, 5), 1.0), ((6, 2, 2), 2.0), ((4, 4), 0.5)])
def test_orthogonal_structure(shape, gain):
    t = eg.nn.init.orthogonal_(eg.empty(*shape, dtype=eg.float64), gain=gain)
    q = t.numpy().reshape(shape[0], -1)
    small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(small, gain ** 2 * np.eye(len(small)), atol=1e-10)
    assert t.requires_grad is False and t.shape == shape
    same_error(lambda L: L.nn.init.orthogonal_(L.empty(3)),
               "Only tensors with 2 or more dimensions are supported", ValueError)


def test_sparse_structure():
    t = eg.nn.init.sparse_(eg.empty(10, 4), sparsity=0.25, std=0.5)
    zeros = (t.numpy() == 0).sum(0)
    assert zeros.tolist() == [math.ceil(0.25 * 10)] * 4
    assert 0.1 < t.numpy()[t.numpy() != 0].std() < 1.5
    same_error(lambda L: L.nn.init.sparse_(L.empty(3), 0.5),
               "Only tensors with 2 dimensions are supported", ValueError)


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "eye", "dirac",
                                  "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                  "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_aliases_warn(name):
    def f(L, log):
        args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
        shape = {"dirac": (2, 2, 3)}.get(name, (3, 4))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = getattr(L.nn.init, name)(L.empty(*shape), *args)
        log.append([(x.category.__name__, str(x.message)) for x in w])
        log.append((t.shape, getattr(L.nn.init, name).__name__))
        if name in ("constant", "eye", "dirac"):
            log.append(t)
    same(f)


def test_spectral_norm_old_style():
    def f(L, log):
        m = L.nn.utils.spectral_norm(L.nn.Linear(3, 2))
        log.append(list(m.state_dict()))
        m.load_state_dict({"bias": L.tensor(B0, dtype=L.float32),
                           "weight_orig": L.tensor(W0, dtype=L.float32),
                           "weight_u": L.tensor(U0 / np.linalg.norm(U0), dtype=L.float32),
                           "weight_v": L.tensor(V0 / np.linalg.norm(V0), dtype=L.float32)})
        for _ in range(2):
            y = m(_x(L))
            log.append((y, m.weight_u, m.weight_v, m.weight_u._version))
        y.sum().backward()
        log.append((m.weight, m.weight_orig.grad))
        m.eval()
        log.append(m(_x(L)))
        try:
            L.nn.utils.spectral_norm(m)
        except RuntimeError as e:
            log.append(str(e))
        L.nn.utils.remove_spectral_norm(m)
        log.append((list(m.state_dict()), m.weight))
        try:
            L.nn.utils.remove_spectral_norm(m)
        except ValueError as e:
            log.append(str(e)[:30])
    same(f)
