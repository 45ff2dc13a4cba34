"""Fused segments: runs of fusable nodes of a Plan executed as one cached XLA computation.

NOTE [fused segments]: the engine's Plan (engine.py) cuts the schedule at Python points,
the places where Python must run at its moment in the schedule (hooks, custom Function
nodes, nodes that are skipped or captured before their hooks, AccumulateGrad with
post-accumulate-grad hooks). A maximal stretch of fusable nodes between two Python points
(at most MAX_NODES op nodes; longer stretches are split) is a Segment. Running one:
gather the gradients that entered its nodes from outside (the input buffers) and the
saved arrays of its nodes (version-checked now, when it starts), call one jitted function
that runs each node's pure vjp in schedule order, then, in Python, in schedule order:
hand the gradients leaving the segment to the buffers of later nodes, apply the
AccumulateGrads inside it (their .grad writes are Python's), fill autograd.grad captures,
and release the saved tensors unless retain_graph. Nothing Python can observe happens
between two nodes of a segment, so this is node by node's result exactly; whatever a
hook did before the segment (an in-place edit of a gradient, a write to a saved tensor or
a parameter, a new hook) is seen by it.

The cache key of a segment is its structure (every node's `_sig`, the wiring inside it,
which entry slots hold a gradient this time). NOTE [when to fuse]: a key is compiled
once running it node by node has cost about what compiling it would (a ski rental: never
more than twice the better of the two choices): the engine times each node-by-node run
that compiled nothing (`observe`), and a key is compiled when those times add up to
the estimated compile time of its op count (learnt from the compiles so far), or at its
MAX_SIGHTINGS-th sighting whatever the times (runs that compile earn nothing: node
kernels evicted and recompiled every step would otherwise never let it fuse). A graph
seen a few times (a program's first steps, a sequence length met twice) stays node by
node and pays no compile of its own; a training loop's graph is fused within its first
steps. (EAGER: compile on the second sighting, as the test suite does.) The compile runs
in a background thread when BACKGROUND is set: until the compiled function is ready the
segment runs node by node, so compiling never holds a backward up. Whatever goes wrong (an
unpack hook to run, a version error, a formula that raises while traced) makes the segment
run node by node, which raises what torch raises, where torch raises it.

A gradient a node hands on unchanged is one tensor object in every buffer it reaches, as
in torch and node by node (NOTE [aliased gradients], ops/_table.py): a hook's in-place
edit of it is seen by the other nodes. Inside a segment nothing can observe that; its
exits, AccumulateGrads and captures can. The trace finds the results that are the very
same traced value as an earlier result or as an entry gradient, and `run` hands out the
same Tensor for them (a compiled entry of `_cache` is (jitted function, [links])).
"""
import atexit
import collections
import contextlib
import queue
import threading
import time

import jax

from .._cache import EXECUTABLES
from ..tensor import RankLocal
from .graph import AccumulateGrad
from .grad_mode import set_enabled

ENABLED = True      # set False to always run node by node
BACKGROUND = True   # compile in a background thread (False: on the spot)
EAGER = False       # compile a key on its second sighting (NOTE [when to fuse])
MAX_NODES = 128     # op nodes per segment: a compile of 128 matmul/tanh/log_softmax
                    # nodes takes ~0.2 s here (bench/long_chain.py measures)
_MAX = 512          # compiled segments kept (LRU)
COUNTS = collections.Counter()  # segments_fused, segments_node_by_node, compiles

class _Off(threading.local):
    depth = 0


OFF = _Off()  # this thread's backwards run node by node while depth > 0 (node_by_node)


@contextlib.contextmanager
def node_by_node():
    """Run this thread's backwards node by node inside the block. A fused segment may
    round differently from its nodes run one by one (XLA fuses their kernels), so a
    check that compares two backwards bit for bit (gradcheck's reentrancy check) runs
    both on one executor."""
    OFF.depth += 1
    try:
        yield
    finally:
        OFF.depth -= 1


_SEEN, _PENDING, _FAILED = 0, 1, 2  # cache states besides a compiled function
_credit = {}  # a seen key -> [seconds its node-by-node runs took, sightings]
MAX_SIGHTINGS = 16  # compiled by then whatever the times (NOTE [when to fuse])


class _CompileCost:
    """The estimated compile seconds of a segment: BASE + PER_OP per op node, PER_OP
    moved towards each measured compile's (starting values measured on a 2-core CPU:
    ~0.2 s for 128 matmul/tanh/log_softmax nodes, bench/long_chain.py)."""
    BASE = 0.03

    def __init__(self):
        self.per_op = 0.002

    def estimate(self, n_ops):
        return self.BASE + self.per_op * n_ops

    def measured(self, seconds, n_ops):
        if n_ops:
            self.per_op += 0.25 * (max(seconds - self.BASE, 0.0) / n_ops - self.per_op)


COMPILE_COST = _CompileCost()
_cache = collections.OrderedDict()  # compiled entries: [(fn, traced), stamp], _cache.py
_lock = threading.Lock()


_kept = collections.OrderedDict()  # clear(keep_compiled=True)'s compiled entries, by key
_KEPT_MAX = 1024


def clear(keep_compiled=False):
    """Forget every segment seen and compiled, and reset COUNTS (for tests): the next
    backward runs node by node, the one after compiles its segments. keep_compiled: what
    was compiled is kept aside, and a segment with the same key, when its turn to compile
    comes, takes it instead of compiling it again (the differential harness: every
    scenario starts node by node without recompiling what an earlier one compiled)."""
    with _lock:
        if keep_compiled:
            for k, v in _cache.items():
                if v.__class__ is not int:
                    _kept[k] = v[0]  # ((fn, traced), as _compile stores it)
                    _kept.move_to_end(k)
            while len(_kept) > _KEPT_MAX:
                _kept.popitem(last=False)
        else:
            _kept.clear()
        _cache.clear()
    COUNTS.clear()


class Segment:
    """Static description of positions [start, stop) of a schedule, all fusable.

    members: per node, (kind, n_in, edges) with kind None for AccumulateGrad, else the
      node's vjp maker; edges: per forward input, ("in", j, nr) to member j, ("out", k)
      to exit slot k, or None.
    entries: members that may receive gradients from outside; exits: (position, nr) of
      the later nodes the exit slots feed; accs: members that are AccumulateGrads;
      caps: (member, nr, capture index); n_saved: saved arrays per member.
    """

    __slots__ = ("start", "stop", "members", "entries", "exits", "accs",
                 "caps", "n_saved", "key", "ops", "last_key")

    def __init__(self, order, start, stop, index, routed, captures):
        self.start, self.stop = start, stop
        members, exits, exit_of, key, caps, accs, ops, n_saved = [], [], {}, [], [], [], [], []
        for j in range(stop - start):
            n = order[start + j]
            for nr, idx in captures.get(n, ()):
                caps.append((j, nr, idx))
            if type(n) is AccumulateGrad:
                members.append((None, 1, ()))
                accs.append(j)
                n_saved.append(0)
                key.append(n._sig)
                continue
            ops.append(j)
            edges = []
            for e in n._next:
                p = index.get(e[0]) if e is not None and routed(e[0]) else None
                if p is None:
                    edges.append(None)
                elif p < stop:
                    edges.append(("in", p - start, e[1]))
                else:
                    k = exit_of.get((p, e[1]))
                    if k is None:
                        k = exit_of[p, e[1]] = len(exits)
                        exits.append((p, e[1]))
                    edges.append(("out", k))
            edges = tuple(edges)
            members.append((n._vjp_maker(), len(n._meta_in), edges))
            n_saved.append(None)  # filled on the first gather
            key.append((n._sig, edges))
        self.members, self.exits, self.accs, self.caps = members, exits, accs, caps
        self.ops, self.n_saved = ops, n_saved
        self.entries = ()
        self.key = (tuple(key), tuple(caps), len(exits))


def set_entries(segments, order, index, routed):
    """Mark the members of each segment that gradients reach from outside it (the root,
    position 0, gets the backward's initial gradients)."""
    seg_of = {}
    for s in segments:
        for p in range(s.start, s.stop):
            seg_of[p] = s
    entries = {s: set() for s in segments}
    if 0 in seg_of:
        entries[seg_of[0]].add(0)
    for p, n in enumerate(order):
        src = seg_of.get(p)
        for e in n._next:
            if e is None or not routed(e[0]):
                continue
            q = index.get(e[0])
            s = seg_of.get(q)
            if s is not None and s is not src:
                entries[s].add(q - s.start)
    for s in segments:
        s.entries = tuple(sorted(entries[s]))


def run(seg, order, buffers, captured, retain_graph, make):
    """Run `seg` fused when its compiled function is ready; True when it ran. False:
    the caller runs its nodes one by one (buffers untouched)."""
    if not ENABLED:
        return False
    nodes = order[seg.start:seg.stop]
    ins, present = [], []
    for j in seg.entries:
        buf = buffers.get(nodes[j])
        if buf is None:
            present.append(())
            continue
        slots = []
        for nr, g in enumerate(buf):
            if g is not None:
                slots.append(nr)
                try:
                    ins.append(g._value)
                except RankLocal:  # every rank's gradient: node by node, rank by rank
                    return False
        present.append(tuple(slots))
    key = (seg.key, seg.entries, tuple(present))
    entry = _cache.get(key)
    if entry is None or entry.__class__ is int:
        seg.last_key = key  # (observe's: the engine runs it node by node now)
        if not _advance(key, entry, seg, ins, nodes):
            return False
        entry = _cache.get(key)
        if entry is None or entry.__class__ is int:
            return False
    try:
        saved = _gather(seg, nodes)
        if saved is None:
            return False  # an unpack hook: it runs when its node runs
        entry[1] = EXECUTABLES.now
        fn, traced = entry[0]
        outs = fn(ins, saved)[::-1]  # see the end of _trace
    except Exception:  # noqa: BLE001 - node by node re-raises it where torch does
        # a version error, a freed buffer, ...: node by node raises what torch raises,
        # after the nodes before the culprit ran (their .grad writes stay, as in torch)
        return False
    COUNTS["segments_fused"] += 1
    links = traced[0]  # set when fn was traced (before its first call returned)
    if links is not None:
        outs = _linked(outs, links, seg, nodes, buffers, make)
        make = _same
    for j in seg.entries:
        buffers.pop(nodes[j], None)
    k = 0
    for p, nr in seg.exits:
        a = outs[k]
        k += 1
        if a is None:
            continue
        c = order[p]
        buf = buffers.get(c)
        if buf is None:
            buf = buffers[c] = [None] * len(c._meta_in)
        old = buf[nr]
        g = make(a)
        buf[nr] = g if old is None else old + g
    for j in seg.accs:
        a = outs[k]
        k += 1
        if a is not None:
            nodes[j].apply([make(a)])
    for _, _, idx in seg.caps:
        a = outs[k]
        k += 1
        captured[idx] = None if a is None else make(a)
    if not retain_graph:
        for j in seg.ops:
            nodes[j]._release()
    return True


def _same(t):
    return t


def _linked(outs, links, seg, nodes, buffers, make):
    """The segment's results as Tensors, one object for results that are one traced
    value: links[k] is None (a new tensor), j >= 0 (result j's, j < k) or -1 - i (the
    entry gradient ins[i] itself, read from the buffers before they are emptied)."""
    ents = None
    res = []
    for a, l in zip(outs, links):
        if a is None:
            res.append(None)
        elif l is None:
            res.append(make(a))
        elif l >= 0:
            res.append(res[l])
        else:
            if ents is None:
                ents = [g for j in seg.entries for g in buffers.get(nodes[j]) or ()
                        if g is not None]
            res.append(ents[-1 - l])
    return res


def observe(seg, seconds):
    """The engine ran `seg` node by node in `seconds`, compiling nothing: credit its key
    (NOTE [when to fuse])."""
    key = getattr(seg, "last_key", None)
    if key is not None and _cache.get(key) == _SEEN:
        _credit.setdefault(key, [0.0, 0])[0] += seconds


def _advance(key, state, seg, ins, nodes):
    """A sighting of an uncompiled key: remember it, or compile it once its node-by-node
    runs have cost its estimated compile (NOTE [when to fuse]). True when a compiled
    function is now there."""
    if state == _FAILED or state == _PENDING:
        return False
    if state is None:
        with _lock:
            _cache[key] = _SEEN
            while len(_cache) > _MAX:
                _credit.pop(next(iter(_cache)), None)
                _cache.popitem(last=False)
        return False
    if not EAGER:
        c = _credit.setdefault(key, [0.0, 0])
        c[1] += 1
        if c[0] < COMPILE_COST.estimate(len(seg.ops)) and c[1] < MAX_SIGHTINGS:
            return False
    _credit.pop(key, None)
    if _kept:
        kept = _kept.pop(key, None)
        if kept is not None:
            _store(key, kept)
            return True
    try:
        saved = _gather(seg, nodes)  # for the shapes of the compile
    except Exception:  # noqa: BLE001 - no fusing; node by node re-raises it where torch does
        saved = None
    if saved is None:
        return False
    traced = [None]  # the links, set when fn is traced
    fn = jax.jit(_trace(seg, key[2], traced))
    COUNTS["compiles"] += 1
    avals = ([_aval(a) for a in ins], [_aval(a) for a in saved])
    if not BACKGROUND:
        _compile(key, (fn, traced), avals, len(seg.ops))
        return _cache.get(key).__class__ is not int
    with _lock:
        _cache[key] = _PENDING
    _compiler().put((key, (fn, traced), avals, len(seg.ops)))
    return False


def _compile(key, entry, avals, n_ops):
    t0 = time.perf_counter()
    try:
        entry[0].lower(*avals).compile()  # fills jax's cache: calls hit it
    except Exception:  # noqa: BLE001 - node by node will raise whatever there is to raise
        _store(key, _FAILED)
        return
    COMPILE_COST.measured(time.perf_counter() - t0, n_ops)
    _store(key, entry)


def _gather(seg, nodes):
    """The saved arrays of the segment's op nodes, version-checked now (its start), and
    how many each node has; None when one has unpack hooks."""
    saved = []
    n_saved = seg.n_saved
    for j in seg.ops:
        k = len(saved)
        if not nodes[j]._gather_saved(saved):
            return None
        n_saved[j] = len(saved) - k
    return saved


def _aval(a):
    return jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=getattr(a, "weak_type", False))


def _store(key, value):
    with _lock:
        if value.__class__ is int:
            _cache[key] = value
        else:  # a compiled segment counts against the global bound
            EXECUTABLES.put(_cache, key, value)
        _cache.move_to_end(key)
        while len(_cache) > _MAX:
            _cache.popitem(last=False)


_worker = []
_jobs = queue.Queue()


def _compiler():
    """The background compile thread (one; compiles one segment at a time)."""
    if not _worker:
        with _lock:
            if not _worker:
                t = threading.Thread(target=_compile_loop, name="eagergrad-fused-compile",
                                     daemon=True)
                t.start()
                _worker.append(t)
                atexit.register(_stop_compiler)
    return _jobs


def _stop_compiler():
    """At exit: drop the queued compiles and wait for the one in progress (a daemon
    thread still inside XLA's compiler when the interpreter ends aborts the process)."""
    try:
        while True:
            _jobs.get_nowait()
    except queue.Empty:
        pass
    _jobs.put(None)
    for t in _worker:
        t.join(timeout=120)


def _compile_loop():
    set_enabled(False)  # tracing formulas records nothing
    while True:
        job = _jobs.get()
        if job is None:
            return
        _compile(*job)


def _trace(seg, present, traced):
    """The pure function of a segment for one pattern of present entry gradients: which
    gradient slots are filled is static, so each node's pure vjp is fixed here. Tracing
    it sets traced[0] to the links of its results (see `_linked`), None when none is
    linked."""
    members, n_saved = seg.members, list(seg.n_saved)
    entries = seg.entries
    n_exits = len(seg.exits)
    cap_at = collections.defaultdict(list)
    for k, (j, nr, _) in enumerate(seg.caps):
        cap_at[j].append((nr, k))
    filled = {}
    for j, slots in zip(entries, present):
        filled.setdefault(j, set()).update(slots)
    plan = []
    for j, (maker, n_in, edges) in enumerate(members):
        got = filled.pop(j, set())
        if maker is None:  # an AccumulateGrad: hands its gradient out
            plan.append((j, True, None, (), (), 0))
            continue
        nones = tuple(i not in got for i in range(n_in))
        fn = maker(nones) if got else None
        plan.append((j, False, fn, nones, edges if got else (), n_saved[j]))
        if got:
            for e in edges:
                if e is not None and e[0] == "in":
                    filled.setdefault(e[1], set()).add(e[2])
    n_caps = len(seg.caps)

    def fused(ins, saved):
        bufs = {}
        it = iter(ins)
        for j, slots in zip(entries, present):
            if slots:
                bufs[j] = {nr: next(it) for nr in slots}
        exits, accs, caps = [None] * n_exits, [], [None] * n_caps
        pos = 0
        for j, is_acc, fn, nones, edges, n in plan:
            buf = bufs.pop(j, {})
            for nr, k in cap_at.get(j, ()):
                caps[k] = buf.get(nr)
            if is_acc:
                accs.append(buf.get(0))
                continue
            sv = saved[pos:pos + n]
            pos += n
            if fn is None:
                continue
            outs = fn(*[buf[i] for i, none in enumerate(nones) if not none], *sv)
            for e, g in zip(edges, outs):
                if e is None or g is None:
                    continue
                if e[0] == "in":
                    b = bufs.setdefault(e[1], {})
                    b[e[2]] = b[e[2]] + g if e[2] in b else g
                else:
                    k = e[1]
                    exits[k] = g if exits[k] is None else exits[k] + g
        res = exits + accs + caps
        traced[0] = _links(res, ins)
        # One flat list (cheaper for jax to hand back), in reverse: XLA:CPU's scheduler
        # follows the output order, and last-computed-first puts the chain of input
        # gradients ahead of the weight gradients that hang off it (~20% faster for an
        # MLP's backward, as fast as jax.vjp's; bench/mlp_step.py).
        return res[::-1]

    return fused


def _links(res, ins):
    """At trace time: per result, None, or the earlier result (j >= 0) or entry gradient
    (-1 - i) that is the very same traced value (handed on unchanged, not a sum); None
    when no result is linked."""
    seen = {id(a): -1 - i for i, a in enumerate(ins)}
    links = []
    for k, a in enumerate(res):
        if a is None:
            links.append(None)
            continue
        l = seen.get(id(a))
        if l is None:
            seen[id(a)] = k
        links.append(l)
    return None if all(l is None for l in links) else tuple(links)
