"""Bounded caches (docs/design.md §9: every cache is bounded and holds no tensor data) and
the keys that tell -0.0 from 0.0 and find NaN."""
import collections
import math
import os
import threading
import weakref

from jax import monitoring as jax_monitoring
from jax._src import util as jax_util

_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

_put_lock = threading.Lock()


def put_bounded(cache, key, value, maxsize):
    """`cache[key] = value` in a plain dict, dropping the oldest entries past `maxsize`.
    Lookups stay plain dict reads (these caches sit on the per-op hot path); eviction is
    by insertion order. Thread-safe: puts take a lock (a lookup in another thread meanwhile
    sees the entry or not)."""
    with _put_lock:
        cache[key] = value
        while len(cache) > maxsize:
            cache.pop(next(iter(cache)), None)
    return value


class KeyedFloat(float):
    """-0.0 or NaN as a static argument or a cache key. As plain floats, -0.0 == 0.0
    (it would find 0.0's cache entries) and NaN != NaN (it would never find its own, and
    compile again on every call); a KeyedFloat equals only the same special value."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is KeyedFloat and repr(self) == repr(other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(repr(self))


def keyed(v):
    """`v`, or a KeyedFloat of it when it is -0.0 or NaN (see KeyedFloat).

    >>> keyed(-0.0) == keyed(0.0), keyed(float("nan")) == keyed(float("nan"))
    (False, True)
    """
    if type(v) is float and (v != v or (v == 0.0 and math.copysign(1.0, v) < 0.0)):
        return KeyedFloat(v)
    return v


# ---- compiled executables: one global bound (NOTE [executable cache]) -----------------
class Executables:
    """NOTE [executable cache]: every XLA executable eagergrad keeps counts against one
    global bound, least recently used first out. An XLA:CPU executable holds about 1.5 MB
    however small its kernel, so a program that sees a new batch size every step (the
    last partial batch, variable-length sequences, evaluation) would otherwise grow
    without limit.

    Two kinds of holders. *Keyed* caches are plain dicts whose entries are
    `[value, stamp]` with one executable each (their keys carry the input shapes): a hit
    writes `entry[1] = EXECUTABLES.now` (the readers inline it), a miss calls `put`.
    *Tracked* jitted functions are shape-agnostic ones (a view chain's replay, the write
    kernels, forward-mode kernels, vmapped func programs) whose per-shape executables
    live inside jax; `track` registers them, and a sweep clears the cache of any that
    holds more than its limit of shapes (8, doubled on each clear up to 16). Kernels that
    only ever see parameter shapes (running-stat updates) are not tracked: the model
    bounds them. (The optimizers' group kernels are tracked: NOTE [optimizer kernels].)

    The bound adapts: a put whose key was evicted recently (a ghost) means the working
    set is larger than the bound, so the bound grows by a quarter, up to `max_size` (a
    recompile costs 10-100 ms, an executable's memory is ~1.5 MB: a GRU over sequences
    of 16 lengths, ~400 kernels, reaches its size after 7 ghosts). Ghosts are kept up
    to `max_size` keys: a length comes back after the others have evicted many more
    than the bound's worth of kernels (with ghosts kept only up to the bound, that GRU
    never saw one: 260 evictions, ~280 recompiles). Shapes seen once never come back
    as ghosts, so they never raise it. Sweeps evict an eighth
    at a time. Every `JAX_CLEAR_EVERY` compiles (counted by a jax listener) jax's own
    tracing and lowering caches are cleared: bounded by jax at thousands of entries, they
    hold about 1 MB per new shape of a func program."""

    PER_TRACKED = 8        # shapes a tracked function keeps before a sweep clears it
    MAX_TRACKED = 16       # ... at most, after its limit doubled on each clear
    JAX_CLEAR_EVERY = 64   # XLA compiles between clears of jax's staging caches

    def __init__(self, size=96, max_size=2048):
        self.lock = threading.RLock()
        self.size, self.max_size = size, max_size
        self.now = 0
        self.count = 0        # keyed entries put since the last sweep's recount
        self.owners = []      # the keyed caches (dicts)
        self.tracked = weakref.WeakSet()
        self.limits = weakref.WeakKeyDictionary()  # tracked function -> its shape limit
        self.ghosts = collections.OrderedDict()
        self.stats = collections.Counter()  # put, evicted, grown, cleared, jax_cleared
        self.compiles = self._compiles_at_sweep = self._compiles_at_jax_clear = 0
        self._here = threading.local()  # this thread's count (compiles_here)
        jax_monitoring.register_event_duration_secs_listener(self._compiled)

    def owner(self, cache):
        """Register a keyed cache (a dict of `[value, stamp]` entries); returns it."""
        with self.lock:
            self.owners.append(cache)
        return cache

    def put(self, cache, key, value):
        """`cache[key] = [value, stamp]`, then evict past the bound; returns value."""
        return self.put_entry(cache, key, [value, 0])[0]

    def put_entry(self, cache, key, entry):
        """`cache[key] = entry`, a list `[value, stamp, ...]` whose further slots the
        owner uses as it likes (call_op keeps its outputs' metadata there); the stamp is
        set here. Evicts past the bound; returns the entry."""
        with self.lock:
            self.now += 1
            ghost = (id(cache), key)
            if self.ghosts.pop(ghost, False) and self.size < self.max_size:
                self.size = min(self.size + max(1, self.size // 4), self.max_size)
                self.stats["grown"] += 1
            entry[1] = self.now
            cache[key] = entry
            self.stats["put"] += 1
            self.count += 1
            if self.count > self.size:
                self._sweep()
            else:
                self.poll()
        return entry

    def get(self, cache, key, make):
        """The value of `cache[key]` (its stamp refreshed), or `make()` put there."""
        e = cache.get(key)
        if e is None:
            return self.put(cache, key, make())
        e[1] = self.now
        self.poll()
        return e[0]

    def track(self, jitted):
        """Count a shape-agnostic jitted function's executables; returns it."""
        with self.lock:
            self.tracked.add(jitted)
            self.stats["tracked"] += 1
        return jitted

    def _compiled(self, event, duration, **kwargs):
        # jax's listener for every XLA compile (inside jax's compile: only a count here)
        if event == _COMPILE_EVENT:
            self.compiles += 1
            self._here.n = getattr(self._here, "n", 0) + 1

    def compiles_here(self):
        """The XLA compiles this thread has run (`compiles` counts every thread's: the
        fused backward's background compiler, a DataLoader's worker threads)."""
        return getattr(self._here, "n", 0)

    def poll(self):
        """Sweep when the tracked functions may have grown past the bound: called where
        executables may have been compiled (a keyed miss, a func program's run)."""
        if self.compiles - self._compiles_at_sweep > self.size // 4:
            with self.lock:
                self._sweep()
        if self.compiles - self._compiles_at_jax_clear >= self.JAX_CLEAR_EVERY:
            self._clear_jax()

    def _clear_jax(self):
        # jax keeps each new shape's trace (~1 MB of jaxprs and lowerings for a func
        # program) in its own caches, thousands of entries deep; our kernels, each a jit
        # of its own or already compiled, never need them again
        self._compiles_at_jax_clear = self.compiles
        self.stats["jax_cleared"] += 1
        jax_util.clear_all_caches()

    def _sweep(self):
        self._compiles_at_sweep = self.compiles
        entries = []
        for cache in self.owners:
            for k, e in list(cache.items()):
                if e.__class__ is list:
                    entries.append((e[1], id(cache), k, cache))
        cleared = False
        for f in list(self.tracked):
            limit = self.limits.get(f, self.PER_TRACKED)
            if f._cache_size() > limit:
                f.clear_cache()
                # cleared again and again: its working set may be that large (a view
                # replayed on a dozen sequence lengths); doubling stops a thrash
                self.limits[f] = min(2 * limit, self.MAX_TRACKED)
                self.stats["cleared"] += 1
                cleared = True
        if cleared:  # (their traces sit in jax's caches)
            self._clear_jax()
        self.count = len(entries)
        if self.count <= self.size:
            return
        entries.sort(key=lambda e: e[0])
        n = self.count - (self.size - self.size // 8)
        for _, cid, k, cache in entries[:n]:
            cache.pop(k, None)
            self.ghosts[(cid, k)] = True
        while len(self.ghosts) > self.max_size:
            self.ghosts.popitem(last=False)
        self.count -= n
        self.stats["evicted"] += n

    def clear(self):
        """Drop every keyed entry and tracked function's executables (tests)."""
        with self.lock:
            for cache in self.owners:
                for k, e in list(cache.items()):
                    if e.__class__ is list:
                        cache.pop(k, None)
            for f in list(self.tracked):
                f.clear_cache()
            self.count = 0
            self.ghosts.clear()


def _initial_size():
    return int(os.environ.get("EAGERGRAD_EXECUTABLES", "96"))


EXECUTABLES = Executables(_initial_size())
