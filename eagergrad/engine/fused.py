"""Fused backward: run a whole scheduled graph as one XLA computation.

NOTE [fused backward]: with create_graph=False and no hooks, the per-node backward
(one jit dispatch per node) is replaced by a single jitted function that runs every
node's pure vjp in the engine's schedule order and returns what the AccumulateGrad
sinks and the autograd.grad captures receive. Semantics are unchanged: the schedule,
pruning, buffer sums and AccumulateGrad updates are the same; only the dispatching
differs. The cache key is the graph's structure: every node's `_sig` (interned when
the node was recorded) and the wiring. A graph is compiled the second time its key is
seen, so one-off graphs never pay a compile. Anything else (hooks, custom Functions, a
version-counter or freed-buffer error, a formula that raises) takes the per-node path,
which reproduces torch's behaviour to the letter, including what was accumulated
before an error.
"""
import collections

import jax

from .graph import AccumulateGrad, GraphRoot

ENABLED = True  # set False to always run node by node
_MAX = 512
_cache = collections.OrderedDict()  # key -> compiled fn | 0 (seen once) | False
_SKIP = -1


def run(order, run_set, root, first, captures, captured, keep_graph):
    """Execute `order` fused when possible; False when the per-node path must run."""
    if not ENABLED:
        return False
    plan = _plan(order, run_set, captures)
    if plan is None:
        return False
    key, steps, cap_slots, ran = plan
    if not isinstance(root, GraphRoot):
        key = (key, tuple(g is not None for g in first))
    entry = _cache.get(key)
    if entry is None:
        _cache[key] = 0
        while len(_cache) > _MAX:
            _cache.popitem(last=False)
        return False
    if entry is False:
        return False
    try:
        if entry == 0:
            entry = _cache[key] = _compile(order, steps, cap_slots, root, first)
        acc_out, cap_out = entry(*_arguments(order, ran, root, first))
    except Exception:
        if not callable(_cache.get(key)):
            _cache[key] = False
        return False  # the per-node path raises what torch raises, where torch does
    _cache.move_to_end(key)
    from ..tensor import _make
    for (i, _, _), a in zip((s for s in steps if s[1] is AccumulateGrad), acc_out):
        if a is not None:
            order[i].apply([_make(a)])
    for (_, _, idx), a in zip(cap_slots, cap_out):
        if a is not None:
            captured[idx] = _make(a)
    if not keep_graph:
        for i in ran:
            order[i]._release()
    return True


def _plan(order, run_set, captures):
    """The run's structure: a hashable key, the steps (index, kind, edges), the capture
    slots and the indices of the nodes that run. None when it cannot be fused."""
    index = {n: i for i, n in enumerate(order)}
    key, steps, cap_slots, ran = [], [], [], []
    for i, n in enumerate(order):
        if n._sig is None or n._pre_hooks or n._post_hooks or n._tensor_pre_hooks or \
                n._retain_hooks:
            return None
        caps = captures.get(n)
        if caps:
            cap_slots.extend((i, nr, idx) for nr, idx in caps)
            caps = tuple(caps)
        if run_set is not None and n not in run_set:
            steps.append((i, _SKIP, ()))
            key.append((_SKIP, caps))
            continue
        ran.append(i)
        if type(n) is AccumulateGrad:
            if n.variable._post_acc_hooks:
                return None
            steps.append((i, AccumulateGrad, ()))
            key.append((n._sig, caps))
            continue
        edges = []
        for e in n._next:
            j = None
            if e is not None and (run_set is None or e[0] in run_set or e[0] in captures):
                j = index.get(e[0])
            edges.append(None if j is None else (j, e[1]))
        edges = tuple(edges)
        steps.append((i, type(n) if type(n) is GraphRoot else n, edges))
        key.append((n._sig, edges, caps))
    return tuple(key), steps, cap_slots, ran


def _arguments(order, ran, root, first):
    if isinstance(root, GraphRoot):
        roots = [g._value for g in root._grads]
    else:
        roots = [g._value for g in first if g is not None]
    saved = [order[i]._saved_arrays() for i in ran
             if type(order[i]) is not AccumulateGrad and type(order[i]) is not GraphRoot]
    return roots, saved


def _compile(order, steps, cap_slots, root, first):
    """Build the traced function from this (first) instance of the structure: which
    gradient slots are filled is static, so each node's pure vjp is fixed here."""
    present = {0: {j for j, g in enumerate(first) if g is not None}} \
        if not isinstance(root, GraphRoot) else {}
    plan = []
    for i, kind, edges in steps:
        ins = present.pop(i, set())
        if kind is _SKIP or kind is AccumulateGrad or kind is GraphRoot:
            plan.append((i, kind, None, edges))
        else:
            node = kind
            nones = tuple(j not in ins for j in range(len(node._meta_in)))
            fn = node._pure_vjp(nones)() if ins else None
            plan.append((i, fn, nones, edges if ins else ()))
        if kind is GraphRoot or ins:
            for e in edges:
                if e is not None:
                    present.setdefault(e[0], set()).add(e[1])
    root_slots = sorted(j for j, g in enumerate(first) if g is not None)
    cap_index = {(i, nr): k for k, (i, nr, _) in enumerate(cap_slots)}
    is_graph_root = isinstance(root, GraphRoot)

    def fused(roots, saved):
        bufs = {} if is_graph_root else {0: dict(zip(root_slots, roots))}
        acc_out, cap_out = [], [None] * len(cap_slots)
        s_iter = iter(saved)
        for i, fn, nones, edges in plan:
            buf = bufs.pop(i, {})
            for nr, g in buf.items():
                k = cap_index.get((i, nr))
                if k is not None:
                    cap_out[k] = g
            if fn is _SKIP:
                continue
            if fn is AccumulateGrad:
                acc_out.append(buf.get(0))
                continue
            if fn is GraphRoot:
                outs = roots
            else:
                sv = next(s_iter)
                if fn is None:
                    continue
                outs = fn(*[buf[j] for j, n in enumerate(nones) if not n], *sv)
            for e, g in zip(edges, outs):
                if e is not None and g is not None:
                    b = bufs.setdefault(e[0], {})
                    b[e[1]] = b[e[1]] + g if e[1] in b else g
        return acc_out, cap_out

    return jax.jit(fused)
