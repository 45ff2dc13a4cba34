"""torch's own OpInfo database (`op_db`, shipped in the torch wheel) as the oracle.

For every OpInfo entry eagergrad has, in float64, float32 and complex128 where torch
supports them on CPU, the samples taken (below) run in both libraries and must give:
- the same forward values, dtypes and shapes (every output, nested results flattened);
- the same gradients of every input that requires grad, for seeded random grad_outputs of
  the outputs torch's `output_process_fn_grad` selects (float64/complex128; float32 too),
  once node by node and once on the fused backward (conftest.repeat);
- the same second-order gradients where the entry `supports_gradgrad` (float64/complex128);
- torch's error type for each of the entry's `error_inputs`.

The database holds about 45,000 samples over these dtypes, 0.3-1 s each here (every new
shape compiles its kernels), some 10 hours on two cores: the suite takes SAMPLES[dtype] of
each entry's samples, spread evenly over its list (the list is ordered by configuration),
which fits CI's time, in float64 only unless `EAGERGRAD_OPINFO_DTYPES=all` (the report
sets it). `EAGERGRAD_OPINFO_SAMPLES=all` (or a number per dtype) runs more;
`tests/scripts/opinfo_report.py` writes one status line per (entry, dtype).

Entries eagergrad does not have, or that are known to differ, are listed with a reason in
`_opinfo_status.py` (known differences as non-strict xfails: the report shows when one
starts passing); `test_every_entry_is_accounted_for` fails for an entry that is in
neither this test nor those lists. Nondeterministic entries (random sampling) are listed
there too and tested statistically in test_random_ops.py.
"""
import os
import zlib

import numpy as np
import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import conftest
import eagergrad as eg
from _opinfo import Converter, Missing, Unconvertible, dtype_name, eg_callable, leaves, to_np
from _opinfo_status import NONDETERMINISTIC, SKIP, TOLERANCE, XFAIL

pytestmark = pytest.mark.slow

DTYPES = (torch.float64, torch.float32, torch.complex128)
_N = os.environ.get("EAGERGRAD_OPINFO_SAMPLES", "")
ALL_SAMPLES = _N == "all"
SAMPLES = {torch.float64: 1, torch.float32: 1, torch.complex128: 1}
if _N.isdigit():
    SAMPLES = dict.fromkeys(SAMPLES, int(_N))
# CI runs float64 only (the full suite's time budget); EAGERGRAD_OPINFO_DTYPES=all adds
# float32 and complex128, as the status report does
if os.environ.get("EAGERGRAD_OPINFO_DTYPES") != "all":
    DTYPES = (torch.float64,)
_FALLBACK = (torch.int64, torch.bool)  # entries with no floating dtype: forward only


def entry_id(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


ENTRIES = {}
for _op in op_db:
    ENTRIES.setdefault(entry_id(_op), _op)


def _dtypes(op):
    sup = op.supported_dtypes("cpu")
    dts = [d for d in DTYPES if d in sup]
    return dts or [d for d in _FALLBACK if d in sup][:1]


def _ours(eid):
    op = ENTRIES[eid]
    try:
        return eg_callable(op.op)
    except Missing as e:
        return e


def _tested(eid):
    return eid not in SKIP and eid not in NONDETERMINISTIC


def _params():
    out = []
    for eid, op in ENTRIES.items():
        if not _tested(eid):
            continue
        for dt in _dtypes(op):
            d = str(dt).split(".")[1]
            marks = []
            reason = XFAIL.get(eid) or XFAIL.get(f"{eid}/{d}")
            if reason:
                marks.append(pytest.mark.xfail(reason=reason, strict=False))
            out.append(pytest.param(eid, dt, id=f"{eid}-{d}", marks=marks))
    return out


# ---- comparing ---------------------------------------------------------------------------
def _tol(eid, dt):
    t = TOLERANCE.get(eid)
    if dt in ("float64", "complex128"):
        base = (1e-7, 1e-7)
    else:
        base = (1.3e-5, 1e-5)
    if t is not None:
        base = (max(base[0], t[0]), max(base[1], t[1]))
    return base


def _close(e, t, eid, what, factor=1.0):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, eg.Tensor), f"{what}: {type(e).__name__}, torch gives a tensor"
        assert tuple(e.shape) == tuple(t.shape), \
            f"{what}: shape {tuple(e.shape)} != torch's {tuple(t.shape)}"
        assert dtype_name(e) == dtype_name(t), f"{what}: dtype {e.dtype} != torch's {t.dtype}"
        a, b = to_np(e), to_np(t)
        if b.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b, err_msg=what)
        else:
            rtol, atol = _tol(eid, dtype_name(t))
            np.testing.assert_allclose(a, b, rtol=rtol * factor, atol=atol * factor,
                                       equal_nan=True, err_msg=what)
    elif isinstance(t, float):
        assert isinstance(e, float | int), f"{what}: {e!r} vs torch's {t!r}"
        np.testing.assert_allclose(e, t, rtol=1e-7, equal_nan=True, err_msg=what)
    elif isinstance(t, torch.Size | tuple | list):
        assert tuple(e) == tuple(t), f"{what}: {e!r} vs torch's {t!r}"
    elif isinstance(t, torch.dtype):
        assert str(e).split(".")[-1] == str(t).split(".")[-1], what
    else:
        assert e == t, f"{what}: {e!r} vs torch's {t!r}"


def _rng(*parts):
    return np.random.default_rng(zlib.crc32("/".join(map(str, parts)).encode()))


def _random_like(rng, t):
    shape = tuple(t.shape)
    a = rng.standard_normal(shape)
    if t.dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(to_np(t).dtype)


def _diff_outputs(sample, out, eg_side):
    fn = sample.output_process_fn_grad
    if eg_side:
        fn = Converter()(fn) if fn is not None else None
    o = fn(out) if fn is not None else out
    return [v for v in leaves(o) if isinstance(v, (torch.Tensor, eg.Tensor))]


def _grad_inputs(conv):
    return [(t, e) for t, e in conv.pairs if t.requires_grad]


# ---- one sample -------------------------------------------------------------------------
# eigenvectors are unique up to a phase, which LAPACK builds choose differently (torch's
# and jax's differ in sign): their forward values are compared as the database's
# output_process_fn_grad presents them (the magnitudes), as their gradients are
GAUGE = frozenset({"linalg.eig", "linalg.eigh"})


def _describe(sample):
    """A sample's name, else its input's shape (the input of cat is a list, of zeros a
    size, of arange a number)."""
    x = sample.input
    return sample.name or (tuple(x.shape) if isinstance(x, torch.Tensor) else repr(x)[:60])


def _convert(sample):
    conv = Converter()
    args = conv((sample.input, *sample.args))
    kwargs = conv(dict(sample.kwargs))
    return conv, args, kwargs


def check_sample(eid, op, ours, sample, k, dt, runs):
    d = str(dt).split(".")[1]
    try:
        conv, args, kwargs = _convert(sample)
    except Unconvertible as e:
        pytest.skip(f"sample {k}: {e}")
    try:
        t_out = op(sample.input, *sample.args, **sample.kwargs)
    except Exception as e:  # noqa: BLE001 - torch refuses this sample: so must eagergrad
        with pytest.raises(type(e)):
            ours(*args, **kwargs)
        return
    e_out = ours(*args, **kwargs)
    t_leaves, e_leaves = leaves(t_out), leaves(e_out)
    if eid in GAUGE:  # compared as the database differentiates them
        t_leaves = _diff_outputs(sample, t_out, False)
        e_leaves = _diff_outputs(sample, e_out, True)
    assert len(e_leaves) == len(t_leaves), \
        f"sample {k}: {len(e_leaves)} outputs, torch {len(t_leaves)}"
    for j, (e, t) in enumerate(zip(e_leaves, t_leaves)):
        _close(e, t, eid, f"sample {k} ({_describe(sample)}): output {j}")
    if not op.supports_autograd or not dt.is_floating_point and not dt.is_complex:
        return
    pairs = _grad_inputs(conv)
    t_o = [o for o in _diff_outputs(sample, t_out, False) if o.requires_grad]
    if not pairs or not t_o:
        return
    rng = _rng(eid, d, k)
    vs = [_random_like(rng, o) for o in t_o]
    t_x = [t for t, _ in pairs]
    try:
        tg = torch.autograd.grad(t_o, t_x, [torch.tensor(v) for v in vs], retain_graph=True,
                                 allow_unused=True)
    except RuntimeError as e:  # torch has no derivative here: eagergrad raises too
        e_o = [x for x in _diff_outputs(sample, e_out, True) if x.requires_grad]
        with pytest.raises(RuntimeError):
            eg.autograd.grad(e_o, [e for _, e in pairs], [eg.tensor(v) for v in vs],
                             allow_unused=True)
        return

    def run(r):
        if r == 0:
            e_x, o = [e for _, e in pairs], e_out
        else:
            c2, a2, kw2 = _convert(sample)
            e_x, o = [e for _, e in _grad_inputs(c2)], ours(*a2, **kw2)
        e_o = [x for x in _diff_outputs(sample, o, True) if x.requires_grad]
        assert len(e_o) == len(t_o), \
            f"sample {k}: {len(e_o)} outputs require grad, torch {len(t_o)}"
        eg_ = eg.autograd.grad([x * 1.0 for x in e_o], e_x, [eg.tensor(v) for v in vs],
                               retain_graph=True, allow_unused=True)
        for j, (e, t, x) in enumerate(zip(eg_, tg, e_x)):
            t = t if t is not None else torch.zeros_like(t_x[j])
            e = e if e is not None else eg.zeros_like(x)
            _close(e, t, eid, f"run {r + 1}, sample {k}: grad of input {j}", factor=10)
    conftest.repeat(run, runs)
    if op.supports_gradgrad and d in ("float64", "complex128"):
        _check_gradgrad(eid, sample, k, d, pairs, t_o, vs, e_out)


def _check_gradgrad(eid, sample, k, d, pairs, t_o, vs, e_out):
    t_x, e_x = [t for t, _ in pairs], [e for _, e in pairs]
    e_o = [x for x in _diff_outputs(sample, e_out, True) if x.requires_grad]
    tv = [torch.tensor(v, requires_grad=True) for v in vs]
    ev = [eg.tensor(v, requires_grad=True) for v in vs]
    tg = torch.autograd.grad(t_o, t_x, tv, create_graph=True, allow_unused=True)
    eg_ = eg.autograd.grad(e_o, e_x, ev, create_graph=True, allow_unused=True)
    want = [g is not None and g.requires_grad for g in tg]
    got = [g is not None and g.requires_grad for g in eg_]
    assert got == want, f"sample {k}: first-order grads requiring grad {got}, torch {want}"
    keep = [j for j, w in enumerate(want) if w]
    if not keep:
        return
    rng = _rng(eid, d, k, "w")
    ws = [_random_like(rng, tg[j]) for j in keep]
    try:
        t2 = torch.autograd.grad([tg[j] for j in keep], t_x + tv,
                                 [torch.tensor(w) for w in ws], allow_unused=True)
    except RuntimeError:  # torch has no second derivative here: eagergrad raises too
        with pytest.raises(RuntimeError):
            eg.autograd.grad([eg_[j] for j in keep], e_x + ev, [eg.tensor(w) for w in ws],
                             allow_unused=True)
        return
    e2 = eg.autograd.grad([eg_[j] for j in keep], e_x + ev, [eg.tensor(w) for w in ws],
                          allow_unused=True)
    for j, (e, t, tr, er) in enumerate(zip(e2, t2, t_x + tv, e_x + ev)):
        t = t if t is not None else torch.zeros_like(tr)
        e = e if e is not None else eg.zeros_like(er)
        _close(e, t, eid, f"sample {k}: second-order grad of target {j}", factor=100)


# ---- the tests --------------------------------------------------------------------------
@pytest.mark.parametrize("eid,dt", _params())
def test_op(eid, dt):
    op = ENTRIES[eid]
    ours = _ours(eid)
    assert not isinstance(ours, Exception), f"{eid}: eagergrad has no {ours}"
    grad_dt = dt.is_floating_point or dt.is_complex
    samples = list(op.sample_inputs("cpu", dt, requires_grad=op.supports_autograd and grad_dt))
    assert samples
    for k in spread(len(samples), None if ALL_SAMPLES else SAMPLES.get(dt, 3)):
        # (the fused backward on the first two: it traces the same formulas)
        check_sample(eid, op, ours, samples[k], k, dt, 2 if dt == torch.float64 and k < 2 else 1)


def spread(n, m):
    """m indices spread evenly over range(n), first and last included (all if m is None)."""
    if m is None or n <= m:
        return list(range(n))
    return sorted({round(i * (n - 1) / (m - 1)) for i in range(m)}) if m > 1 else [0]


def _error_params():
    out = []
    for eid, op in ENTRIES.items():
        if _tested(eid) and op.error_inputs_func is not None:
            marks = [pytest.mark.xfail(reason=XFAIL[f"{eid}/errors"], strict=False)] \
                if f"{eid}/errors" in XFAIL else []
            out.append(pytest.param(eid, id=eid, marks=marks))
    return out


@pytest.mark.parametrize("eid", _error_params())
def test_op_errors(eid):
    """eagergrad raises torch's error type for every error input torch raises on."""
    op = ENTRIES[eid]
    ours = _ours(eid)
    assert not isinstance(ours, Exception), f"{eid}: eagergrad has no {ours}"
    for ei in op.error_inputs("cpu"):
        s = ei.sample_input
        try:
            op(s.input, *s.args, **s.kwargs)
        except ei.error_type:
            pass
        else:  # torch itself no longer raises here: nothing to compare
            continue
        try:
            _, args, kwargs = _convert(s)
        except Unconvertible:
            continue
        with pytest.raises(ei.error_type):
            ours(*args, **kwargs)


def test_every_entry_is_accounted_for():
    """Every entry of op_db is tested here, or listed (with a reason) as skipped or
    nondeterministic; the lists name only entries of op_db, and skip only what eagergrad
    lacks or cannot run."""
    listed = set(SKIP) | set(NONDETERMINISTIC)
    unknown = sorted(listed - set(ENTRIES))
    assert not unknown, f"listed entries op_db does not have: {unknown}"
    stale = sorted(k.split("/")[0] for k in XFAIL if k.split("/")[0] not in ENTRIES)
    assert not stale, f"xfails of entries op_db does not have: {stale}"
    missing = sorted(eid for eid in ENTRIES if _tested(eid) and isinstance(_ours(eid), Exception))
    assert not missing, f"entries eagergrad lacks, neither implemented nor skipped: {missing}"
    present = sorted(eid for eid, r in SKIP.items() if r.startswith("missing")
                     and not isinstance(_ours(eid), Exception))
    assert not present, f"listed as missing but eagergrad has them now: {present}"
    assert all(SKIP.values()) and all(NONDETERMINISTIC.values())
