"""An optimizer step compiles per param group, not per parameter shape (NOTE [optimizer
kernels] in eagergrad/optim/_kernels.py): every optimizer's first two steps compile at
most one or two programs whatever the number of shapes, and no step after them compiles
although an lr scheduler changes lr (and a one-cycle schedule momentum or betas) and the
weight decay changes between steps; the 50 steps end where torch's end, versions
included.

Compiles are counted by `EXECUTABLES.compiles_here()`, jax's backend-compile events, which a hit
of the persistent compilation cache counts too (jax times `compile_or_get_cached`): the
counts are the same with the cache on or off. Each test uses shapes of its own, and
first empties the optimizer kernels' jitted functions, so what an earlier test compiled
(and the executable bound's sweeps, which clear a function that holds too many shapes)
plays no part.
"""
import itertools
import warnings

import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad._cache import EXECUTABLES
from eagergrad.optim import _kernels as K

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("counting_compiles")]


# (id, optimizer, options, most compiles of steps 1 and 2 together)
OPTIMIZERS = [
    ("SGD", "SGD", dict(lr=0.05, weight_decay=0.01), 1),
    # (its first step has no momentum buffers yet, its second has: two programs)
    ("SGD-momentum", "SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01), 2),
    ("SGD-nesterov", "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01), 2),
    ("Adam", "Adam", dict(lr=0.01, weight_decay=0.01), 1),
    ("Adam-amsgrad", "Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.01), 1),
    ("AdamW", "AdamW", dict(lr=0.01, weight_decay=0.01), 1),
    ("AdamW-amsgrad-maximize", "AdamW", dict(lr=0.01, amsgrad=True, maximize=True), 1),
    ("Adadelta", "Adadelta", dict(lr=0.5, weight_decay=0.01), 1),
    ("Adagrad", "Adagrad", dict(lr=0.05, lr_decay=0.01, weight_decay=0.01), 1),
    ("Adamax", "Adamax", dict(lr=0.01, weight_decay=0.01), 1),
    ("ASGD", "ASGD", dict(lr=0.01, t0=10, weight_decay=0.01), 1),
    ("NAdam", "NAdam", dict(lr=0.01, weight_decay=0.01), 1),
    ("NAdam-decoupled", "NAdam", dict(lr=0.01, weight_decay=0.01, decoupled_weight_decay=True),
     1),
    ("RAdam", "RAdam", dict(lr=0.01, weight_decay=0.01), 1),
    ("RMSprop-centered", "RMSprop", dict(lr=0.01, centered=True, weight_decay=0.01), 1),
    ("RMSprop-momentum", "RMSprop", dict(lr=0.01, momentum=0.5, weight_decay=0.01), 1),
    ("Rprop", "Rprop", dict(lr=0.01), 1),
    # (matrices keep row and column factors, vectors a variance: one program still)
    ("Adafactor", "Adafactor", dict(lr=0.01, weight_decay=0.01), 1),
    ("Adafactor-maximize", "Adafactor", dict(lr=0.5, maximize=True, weight_decay=0.01,
                                             eps=(1e-3, 1e-2), d=1.5), 1),
]
IDS = [o[0] for o in OPTIMIZERS]
STEPS = 50
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
# states near 0 (a momentum buffer, a centered average) differ more than the parameters do
STATE_TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-11)}

_fresh = itertools.count()


def _dims(n):
    """n (<= 10) small parameter shapes of their own, matrices and vectors, all different
    and new at each call: no test meets another's."""
    k = next(_fresh)
    return [(k + 3, i + 2) if i % 2 == 0 else (100 + 10 * k + i,) for i in range(n)]


_DIMS_BAD = _dims(4)


@pytest.fixture(autouse=True)
def _fresh_kernels():
    for kernel in vars(K).values():
        if isinstance(kernel, K.Kernel):
            for f in kernel._jits.values():
                f.clear_cache()


def _params(L, shapes, dtype, seed=0):
    """The parameters, and the C and D of the loss, as numpy arrays."""
    rng = np.random.default_rng(seed)
    dt = getattr(np, dtype)
    ps = [L.tensor(rng.uniform(-1, 1, s).astype(dt), requires_grad=True) for s in shapes]
    cds = [(rng.uniform(0.2, 1.0, s).astype(dt), rng.standard_normal(s).astype(dt))
           for s in shapes]
    return ps, cds


def _set_grads(L, ps, cds):
    """The gradients of the loss sum((W * (W * C + D)).sum()), (W C + D) + W C, computed by
    numpy from the parameters' values, for torch as for eagergrad: the same numbers when
    the parameters are, and no compile of eagergrad's ops for the new shapes."""
    for p, (c, d) in zip(ps, cds):
        w = p.detach().numpy()
        p.grad = L.tensor((w * c + d) + w * c)


def _weight_decay(opt, step):
    for group in opt.param_groups:
        if group.get("weight_decay"):
            group["weight_decay"] = 0.01 * (1 + step % 3)


def _train(L, name, kw, shapes, dtype, steps, schedule="lambda"):
    """`steps` steps, the lr changed by a scheduler and the weight decay through the
    param groups after each; the params, the optimizer and per step the compiles of
    step + scheduler + weight decay change (eagergrad's)."""
    ps, cds = _params(L, shapes, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = getattr(L.optim, name)(ps, **kw)
    S = L.optim.lr_scheduler
    if schedule == "lambda":  # a different lr at every step
        sched = S.LambdaLR(opt, lambda e: 0.97 ** e * (1.0 + 0.25 * (e % 2)))
    elif schedule == "step":
        sched = S.StepLR(opt, step_size=1, gamma=0.9)
    else:  # lr and momentum (or betas[0]) every step
        sched = S.OneCycleLR(opt, max_lr=kw["lr"], total_steps=steps + 1)
    counts = []
    for step in range(steps):
        opt.zero_grad()
        _set_grads(L, ps, cds)
        c = EXECUTABLES.compiles_here()
        opt.step()
        sched.step()
        _weight_decay(opt, step)
        counts.append(EXECUTABLES.compiles_here() - c)
    return ps, opt, counts


def _assert_close32(e, t, t64):
    """float32 parameters after the steps against torch's: within TOL, or no farther from
    torch's float64 run than torch's float32 run is (an element where the steps amplify
    rounding: Adafactor on one (163,) vector put torch's float32 1.2e-5 from its float64
    result and eagergrad's 4e-7)."""
    tol = TOL["float32"]
    e, t, t64 = (np.asarray(a, np.float64) for a in (e, t, t64))
    near = np.isclose(e, t, **tol) | (np.abs(e - t64) <= np.abs(t - t64) + tol["atol"])
    assert near.all(), (np.flatnonzero(~near), e[~near], t[~near], t64[~near])


def _versions(opt, ps):
    return [(p._version, {k: v._version for k, v in opt.state[p].items()
                          if isinstance(v, (torch.Tensor, eg.Tensor))}) for p in ps]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("oid,name,kw,bound", OPTIMIZERS, ids=IDS)
def test_no_compile_after_the_second_step_and_as_torch(oid, name, kw, bound, dtype):
    """Steps 3..50 compile nothing (lr different at every step, weight decay changing);
    then parameters, state and versions as torch's."""
    shapes = _dims(5)
    schedule = "step" if oid.startswith("Adam") else "lambda"
    tps, topt, _ = _train(torch, name, kw, shapes, dtype, STEPS, schedule)
    eps, eopt, counts = _train(eg, name, kw, shapes, dtype, STEPS, schedule)
    assert 1 <= sum(counts[:2]) <= bound, counts[:2]
    assert counts[2:] == [0] * (STEPS - 2), counts
    assert [g["lr"] for g in eopt.param_groups] == [g["lr"] for g in topt.param_groups]
    if dtype == "float32":
        t64s, _, _ = _train(torch, name, kw, shapes, "float64", STEPS, schedule)
        for t, e, t64 in zip(tps, eps, t64s):
            _assert_close32(e.detach().numpy(), t.detach().numpy(), t64.detach().numpy())
    else:
        for t, e in zip(tps, eps):
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL[dtype])
    for t, e in zip(tps, eps):
        for k, v in topt.state[t].items():
            if isinstance(v, torch.Tensor):
                np.testing.assert_allclose(np.asarray(eopt.state[e][k].tolist()),
                                           np.asarray(v.tolist()), err_msg=k, **STATE_TOL[dtype])
    assert _versions(eopt, eps) == _versions(topt, tps)


@pytest.mark.parametrize("oid,name,kw,bound", OPTIMIZERS, ids=IDS)
def test_first_steps_compile_per_group_not_per_shape(oid, name, kw, bound):
    """Steps 1 and 2 compile at most `bound` programs, for 4 shapes as for 8 (kernels
    per shape compiled at least 4 and 8, with SGD's momentum 8 and 16)."""
    got = {}
    for n in (4, 8):
        _, _, counts = _train(eg, name, kw, _dims(n), "float32", 2)
        got[n] = sum(counts)
    assert 1 <= got[4] <= bound and got[8] == got[4], got


ONE_CYCLE = [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.01)),
             ("AdamW", dict(lr=0.01)), ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01)),
             ("Adamax", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, momentum=0.5))]


@pytest.mark.parametrize("name,kw", ONE_CYCLE, ids=[o[0] for o in ONE_CYCLE])
def test_one_cycle_momentum_and_betas_are_traced(name, kw):
    """OneCycleLR changes lr and momentum (SGD, RMSprop) or betas[0] (the Adams) at every
    step: nothing compiles after step 2, and the parameters end as torch's."""
    shapes = _dims(4)
    tps, topt, _ = _train(torch, name, kw, shapes, "float64", 20, "one-cycle")
    eps, eopt, counts = _train(eg, name, kw, shapes, "float64", 20, "one-cycle")
    assert counts[2:] == [0] * 18, counts
    for t, e in zip(tps, eps):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL["float64"])


def test_a_large_group_of_repeated_shapes_compiles_once():
    """A group of more than ONE_CALL parameters in which two shapes repeat (a model of
    identical blocks) compiles one program, run once per block; as torch."""
    base = _dims(2)
    shapes = base * (K.ONE_CALL // 2 + 4)
    tps, topt, _ = _train(torch, "Adam", dict(lr=0.01), shapes, "float32", 3)
    eps, eopt, counts = _train(eg, "Adam", dict(lr=0.01), shapes, "float32", 3)
    assert counts == [1, 0, 0], counts
    for t, e in zip(tps, eps):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL["float32"])
    assert _versions(eopt, eps) == _versions(topt, tps)


def test_state_that_does_not_fit_fails_after_the_parameters_before_it():
    """A loaded state of the wrong shape: the parameters before it are updated (torch's
    loop), the rest are not; the error is torch's."""
    def run(L):
        ps, cds = _params(L, _DIMS_BAD, "float32")
        opt = L.optim.Adam(ps, lr=0.1)
        _set_grads(L, ps, cds)
        opt.step()
        sd = opt.state_dict()
        sd["state"][2]["exp_avg"] = L.zeros(3)
        opt2 = L.optim.Adam(ps, lr=0.1)
        opt2.load_state_dict(sd)
        before = [p.detach().numpy().copy() for p in ps]
        with pytest.raises(RuntimeError) as e:
            opt2.step()
        return ([not np.array_equal(b, p.detach().numpy()) for b, p in zip(before, ps)],
                [p._version for p in ps], str(e.value))
    got = run(eg)
    assert got == run(torch)
    assert got[0] == [True, True, False, False]


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1)),
                                     ("Rprop", {}), ("ASGD", dict(t0=1))],
                         ids=["SGD-momentum", "Adam", "Rprop", "ASGD"])
@pytest.mark.parametrize("kind", ["listed-twice", "views-of-one-storage"])
def test_parameters_sharing_memory_update_in_turn(name, kind, kw):
    """A parameter listed twice, or two leaf views of one storage: the later update reads
    the earlier one's result, as torch's loop (the group is split where a tensor comes
    again)."""
    def run(L):
        if kind == "listed-twice":
            a = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
            b = L.tensor([[0.3, 0.2]], requires_grad=True)
            ps = [a, b, a]
        else:
            base = L.tensor(np.arange(6.0).reshape(2, 3) / 5 - 0.4)
            a, b = base[0].requires_grad_(), base[1].requires_grad_()
            ps = [a, b]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = getattr(L.optim, name)(ps, **kw)
        out = []
        for _ in range(4):
            opt.zero_grad()
            a.grad = L.tensor(a.detach().numpy() ** 2 * 3)
            b.grad = L.tensor(b.detach().numpy() * 4)
            opt.step()
            out.append((a.detach().numpy().copy(), b.detach().numpy().copy(), a._version,
                        b._version))
        return out
    for t, e in zip(run(torch), run(eg)):
        np.testing.assert_allclose(e[0], t[0], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(e[1], t[1], rtol=1e-6, atol=1e-7)
        assert e[2:] == t[2:]


def _matrix_dims(n):
    """n (<= 10) matrix shapes of their own, wide, square and tall (Muon takes matrices)."""
    k = next(_fresh)
    return [(k + 3, i + 2) if i % 2 == 0 else (2 * i + 1, k + 4) for i in range(n)]


MUON = [("Muon", dict(lr=0.02, weight_decay=0.01)),
        ("Muon-plain", dict(lr=0.02, nesterov=False, momentum=0.3, weight_decay=0.01,
                            adjust_lr_fn="match_rms_adamw", ns_steps=3))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("oid,kw", MUON, ids=[m[0] for m in MUON])
def test_muon_no_compile_after_the_first_step_and_as_torch(oid, kw, dtype):
    """Muon's first step compiles one program for its matrices of 5 shapes (the
    Newton-Schulz loop included); steps 2..50 compile nothing while lr and the weight
    decay change; parameters, momentum buffers and versions as torch's.

    The iterations run in bfloat16, each matmul summing in float32: oneDNN's order and
    XLA's differ, as do the last bits of a few parameter values (torch's vectorized add_
    is a fused multiply-add, its scalar tail is not), so over 50 steps of these larger
    matrices a value on a bfloat16 rounding boundary now and then rounds the other way
    (2^-8 of one update value, times lr): the parameters and buffers are compared within
    50 such flips, STEPS * lr * 2^-8 (test_optim.py compares 20 steps of small matrices
    to 1e-10)."""
    shapes = _matrix_dims(5)
    tps, topt, _ = _train(torch, "Muon", kw, shapes, dtype, STEPS)
    eps, eopt, counts = _train(eg, "Muon", kw, shapes, dtype, STEPS)
    assert counts[0] == 1 and counts[1:] == [0] * (STEPS - 1), counts
    atol = STEPS * kw["lr"] * 2 ** -8
    for t, e in zip(tps, eps):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=0, atol=atol)
        np.testing.assert_allclose(np.asarray(eopt.state[e]["momentum_buffer"].tolist()),
                                   topt.state[t]["momentum_buffer"].numpy(), rtol=0,
                                   atol=atol)
    assert _versions(eopt, eps) == _versions(topt, tps)


def test_muon_first_step_compiles_per_group_not_per_shape():
    got = {}
    for n in (4, 8):
        _, _, counts = _train(eg, "Muon", dict(lr=0.02), _matrix_dims(n), "float32", 2)
        got[n] = sum(counts)
    assert got == {4: 1, 8: 1}, got


def test_muon_one_cycle_momentum_is_traced():
    """OneCycleLR moves Muon's lr and momentum at every step: nothing compiles after the
    first, and the parameters end as torch's (within 20 bfloat16 flips, see above)."""
    shapes = _matrix_dims(3)
    tps, _, _ = _train(torch, "Muon", dict(lr=0.02), shapes, "float64", 20, "one-cycle")
    eps, _, counts = _train(eg, "Muon", dict(lr=0.02), shapes, "float64", 20, "one-cycle")
    assert counts[1:] == [0] * 19, counts
    for t, e in zip(tps, eps):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=0,
                                   atol=20 * 0.02 * 2 ** -8)
