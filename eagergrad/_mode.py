"""Ambient state: the mode flags every op, factory and backward may read.

One holder per piece of state (the context managers that change them live elsewhere):

- `STATE` (thread-local): grad and inference mode. Set by engine/grad_mode.py; read by
  every recording op (ops/), the engine, tensor.py, nn and func. NOTE [two flags].
- `FUNC` (thread-local): the torch.func transforms active in this thread and the capture
  of a top-level trace. Set by func/; read by tensor.py (.item(), bool()), creation.py,
  ops/_table.py, ops/inplace.py, ops/batchnorm.py, engine/function.py, autograd/_api.py.
- `CAPTURING`: how many threads have a `FUNC.capture` (func/_program.py counts; the hot
  paths of ops, in-place ops and factories read `.n` before the thread-local).
- `FWD`: forward-mode AD's dual level. Set by autograd/forward_ad.py; read by every op
  (ops/_table.py, inplace.py, fill.py, index.py), tensor.py, the engine, saved tensors and
  custom Functions.
- `DONATING`: an in-place op under no_grad lending its buffer to its kernel. Set by
  ops/inplace.py; read by ops/_table.py's call_op.
- `ANOMALY` (process-wide, as torch's): anomaly mode. Set by engine/anomaly.py's
  context managers; read by engine/graph.py, engine.py, function.py, ops/_table.py and
  autograd/_api.py.
- `COMPILING`: torch.compile tracing a call in this thread (`.n` counts the threads doing
  it; `.tl.rec` is this thread's recorder, _dynamo/_step.py). Set by _dynamo; read where
  a trace must see state as traced (creation.py's random keys, optimizer hyperparameters)
  or read a value (tensor.py's item/tolist/numpy, _repr.py), and by Tensor._write.
- `AUTOCAST`: autocast (torch.amp): `.n` counts the threads with autocast enabled on some
  device (the one check the ops it covers make), `.tl` is this thread's state. Set by
  ops/_autocast.py (torch.amp and torch.set_autocast_* call it); read by ops/_autocast.py,
  ops/inplace.py, ops/_table.py (a node's backward) and engine/engine.py (fusion).

Other ambient state stays with what owns it: the default dtype (_dtypes.py) and device
(device.py), saved-tensor hooks (engine/saved.py), the RNG (creation.py).

NOTE [two flags]: `STATE.enabled` is what is_grad_enabled() reports; `STATE.grad` is
whether ops record history, i.e. `enabled and not inference` (torch's inference mode
records nothing even under enable_grad). Code that switches grad mode sets both through
`set_enabled` and restores both from `get_state`.
"""
import threading


class _State(threading.local):
    def __init__(self):
        self.grad = True        # record history (enabled and not inference)
        self.enabled = True     # is_grad_enabled()
        self.inference = False  # is_inference_mode_enabled()


STATE = _State()


def get_state():
    return (STATE.grad, STATE.enabled, STATE.inference)


def restore_state(prev):
    STATE.grad, STATE.enabled, STATE.inference = prev


def set_enabled(mode):
    """Set grad mode (is_grad_enabled) in this thread; recording follows it outside
    inference mode."""
    STATE.enabled = mode
    STATE.grad = mode and not STATE.inference


class _FuncLevels(threading.local):
    """The torch.func transforms active in this thread, innermost last (objects of
    func/_levels.py _Level, with `.item(value, what)`, `.key(key)` and `.batched(value)`: how
    .item()/bool() and random draws behave inside them; whether a value is vmapped).
    capture: while a top-level transform traces its call, what the call touches outside
    itself (func/_program.py _Capture: tensors requiring grad that recorded ops read,
    storages written in place); None otherwise."""

    def __init__(self):
        self.levels = []
        self.capture = None


FUNC = _FuncLevels()


class _Capturing:
    """n: how many threads have a FUNC.capture now. The hot paths (every recorded op,
    in-place op and factory) read this plain attribute first, not the thread-local's
    (6 ns against 32); `enter`/`leave` change it under a lock, so it never under-counts
    (a capturing thread that read 0 would skip its captures)."""
    n = 0
    _lock = threading.Lock()

    def enter(self):
        with self._lock:
            self.n += 1

    def leave(self):
        with self._lock:
            self.n -= 1


CAPTURING = _Capturing()


class _Forward:
    """Forward-mode AD (autograd/forward_ad.py): `active` while a dual level is entered
    (the one check ops make); a tangent is stored as `t._fw = (gen, tangent)` and is
    stale once `gen` moved on (its level exited)."""
    __slots__ = ("active", "gen", "level")

    def __init__(self):
        self.active, self.gen, self.level = False, 0, -1


FWD = _Forward()


class _DonatingThread(threading.local):
    storage = None


class _Donating:
    """An in-place op under no_grad whose tensor holds the only reference to its array
    lets its kernel reuse that buffer (ops/inplace.py). n: how many threads are in one
    now (a cheap check for every op; a lost update only costs or skips a donation);
    tl.storage: this thread's tensor's storage."""

    def __init__(self):
        self.n = 0
        self.tl = _DonatingThread()


DONATING = _Donating()


class _Anomaly:
    """Anomaly mode (engine/anomaly.py): process-wide, as torch's."""
    enabled = False
    check_nan = True


ANOMALY = _Anomaly()


class _CompilingThread(threading.local):
    rec = None
    split = None


class _Compiling:
    """n: how many threads trace a compiled call now (the one check the hot paths make);
    tl.rec: this thread's recorder (_dynamo/_step.py _Recorder), None when not tracing.
    splits: how many threads run a compiled function split at a graph break now; tl.split
    that function in this thread (the modules and optimizers it calls run as compiled
    pieces, _dynamo/_step.py NOTE [split calls])."""
    n = 0
    splits = 0
    _lock = threading.Lock()

    def __init__(self):
        self.tl = _CompilingThread()

    def enter(self, rec):
        prev = self.tl.rec
        self.tl.rec = rec
        with self._lock:
            self.n += 1
        return prev

    def leave(self, prev):
        self.tl.rec = prev
        with self._lock:
            self.n -= 1

    @property
    def rec(self):
        return self.tl.rec if self.n else None

    def split_enter(self, fn):
        prev = self.tl.split
        self.tl.split = fn
        with self._lock:
            self.splits += 1
        return prev

    def split_leave(self, prev):
        self.tl.split = prev
        with self._lock:
            self.splits -= 1

    def piece(self, obj, call):
        """The compiled piece to run for obj (a module, an optimizer) called (through
        `call`) by a split function in this thread, or None."""
        tl = self.tl
        if tl.split is None or tl.rec is not None:
            return None
        return tl.split.piece(obj, call)


COMPILING = _Compiling()


class _AutocastThread(threading.local):
    """This thread's autocast state, as torch's thread-locals: `enabled` (device types),
    `dtype` (device type -> lower-precision dtype; None where torch's is Undefined),
    `nesting` (of the context managers), `cache_enabled`; `active` (device type -> dtype)
    is what the ops read: enabled and not excluded (the op running now excludes its
    device, as torch's autocast kernels exclude their dispatch key)."""

    def __init__(self):
        from ._dtypes import bfloat16, float16
        self.enabled = frozenset()
        self.dtype = {"cpu": bfloat16, "cuda": float16, "hip": float16, "xla": bfloat16,
                      "xpu": float16, "mps": float16, "hpu": bfloat16, "ipu": float16,
                      "mtia": float16, "maia": bfloat16, "privateuseone": float16}
        self.active = {}
        self.nesting = 0
        self.cache_enabled = True


class _Autocast:
    """n: how many threads have autocast enabled on some device (a plain attribute every
    covered op reads first); tl: this thread's state. `set_enabled` keeps both."""
    n = 0
    _lock = threading.Lock()

    def __init__(self):
        self.tl = _AutocastThread()

    def set_enabled(self, device_type, enabled):
        tl = self.tl
        was = bool(tl.enabled)
        tl.enabled = tl.enabled | {device_type} if enabled else tl.enabled - {device_type}
        if bool(tl.enabled) != was:
            with self._lock:
                self.n += 1 if tl.enabled else -1
        self.refresh()

    def refresh(self):
        tl = self.tl
        tl.active = {d: tl.dtype[d] for d in tl.enabled}


AUTOCAST = _Autocast()
