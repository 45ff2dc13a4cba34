"""The torch-comparison harness of the differential tests (`from conftest import same`).

A scenario is a function of the library `L` (torch or eagergrad), in one of two forms:

    def f(L):            returns a result; `same(f)` compares the results
    def f(L, log):       appends events to `log`; `same(f)` compares the logs

`log.append` takes a snapshot (tensors by value at the time they are logged; torch may
later update a logged gradient in place) and is thread-safe. An exception escaping the
scenario is part of what is compared: the type, and the message with torch's names in
place of ours ("eagergrad.FloatTensor" reads "torch.FloatTensor").

`same(f)` runs f once with torch and RUNS times with eagergrad in this process, and each
eagergrad run must equal torch's. Before the first eagergrad run the fused backward
forgets every structure (engine/fused.py), and compiles on the spot (BACKGROUND is off
for the session), so run 1 runs node by node and runs 2+ run the fusable segments of
their backwards as compiled computations (a segment an earlier scenario compiled under
the same key is taken from it instead of compiled again). Per scenario the harness
records whether runs 2+ called backward and how many fused segments ran then; at the end
of the session it fails when the fused path ran in too few of the scenarios that called
backward (printed in the summary), and `same(f, fused=True)` asserts it for one scenario.

A tensor is compared by its values (exactly for integer/bool dtypes and with `exact=True`,
else allclose), dtype, shape, requires_grad, is_leaf and grad_fn name; `layout=True` adds
what torch shows of its memory (_version, _is_view(), stride, storage offset, contiguity).
"""
import dataclasses
import functools
import inspect
import os

# The suite meets thousands of (op, shape) pairs in one process and comes back to them
# test after test: a larger starting bound on compiled executables spares recompiles
# (the memory tests run their own processes with the default, see test_memory.py)
os.environ.setdefault("EAGERGRAD_EXECUTABLES", "1024")
# the suite must not fill the user's persistent XLA cache (~/.cache/eagergrad/xla): off here
# and in the processes the tests start (test_compile_cache.py turns it on in its own)
os.environ.setdefault("EAGERGRAD_COMPILATION_CACHE", "0")
import _suite_flags  # (XLA_FLAGS, before jax starts its CPU backend)
import re
import threading
import warnings

import jax
import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad.engine import fused as _fused

# eagergrad runs per scenario: 1 node by node; 2 fused, its structure compiled on this
# second sighting; 3 fused again, the compiled segment taken from the cache (the path every
# later call of a real program takes)
RUNS = 3
# (whole programs the tests run as processes: --doctest-modules must not import them)
collect_ignore = ["scripts"]
MIN_FUSED_SHARE = 0.6  # of the scenarios that called backward (checked at session end)
MIN_SCENARIOS = 50  # below this many backward scenarios the session check is skipped


_STR_SET = re.compile(r"\{'[^'{}]*'(?:, '[^'{}]*')*\}")


def msg(e):
    """An exception's message, with torch's names in place of eagergrad's and printed
    sets of strings sorted: their order is the hash seed's and the order in which the
    .pyc stored the literal, which differ between torch's and eagergrad's."""
    text = str(e).replace("eagergrad.", "torch.")
    return _STR_SET.sub(lambda m: "{" + ", ".join(sorted(m.group()[1:-1].split(", "))) + "}",
                        text)


def attempt(log, tag, fn):
    """Inside a scenario: log (tag, fn()) or (tag, exception type name, message)."""
    try:
        log.append((tag, fn()))
    except Exception as e:  # noqa: BLE001 - compared with torch's
        log.append((tag, type(e).__name__, msg(e)))


# ---- what is compared ------------------------------------------------------------------
class T:
    """A tensor seen library-independently (see the module docstring); its fields are
    attributes (`.values`, `.dtype` as "torch.float32", `.requires_grad`, ...)."""

    def __init__(self, t, opts):
        self.values = np.asarray(t.detach().tolist())
        self.exact = opts.exact or not (t.dtype.is_floating_point or t.dtype.is_complex)
        self.atol = opts.atol
        self.fields = dict(
            dtype=str(t.dtype).replace("eagergrad.", "torch."), shape=tuple(t.shape),
            requires_grad=t.requires_grad, is_leaf=t.is_leaf,
            # CopyBackwards' exact name is checked by its own (xfail) test
            grad_fn=None if t.grad_fn is None else
            t.grad_fn.name().replace("torch::autograd::CopyBackwards", "CopyBackwards"))
        if opts.layout:
            self.fields.update(
                version=t._version, is_view=t._is_view(), stride=tuple(t.stride()),
                offset=t.storage_offset(), contiguous=t.is_contiguous())

    def __getattr__(self, name):
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __eq__(self, other):
        if not isinstance(other, T) or self.fields != other.fields:
            return False
        if self.exact or other.exact:
            return np.array_equal(self.values, other.values, equal_nan=True)
        return np.allclose(self.values, other.values, rtol=1e-5,
                           atol=max(self.atol, other.atol), equal_nan=True)

    def __repr__(self):
        return f"T({self.values.tolist()}, {self.fields})"


@dataclasses.dataclass(frozen=True)
class Options:
    layout: bool = False     # compare _version, _is_view(), strides, offset, contiguity
    exact: bool = False      # floating values bit for bit (else rtol 1e-5, atol `atol`)
    atol: float = 1e-6       # (for values that cancel: a sum of terms ~5 that is ~0)
    messages: bool = True    # exception messages too (else their types only)
    quiet: bool = False      # ignore warnings while the scenario runs


def norm(v, opts=Options()):
    """A library-independent picture of a value."""
    if isinstance(v, (torch.Tensor, eg.Tensor)):
        return T(v, opts)
    if isinstance(v, (tuple, list)):
        return type(v)(norm(x, opts) for x in v)
    if isinstance(v, dict):
        return {k: norm(x, opts) for k, x in v.items()}
    if isinstance(v, (torch.dtype, eg.dtype)):
        return str(v).replace("eagergrad.", "torch.")
    if isinstance(v, (torch.Size, eg.Size)):
        return ("Size", tuple(v), repr(v))
    if isinstance(v, (torch.device, eg.device)):
        return ("device", repr(v), str(v))
    if isinstance(v, np.ndarray):
        return ("np", v.tolist(), str(v.dtype))
    return v


class Log(list):
    """A scenario's events, normalized when appended; appending is thread-safe."""

    def __init__(self, opts=Options()):
        super().__init__()
        self.opts = opts
        self.lock = threading.Lock()

    def append(self, v):
        with self.lock:
            super().append(norm(v, self.opts))


def _takes_log(fn):
    required = [p for p in inspect.signature(fn).parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    return len(required) == 2


def _outcome(fn, L, opts):
    """A log-style scenario's log (an exception appended as ("raised", type name,
    message)); a result-style scenario's ("ok", result) or ("err", type, message)."""
    with warnings.catch_warnings():
        if opts.quiet:
            warnings.simplefilter("ignore")
        if _takes_log(fn):
            log = Log(opts)
            try:
                fn(L, log)
            except Exception as e:  # noqa: BLE001 - compared with torch's
                log.append(("raised", type(e).__name__, msg(e)))
            return list(log)
        try:
            return "ok", norm(fn(L), opts)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            return "err", type(e), msg(e)


def _comparable(outcome, opts):
    """The outcome without exception messages when they are not compared."""
    if opts.messages:
        return outcome
    if isinstance(outcome, list):
        return [e[:2] if isinstance(e, tuple) and e[:1] == ("raised",) else e
                for e in outcome]
    return outcome[:2] if outcome[0] == "err" else outcome


def _describe(t, e):
    if isinstance(t, list) and isinstance(e, list):
        lines = [f"{'  ' if a == b else '!!'} torch={a!r}\n   eager={b!r}"
                 for a, b in zip(t, e)]
        lines += [f"!! only torch={a!r}" for a in t[len(e):]]
        lines += [f"!! only eager={b!r}" for b in e[len(t):]]
        return "\n".join(lines)
    return f"torch:     {t!r}\neagergrad: {e!r}"


# ---- counting backward calls and fused segments ------------------------------------------
class _Calls:
    """Counts calls of eagergrad's backward entry points while a harness run is on."""
    n = 0

    @classmethod
    def wrap(cls, f):
        @functools.wraps(f)
        def counted(*args, **kwargs):
            cls.n += 1
            return f(*args, **kwargs)
        counted.__wrapped_by_harness__ = f
        return counted


_ENTRY_POINTS = [(eg.Tensor, "backward"), (eg.autograd, "backward"), (eg.autograd, "grad")]


class _counting:
    def __enter__(self):
        for owner, name in _ENTRY_POINTS:
            setattr(owner, name, _Calls.wrap(getattr(owner, name)))

    def __exit__(self, *exc):
        for owner, name in _ENTRY_POINTS:
            setattr(owner, name, getattr(owner, name).__wrapped_by_harness__)


@dataclasses.dataclass
class Stat:
    test: str
    backward: bool  # runs 2+ called backward / autograd.grad
    fused: int      # fused segments that ran in runs 2+


STATS = []  # one Stat per same() call, this process


def _current_test():
    return os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]


# ---- the harness ------------------------------------------------------------------------
def repeat(body, runs=RUNS, fused=False):
    """body(k) for k in range(runs) with eagergrad: the fused backward forgets every
    structure first, so run 0 runs node by node and runs 1+ fused (a segment an earlier
    scenario compiled is taken from there, as a program's later steps take it: the
    suite's time). Recorded for the session check; fused=True: runs 1+ must have run a
    fused segment."""
    _fused.clear(keep_compiled=True)
    calls = segments = 0
    with _counting():
        for k in range(runs):
            if k == 1:
                calls, segments = _Calls.n, _fused.COUNTS["segments_fused"]
            body(k)
        stat = Stat(_current_test(), runs > 1 and _Calls.n > calls,
                    _fused.COUNTS["segments_fused"] - segments)
    STATS.append(stat)
    if fused:
        assert stat.backward and stat.fused > 0, f"runs 2-{runs} ran no fused segment ({stat})"


def _compare(fn, opts, fused=False, runs=RUNS):
    """torch's outcome and the eagergrad runs' (each checked equal to torch's)."""
    want = _outcome(fn, torch, opts)
    gots = []

    def body(k):
        got = _outcome(fn, eg, opts)
        if _comparable(got, opts) != _comparable(want, opts):
            how = "node by node" if k == 0 else "fused"
            pytest.fail(f"eagergrad run {k + 1} of {runs} ({how}) differs from torch:\n"
                        + _describe(want, got), pytrace=False)
        gots.append(got)
    repeat(body, runs, fused)
    return want, gots


def same(fn, *, fused=False, runs=RUNS, **options):
    """Run the scenario with torch once and with eagergrad `runs` times; every eagergrad
    outcome must equal torch's, which is returned (a log; a result; or ("err", type,
    message) when torch raised). fused=True: the fused path must have run in runs 2+.
    options: see Options."""
    want, _ = _compare(fn, Options(**options), fused, runs)
    return want[1] if isinstance(want, tuple) and want[0] == "ok" else want


def same_error(fn, phrase, exc=RuntimeError, **options):
    """torch raises exactly `exc` with `phrase` in its message, and so does every
    eagergrad run, with the same message (messages=False: one containing `phrase`).
    Returns torch's message."""
    want, gots = _compare(fn, Options(**options))
    for r in [want] + gots:
        assert isinstance(r, tuple) and r[0] == "err", f"did not raise: {r!r}"
        assert r[1] is exc and phrase in r[2], r
    return want[2]


# ---- compile counts ---------------------------------------------------------------------
@pytest.fixture
def counting_compiles(monkeypatch):
    """For the tests that count XLA compiles (`EXECUTABLES.compiles_here()`, this
    thread's): the executable bound's own recompiles (a sweep clearing a tracked kernel
    past its limit of shapes, jax's staging caches cleared every 64 compiles; tested in
    test_memory.py) are off, and jax logs every compile with its function's name, which
    pytest shows when the test fails."""
    from eagergrad._cache import EXECUTABLES
    monkeypatch.setattr(EXECUTABLES, "PER_TRACKED", 1 << 10)
    monkeypatch.setattr(EXECUTABLES, "MAX_TRACKED", 1 << 10)
    monkeypatch.setattr(EXECUTABLES, "JAX_CLEAR_EVERY", 1 << 30)
    # (a function's own limit, doubled by earlier sweeps in this worker, would override
    # PER_TRACKED: a sweep inside the test could clear it, and jax's caches with it)
    monkeypatch.setattr(EXECUTABLES, "limits", {})
    # Python numbers become arrays through jax's eager convert_element_type, once per value
    # (ops/_args.py's cache, which outlives jax's caches): with 5 and 6 cached by earlier
    # tests and jax's caches cleared since, a test's first new value compiled jax's
    # conversion inside its counted calls
    from eagergrad.ops import _args
    monkeypatch.setattr(_args, "_scalar_cache", {})
    with jax.log_compiles():
        yield


# ---- session: fused compiles on the spot; the fused path must have run -------------------
# ---- tiers: `slow` tests run in the full suite only ---------------------------------------
# whole-slow modules whose import alone takes seconds (torch's OpInfo database): the fast
# tier (`-m "not slow"`) does not collect them at all
_SLOW_MODULES = frozenset({"test_opinfo.py", "test_modinfo.py", "test_optiminfo.py"})


def pytest_ignore_collect(collection_path, config):
    markexpr = config.getoption("markexpr") or ""
    if collection_path.name in _SLOW_MODULES and markexpr.replace(" ", "") == "notslow":
        return True
    return None


# ---- xdist: one worker per op ------------------------------------------------------------
# With `-n 2 --dist loadgroup` (the README's command) the tests of one op (every sample,
# aspect and test file) run in one worker: each worker compiles each kernel anew, and with
# `load` both workers met every op.
def _group(item):
    """The op (or module_db entry) a test exercises, None for the others."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    sample = params.get("sample")
    if hasattr(sample, "id") and hasattr(sample, "args"):
        op = params.get("op")  # (test_special_points: its samples' ids are their own)
        return "op-" + (op if isinstance(op, str) else sample.id.split(":")[0])
    if item.path.name == "test_modinfo.py" and "name" in params:
        return "module-" + params["name"]
    return None


# Fast-tier tests that cost over ~0.6 s each (tests/fast_tier_slow.txt says how they were
# measured): slow, so in the full suite only, unchanged
def _listed(name):
    """The node ids listed in tests/`name` (# starts a comment line)."""
    with open(os.path.join(os.path.dirname(__file__), name)) as f:
        return frozenset(line.strip() for line in f
                         if line.strip() and not line.startswith("#"))


_SLOW_IN_THE_FAST_TIER = _listed("fast_tier_slow.txt")
_CODEGEN_EXACT = _listed("codegen_exact.txt")
_AT_DEFAULT_CODEGEN = pytest.mark.skip(
    reason="its answer depends on the last bits of XLA's default codegen, and this run "
    "compiles with the suite's fast flags (tests/_suite_flags.py): it runs with "
    "EAGERGRAD_SUITE_CODEGEN=default (the README's test command's second run)")


@pytest.hookimpl(tryfirst=True)  # (before -m deselects by the marks added here)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid in _SLOW_IN_THE_FAST_TIER:
            item.add_marker(pytest.mark.slow)
        if item.nodeid in _CODEGEN_EXACT:
            item.add_marker(pytest.mark.codegen)
        if _suite_flags.fast_codegen() and item.get_closest_marker("codegen"):
            item.add_marker(_AT_DEFAULT_CODEGEN)
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    seen = set()
    for item in items:
        if item.get_closest_marker("fast_first") is None:
            continue
        key = (item.path, item.originalname)
        if key in seen:
            item.add_marker(pytest.mark.slow)
        seen.add(key)


@pytest.fixture(autouse=True, scope="session")
def _compile_fused_segments_on_the_spot():
    old = _fused.BACKGROUND, _fused.EAGER
    _fused.BACKGROUND = False
    _fused.EAGER = True  # the second sighting compiles: runs 2+ of a scenario run fused
    yield
    _fused.BACKGROUND, _fused.EAGER = old


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):  # pytest-xdist: collect each worker's records
    STATS.extend(Stat(*s) for s in node.workeroutput.get("harness_stats", ()))


def _verdict():
    called = [s for s in STATS if s.backward]
    ran = [s for s in called if s.fused > 0]
    line = (f"harness: {len(STATS)} scenarios x {RUNS} eagergrad runs; {len(called)} called "
            f"backward in runs 2+, {len(ran)} of them ran fused segments "
            f"({sum(s.fused for s in ran)} segments)")
    ok = len(called) < MIN_SCENARIOS or len(ran) >= MIN_FUSED_SHARE * len(called)
    return ok, line, [s.test for s in called if s.fused == 0]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput"):  # an xdist worker: the controller checks
        config.workeroutput["harness_stats"] = [dataclasses.astuple(s) for s in STATS]
        return
    ok, _, _ = _verdict()
    if not ok and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if hasattr(config, "workerinput") or not STATS:
        return
    ok, line, unfused = _verdict()
    terminalreporter.write_line(line)
    if not ok:
        terminalreporter.write_line(
            f"FAILED: the fused path ran in fewer than {MIN_FUSED_SHARE:.0%} of them; "
            f"without a fused segment: {', '.join(unfused[:40])}", red=True)


@pytest.fixture(autouse=True)
def _no_cache_clear_due_in_compile_counts(request):
    """The compile-count tests count one thread's XLA compiles over a window: the global
    bound's periodic clear of jax's caches (due after so many compiles by the tests before
    it in the worker) would recompile a kernel inside the window. Start them not due."""
    if request.module.__name__.startswith("test_compile_counts"):
        from eagergrad._cache import EXECUTABLES
        EXECUTABLES._compiles_at_jax_clear = EXECUTABLES._compiles_at_sweep = \
            EXECUTABLES.compiles
    yield
