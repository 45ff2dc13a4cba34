"""torch's own OptimizerInfo database (`optim_db`, shipped in the torch wheel) as the oracle.

For every entry (15 optimizers) and every OptimizerInput of its `optim_inputs_func("cpu")`
(the options torch's own optimizer tests run), the same small model is built in both
libraries from the same float64 values: a Linear(4, 3) with bias as one param group, and
a second group of a 0-d parameter and a complex (2, 2) parameter where the entry
`supports_complex` (else a real (2, 3, 2) one). Muon takes 2-D parameters only: a
Linear(4, 3) without bias and a tall (5, 2) matrix. LBFGS takes one group of all four,
and steps with a closure.

Each of 5 steps uses the gradients of a fixed loss on fixed inputs, the same numbers in
both libraries bit for bit (test_optim.py's loss: every gradient value is one rounding,
the Linear's inputs are one-hot rows scaled by 0.5), so the comparison measures the
optimizers alone: after every step the parameters and the whole state_dict() (state
tensors, numbers and the param_groups) must agree to RTOL = 1e-12 (LBFGS's state: see
TOLERANCE). Then torch's
state_dict after step 3, converted, loads into a fresh eagergrad optimizer over
parameters holding torch's values, whose steps 4 and 5 must match those of a fresh torch
optimizer loading it.

SparseAdam refuses dense gradients, and eagergrad has no sparse ones: its steps compare
torch's error and the parameters and state left as they were. The first step's gradients
are checked bit for bit (but LBFGS's, those of its last closure call within the step).

Entries eagergrad cannot run are listed in SKIPS with the reason (they run as strict
xfails, so one that starts passing is noticed); `test_every_input_is_tested_or_listed`
fails for an input that is neither.
"""
import copy
import warnings

import numpy as np
import pytest
import torch
from torch.testing._internal.common_optimizers import optim_db

import eagergrad as eg

pytestmark = pytest.mark.slow

STEPS = 5
LOAD_AFTER = 3
RTOL = 1e-12
ATOL = 1e-15  # (for values that cancel to about 0: a momentum buffer, a centered average)
# optimizer -> (rtol, atol) of the parameters, and the relative error allowed in the norm
# of each state entry (a tensor, or a list of them), where the math is not the same op for
# op
TOLERANCE = {
    # LBFGS's directions and history are dot products and sums over the flattened
    # parameters: MKL's and XLA's reductions add in different orders (a last-bit
    # difference in most 24-term dots), and the two-loop recursion subtracts nearly equal
    # terms: `al` falls geometrically to ~1e-14 within a step, where those values are
    # rounding noise. The parameters stay within 1e-12; each state entry within 1e-9 of
    # its norm (here at most 6e-10).
    "LBFGS": ((RTOL, ATOL), 1e-9),
}
# (optimizer name, OptimizerInput desc) -> why eagergrad cannot run it
SKIPS = {}

rng = np.random.default_rng(0)
W0 = rng.standard_normal((3, 4))
B0 = rng.standard_normal(3)
S0 = rng.standard_normal(())
Z0 = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
R0 = rng.standard_normal((2, 3, 2))
T0 = rng.standard_normal((5, 2))
X0 = np.zeros((2, 4))
X0[0, 0] = X0[1, 2] = 0.5  # one-hot rows: x @ W.T + b is one rounding per value
COEF = {name: (rng.uniform(0.2, 1.0, shape), rng.standard_normal(shape))
        for name, shape in [("out", (2, 3)), ("W", (3, 4)), ("s", ()), ("z", (2, 2, 2)),
                            ("r", (2, 3, 2)), ("T", (5, 2))]}


def _inputs():
    for info in optim_db:
        for inp in info.optim_inputs_func(device="cpu"):
            yield info, inp


ALL = [(info.name, inp.desc) for info, inp in _inputs()]
CASES = [pytest.param(info, inp, id=f"{info.name}-{inp.desc}",
                      marks=[pytest.mark.xfail(strict=True, reason=SKIPS[key])]
                      if key in SKIPS else [])
         for info, inp in _inputs() for key in [(info.name, inp.desc)]]


def _term(L, p, name):
    """sum(p * (p * C + D)): its gradient (p C + D) + p C is one rounding per value."""
    c, d = COEF[name]
    c, d = L.tensor(c), L.tensor(d)
    return (p * (p * c + d)).sum()


class Model:
    """The entry's parameters in library L (float64, complex128), its param groups and
    its loss."""

    def __init__(self, L, info):
        self.L = L
        f64 = L.float64
        muon = info.name == "Muon"
        self.lin = L.nn.Linear(4, 3, bias=not muon, dtype=f64)
        with L.no_grad():
            self.lin.weight.copy_(L.tensor(W0))
            if not muon:
                self.lin.bias.copy_(L.tensor(B0))
        if muon:
            self.extra = [L.tensor(T0, requires_grad=True)]
        else:
            other = (L.tensor(Z0, dtype=L.complex128, requires_grad=True)
                     if info.supports_complex else L.tensor(R0, requires_grad=True))
            self.extra = [L.tensor(S0, requires_grad=True), other]
        self.params = list(self.lin.parameters()) + self.extra
        n = len(list(self.lin.parameters()))
        self.groups = ([{"params": self.params}] if info.name == "LBFGS" else
                       [{"params": self.params[:n]}, {"params": self.params[n:]}])

    def loss(self):
        L = self.L
        out = self.lin(L.tensor(X0))
        total = _term(L, out, "out") + _term(L, self.lin.weight, "W")
        for p in self.extra:
            if p.is_complex():
                total = total + _term(L, L.view_as_real(p), "z")
            else:
                total = total + _term(L, p, {0: "s", 2: "T", 3: "r"}[p.dim()])
        return total

    def values(self):
        return [p.detach().numpy().copy() for p in self.params]

    def grads(self):
        return [None if p.grad is None else p.grad.numpy().copy() for p in self.params]


def _to_eg(v):
    """torch values (kwargs, a state_dict) as eagergrad's: tensors by value and dtype."""
    if isinstance(v, torch.Tensor):
        return eg.tensor(v.detach().numpy().copy(), dtype=getattr(eg, str(v.dtype)[6:]))
    if isinstance(v, dict):
        return {k: _to_eg(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_to_eg(x) for x in v)
    return v


def _snap(v):
    """A library-independent copy of a value: tensors as ("T", dtype, shape, values)."""
    if isinstance(v, (torch.Tensor, eg.Tensor)):
        return ("T", str(v.dtype).replace("eagergrad.", "torch."), tuple(v.shape),
                np.asarray(v.detach().numpy()).copy())
    if isinstance(v, dict):
        return {k: _snap(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_snap(x) for x in v)
    return v


def _tensors(v):
    """The tensor snapshots in a value (a tensor, or a list of them and Nones)."""
    if isinstance(v, tuple) and v[:1] == ("T",):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _tensors(x)]
    return []


def _close(a, b, path, norm=None):
    """b (eagergrad's) equals a (torch's): structure, keys in order, dtypes and shapes
    exactly; floating values to RTOL, or (norm: for a state entry) within `norm` times
    the norm of the entry's values."""
    if norm is not None and _tensors(a):
        _close(_structure(a), _structure(b), path)
        x, y = (np.concatenate([t[3].ravel() for t in _tensors(v)]) for v in (a, b))
        assert np.linalg.norm(y - x) <= norm * np.linalg.norm(x), (
            path, np.linalg.norm(y - x) / np.linalg.norm(x))
    elif isinstance(a, tuple) and a[:1] == ("T",):
        assert isinstance(b, tuple) and b[:1] == ("T",), (path, a, b)
        assert a[1:3] == b[1:3], (path, a[1:3], b[1:3])
        np.testing.assert_allclose(b[3], a[3], rtol=RTOL, atol=ATOL, err_msg=path)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (path, list(a), list(b))
        for k in a:
            _close(a[k], b[k], f"{path}[{k!r}]", norm if k != "param_groups" else None)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]", norm)
    elif isinstance(a, float) and not isinstance(b, bool):
        assert isinstance(b, (float, int)), (path, a, b)
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=ATOL, err_msg=path)
    else:
        assert type(a) is type(b) and a == b, (path, a, b)


def _structure(v):
    """A value with its tensors' values dropped (dtype and shape kept)."""
    if isinstance(v, tuple) and v[:1] == ("T",):
        return ("S",) + v[1:3]
    if isinstance(v, (list, tuple)):
        return type(v)(_structure(x) for x in v)
    return v


def _step(model, opt, closure_needed):
    """One step; (the parameters' values, the state_dict's snapshot, the error, the
    gradients) after it."""
    def closure():
        opt.zero_grad()
        loss = model.loss()
        loss.backward()
        return loss
    err = None
    try:
        if closure_needed:
            opt.step(closure)
        else:
            closure()
            opt.step()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        err = (type(e).__name__, str(e))
    return model.values(), _snap(opt.state_dict()), err, model.grads()


def _make(L, info, groups, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(L.optim, info.name)(groups, **kwargs)


def _compare(t, e, where, tol):
    (rtol, atol), norm = tol
    tv, tsd, terr, tg = t
    ev, esd, eerr, eg_ = e
    assert eerr == terr, (where, terr, eerr)
    if where == "step 1" and norm is None:  # (from equal parameters: bit for bit)
        for i, (a, b) in enumerate(zip(tg, eg_)):
            np.testing.assert_array_equal(b, a, err_msg=f"{where}: the gradient of param {i}")
    for i, (a, b) in enumerate(zip(tv, ev)):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=f"{where}: param {i}")
    _close(tsd, esd, f"{where}: state_dict", norm)


@pytest.mark.parametrize("info,inp", CASES)
def test_steps_and_state_dict_match_torch(info, inp):
    closure = info.step_requires_closure
    tol = TOLERANCE.get(info.name, ((RTOL, ATOL), None))
    tm, em = Model(torch, info), Model(eg, info)
    topt = _make(torch, info, tm.groups, inp.kwargs)
    eopt = _make(eg, info, em.groups, _to_eg(inp.kwargs))
    _close(_snap(topt.state_dict()), _snap(eopt.state_dict()), "before step 1")
    loaded = None
    for k in range(1, STEPS + 1):
        _compare(_step(tm, topt, closure), _step(em, eopt, closure), f"step {k}", tol)
        if k == LOAD_AFTER:
            loaded = (tm.values(), copy.deepcopy(topt.state_dict()))
    # torch's state_dict after step LOAD_AFTER, loaded by a fresh optimizer of each library
    # (loading casts states to the parameters' dtype: the steps after it are not those of
    # the optimizer that saved it)
    values, sd = loaded
    runs = []
    for L, conv in [(torch, copy.deepcopy), (eg, _to_eg)]:
        m = Model(L, info)
        with L.no_grad():
            for p, v in zip(m.params, values):
                p.copy_(L.tensor(v))
        opt = _make(L, info, m.groups, conv(inp.kwargs))
        opt.load_state_dict(conv(sd))
        runs.append([_step(m, opt, closure) for _ in range(LOAD_AFTER, STEPS)])
    for k, (t, e) in enumerate(zip(*runs), LOAD_AFTER + 1):
        _compare(t, e, f"loaded, step {k}", tol)


def test_every_input_is_tested_or_listed():
    """Every (optimizer, input) of torch's database runs here, or is in SKIPS with a
    reason; SKIPS names only inputs the database has; the database has its 15
    optimizers, and eagergrad has each one that has an input not listed."""
    assert len(optim_db) == 15, [info.name for info in optim_db]
    assert len(set(ALL)) == len(ALL), "two inputs of one optimizer share a desc"
    assert [c.id for c in CASES] == [f"{n}-{d}" for n, d in ALL]
    stale = sorted(set(SKIPS) - set(ALL))
    assert not stale, f"SKIPS lists inputs torch's database does not have: {stale}"
    assert all(isinstance(r, str) and r for r in SKIPS.values())
    run = {name for name, desc in ALL if (name, desc) not in SKIPS}
    assert all(isinstance(getattr(eg.optim, name), type) for name in run)
