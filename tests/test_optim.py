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


def test_unimplemented_names_raise():
    with pytest.raises(NotImplementedError, match="torch.optim.Adafactor"):
        eg.optim.Adafactor
    assert not hasattr(eg.optim, "SparseAdam")


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
