"""eagergrad.optim.swa_utils against torch.optim.swa_utils: AveragedModel with the default
average, avg_fn and multi_avg_fn, with and without use_buffers, over a model with
BatchNorm (float and integer buffers) trained between updates; the averaging functions
alone; update_bn; SWALR's lr sequences, state_dict and errors."""
import copy
import warnings

import numpy as np
import pytest
import torch
from conftest import same, same_error

import eagergrad as eg

S = lambda L: L.optim.swa_utils


def _model(L, dtype="float32", seed=0):
    """Linear, BatchNorm1d, ReLU, Linear with seeded weights."""
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.ReLU(), L.nn.Linear(4, 2))
    m = m.to(getattr(L, dtype))
    rng = np.random.default_rng(seed)
    with L.no_grad():
        for p in m.parameters():
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape))))
    return m


def _batches(L, dtype="float32", n=4, seed=1):
    rng = np.random.default_rng(seed)
    return [L.tensor(rng.standard_normal((5, 3)), dtype=getattr(L, dtype)) for _ in range(n)]


def _train_step(L, m, opt, x):
    opt.zero_grad()
    (m(x) ** 2).mean().backward()
    opt.step()


AVERAGES = {
    "swa": lambda L: {},
    "swa-buffers": lambda L: dict(use_buffers=True),
    "ema-multi": lambda L: dict(multi_avg_fn=S(L).get_ema_multi_avg_fn(0.9)),
    "ema-multi-buffers": lambda L: dict(multi_avg_fn=S(L).get_ema_multi_avg_fn(0.75),
                                        use_buffers=True),
    "swa-multi": lambda L: dict(multi_avg_fn=S(L).get_swa_multi_avg_fn()),
    "ema-avg_fn": lambda L: dict(avg_fn=S(L).get_ema_avg_fn(0.8)),
    "swa-avg_fn-buffers": lambda L: dict(avg_fn=S(L).get_swa_avg_fn(), use_buffers=True),
    "custom-avg_fn": lambda L: dict(avg_fn=lambda a, m, n: 0.5 * a + 0.5 * m),
    # (integer buffers: torch's foreach addcdiv refuses them, with its error)
    "swa-multi-buffers": lambda L: dict(multi_avg_fn=S(L).get_swa_multi_avg_fn(),
                                        use_buffers=True),
}


# the averages that divide by n_averaged + 1 (a scalar tensor): eagergrad's division by
# a broadcast scalar is a product with its reciprocal (XLA's rewrite), within an ulp or two
# of torch's quotient, not bit for bit (see the helper's report); the others are exact
DIVIDING = {"swa", "swa-buffers", "swa-avg_fn-buffers"}


def _averages(L, kind, dtype):
    """5 rounds of new seeded values for every parameter and float buffer, and a few more
    batches counted in num_batches_tracked, each followed by update_parameters; per round
    the averaged tensors (values, versions gained), n_averaged; the state_dict at the end,
    or the error."""
    m = _model(L, dtype)
    avg = S(L).AveragedModel(m, **AVERAGES[kind](L))
    rng = np.random.default_rng(4)
    tensors = lambda: list(avg.parameters()) + list(avg.buffers())
    start = [t._version for t in tensors()]  # (the versions the updates add are compared)
    out = []
    try:
        for k in range(5):
            with L.no_grad():
                for t in list(m.parameters()) + list(m.buffers()):
                    if t.is_floating_point():
                        t.copy_(L.tensor(rng.uniform(0.1, 2.0, tuple(t.shape))))
                    else:
                        t.add_(k + 2)
            avg.update_parameters(m)
            out.append([(str(t.dtype)[-7:], t.detach().numpy().copy(), t._version - v)
                        for t, v in zip(tensors(), start)])
        out.append([(k, str(v.dtype)[-7:], v.numpy().copy(), 0)
                    for k, v in avg.state_dict().items()])
    except RuntimeError as e:
        out.append(str(e))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(AVERAGES))
def test_averaged_model_averages_as_torch(kind, dtype):
    """The averaged parameters and buffers after each of 5 updates, their versions,
    n_averaged and the AveragedModel's state_dict as torch's: bit for bit (the float64
    SWA's lerp weight is torch's float32 1 / (n + 1)), or within 4 ulps where the average
    divides (DIVIDING); torch's error where it refuses the integer buffers."""
    t, e = _averages(torch, kind, dtype), _averages(eg, kind, dtype)
    rtol = 4 * np.finfo(dtype).eps if kind in DIVIDING else 0
    assert len(t) == len(e)
    for k, (a, b) in enumerate(zip(t, e)):
        if isinstance(a, str):
            assert a == b, k
            continue
        assert [x[:-2] + x[-1:] for x in a] == [x[:-2] + x[-1:] for x in b], k
        for x, y in zip(a, b):
            np.testing.assert_allclose(y[-2], x[-2], rtol=rtol, atol=0, err_msg=f"{k}")
    assert "Integer division with addcdiv" in t[-1] if kind == "swa-multi-buffers" else True


@pytest.mark.parametrize("kind", ["swa", "ema-multi-buffers", "ema-avg_fn"])
def test_averaged_model_follows_training(kind):
    """4 training steps, each followed by update_parameters: the averaged parameters and
    buffers, n_averaged, and the averaged model's outputs in eval mode as torch's."""
    def f(L, log):
        m = _model(L)
        avg = S(L).AveragedModel(m, **AVERAGES[kind](L))
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        for x in _batches(L):
            _train_step(L, m, opt, x)
            avg.update_parameters(m)
            log.append((list(avg.parameters()), list(avg.buffers()), avg.n_averaged))
        avg.eval()
        log.append(avg(_batches(L, n=1, seed=7)[0]))
        log.append((avg.module is m, repr(avg)))
    same(f)


def test_averaged_model_copies_and_devices():
    def f(L, log):
        m = _model(L)
        avg = S(L).AveragedModel(m, device="cpu")
        with L.no_grad():
            m[0].weight.add_(1.0)
        log.append((avg.module[0].weight, avg.n_averaged.dtype, avg.n_averaged.device))
        avg.update_parameters(m)
        log.append((avg.module[0].weight, avg.module[0].weight.requires_grad))
        avg2 = copy.deepcopy(avg)
        log.append((list(avg2.parameters()), avg2.n_averaged))
        log.append(sorted(avg.state_dict()))
    same(f)


def test_averaged_model_two_functions_fail():
    same_error(lambda L: S(L).AveragedModel(_model(L), avg_fn=S(L).get_swa_avg_fn(),
                                            multi_avg_fn=S(L).get_swa_multi_avg_fn()),
               "Only one of avg_fn and multi_avg_fn should be provided", AssertionError)


@pytest.mark.parametrize("make", [lambda L: S(L).get_ema_multi_avg_fn(1.5),
                                  lambda L: S(L).get_ema_avg_fn(-0.1)],
                         ids=["multi", "single"])
def test_ema_decay_out_of_range(make):
    same_error(make, "Please provide a value in [0,1] range.", ValueError)


def test_averaging_functions_alone():
    """The functions on their own: a Python int or a tensor count, float and integer
    lists (torch's errors for integers where its foreach ops refuse them)."""
    def f(L, log):
        a64 = L.tensor([1.0, -2.0, 3.5], dtype=L.float64)
        b64 = L.tensor([0.25, 4.0, -1.0], dtype=L.float64)
        for n in [2, L.tensor(2)]:
            log.append(S(L).get_swa_avg_fn()(a64, b64, n))
            log.append(S(L).get_ema_avg_fn(0.3)(a64, b64, n))
            xs = [a64.clone(), a64.float()]
            S(L).get_swa_multi_avg_fn()(xs, [b64, b64.float()], n)
            log.append((xs, [x._version for x in xs]))
            ys = [a64.clone()]
            S(L).get_ema_multi_avg_fn(0.6)(ys, [b64], n)
            log.append(ys)
            ints = [L.tensor([1, 5, -3]), L.tensor([7])]
            S(L).get_ema_multi_avg_fn(0.5)(ints, [L.tensor([4, 0, 2]), L.tensor([2])], n)
            log.append(ints)
            try:
                S(L).get_swa_multi_avg_fn()(ints, [L.tensor([4, 0, 2]), L.tensor([2])], n)
            except RuntimeError as e:
                log.append(("raised", str(e)))
            log.append(ints)
    same(f, exact=True)


def test_update_bn():
    """update_bn resets each BatchNorm's statistics and recomputes them over the loader
    (cumulative averages), restoring momentum and the training mode; batches given as
    tensors or as (input, target) pairs."""
    def f(L, log):
        m = L.nn.Sequential(L.nn.Conv2d(2, 3, 1), L.nn.BatchNorm2d(3, momentum=0.3),
                            L.nn.Flatten(), L.nn.Linear(12, 4), L.nn.BatchNorm1d(4))
        rng = np.random.default_rng(2)
        with L.no_grad():
            for p in m.parameters():
                p.copy_(L.tensor(rng.standard_normal(tuple(p.shape))))
        xs = [L.tensor(rng.standard_normal((3, 2, 2, 2)), dtype=L.float32) for _ in range(3)]
        m.train()
        for x in xs:
            m(x)
        m.eval()
        S(L).update_bn(xs, m)
        log.append((list(m.buffers()), m.training, m[1].momentum, m[4].momentum))
        m.train()
        S(L).update_bn([(x, 0) for x in xs[:2]], m, device="cpu")
        log.append((list(m.buffers()), m.training))
        lin = L.nn.Linear(2, 2)
        log.append(S(L).update_bn([L.ones(1, 2)], lin))
    same(f)


SWALR_CASES = {
    "cos": dict(swa_lr=0.05),
    "linear": dict(swa_lr=0.5, anneal_epochs=4, anneal_strategy="linear"),
    "no-annealing": dict(swa_lr=0.2, anneal_epochs=0),
    "per-group": dict(swa_lr=[0.01, 0.3], anneal_epochs=3),
}


@pytest.mark.parametrize("kind", list(SWALR_CASES))
def test_swalr_lr_sequence(kind):
    """SWALR after a StepLR's first epochs, as in torch's recipe: lrs per step, the
    groups' swa_lr, the state_dict round trip."""
    def f(L, log):
        w = L.ones(2, requires_grad=True)
        v = L.ones(1, requires_grad=True)
        opt = L.optim.SGD([{"params": [w]}, {"params": [v], "lr": 0.4}], lr=1.0)
        sched = L.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        for _ in range(3):
            opt.step()
            sched.step()
        swa = S(L).SWALR(opt, **SWALR_CASES[kind])
        log.append((swa.get_last_lr(), [g["swa_lr"] for g in opt.param_groups]))
        for _ in range(12):
            opt.step()
            swa.step()
            log.append(swa.get_last_lr())
        sd = swa.state_dict()
        log.append(sorted(sd))
        log.append({k: v for k, v in sd.items() if k not in ("_get_lr_called_within_step",)})
        swa2 = S(L).SWALR(opt, swa_lr=9.0, anneal_strategy="linear")
        swa2.load_state_dict(sd)
        log.append((swa2._anneal_strategy, swa2.anneal_func(0.5)))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            log.append(swa2.get_lr())
        log.append([str(c.message) for c in caught])
    same(f)


SWALR_BAD = [
    (lambda L, o: S(L).SWALR(o, swa_lr=0.1, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda L, o: S(L).SWALR(o, swa_lr=0.1, anneal_epochs=-1), ValueError,
     "anneal_epochs must be equal or greater than 0, got -1"),
    (lambda L, o: S(L).SWALR(o, swa_lr=0.1, anneal_epochs=2.0), ValueError,
     "anneal_epochs must be equal or greater than 0, got 2.0"),
    (lambda L, o: S(L).SWALR(o, swa_lr=[0.1, 0.2]), ValueError,
     "swa_lr must have the same length as optimizer.param_groups"),
    (lambda L, o: S(L).SWALR(object(), swa_lr=0.1), AttributeError, "param_groups"),
]


@pytest.mark.parametrize("make,exc,phrase", SWALR_BAD, ids=[b[2][:30] for b in SWALR_BAD])
def test_swalr_errors(make, exc, phrase):
    same_error(lambda L: make(L, L.optim.SGD([L.ones(1, requires_grad=True)], lr=0.1)),
               phrase, exc, messages=False)
