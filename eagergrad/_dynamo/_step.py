"""torch.compile's runtime: a compiled function traces a call into one jax program and
replays it on later calls whose guards hold (NOTE [compiled calls]).

NOTE [compiled calls]: a call of a compiled function
1. walks the heap it can see (_heap.py, NOTE [the heap of a call]): the guard key, with
   the arguments, the function's globals and closure, the ambient state (grad mode, the
   default dtype, ...). An entry traced under the same key replays: one call of its jitted
   program on the arrays of the storages the walk reached (and the RNG key, and the
   optimizer hyperparameters, NOTE [lifted hyperparameters]), whose outputs are written
   back into the same storages, with the version counters moved on as the traced call
   moved them, new tensors made where the traced call made them (a .grad after
   zero_grad(set_to_none=True)), and the result rebuilt. The user's Python does not run.
2. Otherwise the call is traced: every storage the walk reached holds a jax tracer, and
   the function runs once, for real (its Python side effects happen once, as eagerly):
   forward, backward with every hook, optimizer steps. A value read in it (.item(),
   bool(), print(tensor)) is computed from the trace so far; the program outputs it
   again, and a replay whose value differs is discarded and traced anew. The program's
   outputs are written into the storages, so the traced call's results are eager's.
3. The traced call is an entry when it can be replayed: the heap after it has the key
   it had before (so the next call sees the same structure), it wrote no tensor outside
   the walk, and nothing it did must run as Python every call (print, I/O, a value read
   under fullgraph). A tensor outside the walk whose array is a const of the program
   (read through a path the walk does not follow, or sharing a cached constant) is
   checked by every replay to still hold that array (_foreign). A first call that makes
   state (optimizer state, .grad) is not an entry: its program runs once (NOTE [programs
   run once]) and the next call traces again; that is not a recompile. A call that is
   not replayable for another reason is a graph break: the function runs eagerly from
   then on, split into compiled pieces (NOTE [split calls]; fullgraph=True raises
   Unsupported instead), and explain() names the reason and the line.
Guards never go stale: what the walk does not key is not seen by the program either
(an unreached tensor read is checked by identity of its array, point 3).

NOTE [split calls]: there is no bytecode interpreter to resume a trace after a graph
break, so a function with a break runs eagerly from then on, split: while it runs, each
module it calls (Module.__call__) and each optimizer step it takes (a step without a
closure) is a compiled piece of its own, a CompiledFunction per object cached on the
function, with its own guards, entries and breaks; a module's forward differentiated by the
eager code around it gets one node (NOTE [compiled forward]). A piece runs what it calls
whole (no pieces inside pieces). So `print(loss)` in a training step leaves the model's
forward, the loss module and the optimizer step compiled, and the step's own Python
(the print, the backward call) eager; explain() counts the pieces' programs as graphs.

NOTE [programs run once]: an entry's program is jitted and compiled by the traced call
itself, which runs it as replays will. A first call's program (it made state, so the next
call traces again) runs once: XLA compiles it at its cheapest (LLVM level 0, the legacy
loop emitters: on CPU about a quarter of the default's compile time for a step, and the
one run slower by about its own duration). Run primitive by primitive instead, each of
its kernels would compile on its own, several times the compile of the whole. A traced
call that breaks the graph runs primitive by primitive: the eager code after it reuses
those kernels.

NOTE [donated state]: a replay's program writes new arrays for the state it changes
(parameters, optimizer state, buffers), and the old arrays are dead once written back, so
the entry's program donates them (XLA updates them in place instead of allocating and
copying). Arrays are immutable and shared freely in eagergrad (a clone, a detach's copy, a
numpy view of a parameter hold the same array), so a replay donates an array only when the
storage is all that holds it (its reference count): otherwise the program gets a copy.
Entries that read values (a replay may be discarded and the call traced from the state)
or keep their inputs for a vjp (NOTE [compiled forward]) donate nothing.

NOTE [lifted hyperparameters]: a scheduler changing lr every step must not recompile. The
floats of the param groups an optimizer made (optim/optimizer.py ParamGroup) are keyed by
type only (_heap.py), and every optimizer kernel's hyperparameter vector built inside an
optimizer's step (optim/_kernels.py Kernel.foreach) is put on the device and noted; after
the trace those vectors, consts of the jaxpr found by identity, become the program's first
inputs. A replay runs each traced optimizer step dry (the Python of its `_update` per
group, whose kernels only hand back their vector and static key, _Dry): the vectors of
this call's values, and the static keys, which must be the traced ones (a flag derived
from a hyperparameter, like weight_decay != 0, changes the program: then the call is
traced again). A ParamGroup read by other Python in the trace (a user's `group["lr"]`, a
scheduler stepping inside the function) is guarded by value as well (`checks`). Groups the
user passed as dicts are the user's objects and keyed by value."""
import builtins
import gc
import operator
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes, _settings
from ..device import default as _default_device
from .._mode import ANOMALY, AUTOCAST, COMPILING, FUNC, FWD, STATE
from ..creation import _rng
from ..engine.grad_mode import no_grad
from ..engine.graph import Node
from ..engine.saved import _FREED, HOOKS
from ..func._trace import _current_trace, _trace_jaxpr, value_in_trace
from ..optim.optimizer import Optimizer, ParamGroup
from ..ops._table import DTChain
from ..tensor import _STOP_GRADIENT, Tensor, _make, _make_as
from . import _guard, _heap
from .exc import FailOnRecompileLimitHit, Unsupported

_CHANGING_LIMIT = 3  # traced calls in a row changing the heap's shape: a graph break
# what ran (tests count them): calls traced, entries compiled, replays, replays discarded
# (a value read differed), calls run eagerly after a graph break, calls whose written
# guard passed (NOTE [written guards])
COUNTERS = {"traced": 0, "compiled": 0, "replayed": 0, "discarded": 0, "eager": 0,
            "guarded": 0}


class config:
    """torch._dynamo.config, the options eagergrad reads."""
    recompile_limit = 8
    cache_size_limit = 8  # (torch's older name)


_STANCE = ["default"]


def _ambient():
    return (STATE.grad, STATE.enabled, STATE.inference, _dtypes._default[0], FWD.active,
            AUTOCAST.n and tuple(sorted(AUTOCAST.tl.active.items(), key=str)),
            ANOMALY.enabled, _settings._deterministic["on"], len(HOOKS.stack),
            tuple(map(id, (h for pair in HOOKS.stack for h in pair))),
            _default_device(), _settings._matmul_precision[0])


def _user_line():
    """file:line of the innermost frame that is not eagergrad's or jax's."""
    for fs in reversed(traceback.extract_stack()):
        if not any(p in fs.filename for p in ("/eagergrad/", "/jax/", "/jaxlib/")):
            return f"{fs.filename}:{fs.lineno}"
    return "<unknown>"


class _Recorder:
    """What a trace notes as it runs: the storages written, the values read, whether a
    backward ran, and what makes the call unreplayable."""

    def __init__(self, fullgraph, frame, values):
        self.fullgraph, self.frame, self.values = fullgraph, frame, values
        self.written = {}  # id(storage) -> storage
        self.reads = []    # (tracer, its value)
        self.read_where = []  # file:line of each read
        self.breaks = []   # reasons the call cannot be replayed
        self.backward_ran = False
        self.hooked = False  # a hook registered on a tensor or node in the call
        self.steps = []    # (optimizer, update) of each optimizer step run
        self.stepping = None
        self.hypers = []   # (kernel, its static key, the lifted vector) in order
        self.group_reads = {}  # id(param group) -> group, read outside an optimizer step
        self.originals = {}  # id(stand-in ParamGroup) -> the user's dict (_swap_groups)
        self.muted = 0     # > 0: inside a gc callback (_mute_gc_callbacks)

    def optimizer_step(self, opt, update):
        """An optimizer's step starts (opt) or ends (None)."""
        self.stepping = opt
        if opt is not None:
            self.steps.append((opt, update))

    def hyper(self, kernel, key, hv):
        """The hyperparameter vector of an optimizer kernel's call: lifted into an input
        of the program when the step is an optimizer's (NOTE [lifted hyperparameters])."""
        if self.stepping is None:
            return hv
        with jax.ensure_compile_time_eval():
            hv = jax.device_put(hv)
        self.hypers.append((kernel, key, hv))
        return hv

    def group_read(self, group):
        group = self.originals.get(id(group), group)
        self.group_reads[id(group)] = group

    def writes(self, st):
        self.written.setdefault(id(st), st)

    def read(self, v, what, check=False):
        """The value of the tracer v, read by `what` (item, bool, print, ...); `check`: a
        value eagergrad itself checks, no graph break even with fullgraph=True (a replay
        whose value differs is still traced anew)."""
        where = _user_line()
        if self.fullgraph and not check:
            raise Unsupported(
                f"Data-dependent value read by Tensor.{what}() at {where}: a compiled "
                "function with fullgraph=True cannot read a tensor's value (graph break)")
        if what == "print":
            self.breaks.append(f"print of a tensor at {where}")
        value = value_in_trace(v, self.frame, self.values, _known)
        self.reads.append((v, value))
        self.read_where.append(where)
        return value

    def profile(self, frame, event, arg):
        if (event == "c_call" and not self.muted and _impure(arg) and
                not _heap.is_library(frame.f_code)):
            where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
            name = getattr(arg, "__qualname__", repr(arg))
            if self.fullgraph:
                raise Unsupported(f"call to {name} at {where}: a side effect a compiled "
                                  "function with fullgraph=True cannot replay (graph break)")
            self.breaks.append(f"call to {name} at {where}")


def _mute_gc_callbacks(rec):
    """gc runs its callbacks (a profiler's, a leak checker's) wherever a collection starts
    during the trace: what they call is not the function's, and no graph break. Returns
    the wrappers put in place of gc.callbacks' entries, for _unmute_gc_callbacks."""
    def muted(cb):
        def call(phase, info):
            rec.muted += 1
            try:
                cb(phase, info)
            finally:
                rec.muted -= 1
        call.original = cb
        return call
    wrappers = [muted(cb) for cb in gc.callbacks]
    gc.callbacks[:] = wrappers
    return wrappers


def _unmute_gc_callbacks(wrappers):
    """gc.callbacks as it was, but for what the function itself added or removed."""
    ours = {id(w) for w in wrappers}
    gc.callbacks[:] = [cb.original if id(cb) in ours else cb for cb in gc.callbacks]


def _host_rng():
    """The states of Python's and numpy's global random generators (a digest)."""
    import random
    st = np.random.get_state(legacy=False)["state"]
    return hash(random.getstate()), st["pos"], np.asarray(st["key"]).tobytes()


def _swap_groups(pre, rec):
    """For the trace, each param group the user gave as a dict and the walk lifted
    stands in the optimizer's list as a ParamGroup copy, which tells the recorder when
    Python other than the step reads its floats (NOTE [lifted hyperparameters])."""
    lifted = {id(g) for g, _ in pre.lifted}
    swapped = []
    for opt in pre.objs:
        if isinstance(opt, Optimizer):
            groups = opt.param_groups
            for i, g in enumerate(groups):
                if g.__class__ is dict and id(g) in lifted:
                    stand_in = groups[i] = ParamGroup(g)
                    rec.originals[id(stand_in)] = g
                    swapped.append((groups, i, g, stand_in))
    return swapped


def _unswap_groups(swapped):
    for groups, i, g, stand_in in swapped:
        if dict(dict.items(stand_in)) != g:  # (the call changed the group: into the dict)
            g.clear()
            g.update(dict.items(stand_in))
        groups[i] = g


def _known(a):
    return a


_IMPURE_MODULES = {"time", "random", "_random", "os", "posix", "io", "_io", "logging",
                   "socket", "subprocess", "shutil"}
_IMPURE = {builtins.print, builtins.input, builtins.open, builtins.breakpoint}


def _impure(fn):
    """A C function whose effect the program cannot replay (I/O, clocks, Python's RNG)."""
    if fn in _IMPURE:
        return True
    mod = getattr(fn, "__module__", None)
    if mod is None:
        owner = getattr(fn, "__self__", None)
        mod = type(owner).__module__ if owner is not None else None
    return mod in _IMPURE_MODULES or (mod or "").startswith("numpy.random")


class CompiledFunctionBackward(Node):
    """The grad_fn of a tensor a replayed call returns whose graph the call's own
    backward consumed: backward through it again is torch's error."""

    def apply(self, grads):
        raise RuntimeError(_FREED)


class _Entry:
    """A replayable traced call: `run(*inputs)` and how to apply its outputs."""
    __slots__ = ("run", "changed", "deltas", "born", "actions", "result", "specs",
                 "reads", "rng", "compiled", "extra", "steps", "hyper_keys", "checks",
                 "diff", "last_lifted", "last_hvs", "read_where", "gkey", "guard", "donate",
                 "foreign", "first_read", "last_floats")


def _roots(fn, args, kwargs):
    roots = [("args", args), ("kwargs", kwargs), ("fn", fn)]
    return roots


class CompiledFunction:
    """The callable torch.compile returns for a function (OptimizedModule wraps a
    module's). Its cache holds entries by guard key."""
    _walk_opaque = True  # (a walk keys it by identity, not its caches)

    def __init__(self, fn, fullgraph=False, dynamic=None):
        self.fn, self.fullgraph, self.dynamic = fn, fullgraph, dynamic
        self.entries = {}
        self.broken = None  # the graph break that made it eager, if one did
        self.compiles, self.recompile_reasons, self.breaks = 0, [], []
        self._last = None  # the walk (with paths) before the last traced call, for reasons
        self.changing = 0  # traced calls in a row that changed the heap's shape
        self.discards = 0  # replays in a row discarded (a value read differed)
        self.recent = None  # the entry of the last call replayed or compiled
        self.pieces = {}  # id(object) -> (object, its compiled piece) (NOTE [split calls])
        self.piece_of = None  # the split function this is a piece of

    def __call__(self, *args, **kwargs):
        fn = self.fn
        if _STANCE[0] == "force_eager" or FUNC.levels or FUNC.capture is not None or \
                COMPILING.rec is not None or _has_tracer(args, kwargs):
            return fn(*args, **kwargs)
        if self.piece_of is not None:  # (a piece runs its modules whole, NOTE [split calls])
            tl = COMPILING.tl
            prev, tl.split = tl.split, None
            try:
                return self._call(fn, args, kwargs)
            finally:
                tl.split = prev
        return self._call(fn, args, kwargs)

    def _call(self, fn, args, kwargs):
        if self.broken is not None:
            COUNTERS["eager"] += 1
            return self._split(args, kwargs)
        args2, kwargs2, subs = _by_value(args, kwargs)
        entry, pre = self._guarded(args2, kwargs2, subs)
        if entry is None:
            try:
                args2, kwargs2, subs, pre = _walk_call(fn, args, kwargs, args2, kwargs2, subs)
            except _heap.TooLarge:
                return self._break(f"the call reaches more than {_heap.MAX_OBJECTS} "
                                   "objects", args, kwargs)
            entry = self.entries.get((pre.key, _ambient()))
        gkey = entry.gkey if entry is not None else (pre.key, _ambient())
        if entry is not None:
            done, result = _replay(entry, pre)
            if done:
                COUNTERS["replayed"] += 1
                self.discards, self.recent = 0, entry
                return result
            COUNTERS["discarded"] += 1
            self.discards += 1
            reason = result
            if self.discards >= _CHANGING_LIMIT:
                return self._break(f"changes every call: {reason}", args, kwargs)
            if not isinstance(pre, _heap.Walk):  # (the trace needs the whole walk)
                args2, kwargs2, subs, pre = _walk_call(fn, args, kwargs, args2, kwargs2, subs)
        else:
            reason = None
        try:
            return self._trace(pre, gkey, args2, kwargs2, reason)
        finally:
            if subs and any(s._version_counter.version for _, s in subs):
                # the call wrote into a view argument it was given by value: through to
                # the view, and no replay (the program would write where the trace did)
                for o, s in subs:
                    if s._version_counter.version:
                        o._write(s._value)
                        o._version_counter.version += s._version_counter.version
                self.entries.pop(gkey, None)
                self.broken = "writes into an argument that is a view (not supported yet)"
                self.breaks.append(self.broken)

    def _guarded(self, args, kwargs, subs):
        """(entry, what its written guard saw) when the last entry's guard passes for
        this call (NOTE [written guards]), else (None, None)."""
        e = self.recent
        if e is None or e.guard is None:
            return None, None
        seen = e.guard(args, kwargs, self.fn)
        if seen is None or e.gkey[1] != _ambient():
            return None, None
        if subs and _aliased(subs, set(map(id, seen.storages))):
            return None, None
        if _guard.CHECK[0]:
            w = _heap.walk(_roots(self.fn, args, kwargs))
            assert w.key == e.gkey[0] and _guard.agrees(seen, w), \
                "a written guard passed where the walk differs"
        COUNTERS["guarded"] += 1
        return e, seen

    def _break(self, reason, args, kwargs):
        if self.fullgraph:
            raise Unsupported(reason)
        self.broken = reason
        self.breaks.append(reason)
        COUNTERS["eager"] += 1
        return self._split(args, kwargs)

    def _split(self, args, kwargs):
        """Run the function eagerly, split (NOTE [split calls]): the modules and
        optimizers it calls run as compiled pieces."""
        if self.piece_of is not None:
            return self.fn(*args, **kwargs)
        prev = COMPILING.split_enter(self)
        try:
            return self.fn(*args, **kwargs)
        finally:
            COMPILING.split_leave(prev)

    def piece(self, obj, call):
        """The compiled piece of obj (called through `call`) for this split function."""
        got = self.pieces.get(id(obj))
        if got is None or got[0] is not obj:
            c = CompiledFunction(call, dynamic=self.dynamic)
            c.piece_of = self
            got = self.pieces[id(obj)] = (obj, c)
        return got[1]

    def _trace(self, pre, gkey, args, kwargs, reason=None):
        if self.entries:
            reason = reason or self._reason(args, kwargs)
        if self.entries and _STANCE[0] == "fail_on_recompile":
            raise RuntimeError(f"Detected recompile when torch.compile stance is "
                               f"'fail_on_recompile'. {reason}")
        if self.compiles >= config.recompile_limit:
            raise FailOnRecompileLimitHit(
                f"{self.compiles} recompilations of {_name(self.fn)} reached "
                f"torch._dynamo.config.recompile_limit ({config.recompile_limit}); the last "
                f"reason: {reason}")
        if self.entries:
            self.recompile_reasons.append(reason)
        self._last = _heap.walk(_roots(self.fn, args, kwargs), paths=True), _ambient()
        storages = pre.storages
        values = [st.array for st in storages] + [_rng_key()]
        state = {}

        def traced(*xs):
            for st, x in zip(storages, xs):
                st.array = x
                st.generation += 1
            _rng.key = xs[-1]
            tr = _current_trace()
            rec = state["rec"] = _Recorder(self.fullgraph, tr.frame, values)
            host_rng = _host_rng()
            swapped = _swap_groups(pre, rec)
            prev = COMPILING.enter(rec)
            old_profile = sys.getprofile()
            gc_wrappers = _mute_gc_callbacks(rec)
            sys.setprofile(rec.profile)
            try:
                result = self.fn(*args, **kwargs)
            except BaseException:
                sys.setprofile(old_profile)
                _unmute_gc_callbacks(gc_wrappers)
                COMPILING.leave(prev)
                _unswap_groups(swapped)
                _settle_after_error(storages, rec, _roots(self.fn, args, kwargs))
                raise
            sys.setprofile(old_profile)
            _unmute_gc_callbacks(gc_wrappers)
            COMPILING.leave(prev)
            _unswap_groups(swapped)
            if _host_rng() != host_rng:
                rec.breaks.append("draws from Python's or numpy's global random generator "
                                  "(a value a replay would repeat)")
            post = _heap.walk(_roots(self.fn, args, kwargs), [("result", result)])
            state["post"], state["result"] = post, result
            born = [st for st in post.storages if id(st) not in pre.sids]
            seen = {id(st) for st in born} | pre.sids.keys()
            born += [st for st in rec.written.values() if id(st) not in seen]
            state["born"] = born
            # only the storages it changed are outputs, in input order: jax pairs each
            # donated input with the first unpaired output of its shape and dtype, so
            # the pairs are each storage's old and new array (an unchanged output before
            # them would take an input's buffer and make XLA copy both ways)
            changed = state["changed"] = [i for i, (st, x) in enumerate(zip(storages, xs))
                                          if st.array is not x]
            drew = state["drew"] = _rng.key is not xs[-1]  # (the key: an output if drawn)
            return ([storages[i].array for i in changed] + [st.array for st in born]
                    + [_rng.key] * drew + [v for v, _ in rec.reads])

        COUNTERS["traced"] += 1
        jaxpr, consts = _trace_jaxpr(traced, values)
        rec, post, result, born = state["rec"], state["post"], state["result"], state["born"]
        changed = state["changed"]
        why = _unreplayable(pre, post, rec, consts)
        diff = None if why is not None and why[0] == "break" else \
            _differentiated(pre, post, rec, born, len(changed))
        if isinstance(diff, str):
            why, diff = ("break", diff), None
        lifted = [h for _, _, h in rec.hypers]
        prog = _program(jaxpr, consts, lifted)
        if diff is not None:
            prog = _with_vjp(prog, len(lifted), *diff)
        donate = ()
        if why is None:
            # the state a replay writes back is donated (NOTE [donated state]): not when
            # a replay may be discarded (a value read) or keeps the inputs (a vjp's)
            if not rec.reads and diff is None:
                donate = tuple(changed)
            prog = jax.jit(prog, donate_argnums=tuple(len(lifted) + i for i in donate))
            # compiled here, as replays call it (the traced call's arrays are copied where
            # donated: the user may hold them)
            copied = set(donate)
            outs = prog(*lifted, *[jax.device_put(v, may_alias=False) if i in copied
                                   else v for i, v in enumerate(values)])
        else:
            outs = _run_once(prog, lifted, values, whole=why[0] == "once")
        if diff is not None:
            outs, vjp = outs
            _attach(diff, vjp, post.objs, pre.objs)
        new = dict(zip(changed, outs))
        for i, st in enumerate(storages):
            st.array = new.get(i, values[i])
            st.generation += 1
        for st, a in zip(born, outs[len(changed):]):
            st.array = a
            st.generation += 1
        _rng.key = outs[len(changed) + len(born)] if state["drew"] else values[-1]
        if why is not None and why[0] == "once":
            self.changing += 1
            if self.changing >= _CHANGING_LIMIT:
                why = ("break", "the call changes Python state every time: "
                       + _changed(pre, post, _roots(self.fn, args, kwargs)))
        else:
            self.changing = 0
        if why is None:
            self.compiles += 1
            COUNTERS["compiled"] += 1
            e = self.entries[gkey] = _entry(prog, pre, post, rec, result, born, changed,
                                            state["drew"])
            e.diff, e.gkey, e.donate = diff, gkey, donate
            e.specs = [jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=v.sharding if len(
                getattr(v, "sharding", None) and v.sharding.device_set or ()) > 1 else None)
                for v in (*lifted, *values)]
            e.foreign = _foreign(pre, post, consts)
            e.guard = _written_guard(_roots(self.fn, args, kwargs), pre)
            self.recent = e
        elif why[0] == "break":
            self.broken = why[1]
            self.breaks.append(why[1])
            if self.fullgraph:
                raise Unsupported(why[1])
        return result

    def _reason(self, args, kwargs):
        """Why this call's guard key matches no entry: the first difference from the
        last traced call's walk."""
        if self._last is None:
            return ""
        a, ambient = self._last
        b = _heap.walk(_roots(self.fn, args, kwargs), paths=True)
        if a.key == b.key:
            now = _ambient()
            names = ("grad mode", "grad mode", "inference mode", "default dtype",
                     "forward AD", "autocast", "anomaly mode", "deterministic algorithms",
                     "saved tensor hooks", "saved tensor hooks", "default device",
                     "float32 matmul precision")
            diff = [n for n, x, y in zip(names, ambient, now) if x != y]
            return f"ambient state changed: {', '.join(dict.fromkeys(diff)) or 'unknown'}"
        path, old, new = _heap.first_difference(a, b)
        return f"{path}: {_token(old)} -> {_token(new)}"


def _changed(pre, post, roots):
    """Where the heap after a call first differs from before it: path, old -> new."""
    now = _heap.walk(roots, paths=True)
    for i, (a, b) in enumerate(zip(pre.key, post.key)):
        if a != b:
            return f"{now.paths[i]}: {_token(a)} -> {_token(b)}"
    return "its size"


def _token(t):
    if t is None:
        return "nothing"
    if t[0] == "T":
        grad = ", grad=None" if len(t) == 13 else ""
        return f"tensor(size={list(t[5])}, dtype={t[6]}, requires_grad={t[7]}{grad})"
    if t[0] == "ndarray":
        return f"ndarray(shape={t[1]}, dtype={t[2]}, digest {t[3][:4].hex()})"
    if t[0] in (float,):
        return repr(float.fromhex(t[1]))
    if isinstance(t[0], type) and len(t) == 3:
        return f"{t[0].__name__} of length {t[2]}"
    return repr(t[1]) if len(t) == 2 else repr(t)


def _name(fn):
    return getattr(fn, "__qualname__", type(fn).__name__)


def _is_view(t):
    """Whether tensor `t` is a view (a DTensor's chain, a DTChain, only sends its ops to
    torch.distributed.tensor's dispatch)."""
    return t._vchain is not None and t._vchain.__class__ is not DTChain


def _by_value(args, kwargs):
    """The arguments with each view that does not require grad (a batch sliced from a
    dataset tensor) as a base tensor over its values: the program then takes the batch as
    an input, and a batch at another offset replays it (torch does not recompile either).
    (args, kwargs, [(view, its stand-in)])."""
    if not any(isinstance(a, Tensor) and _is_view(a) for a in (*args, *kwargs.values())):
        return args, kwargs, ()
    subs = []

    def sub(a):
        if isinstance(a, Tensor) and _is_view(a) and not a._requires_grad:
            s = _make(a._value)
            s.dtype = a.dtype
            subs.append((a, s))
            return s
        return a
    return tuple(map(sub, args)), {k: sub(v) for k, v in kwargs.items()}, subs


def _walk_call(fn, args, kwargs, args2, kwargs2, subs):
    """The walk of a call (args2, kwargs2: the arguments with views by value, subs the
    views); with the arguments as given when a view by value aliases what else the walk
    reaches. (args, kwargs, subs, walk)."""
    pre = _heap.walk(_roots(fn, args2, kwargs2))
    if subs and _aliased(subs, pre.sids):
        return args, kwargs, (), _heap.walk(_roots(fn, args, kwargs))
    return args2, kwargs2, subs, pre


def _aliased(subs, sids):
    """Whether a view given by value aliases what else the call reaches (its base's
    storage is among `sids`, or two of them share one): then it is walked as given."""
    return any(id(o._storage) in sids for o, _ in subs) or \
        len({id(o._storage) for o, _ in subs}) < len(subs)


def _written_guard(roots, pre):
    """The written guard of an entry traced from the walk `pre` (NOTE [written guards]),
    checked against the walk of the heap it was written from; None when it cannot be."""
    guard = _guard.write(roots, pre.no_lift)
    if guard is None:
        return None
    try:
        now = _heap.walk(roots)
    except _heap.TooLarge:
        return None
    seen = guard(*[obj for _, obj in roots])
    if seen is None or now.key != pre.key or not _guard.agrees(seen, now):
        return None
    return guard


def _has_tracer(args, kwargs):
    for x in (*args, *kwargs.values()):
        if isinstance(x, jax.core.Tracer) or (isinstance(x, Tensor) and
                                              isinstance(x._storage.array, jax.core.Tracer)):
            return True
    return False


def _rng_key():
    if _rng.key is None:
        from ..creation import _global_seed
        with jax.ensure_compile_time_eval():
            _rng.key = jax.random.PRNGKey(_global_seed[0])
    return _rng.key


def _settle_after_error(storages, rec, roots):
    """The user's function raised in the trace: give every storage (those it had, wrote
    or made where the walk reaches, a .grad) the value it had when the error was raised
    (eager's state then)."""
    try:
        made = _heap.walk(roots).storages
    except _heap.TooLarge:
        made = []
    for st in (*storages, *rec.written.values(), *made):
        if isinstance(st.array, jax.core.Tracer):
            st.array = value_in_trace(st.array, rec.frame, rec.values, _known)
            st.generation += 1
    if isinstance(_rng.key, jax.core.Tracer):
        _rng.key = value_in_trace(_rng.key, rec.frame, rec.values, _known)


def _unreplayable(pre, post, rec, consts):
    """None when the traced call can be replayed; else ("once", reason) when the next
    call may be (the heap changed shape) or ("break", reason) when no call will be."""
    if rec.breaks:
        return "break", rec.breaks[0]
    for opt, _ in rec.steps:
        if id(opt) not in pre.ids:
            return "break", f"steps an optimizer it cannot reach ({type(opt).__name__})"
    for g in rec.group_reads.values():
        if id(g) not in pre.ids:
            return "break", "reads a param group it cannot reach"
    known = {id(st) for st in pre.storages} | {id(st) for st in post.storages}
    for st in rec.written.values():
        if id(st) not in known and not isinstance(st.array, jax.core.Tracer):
            return "break", "writes a tensor the compiled function cannot reach " \
                "(not an argument, a global it names, its closure or their attributes)"
    if post.key[:post.n_roots] != pre.key:
        return "once", "the heap changed shape"
    for a, b in zip(pre.objs, post.objs):
        if a is not b and not (isinstance(b, Tensor) and id(b) not in pre.ids):
            return "once", "an object moved"
    for b in post.objs[len(pre.objs):]:
        if isinstance(b, Tensor) and id(b) in pre.ids:
            continue
        if isinstance(b, Tensor) and b._storage is not None and id(b._storage) in pre.sids:
            return "break", "returns a view of a tensor it reached (not supported yet)"
    for a, b in zip(pre.storages, post.storages):
        if a is not b and id(b) in pre.sids:
            return "once", "a storage moved"
    shared = set()
    for b in post.objs:
        if isinstance(b, Tensor) and id(b) not in pre.ids:
            if b._base is not None or (b._vchain is not None and any(
                    f is not _STOP_GRADIENT for f, _ in b._vchain)):  # (detach(): no view)
                return "break", "makes a view kept after the call"
            if id(b._storage) in shared:
                return "break", "makes two tensors sharing a storage kept after the call"
            shared.add(id(b._storage))
    return None


def _foreign(pre, post, consts):
    """The tensors out of the walk's reach whose arrays the program holds as constants,
    as (storage, its array): read by the call through a path the walk does not follow,
    or only holding the same array (a cached constant is shared). A replay checks that
    each storage still holds that array (else it is discarded and the call traced)."""
    arrays = {id(c) for c in consts if isinstance(c, jax.Array)}
    if not arrays:
        return []
    import gc
    known = {id(st) for st in pre.storages} | {id(st) for st in post.storages}
    found = {}
    for r in gc.get_referrers(*[c for c in consts if isinstance(c, jax.Array)]):
        if isinstance(r, _heap.Storage) and id(r) not in known and id(r.array) in arrays:
            found[id(r)] = (r, r.array)
        elif isinstance(r, Tensor) and id(r) not in pre.ids and id(r) not in post.ids and \
                id(getattr(r, "_arr", None)) in arrays and id(r._storage) not in known:
            found[id(r._storage)] = (r._storage, r._storage.array)
    return list(found.values())


# XLA:CPU options for a program that runs once (NOTE [programs run once])
_ONCE_OPTIONS = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}


def _run_once(prog, lifted, values, whole):
    """The outputs of a traced call whose program is not kept (NOTE [programs run once]):
    compiled whole at XLA's cheapest, or (whole=False) run primitive by primitive."""
    if whole and jax.default_backend() == "cpu" and _ONCE_OPTIONS:
        try:
            exe = jax.jit(prog).lower(*lifted, *values).compile(
                compiler_options=_ONCE_OPTIONS)
        except jax.errors.JaxRuntimeError as err:  # (a jaxlib without those options)
            if "option" not in str(err):
                raise
            _ONCE_OPTIONS.clear()
        else:
            return exe(*lifted, *values)
    with jax.ensure_compile_time_eval():
        return prog(*lifted, *values)


def _program(jaxpr, consts, lifted):
    """prog(*lifted values, *inputs): the traced jaxpr with the lifted consts (the
    optimizers' hyperparameter vectors, found by identity) as its first inputs, the
    other consts baked in."""
    where = {id(c): i for i, c in enumerate(consts)}
    pos = [where[id(h)] for h in lifted if id(h) in where]
    lifted_vars = []
    for h in lifted:
        i = where.get(id(h))
        lifted_vars.append(jaxpr.constvars[i] if i is not None else
                           jax.extend.core.Var(jax.typeof(h)))
    taken = set(pos)
    rest = [i for i in range(len(consts)) if i not in taken]
    j = jaxpr.replace(constvars=[jaxpr.constvars[i] for i in rest],
                      invars=lifted_vars + list(jaxpr.invars))
    return jax.extend.core.jaxpr_as_fun(
        jax.extend.core.ClosedJaxpr(j, [consts[i] for i in rest]))


# ---- a compiled forward differentiated outside the call --------------------------------
# NOTE [compiled forward]: a call that returns (or keeps) tensors with a graph made in it
# and runs no backward itself (`model = torch.compile(model)`; loss.backward() outside)
# gets one node for the whole call, as torch's CompiledFunctionBackward: the program runs
# under jax.vjp, its residuals are the node's saved state, and the node's backward is the
# vjp (in torch's convention for complex values: conj(vjp(conj(g)))) into the edges of the
# tensors requiring grad the call read (a parameter's AccumulateGrad, an argument's
# grad_fn). The traced call's own graph (holding tracers) is replaced by that node too.
# Hooks registered in the call on its intermediates would be lost: a graph break; so is
# double backward through the node (create_graph) for now.


def _differentiated(pre, post, rec, born, first_born):
    """(inputs, outputs) of the vjp when the call is a compiled forward: inputs
    (object number, storage index) of the tensors requiring grad it reached, outputs
    (object number, output index; the born storages' outputs from first_born on) of the
    tensors with a graph it made; None when it is not one; a string (the break's reason)
    when it is one that cannot be compiled."""
    if rec.backward_ran:
        return None
    out_of = {id(st): first_born + i for i, st in enumerate(born)}
    outs = [(n, out_of[id(b._storage)]) for n, b in enumerate(post.objs)
            if isinstance(b, Tensor) and b._grad_fn is not None and b._requires_grad and
            id(b) not in pre.ids and id(b._storage) in out_of]
    if not outs:
        return None
    if rec.hooked:
        return "a hook registered inside a compiled forward whose graph is differentiated " \
            "outside the call (not supported yet)"
    if any(hasattr(post.objs[n], "_guard_layout") for n, _ in outs):
        return "a compiled forward whose DTensor or LocalTensor result is differentiated " \
            "outside the call (not supported yet)"
    ins, seen = [], set()
    for n, t in enumerate(pre.objs):
        if isinstance(t, Tensor) and t._requires_grad:
            if hasattr(t, "_guard_layout"):
                return "a DTensor or LocalTensor requiring grad read by a compiled forward " \
                    "differentiated outside the call (not supported yet)"
            if _is_view(t):
                return "a view requiring grad read by a compiled forward (not supported yet)"
            s = pre.sids[id(t._storage)]
            if s not in seen:
                seen.add(s)
                ins.append((n, s))
    return ins, outs


def _with_vjp(prog, n_lifted, ins, outs):
    """prog under jax.vjp: (its outputs, the vjp function of the outputs `outs` with
    respect to the inputs `ins`)."""
    pos = [n_lifted + s for _, s in ins]
    opos = [o for _, o in outs]

    def run(*args):
        def f(*dv):
            a = list(args)
            for i, v in zip(pos, dv):
                a[i] = v
            res = prog(*a)
            return [res[o] for o in opos], res
        _, vjp, res = jax.vjp(f, *[args[i] for i in pos], has_aux=True)
        return res, vjp
    return run


@jax.jit
def _apply_vjp(vjp, cts):
    cts = [jnp.conj(c) if jnp.iscomplexobj(c) else c for c in cts]
    return [jnp.conj(g) if jnp.iscomplexobj(g) else g for g in vjp(cts)]


class CompiledForwardBackward(Node):
    """The one node of a compiled forward (NOTE [compiled forward])."""

    def name(self):
        return "CompiledFunctionBackward"

    def apply(self, grads):
        if self._vjp is None:
            raise RuntimeError(_FREED)
        if STATE.grad:
            raise NotImplementedError("eagergrad does not implement double backward through "
                                      "a compiled forward (create_graph=True) yet")
        cts = [g._value if g is not None else jnp.zeros(m[0], m[1].np)
               for g, m in zip(grads, self._meta_in)]
        out = _apply_vjp(self._vjp, cts)
        return [None if e is None else _make(g) for e, g in zip(self._next, out)]

    def _release(self):
        self._vjp = None


def _attach(diff, vjp, objs, inputs):
    """Give the tensors of a compiled forward's outputs their node."""
    from ..engine.graph import _edge
    ins, outs = diff
    node = CompiledForwardBackward(
        [_edge(inputs[n]) for n, _ in ins],
        tuple((objs[n]._shape, objs[n].dtype) for n, _ in outs))
    node._vjp = vjp
    for k, (n, _) in enumerate(outs):
        t = objs[n]
        t._grad_fn, t._out_nr, t._requires_grad = node, k, True


def _entry(run, pre, post, rec, result, born, changed, drew):
    e = _Entry()
    e.run, e.compiled = run, True
    e.reads = [value for _, value in rec.reads]
    e.read_where = rec.read_where
    e.steps = [(pre.ids[id(opt)], update.__func__) for opt, update in rec.steps]
    e.hyper_keys = [(kernel, key) for kernel, key, _ in rec.hypers]
    e.last_lifted, e.last_hvs, e.last_floats = None, None, None
    e.checks = [(pre.ids[id(g)], k, dict.__getitem__(g, k)) for g in rec.group_reads.values()
                for k, v in dict.items(g) if v.__class__ in (float, tuple)]
    e.changed = changed  # (the program's first outputs are these storages' arrays)
    e.deltas = [(i, b.version - a) for i, (b, a, c) in
                enumerate(zip(post.counters, pre.versions, pre.counters))
                if b is c and b.version != a]
    e.extra = len(post.objs) - len(pre.objs)
    bsid = {id(st): len(changed) + i for i, st in enumerate(born)}
    e.born = []
    for n, b in enumerate(post.objs):
        if isinstance(b, Tensor) and (n >= len(pre.objs) or b is not pre.objs[n]):
            # (a subclass with a layout of its own, a DTensor's, makes itself again)
            e.born.append((n, type(b), bsid[id(b._storage)], (b._shape, b.dtype),
                           b._requires_grad, b._grad_fn is not None,
                           b._version_counter.version,
                           b._reborn_args() if hasattr(type(b), "_reborn") else None))
    born_n = {n for n, *_ in e.born}
    e.actions = [(c, k, v) for c, k, v in post.slots if v in born_n and c < len(pre.objs)]
    e.result = _recipe(result, post)
    # the outputs: changed storages, born ones, the RNG key if drawn, the values read
    e.rng = len(changed) + len(born) if drew else None
    e.first_read = len(changed) + len(born) + drew
    return e


def _recipe(x, post):
    """How to rebuild the result from the objects of a walk: tensors by number."""
    if isinstance(x, Tensor):
        return ("T", post.ids[id(x)])
    if x.__class__ in (tuple, list):
        return (x.__class__, [_recipe(v, post) for v in x])
    if x.__class__ is dict:
        return (dict, [(k, _recipe(v, post)) for k, v in x.items()])
    return ("const", x)


def _exact(v):
    """A lifted value as a key: floats by their hex (-0.0 and NaN too)."""
    return v.hex() if v.__class__ is float else tuple(e.hex() for e in v)


class _Dry:
    """The recorder of a replay's dry run of the optimizer steps (NOTE [lifted
    hyperparameters]): it takes each kernel's hyperparameter vector, and the kernel
    returns without running."""
    stepping = True

    def __init__(self):
        self.hypers = []

    def hyper(self, kernel, key, hv):
        self.hypers.append((kernel, key, hv))

    def optimizer_step(self, opt, update):
        pass

    def group_read(self, group):
        pass

    def writes(self, st):
        raise AssertionError("a dry run wrote a tensor")


def _dry_run(e, objs):
    """The lifted hyperparameter vectors of this call: each optimizer step of the traced
    call run dry on its optimizer now; None when the kernels it would call are not the
    traced ones (a flag derived from a hyperparameter changed)."""
    dry = _Dry()
    prev = COMPILING.enter(dry)
    try:
        with no_grad():
            for n, update in e.steps:
                opt = objs[n]
                for group in opt.param_groups:
                    update(opt, group)
    finally:
        COMPILING.leave(prev)
    if [(k, key) for k, key, _ in dry.hypers] != e.hyper_keys:
        return None
    # (on the device as in the trace: a numpy vector would be another jit signature, and
    # a host-to-device copy every call)
    with jax.ensure_compile_time_eval():
        return [jax.device_put(hv) for _, _, hv in dry.hypers]


def _rebuild(r, objs):
    kind = r[0]
    if kind == "T":
        return objs[r[1]]
    if kind == "const":
        return r[1]
    if kind is dict:
        return {k: _rebuild(v, objs) for k, v in r[1]}
    return kind(_rebuild(v, objs) for v in r[1])


def _replay(e, pre):
    """Run entry e for the call whose walk is `pre`: (True, result), or (False, None)
    when a value the trace read differs now (nothing was changed then)."""
    for st, a in e.foreign:
        if st.array is not a:
            return False, "a tensor the compiled function cannot reach (not an argument, " \
                "a global it names, its closure or their attributes) changed"
    objs = pre.objs
    for n, k, v in e.checks:
        w = dict.__getitem__(objs[n], k)
        if w.__class__ is not v.__class__ or w != v:
            return False, f"param group value {k!r} read by the function changed"
    if e.steps:
        # the vectors depend on the lifted floats only (everything else the optimizer's
        # Python reads is in the guard key): the last call's when those are unchanged
        floats = [dict.__getitem__(g, k) for g, k in pre.lifted]
        last = e.last_floats
        if last is not None and all(map(operator.is_, floats, last)):
            hvs = e.last_hvs  # (the very float objects: no scheduler changed them)
        else:
            lifted = list(map(_exact, floats))
            if lifted == e.last_lifted:
                hvs = e.last_hvs
            else:
                hvs = _dry_run(e, objs)
                if hvs is None:
                    return False, "a flag an optimizer derives from its hyperparameters " \
                        "changed"
                e.last_lifted, e.last_hvs = lifted, hvs
            e.last_floats = floats
    else:
        hvs = ()
    storages = pre.storages
    arrays = [st.array for st in storages]
    for i in e.donate:
        if sys.getrefcount(arrays[i]) > 3:  # (held elsewhere too: the program gets a copy)
            arrays[i] = jnp.array(arrays[i], copy=True)
    outs = e.run(*hvs, *arrays, _rng_key())
    del arrays
    if e.diff is not None:
        outs, vjp = outs
    base = e.first_read
    for i, want in enumerate(e.reads):
        got = outs[base + i]
        if np.asarray(got).tobytes() != np.asarray(want).tobytes():
            return False, f"the value read at {e.read_where[i]} changed"
    for k, i in enumerate(e.changed):
        st = storages[i]
        st.array = outs[k]
        st.generation += 1
    if e.rng is not None:
        _rng.key = outs[e.rng]
    counters = pre.counters
    for i, d in e.deltas:
        counters[i].version += d
    objs = objs + [None] * e.extra
    for n, cls, o, meta, rg, dead, version, again in e.born:
        if again is not None:
            t = cls._reborn(outs[o], meta, again)
        else:
            t = _make_as(outs[o], meta)
            if cls is not Tensor:
                t.__class__ = cls
        t._requires_grad = rg
        if dead:
            t._grad_fn = CompiledFunctionBackward()
        t._version_counter.version = version
        objs[n] = t
    if e.diff is not None:
        _attach(e.diff, vjp, objs, pre.objs)
    for c, k, v in e.actions:
        container = objs[c]
        if isinstance(container, Tensor):
            container._grad = objs[v]
        else:
            container[k] = objs[v]
    return True, _rebuild(e.result, objs)
