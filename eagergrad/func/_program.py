"""The traced-program machinery of the transforms: a call's program (_Program), the
caches of executables (_PROGRAMS, _DEFERRED, _DERIVED) and what ran (COUNTS); a call's
capture (_Capture, _Frame: what its traces read, write and make outside themselves,
NOTE [captured tensors], NOTE [values in a trace]); the program keys (_jaxpr_key)."""
import contextlib
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

from .._cache import EXECUTABLES
from .._mode import CAPTURING, FUNC
from ._trace import (
    _DYNAMIC,
    _current_trace,
    _reached,
    _trace_jaxpr,
    _undonated,
    _used,
    value_in_trace,
)

# ---- programs and the caches of executables -----------------------------------------
# NOTE [programs]: how a transform called eagerly runs. grad, grad_and_value, jvp,
# jacrev, jacfwd and vmap go through _over_autograd; vjp and linearize trace their own
# program (_traced_once, linearize). Inside another transform, or on arguments that are
# jax tracers (the user's jax.jit), there is no program: the enclosing trace traces the
# call and jax composes the transforms.
# The user's Python runs once per call: the call is traced anew every time, on tensors
# over jax tracers, and that trace is the function's only run (linearize, as torch's,
# runs it once more for its output). What it traced is then evaluated on the real
# arrays, by an executable reused when an earlier call traced the same jaxpr.
# Two paths. (1) grad and vmap with grad mode off or no argument requiring grad run on
# the arguments as they are: each transform traces the function at its own level to a
# jaxpr and applies jax's transform to that jaxpr (_deferred, one build per distinct
# jaxpr in _DEFERRED). (2) Any other top-level call is traced whole into one _Program:
# compute(*arrays) wraps the argument arrays and runs the call (its transforms defer in
# turn); its outputs are the call's, then the arguments it modified in place, then the
# storages it wrote; autograd sees it as one node when an input requires grad
# (_run_program).
# What a trace captures (_Capture, as FUNC.capture): the tensors requiring grad that
# recorded ops read (grad mode on; NOTE [captured tensors]); storages written in place,
# put back after the trace and written from the extra outputs after the run; storages
# factories made in it; each trace's known inputs (NOTE [values in a trace]); the first
# in-place op on each storage (vmap's errors). Arrays the function closes over (a
# parameter, the key a random draw took) are consts of the jaxpr: the program's inputs,
# read fresh every call.
# The key (_jaxpr_key) is the jaxpr's structure: the avals (shape, dtype, weak type) of
# its consts, inputs and every equation's outputs, its primitives and effects, literals
# and parameters by value (an array's by its bytes, a sub-jaxpr by its own key, a
# function by identity); never the consts' values. _DEFERRED's key adds the transform,
# its static arguments (how many inputs are differentiated or outputs made, chunk_size,
# randomness, vmap's axes) and the number of storages written; _DERIVED's (vjp_fn,
# jvp_fn) adds the kind and the number of outputs to the program's key. Ambient state
# (the default dtype, grad mode) is in no key by itself: it acts on the Python, which
# runs every call, so what it changes shows in the jaxpr or its consts. A jaxpr with a
# parameter that cannot be keyed is never cached.
# Compiled or eager: a _Program's jaxpr runs primitive by primitive (eval_jaxpr, with
# no donation) on its first sighting, and from the second on as one jitted eval_jaxpr of
# the first jaxpr seen (_executable): a call seen once compiles no program. A deferred
# build is jitted when made, unless the function read a value from the trace (the jaxpr
# holds it): then eager on its first sighting, compiled on its second (_built).
# Bounds: _PROGRAMS, _DEFERRED and _DERIVED are keyed caches of the global executable
# bound (NOTE [executable cache]), least recently used out, a hit refreshing its stamp;
# their jitted functions are tracked (a vmapped one compiles once per batch size).


_PROGRAMS = EXECUTABLES.owner({})  # jaxpr key -> [[sightings, compiled or None], stamp]
# what ran (tests count the fast paths): programs traced, compiled and run compiled or
# primitive by primitive; deferred transforms built or found; values read from a trace;
# captured tensors marked by their array's identity (NOTE [captured tensors])
COUNTS = {"traced": 0, "compiled": 0, "compiled_runs": 0, "eager_runs": 0,
          "deferred_built": 0, "deferred_reused": 0, "concretized": 0, "loose": 0}
# (kind, static, number of writes, jaxpr key) -> [[made, compiled], stamp]
_DEFERRED = EXECUTABLES.owner({})
_DERIVED = EXECUTABLES.owner({})  # (kind, n_out, program key) -> [its jitted function, stamp]


class _Program:
    """A top-level transform call traced to a jaxpr: program(*arrays, *captured arrays)
    evaluates it. Every call is traced anew (the user's Python runs each time, as
    eagerly); equal jaxprs share one compiled executable, made on the second sighting.
    Arrays the function closes over (its consts) are inputs; `captured` are the tensors
    requiring grad among them (at the consts `cpos`, NOTE [captured tensors]), `written`
    the storages it wrote in place."""

    @staticmethod
    def trace(compute, arrays, grad, kind=None):
        """The program of compute(*arrays), traced once. grad: note the tensors
        requiring grad it reads (autograd over the call); kind: _Capture's."""
        prog = _Program()
        cap = _Capture(grad, kind=kind)

        def traced(*arrs):
            cap.trace = cap.enter(arrays)
            outs = compute(*arrs)
            cap.flush()
            return outs + [st.array for st, _ in cap.written.values()]
        try:
            with _capturing(cap):
                jaxpr, consts = _trace_jaxpr(traced, arrays)
        finally:
            cap.leave(cap.trace)
            cap.undo_writes()
        COUNTS["traced"] += 1
        prog.jaxpr, prog.consts = jaxpr, _resolve(cap.loose, consts)
        prog.run = _executable(jaxpr)
        prog.cpos, prog.captured = _captured_in(prog.consts, cap)
        prog.written = [st for st, _ in cap.written.values()]
        return prog

    def consts_with(self, captured, consts=None):
        """The consts (or `consts`) with the captured tensors' values `captured`."""
        out = list(self.consts if consts is None else consts)
        for k, j in self.cpos:
            out[k] = captured[j]
        return out

    def used(self):
        """Which inputs (arrays, then captured) the outputs use."""
        used = _used(self.jaxpr)
        n = len(self.consts)
        cap = [False] * len(self.captured)
        for k, j in self.cpos:
            cap[j] = cap[j] or used[k]
        return used[n:] + cap

    def reached(self, mask):
        """Which outputs depend on the inputs `mask` marks (arrays, then captured)."""
        n = len(mask) - len(self.captured)
        consts = self.consts_with(mask[n:], [False] * len(self.consts))
        return _reached(self.jaxpr, consts + list(mask[:n]))

    def __call__(self, *arrays):
        n = len(arrays) - len(self.captured)
        return self.run(self.consts_with(arrays[n:]), *arrays[:n])


def _executable(jaxpr):
    """run(consts, *args) for the jaxpr: eval_jaxpr, primitive by primitive, on its
    first sighting; a jitted eval_jaxpr of the first jaxpr seen from the second on."""
    try:
        key = _jaxpr_key(jaxpr)
    except TypeError:  # a parameter that is neither hashable nor an array: never cached
        key = None
    entry = None if key is None else _PROGRAMS.get(key)
    if entry is None:
        if key is not None:
            EXECUTABLES.put(_PROGRAMS, key, [1, None])
        run = _eager(jaxpr)
        run.key = key
        return run
    entry[1] = EXECUTABLES.now
    EXECUTABLES.poll()
    entry = entry[0]  # [sightings, compiled or None]
    if entry[1] is None:
        first = jaxpr
        entry[1] = EXECUTABLES.track(
            jax.jit(lambda consts, *args: jax.core.eval_jaxpr(first, consts, *args)))
        COUNTS["compiled"] += 1
    compiled = entry[1]

    def run(consts, *args):
        COUNTS["compiled_runs"] += 1
        return compiled(consts, *args)
    run.key = key
    return run


def _eager(jaxpr):
    jaxpr = _undonated(jaxpr)

    def run(consts, *args):
        COUNTS["eager_runs"] += 1
        return jax.core.eval_jaxpr(jaxpr, consts, *args)
    return run


def _jit(made):
    """jax.jit of a build's program (the first of a tuple); a vmapped program compiles
    once per batch size inside it, so it is tracked (NOTE [executable cache])."""
    if isinstance(made, tuple):
        return (EXECUTABLES.track(jax.jit(made[0])), *made[1:])
    return EXECUTABLES.track(jax.jit(made))


def _built(cache, key, build, concrete):
    """What build() makes, jitted, cached by key (None: never cached). A jaxpr that holds
    values read from the trace (concrete) runs primitive by primitive on its first
    sighting and is compiled on its second, as a program is (NOTE [values in a trace])."""
    entry = None if key is None else cache.get(key)
    if entry is None:
        made = build()
        COUNTS["deferred_built"] += 1
        if not concrete:
            made = _jit(made)
        if key is not None:
            EXECUTABLES.put(cache, key, [made, not concrete])
        return made
    COUNTS["deferred_reused"] += 1
    entry[1] = EXECUTABLES.now
    EXECUTABLES.poll()  # (a vmapped program compiles per batch size: tracked)
    entry = entry[0]  # [what was made, whether it is jitted]
    if not entry[1]:
        entry[0], entry[1] = _jit(entry[0]), True
    return entry[0]


# ---- a call's capture: what its traces touch outside themselves -------------------
# NOTE [captured tensors]: autograd over a transform must send gradients to the tensors
# requiring grad that the function captures by closure, through the ops that recorded on
# them, as torch does, and not through another tensor that holds the same jax array (a
# detached alias shares the storage; a factory's cached constant is shared by every
# tensor made from it) nor through a use that recorded nothing (under no_grad). jax
# identifies a concrete array in a trace by its id, once. So in a capture's traces every
# use of a concrete array is a const of its own (_Fresh): an op's kernel is one jitted
# call, whose arguments jax lifts in order, so right after it ran the last consts of the
# frame are its concrete arguments; when the op records a node (_Capture.reads) those of
# tensors requiring grad get, as their value, a placeholder of their own (_alias: one per
# tensor, sharing its buffer). The placeholder, not the array, travels out through the
# enclosing traces and marks where the tensor enters each program (_Program.cpos,
# _Deferred); it is fed the tensor's value on every run. An op whose kernel lifted its
# arguments otherwise (a custom autograd.Function, which reads before its forward runs)
# marks the array's next uses instead, until the next recorded op (_Fresh.pending,
# counted as `loose`). One trace; the user's Python runs once.
#
# NOTE [values in a trace]: .item()/float()/bool() on a traced tensor read its value from
# the trace so far (_Capture.evaluate): the equations it depends on are evaluated on the
# known inputs of the frames (the call's arrays; an enclosing frame's values, in turn),
# and the number is a constant from then on, as torch's item() is for autograd. A value
# that depends on a batched input of vmap has none (torch's vmap error). The jaxpr then
# holds the value or the branch taken; such a frame is compiled from the second sighting
# of its jaxpr on, as a program (_built), not on every new value.


@contextlib.contextmanager
def _capturing(cap):
    """FUNC.capture = cap while the block runs (CAPTURING.n counts the threads)."""
    prev, FUNC.capture = FUNC.capture, cap
    CAPTURING.enter()
    try:
        yield
    finally:
        CAPTURING.leave()
        FUNC.capture = prev


class _Capture:
    """What a call's traces touch outside themselves (FUNC.capture while they trace):
    tensors that require grad read by recorded ops (NOTE [captured tensors]), storages
    written in place (put back after the trace; their new values become extra outputs,
    written after the run), and the known inputs of each trace (NOTE [values in a
    trace])."""
    __slots__ = ("born", "concrete", "direct", "frames", "grad", "inplace", "inputs", "kind",
                 "loose", "ops", "pending", "read", "trace", "written")

    def __init__(self, grad, direct=False, kind=None):
        self.grad = grad  # grad mode was on at the call: note the reads (ops record)
        self.direct = direct  # no trace around the call (_over_autograd's direct path)
        # "grad": the call itself is a grad-like transform traced at its level (vjp): as
        # a _Frame's, its captured tensors must not be mutated
        self.kind, self.trace = kind, None
        self.born = set()  # ids of the storages factories made while it traced
        self.read = {}  # (id(tensor), id(array)) -> (tensor, array, placeholder)
        self.loose = {}  # id(array) -> (array, placeholder): marked by identity
        self.pending = []  # frames with marks pending (_mark, flush)
        self.written = {}  # id(storage) -> (storage, its array before the trace)
        self.frames = []  # a _Frame per _deferred trace inside it, innermost last
        self.inputs = {}  # id(jax trace) -> (trace, its flat input values)
        self.concrete = False  # a value was read from the trace (NOTE [values in a trace])
        self.ops = {}  # id(storage) -> (in-place op, tensor shape, depth): the first on it
        self.inplace = False  # an in-place op ran at this level (outside _deferred traces)

    def enter(self, values):
        """At the start of a trace of the call (its own or a _deferred one) on the flat
        input values `values`: the jax trace, its consts one per use when reads are
        noted (NOTE [captured tensors])."""
        tr = _current_trace()
        if tr is not None:
            if self.grad:
                tr.frame.constid_to_tracer = _Fresh()
            self.inputs[id(tr)] = (tr, values)
        return tr

    def leave(self, tr):
        self.inputs.pop(id(tr), None)

    def reads(self, tensors):
        """A recorded op read `tensors` (called right after its kernel ran)."""
        if not self.grad:
            return
        if self.pending:
            self.flush()
        for t in tensors:
            if t._requires_grad and not isinstance(t._value, jax.core.Tracer):
                self._mark(tensors)
                return

    def _mark(self, tensors):
        """NOTE [captured tensors]: the consts the op's kernel just lifted, for its
        concrete inputs that require grad, take their tensors' placeholders."""
        lv = self.frames[-1] if self.frames else self
        if lv.trace is None and lv is self and self.direct:
            return  # (no trace: a direct call's own autograd node)
        tr = lv.trace
        # what the kernel lifted as consts: concrete arrays, and an enclosing trace's
        # tracers (jax's closure conversion); not this trace's values, nor those of a
        # jax transform inside it (jax.jvp's, which binds this trace's)
        conc = [(x, x._value) for x in tensors]
        conc = [(x, v) for x, v in conc if not isinstance(v, jax.core.Tracer) or (
            isinstance(v, _DYNAMIC) and v._trace is not tr)]
        fresh = None if tr is None else tr.frame.constid_to_tracer
        cv, recent = None, None
        if type(fresh) is _Fresh:
            cv = lv.trace.frame.constvar_to_val
            recent = list(itertools.islice(reversed(cv), len(conc)))[::-1]
            if len(recent) != len(conc) or any(cv[var] is not v
                                               for var, (_, v) in zip(recent, conc)):
                recent = None
        for i, (x, v) in enumerate(conc):
            if not x._requires_grad or isinstance(v, jax.core.Tracer):
                continue
            e = self.read.get((id(x), id(v)))
            if e is None:
                e = self.read[(id(x), id(v))] = (x, v, _alias(v))
            if recent is not None:
                cv[recent[i]] = e[2]
                continue
            COUNTS["loose"] += 1
            if cv is not None:  # (the array's next uses, until the next recorded op)
                fresh.pending[id(v)] = (v, e[2])
                self.pending.append(lv.trace.frame)
            else:  # (this jax's frames cannot be followed: every use in the frame)
                lv.loose[id(v)] = (v, e[2])

    def flush(self):
        """The consts lifted for pending marks (_mark) take their placeholders."""
        for frame in self.pending:
            fresh = frame.constid_to_tracer
            for var, vt in fresh.hits:
                if var in frame.constvar_to_val:
                    frame.constvar_to_val[var] = vt
            fresh.hits.clear()
            fresh.pending.clear()
        self.pending.clear()

    def mutates(self, t, fn):
        """An in-place op `fn` on t: under a grad-like transform (grad, vjp, jvp, jacrev,
        jacfwd) t must have been made inside it, or be one of its inputs, as torch's;
        counting from the level where t's storage was made or last written."""
        levels = [self, *self.frames]
        st = t._storage
        a = st.array
        made = -1
        for j in range(len(levels) - 1, -1, -1):
            lv = levels[j]
            if id(st) in lv.born or (isinstance(a, jax.core.Tracer) and lv.trace is not None
                                     and a._trace is lv.trace):
                made = j
                break
        name = fn.__name__.lstrip("_")
        self.ops.setdefault(id(st), (name, t._shape, len(self.frames)))
        levels[-1].inplace = True
        if any(lv.kind in _GRAD_LIKE for lv in levels[made + 1:]):
            raise RuntimeError(
                "During a grad (vjp, jvp, grad, etc) transform, the function provided "
                f"attempted to call in-place operation (aten::{name}_{_OVERLOAD.get(name, '')})"
                " that would mutate a captured Tensor. This is not supported; please rewrite "
                "the function being transformed to explicitly accept the mutated Tensor(s) "
                "as inputs.")

    def made(self, st):
        """A factory made a tensor over storage `st` (a constant array: inside the
        trace, though not a tracer)."""
        (self.frames[-1] if self.frames else self).born.add(id(st))

    def writes(self, st):
        if self.frames:
            self.frames[-1].setdefault(id(st), (st, st.array))
        elif id(st) not in self.written and not isinstance(st.array, jax.core.Tracer):
            self.written[id(st)] = (st, st.array)

    def undo_writes(self):
        for st, old in self.written.values():
            st.array = old
            st.generation += 1

    def evaluate(self, x):
        """The value of the tracer x of one of the call's traces, from the equations it
        depends on (NOTE [values in a trace]); _NoValue if it depends on an input with
        none."""
        entry = self.inputs.get(id(x._trace))
        if entry is None:
            raise _NoValue
        tr, values = entry
        out = value_in_trace(x, tr.frame, values, self._known)
        COUNTS["concretized"] += 1
        (self.frames[-1] if self.frames else self).concrete = True
        return out

    def _known(self, a):
        if isinstance(a, jax.ShapeDtypeStruct):
            raise _NoValue
        if isinstance(a, jax.core.Tracer):
            return self.evaluate(a)
        return a


_GRAD_LIKE = ("grad", "jvp", "jacrev", "jacfwd")  # (their captured tensors: read-only)
_OVERLOAD = dict.fromkeys(("add", "sub", "mul", "div", "remainder", "floor_divide"), ".Tensor")
_OVERLOAD.update(dict.fromkeys(("fill", "masked_fill", "pow"), ".Scalar"))


class _Frame(dict):
    """A _deferred trace's writes (id(storage) -> (storage, array before)); its kind,
    jax trace, the storages factories made in it, the tensors marked by identity,
    whether a value was read from it and whether an in-place op ran in it."""
    __slots__ = ("born", "concrete", "inplace", "kind", "loose", "trace")

    def __init__(self, kind):
        super().__init__()
        self.kind, self.born, self.loose, self.trace, self.concrete = \
            kind, set(), {}, None, False
        self.inplace = False  # an in-place op ran in it (saved versions are checked)


class _Fresh(dict):
    """A jax trace frame's cache of consts by id that never hits: every use of a
    concrete array becomes a const of its own (NOTE [captured tensors]). pending: id of
    an array -> (array, placeholder) whose next consts are noted in `hits` (var,
    placeholder), for _Capture.flush."""
    __slots__ = ("hits", "pending")

    def __init__(self):
        super().__init__()
        self.pending, self.hits = {}, []

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, tracer):  # (jax's: a const was made for array id `key`)
        e = self.pending.get(key)
        if e is not None:
            self.hits.append((tracer.val, e[1]))


def _alias(v):
    """A jax array object of its own over v's buffer (a copy where jax cannot alias):
    a captured tensor's placeholder in the consts (NOTE [captured tensors])."""
    try:
        if len(v.addressable_shards) == 1:
            return jax.make_array_from_single_device_arrays(v.shape, v.sharding, [v])
    except Exception:  # noqa: BLE001 - any array jax cannot alias: a copy
        pass
    with jax.ensure_compile_time_eval():
        return jnp.array(v, copy=True)


def _concretize(value):
    """The value of a tracer of a capture's trace (NOTE [values in a trace]), or None."""
    cap = FUNC.capture
    while hasattr(value, "primal"):  # (under jax.jvp: the primal's)
        value = value.primal
    if cap is None or not isinstance(value, jax.core.Tracer):
        return None
    try:
        return cap.evaluate(value)
    except _NoValue:
        return None


class _NoValue(Exception):  # an internal signal, not an error
    """The traced value depends on an input with no value (a batched one of vmap's)."""


def _resolve(loose, consts):
    """The consts with the placeholders of the tensors marked by identity (`loose`,
    NOTE [captured tensors])."""
    if not loose:
        return consts
    out = []
    for c in consts:
        e = loose.get(id(c))
        out.append(e[1] if e is not None and e[0] is c else c)
    return out


def _captured_in(consts, cap):
    """(cpos, captured): the tensors whose placeholders the consts hold (captured[j]) and
    where (const k is captured[j]'s value for each (k, j) in cpos)."""
    owner = {id(vt): t for t, _, vt in cap.read.values()}
    cpos, captured, index = [], [], {}
    for k, c in enumerate(consts):
        t = owner.get(id(c))
        if t is not None:
            j = index.get(id(t))
            if j is None:
                j = index[id(t)] = len(captured)
                captured.append(t)
            cpos.append((k, j))
    return cpos, captured


# ---- program keys ------------------------------------------------------------------
def _jaxpr_key(jaxpr):
    """A hashable key equal for two jaxprs exactly when they compute the same: variables
    numbered by position, literals and parameters by value (an array's by its bytes),
    sub-jaxprs by their own keys (a jitted kernel's trace is a new object after jax's
    caches are cleared, NOTE [executable cache]: by identity, every program that calls
    it would be rebuilt), functions by identity. TypeError: a parameter it cannot key."""
    ids = {}
    for v in (*jaxpr.constvars, *jaxpr.invars):
        ids[v] = len(ids)

    def atom(x):
        if isinstance(x, Literal):
            return ("lit", x.aval, _param_key(x.val))
        return ids[x]
    parts = [tuple(v.aval for v in jaxpr.constvars), tuple(v.aval for v in jaxpr.invars)]
    for e in jaxpr.eqns:
        ins = tuple(atom(x) for x in e.invars)
        for v in e.outvars:
            ids[v] = len(ids)
        parts.append((e.primitive, ins, tuple(v.aval for v in e.outvars),
                      _param_key(e.params), frozenset(e.effects)))
    parts.append(tuple(atom(x) for x in jaxpr.outvars))
    key = tuple(parts)
    hash(key)
    return key


def _param_key(v):
    if isinstance(v, dict):
        return tuple((k, _param_key(x)) for k, x in v.items())
    if isinstance(v, (tuple, list)):
        return (type(v), *map(_param_key, v))
    if isinstance(v, (bool, int, float, complex, np.generic)):
        return (type(v), repr(v))  # (1 == 1.0 == True; NaN != NaN)
    if isinstance(v, np.ndarray):
        return (np.ndarray, v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, ClosedJaxpr):
        return (ClosedJaxpr, _jaxpr_key(v.jaxpr), tuple(_param_key(c) for c in v.consts))
    if isinstance(v, Jaxpr):
        return (Jaxpr, _jaxpr_key(v))
    if isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer):
        return _param_key(np.asarray(v))
    return v  # by its own equality: value types by value, functions by identity
