"""eagergrad.optim against torch.optim: N steps of every optimizer and option from the same
parameters with the same gradients, parameters compared every step; state_dict, its
round trip, versions, hooks, errors; lr schedulers' lr sequences.

The loss is (W * (W * C + D)).sum(): its gradient (W C + D) + W C accumulates two terms,
so both libraries compute it bit for bit and the comparison measures the optimizers alone.
"""
import warnings

import numpy as np
import pytest
import torch
from conftest import same, same_error

import eagergrad as eg

N = 20
RTOL = {"float32": 1e-5, "float64": 1e-10}

rng = np.random.default_rng(0)
W0 = rng.standard_normal((5, 4))
C0 = rng.uniform(0.2, 1.0, (5, 4))
D0 = rng.standard_normal((5, 4))
B0 = rng.standard_normal(3)

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.1, momentum=0.5)),
    ("SGD", dict(lr=0.05, maximize=True, momentum=0.3)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.5, 0.9))),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, maximize=True, amsgrad=True, weight_decay=0.05)),
    ("Adam", dict(lr=0.01, foreach=True)),
    ("Adam", dict(lr=0.01, fused=True)),
    ("Adam", dict(lr=0.01, foreach=False, fused=False, decoupled_weight_decay=True,
                  weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True, foreach=True)),
    ("AdamW", dict(lr=0.01, fused=True, eps=1e-3)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, maximize=True, foreach=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1, fused=True, eps=1e-3)),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in CASES]


def _params(L, dtype):
    dt = getattr(L, dtype)
    W = L.tensor(W0, dtype=dt, requires_grad=True)
    b = L.tensor(B0, dtype=dt, requires_grad=True)
    return W, b, L.tensor(C0, dtype=dt), L.tensor(D0, dtype=dt)


def _loss(W, b, C, D):
    return (W * (W * C + D)).sum() + (b * b * b[0]).sum()


def _sd(sd):
    """A state_dict with tensors as (dtype, shape, numpy values)."""
    def conv(v):
        if isinstance(v, (torch.Tensor, eg.Tensor)):
            return (str(v.dtype).replace("eagergrad.", "torch."), tuple(v.shape),
                    np.asarray(v.detach().tolist()))
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(conv(x) for x in v)
        return v
    return conv(sd)


def _close(a, b, rtol, path="sd"):
    assert type(a) is type(b), (path, a, b)
    if isinstance(a, dict):
        assert list(a) == list(b), (path, list(a), list(b))
        for k in a:
            _close(a[k], b[k], rtol, f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)) and a and isinstance(a[-1], np.ndarray):
        assert a[:2] == b[:2], (path, a[:2], b[:2])
        np.testing.assert_allclose(b[2], a[2], rtol=rtol, atol=rtol, err_msg=path)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, rtol, f"{path}[{i}]")
    else:
        assert a == b, (path, a, b)


def _train(L, name, kw, dtype, n=N, opt=None, params=None):
    """n steps; per step the parameters' values and versions; the optimizer."""
    W, b, C, D = params or _params(L, dtype)
    if opt is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = getattr(L.optim, name)([{"params": [W]}, {"params": [b], "lr": kw["lr"] / 2}],
                                         **kw)
    trace = []
    for _ in range(n):
        opt.zero_grad()
        _loss(W, b, C, D).backward()
        opt.step()
        trace.append((W.detach().numpy().copy(), b.detach().numpy().copy(),
                      W._version, b._version))
    return trace, opt, (W, b, C, D)


def _compare_traces(t, e, rtol):
    for k, (a, b) in enumerate(zip(t, e)):
        np.testing.assert_allclose(b[0], a[0], rtol=rtol, atol=rtol, err_msg=f"W step {k}")
        np.testing.assert_allclose(b[1], a[1], rtol=rtol, atol=rtol, err_msg=f"b step {k}")
        assert b[2:] == a[2:], f"versions at step {k}: torch {a[2:]}, eagergrad {b[2:]}"


@pytest.mark.fast_first
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_steps_match_torch(name, kw, dtype):
    t, topt, _ = _train(torch, name, kw, dtype)
    e, eopt, _ = _train(eg, name, kw, dtype)
    _compare_traces(t, e, RTOL[dtype])
    _close(_sd(topt.state_dict()), _sd(eopt.state_dict()), RTOL[dtype])
    assert repr(eopt) == repr(topt)


@pytest.mark.parametrize("name,kw", CASES[1::3], ids=IDS[1::3])
def test_state_dict_round_trip_continues_identically(name, kw):
    """Train 7 steps, load the state_dict into a fresh optimizer over fresh parameters
    holding the same values, train 7 more: as torch does it."""
    def run(L):
        t1, opt, params = _train(L, name, kw, "float32", n=7)
        sd = opt.state_dict()
        W2 = params[0].detach().clone().requires_grad_(True)
        b2 = params[1].detach().clone().requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt2 = getattr(L.optim, name)([{"params": [W2]}, {"params": [b2]}], lr=0.5)
        opt2.load_state_dict(sd)
        shares = [opt2.state[W2][k] is opt.state[params[0]][k] for k in opt2.state[W2]]
        t2, opt2, _ = _train(L, name, kw, "float32", n=7, opt=opt2,
                             params=(W2, b2) + params[2:])
        return t1 + t2, _sd(opt2.state_dict()), shares
    t, tsd, tshares = run(torch)
    e, esd, eshares = run(eg)
    _compare_traces([x[:2] + (0, 0) for x in t], [x[:2] + (0, 0) for x in e], 1e-5)
    _close(tsd, esd, 1e-5)
    assert eshares == tshares


def test_state_is_keyed_by_parameter_and_survives_steps():
    def f(L, log):
        W, b, C, D = _params(L, "float32")
        opt = L.optim.Adam([W, b], lr=0.1)
        _loss(W, b, C, D).backward()
        opt.step()
        m = opt.state[W]["exp_avg"]
        log.append(sorted(opt.state[W]))
        log.append((opt.state[W]["step"], m._version, opt.state[W]["exp_avg_sq"]._version))
        opt.step()
        log.append((opt.state[W]["exp_avg"] is m, m, m._version))
        log.append((opt.state[W]["step"]._version, opt.state[W]["exp_avg_sq"]._version))
    same(f)


def test_param_versions_and_saved_tensor_check():
    """An optimizer step is an in-place update: a graph that saved the parameter fails."""
    def f(L):
        W, b, C, D = _params(L, "float32")
        opt = L.optim.SGD([W], lr=0.1)
        loss = _loss(W, b, C, D)
        loss.backward(retain_graph=True)
        opt.step()
        loss.backward()
    same_error(f, "modified by an inplace operation", messages=False)


def test_zero_grad():
    def f(L, log):
        W, b, C, D = _params(L, "float32")
        opt = L.optim.SGD([W, b], lr=0.1)
        _loss(W, b, C, D).backward()
        g, v = W.grad, W.grad._version
        opt.zero_grad(set_to_none=False)
        log.append((W.grad is g, W.grad, W.grad._version - v))
        opt.zero_grad()
        log.append((W.grad, b.grad))
        W.grad = (W * 2)  # a grad with history: detached by zero_grad(False)
        opt.zero_grad(False)
        log.append((W.grad.requires_grad, W.grad.grad_fn))
    same(f)


def test_param_groups_and_add_param_group():
    def f(L, log):
        W, b, C, D = _params(L, "float32")
        opt = L.optim.SGD([{"params": W, "momentum": 0.5}], lr=0.1)
        opt.add_param_group({"params": [b], "lr": 0.01})
        log.append([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
        log.append(opt.state_dict()["param_groups"])
        log.append(opt.defaults)
        for _ in range(3):
            opt.zero_grad()
            _loss(W, b, C, D).backward()
            opt.step()
        log.append((W, b, opt.state_dict()["state"]))
        log.append(repr(opt))
    same(f)


def test_named_parameters():
    def f(L, log):
        W, b, C, D = _params(L, "float32")
        opt = L.optim.Adam([("W", W), ("b", b)], lr=0.1)
        log.append(opt.state_dict()["param_groups"])
    same(f)


def test_step_hooks_order_and_arguments():
    def f(L, log):
        W, b, C, D = _params(L, "float32")
        opt = L.optim.Adam([W], lr=0.1)
        h1 = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre1", o is opt, a[1:], k,
                                                                    W._version)))
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre2", W._version)))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", W._version,
                                                                sorted(o.state[W]))))
        _loss(W, b, C, D).backward()
        opt.step()
        h1.remove()
        log.append(opt.step(lambda: L.tensor(3.0)))
    same(f)


def test_closure():
    def f(L, log):
        W, b, C, D = _params(L, "float64")
        opt = L.optim.SGD([W, b], lr=0.01, momentum=0.9)

        def closure():
            opt.zero_grad()
            loss = _loss(W, b, C, D)
            loss.backward()
            log.append(L.is_grad_enabled())
            return loss
        with L.no_grad():
            for _ in range(3):
                log.append(opt.step(closure))
        log.append((W, b))
    same(f)


def test_complex_parameters():
    def f(L, log):
        z = L.tensor(W0[:2] + 1j * D0[:2], dtype=L.complex64, requires_grad=True)
        for name, kw in [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1)),
                         ("RMSprop", dict(lr=0.01, centered=True)), ("Adagrad", dict(lr=0.1))]:
            w = z.detach().clone().requires_grad_(True)
            opt = getattr(L.optim, name)([w], **kw)
            for _ in range(5):
                opt.zero_grad()
                (w * w.conj() * L.tensor(C0[:2])).real.sum().backward()
                opt.step()
            log.append((name, w, opt.state_dict()["state"]))
    same(f)


BAD = [
    (lambda L, W: L.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda L, W: L.optim.SGD(W, lr=0.1), TypeError, "should be an iterable of Tensors"),
    (lambda L, W: L.optim.SGD([W * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda L, W: L.optim.SGD([W, 3], lr=0.1), TypeError, "optimizer can only optimize Tensors"),
    (lambda L, W: L.optim.SGD([{"params": {W}}], lr=0.1), TypeError, "ordered collections"),
    (lambda L, W: L.optim.SGD([{"params": [W]}, {"params": [W]}], lr=0.1), ValueError,
     "some parameters appear in more than one parameter group"),
    (lambda L, W: L.optim.SGD([W], lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
    (lambda L, W: L.optim.SGD([W], lr=0.1, momentum=-1), ValueError, "Invalid momentum"),
    (lambda L, W: L.optim.SGD([W], lr=0.1, weight_decay=-1), ValueError, "Invalid weight_decay"),
    (lambda L, W: L.optim.SGD([W], lr=0.1, nesterov=True), ValueError, "Nesterov momentum"),
    (lambda L, W: L.optim.SGD([W], lr=0.1, fused=True, foreach=True), RuntimeError,
     "`fused` and `foreach` cannot be `True` together."),
    (lambda L, W: L.optim.Adam([W], lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
    (lambda L, W: L.optim.Adam([W], eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda L, W: L.optim.Adam([W], betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda L, W: L.optim.Adam([W], betas=(0.9, -0.1)), ValueError,
     "Invalid beta parameter at index 1: -0.1"),
    (lambda L, W: L.optim.AdamW([W], weight_decay=-0.1), ValueError,
     "Invalid weight_decay value: -0.1"),
    (lambda L, W: L.optim.Adam([W], fused=True, differentiable=True), RuntimeError,
     "`fused` does not support `differentiable`"),
    (lambda L, W: L.optim.Adam([W], betas=(0.9, L.tensor(0.5))), ValueError,
     "betas must be either both"),
    (lambda L, W: L.optim.RMSprop([W], alpha=-1.0), ValueError, "Invalid alpha value: -1.0"),
    (lambda L, W: L.optim.RMSprop([W], momentum=-1.0), ValueError, "Invalid momentum value"),
    (lambda L, W: L.optim.Adagrad([W], lr_decay=-1.0), ValueError, "Invalid lr_decay value"),
    (lambda L, W: L.optim.Adagrad([W], initial_accumulator_value=-1.0), ValueError,
     "Invalid initial_accumulator_value value: -1.0"),
    (lambda L, W: L.optim.SGD([W], lr=0.1).add_param_group([W]), TypeError,
     "param_group must be a dict"),
]


@pytest.mark.parametrize("make,exc,phrase", BAD, ids=[b[2][:30] for b in BAD])
def test_errors(make, exc, phrase):
    same_error(lambda L: make(L, L.zeros(2, requires_grad=True)), phrase, exc)


@pytest.mark.parametrize("name,kw", [("Adam", dict(capturable=True)),
                                     ("AdamW", dict(capturable=True)),
                                     ("RMSprop", dict(capturable=True))])
def test_capturable_on_cpu_fails_at_step(name, kw):
    def f(L):
        W = L.ones(2, requires_grad=True)
        opt = getattr(L.optim, name)([W], **kw)
        W.grad = L.ones(2)
        opt.step()
    same_error(f, "If capturable=True", AssertionError)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_differentiable_on_leaf_fails_at_step(name):
    def f(L):
        W = L.ones(2, requires_grad=True)
        opt = getattr(L.optim, name)([W], lr=0.1, differentiable=True)
        W.grad = L.ones(2)
        opt.step()
    same_error(f, "a leaf Variable that requires grad", RuntimeError)


def test_load_state_dict_errors():
    def f(L, log):
        W, b, C, D = _params(L, "float32")
        opt = L.optim.SGD([W, b], lr=0.1)
        for sd in [{"state": {}, "param_groups": []},
                   {"state": {}, "param_groups": [{"params": [0], "lr": 0.1}]}]:
            try:
                opt.load_state_dict(sd)
            except ValueError as e:
                log.append(str(e))
    same(f)


def test_every_torch_optim_name_is_there():
    for name in torch.optim.__all__:
        ours, theirs = getattr(eg.optim, name), getattr(torch.optim, name)
        assert type(ours) is type(theirs), name
        if isinstance(theirs, type) and name != "Optimizer":
            assert issubclass(ours, eg.optim.Optimizer), name
    assert sorted(eg.optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)


# ---- Adafactor, Muon, SparseAdam ---------------------------------------------------------
# (name, options, parameter shapes): the parameters are split into two param groups, the
# second with half the lr; an option given as a function of the library is called (a Tensor
# lr). Adafactor factors the second moment of a parameter of 2+ dimensions over its last
# two; Muon takes matrices, transposing a tall one for its Newton-Schulz iterations.
ADA = [(5, 4), (2, 3, 4), (3,), ()]
MUON = [(5, 4), (3, 6)]
NEW_CASES = [
    ("Adafactor", dict(lr=0.01), ADA),
    # (lr above 1 / sqrt(step) from step 5: rho_t switches from lr to the relative step)
    ("Adafactor", dict(lr=0.5, weight_decay=0.1), ADA),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, d=1.5, maximize=True), ADA),
    ("Adafactor", dict(lr=0.3, eps=(1e-3, 1e-2), weight_decay=0.2, foreach=True), ADA),
    ("Adafactor", dict(lr=0.05, eps=(0.0, 0.5), beta2_decay=0.0, foreach=False), ADA),
    ("Adafactor", dict(lr=lambda L: L.tensor(0.05), weight_decay=0.1), ADA),
    # (a float32 Tensor lr: torch's alpha, 1 - lr * weight_decay and its step are float32
    # tensors while rho_t is lr, float64 numbers after step 7. float64 only: in float32 the
    # (2, 3, 4) parameter bounces about its minimum at this relative step, and the
    # last-bit differences of torch's and XLA's reductions grow past 1e-5 there)
    ("Adafactor", dict(lr=lambda L: L.tensor(0.4), weight_decay=0.1), ADA, ["float64"]),
    ("Muon", dict(lr=0.02), MUON),
    ("Muon", dict(lr=0.05, nesterov=False, momentum=0.3, weight_decay=0.0), MUON),
    ("Muon", dict(lr=0.02, momentum=0.6, adjust_lr_fn="match_rms_adamw"), MUON),
    ("Muon", dict(lr=0.02, adjust_lr_fn="original", ns_steps=3, eps=1e-3,
                  ns_coefficients=(3.0, -3.2, 1.2)), MUON),
    ("Muon", dict(lr=lambda L: L.tensor(0.03), weight_decay=0.3), MUON),
]
NEW_IDS = [f"{c[0]}-" + "-".join(f"{k}={'tensor' if callable(v) else v}"
                                  for k, v in c[1].items()) for c in NEW_CASES]
NEW_STEPS = [pytest.param(c[0], c[1], c[2], dtype, id=f"{i}-{dtype}")
             for c, i in zip(NEW_CASES, NEW_IDS)
             for dtype in (c[3] if len(c) > 3 else ["float32", "float64"])]


def _shaped_params(L, shapes, dtype, seed=1):
    """Parameters of `shapes` and the C, D of their loss terms (W * (W * C + D)).sum()."""
    rng = np.random.default_rng(seed)
    dt = getattr(L, dtype)
    ps = [L.tensor(rng.standard_normal(s), dtype=dt, requires_grad=True) for s in shapes]
    cds = [(L.tensor(rng.uniform(0.2, 1.0, s), dtype=dt), L.tensor(rng.standard_normal(s),
                                                                   dtype=dt))
           for s in shapes]
    return ps, cds


def _options(L, kw):
    return {k: v(L) if callable(v) else v for k, v in kw.items()}


def _make_new(L, name, kw, ps):
    kw = _options(L, kw)
    half = len(ps) // 2
    lr2 = kw["lr"] / 2 if isinstance(kw["lr"], float) else kw["lr"]
    return getattr(L.optim, name)([{"params": ps[:half]}, {"params": ps[half:], "lr": lr2}],
                                  **kw)


def _train_new(L, name, kw, shapes, dtype, n=N, opt=None, params=None):
    """n steps; per step every parameter's values and versions; the optimizer."""
    ps, cds = params or _shaped_params(L, shapes, dtype)
    opt = opt or _make_new(L, name, kw, ps)
    trace = []
    for _ in range(n):
        opt.zero_grad()
        sum((p * (p * c + d)).sum() for p, (c, d) in zip(ps, cds)).backward()
        opt.step()
        trace.append(([p.detach().numpy().copy() for p in ps], [p._version for p in ps]))
    return trace, opt, (ps, cds)


def _compare_new(t, e, rtol):
    for k, ((tv, tver), (ev, ever)) in enumerate(zip(t, e)):
        for i, (a, b) in enumerate(zip(tv, ev)):
            np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol, err_msg=f"param {i}, step {k}")
        assert ever == tver, f"versions at step {k}: torch {tver}, eagergrad {ever}"


@pytest.mark.fast_first
@pytest.mark.parametrize("name,kw,shapes,dtype", NEW_STEPS)
def test_new_optimizers_steps_match_torch(name, kw, shapes, dtype):
    """N steps: every parameter and its version after each, the state_dict (param_groups
    included) and repr as torch's."""
    t, topt, _ = _train_new(torch, name, kw, shapes, dtype)
    e, eopt, _ = _train_new(eg, name, kw, shapes, dtype)
    _compare_new(t, e, RTOL[dtype])
    _close(_sd(topt.state_dict()), _sd(eopt.state_dict()), RTOL[dtype])
    assert repr(eopt) == repr(topt)


@pytest.mark.parametrize("name,kw,shapes", [c[:3] for c in NEW_CASES[1::3]],
                         ids=NEW_IDS[1::3])
def test_new_optimizers_state_dict_round_trip(name, kw, shapes):
    """7 steps, the state_dict loaded by a fresh optimizer over fresh parameters holding
    the same values, 7 more steps: as torch; the loaded state tensors are the saved ones
    where torch's are."""
    def run(L):
        t1, opt, (ps, cds) = _train_new(L, name, kw, shapes, "float64", n=7)
        sd = opt.state_dict()
        ps2 = [p.detach().clone().requires_grad_(True) for p in ps]
        opt2 = _make_new(L, name, dict(kw, lr=0.5), ps2)
        opt2.load_state_dict(sd)
        shares = [opt2.state[ps2[0]][k] is opt.state[ps[0]][k] for k in opt2.state[ps2[0]]]
        t2, opt2, _ = _train_new(L, name, kw, shapes, "float64", n=7, opt=opt2,
                                 params=(ps2, cds))
        return t1 + t2, _sd(opt2.state_dict()), shares
    t, tsd, tshares = run(torch)
    e, esd, eshares = run(eg)
    _compare_new([(v, 0) for v, _ in t], [(v, 0) for v, _ in e], 1e-10)
    _close(tsd, esd, 1e-10)
    assert eshares == tshares


def test_adafactor_eps1_is_the_first_parameters():
    """eps=(None, ...): torch takes finfo(dtype).eps of a group's first parameter with a
    gradient for the whole group (float64 then float32 here, and the other way round)."""
    def f(L, log):
        for first, second in [(L.float64, L.float32), (L.float32, L.float64)]:
            a = L.tensor([[1e-20, 0.5], [2.0, -1e-21]], dtype=first, requires_grad=True)
            b = L.tensor([1e-20, -3.0], dtype=second, requires_grad=True)
            opt = L.optim.Adafactor([a, b], lr=0.1)
            for _ in range(3):
                a.grad = a.detach() * 2
                b.grad = b.detach() * 2
                opt.step()
            log.append((a, b, opt.state_dict()["state"]))
    same(f)


def test_muon_newton_schulz_in_bfloat16():
    """One Muon step of a tall, a wide and a square float64 matrix of zeros (lr 1 not
    adjusted, no momentum, no weight decay): the parameter is minus torch's bfloat16
    Newton-Schulz result, values a bfloat16 holds, bit for bit."""
    def f(L, log):
        rng = np.random.default_rng(3)
        for shape in [(7, 3), (3, 7), (4, 4)]:
            w = L.zeros(shape, dtype=L.float64, requires_grad=True)
            opt = L.optim.Muon([w], lr=1.0, weight_decay=0.0, nesterov=False, momentum=0.0)
            opt.param_groups[0]["adjust_lr_fn"] = "neither"  # (torch: lr as it is)
            w.grad = L.tensor(rng.standard_normal(shape))
            opt.step()
            log.append((w, (w.to(L.bfloat16).to(L.float64) == w).all()))
    assert same(f, exact=True)[0][1].values


NEW_BAD = [
    (lambda L, W: L.optim.Adafactor([W], lr=-0.1), ValueError,
     "Learning rate should be >= 0 but is: -0.1"),
    (lambda L, W: L.optim.Adafactor([W], beta2_decay=0.5), ValueError,
     "beta2_decay should be <= 0 but is: 0.5"),
    (lambda L, W: L.optim.Adafactor([W], eps=(-1.0, 1e-3)), ValueError,
     "epsilon1 should be >= 0 but is: -1.0"),
    (lambda L, W: L.optim.Adafactor([W], eps=(None, -1.0)), ValueError,
     "epsilon2 should be >= 0 but is: -1.0"),
    (lambda L, W: L.optim.Adafactor([W], d=0.5), ValueError,
     "Clipping threshold d should be >= 1 but is: 0.5"),
    (lambda L, W: L.optim.Adafactor([W], weight_decay=-1.0), ValueError,
     "weight_decay should be >= 0 but is: -1.0"),
    (lambda L, W: L.optim.Adafactor([W], lr=L.ones(2)), ValueError,
     "Tensor lr must be 1-element"),
    (lambda L, W: L.optim.Adafactor([W], fused=True), TypeError, "unexpected keyword argument"),
    (lambda L, W: L.optim.Muon([W]), ValueError,
     "Muon only supports 2D parameters whereas we found a parameter with size: "
     "torch.Size([2])"),
    (lambda L, W: L.optim.Muon([W.view(1, 2).detach()], lr=-1.0), ValueError,
     "Learning rate should be >= 0 but is: -1.0"),
    (lambda L, W: L.optim.Muon([W.view(1, 2).detach()], momentum=-1.0), ValueError,
     "momentum should be >= 0 but is: -1.0"),
    (lambda L, W: L.optim.Muon([W.view(1, 2).detach()], weight_decay=-1.0), ValueError,
     "weight decay should be >= 0 but is: -1.0"),
    (lambda L, W: L.optim.Muon([W.view(1, 2).detach()], adjust_lr_fn="x"), ValueError,
     "Adjust learning rate function x is not supported"),
    (lambda L, W: L.optim.Muon([W.view(1, 2).detach()], foreach=True), TypeError,
     "unexpected keyword argument"),
    (lambda L, W: L.optim.SparseAdam([W], lr=0.0), ValueError, "Invalid learning rate: 0.0"),
    (lambda L, W: L.optim.SparseAdam([W], eps=0.0), ValueError, "Invalid epsilon value: 0.0"),
    (lambda L, W: L.optim.SparseAdam([W], betas=(1.0, 0.5)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda L, W: L.optim.SparseAdam([W], betas=(0.5, -0.5)), ValueError,
     "Invalid beta parameter at index 1: -0.5"),
    (lambda L, W: L.optim.SparseAdam([W], lr=L.ones(2)), ValueError,
     "Tensor lr must be 1-element"),
    (lambda L, W: L.optim.SparseAdam([{"params": [W]}, {"params": [
        L.ones(1, dtype=L.complex64, requires_grad=True), L.ones(1, requires_grad=True),
        L.ones(1, dtype=L.complex128, requires_grad=True)]}]), ValueError,
     "Complex params at indices [[1, 0], [1, 2]]: SparseAdam does not support complex "
     "parameters"),
]


@pytest.mark.parametrize("make,exc,phrase", NEW_BAD, ids=[b[2][:40] for b in NEW_BAD])
def test_new_optimizers_errors(make, exc, phrase):
    same_error(lambda L: make(L, L.zeros(2, requires_grad=True)), phrase, exc)


STEP_BAD = [
    # (torch's _init_group makes the first parameter's state before it meets the complex one)
    ("Adafactor", dict(), [(2, 3), "complex"], RuntimeError,
     "Adafactor does not support complex parameters"),
    ("Muon", dict(), [(2, 3), "complex"], RuntimeError, "Muon does not support complex"),
    # (torch's loop: the first parameter's buffer lerps, then the iteration refuses)
    ("Muon", dict(ns_steps=100), [(2, 3), (3, 3)], ValueError,
     "Number of steps must be less than 100 for computational efficiency"),
    ("Muon", dict(ns_coefficients=(1.0, 2.0)), [(2, 3), (3, 3)], ValueError,
     "Coefficients must be a tuple of exactly 3 values"),
    # (a parameter added later is not checked: the ones before it are updated)
    ("Muon", dict(), [(2, 3), (3, 3), "added 1-D"], ValueError,
     "Param gradient must be a 2D matrix"),
    ("Adafactor", dict(), [(2, 3), (0,), (3,)], ZeroDivisionError, "float division by zero"),
    ("SparseAdam", dict(), [(2, 3), (3,)], RuntimeError,
     "SparseAdam does not support dense gradients, please consider Adam instead"),
]


@pytest.mark.parametrize("name,kw,shapes,exc,phrase", STEP_BAD,
                         ids=[f"{b[0]}-{b[4][:30]}" for b in STEP_BAD])
def test_new_optimizers_step_errors(name, kw, shapes, exc, phrase):
    """torch's error at step, and what torch's loop had done before it: parameters,
    versions, state."""
    def f(L, log):
        rng = np.random.default_rng(5)
        ps, late = [], []
        for s in shapes:
            if s == "complex":
                ps.append(L.tensor(rng.standard_normal((2, 2)) + 1j, requires_grad=True))
            elif s == "added 1-D":
                late.append(L.tensor(rng.standard_normal(3), requires_grad=True))
            else:
                ps.append(L.tensor(rng.standard_normal(s), requires_grad=True))
        opt = getattr(L.optim, name)(ps, **kw)
        if late:
            opt.add_param_group({"params": late})
        for p in ps + late:
            p.grad = L.ones_like(p)
        try:
            opt.step()
        except Exception as e:  # noqa: BLE001 - compared with torch's
            log.append((type(e).__name__, str(e)))
        log.append([(p, p._version) for p in ps + late])
        log.append(opt.state_dict()["state"])
    got = same(f)
    assert got[0][0] == exc.__name__ and phrase in got[0][1], got[0]


def test_sparse_adam_step_without_gradients():
    def f(L, log):
        w = L.ones(3, requires_grad=True)
        opt = L.optim.SparseAdam([w], lr=0.1, maximize=True)
        log.append(opt.step(lambda: L.tensor(2.0)))
        log.append((w, opt.state_dict(), repr(opt)))
    same(f)


# ---- lr schedulers ---------------------------------------------------------------------
SCHEDULERS = [
    ("StepLR", lambda L, o: L.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5)),
    ("MultiStepLR", lambda L, o: L.optim.lr_scheduler.MultiStepLR(o, [3, 7, 7, 20], gamma=0.3)),
    ("ExponentialLR", lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)),
    ("CosineAnnealingLR", lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10,
                                                                              eta_min=0.001)),
    ("LambdaLR", lambda L, o: L.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e))),
    ("LambdaLR-list", lambda L, o: L.optim.lr_scheduler.LambdaLR(
        o, [lambda e: 0.9 ** e, lambda e: e % 3 + 1])),
    ("LinearLR", lambda L, o: L.optim.lr_scheduler.LinearLR(o, start_factor=0.25,
                                                            total_iters=8)),
    ("LinearLR-down", lambda L, o: L.optim.lr_scheduler.LinearLR(o, 1.0, 0.1, total_iters=12)),
    ("OneCycleLR", lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=31)),
    ("OneCycleLR-3phase-linear", lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=[1.0, 0.5], epochs=4, steps_per_epoch=8, three_phase=True,
        anneal_strategy="linear")),
    ("SequentialLR", lambda L, o: L.optim.lr_scheduler.SequentialLR(
        o, [L.optim.lr_scheduler.LinearLR(o, 0.1, total_iters=5),
            L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=12)], milestones=[6])),
]


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_lr_sequence(name, make, opt_name):
    def f(L, log):
        W, b, C, D = _params(L, "float64")
        kw = dict(momentum=0.9) if opt_name == "SGD" else {}
        opt = getattr(L.optim, opt_name)([{"params": [W]}, {"params": [b], "lr": 0.2}],
                                         lr=0.1, **kw)
        sched = make(L, opt)
        log.append(sched.get_last_lr())
        for _ in range(30):
            opt.zero_grad()
            _loss(W, b, C, D).backward()
            opt.step()
            sched.step()
            log.append((sched.get_last_lr(), [g.get("momentum", g.get("betas"))
                                              for g in opt.param_groups]))
        log.append((W, b))
        sd = sched.state_dict()
        log.append(sorted(k for k in sd if k != "_schedulers"))
        log.append(sd["last_epoch"])
    same(f)


def test_reduce_lr_on_plateau():
    def f(L, log):
        W = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([W], lr=1.0)
        for kw in [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2,
                                          threshold_mode="abs", min_lr=0.2)]:
            sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
            for metric in [5, 4, 4, 4, 4, 3.9999, 4, 6, 6, 6, 6, 6, 7, 7, 7, 7]:
                sched.step(metric)
                log.append((sched.get_last_lr(), sched.num_bad_epochs, sched.best))
    same(f)


def test_scheduler_before_optimizer_step_warns():
    def f(L, log):
        W = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([W], lr=1.0)
        sched = L.optim.lr_scheduler.StepLR(opt, 1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sched.step()
            sched.step()
        log.append([str(x.message) for x in w])
        log.append(sched.get_last_lr())
    same(f)


def test_scheduler_state_dict_and_closed_form():
    def f(L, log):
        W = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([W], lr=1.0)
        sched = L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
        for _ in range(3):
            opt.step()
            sched.step()
        sd = sched.state_dict()
        log.append(sd)
        opt2 = L.optim.SGD([W], lr=1.0)
        s2 = L.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=5)
        s2.load_state_dict(sd)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            opt2.step()
            s2.step(1)
        log.append((s2.get_last_lr(), len(w)))
    same(f)


def test_scheduler_errors():
    same_error(lambda L: L.optim.lr_scheduler.StepLR(object(), 1), "is not an Optimizer",
               TypeError)
    same_error(lambda L: L.optim.lr_scheduler.LinearLR(
        L.optim.SGD([L.ones(1, requires_grad=True)]), start_factor=0), "Starting multiplicative",
        ValueError)
    same_error(lambda L: L.optim.lr_scheduler.ReduceLROnPlateau(
        L.optim.SGD([L.ones(1, requires_grad=True)]), factor=1.0), "Factor should be < 1.0.",
        ValueError)
    same_error(lambda L: L.optim.lr_scheduler.StepLR(
        L.optim.SGD([L.ones(1, requires_grad=True)]), 1, last_epoch=3), "initial_lr", KeyError)

    def too_far(L):
        opt = L.optim.SGD([L.ones(1, requires_grad=True)], lr=0.1, momentum=0.9)
        s = L.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(4):
            opt.step()
            s.step()
    same_error(too_far, "Tried to step 4 times", ValueError)


# ---- swap_in_optimizer_params_and_state ----------------------------------------------------
def test_swap_in_optimizer_params_and_state():
    """Inside the block the optimizer steps the given tensors with the given state and
    group options (an in-place state update reaches the given state_dict, a state made
    there does not); on exit its own parameters, state and groups are back, untouched."""
    def f(L, log):
        W, b, C, D = _params(L, "float64")
        opt = L.optim.Adam([{"params": [W]}, {"params": [b], "lr": 0.05}], lr=0.1)
        _loss(W, b, C, D).backward()
        opt.step()
        live_state, live_params = opt.state, opt.param_groups[0]["params"]
        sd = opt.state_dict()
        sd = {"state": {0: {k: v.clone() for k, v in sd["state"][0].items()}},
              "param_groups": [dict(g) for g in sd["param_groups"]]}
        sd["param_groups"][1]["lr"] = 1.0
        W2, b2 = W.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        _loss(W2, b2, C, D).backward()
        with L.optim.swap_in_optimizer_params_and_state(opt, {"W": W2, "b": b2}, sd):
            log.append(([g["lr"] for g in opt.param_groups], len(opt.state)))
            opt.step()
            log.append(sorted(opt.state[b2]))
        log.append((W2, b2, sd["state"], W, b))
        log.append((opt.state is live_state, opt.param_groups[0]["params"] is live_params,
                    [g["lr"] for g in opt.param_groups], opt.state_dict()["state"]))
    same(f)


SWAP_BAD = [
    (lambda L, o, sd: sd, "requires initialized optimizer state", False),
    (lambda L, o, sd: [], "requires a DCP-style optimizer state_dict", True),
    (lambda L, o, sd: {"state": [], "param_groups": []}, "to be a dict mapping", True),
    (lambda L, o, sd: dict(sd, state={0: 1}), "entries to be dictionaries", True),
    (lambda L, o, sd: dict(sd, param_groups=()), "to be a list of param-group dicts", True),
    (lambda L, o, sd: dict(sd, param_groups=[]), "different number of parameter groups", True),
    (lambda L, o, sd: dict(sd, param_groups=[dict(sd["param_groups"][0], params=[0, 1])]),
     "param group 0 has a different number of params", True),
    (lambda L, o, sd: dict(sd, param_groups=[dict(sd["param_groups"][0], extra=1)]),
     "Keys only in swap-in: ['extra']. Keys only in live: []", True),
    (lambda L, o, sd: dict(sd, state={0: {}, 5: {}}), "got extra keys [5]", True),
]


@pytest.mark.parametrize("make,phrase,stepped", SWAP_BAD, ids=[b[1][:30] for b in SWAP_BAD])
def test_swap_in_errors(make, phrase, stepped):
    def f(L):
        W = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([W], lr=0.1, momentum=0.9)
        if stepped:
            W.grad = L.ones(2)
            opt.step()
        sd = opt.state_dict()
        with L.optim.swap_in_optimizer_params_and_state(opt, {"W": W}, make(L, opt, sd)):
            pass
    same_error(f, phrase, RuntimeError)
