"""Fused backward: run a whole scheduled graph as one XLA computation.

NOTE [fused backward]: with create_graph=False and no hooks, the per-node backward
(one jit dispatch per node) is replaced by a single jitted function that runs every
node's pure vjp in the engine's schedule order and returns what the AccumulateGrad
sinks and the autograd.grad captures receive. Semantics are unchanged: the schedule,
pruning, buffer sums and AccumulateGrad updates are the same; only the dispatching
differs. A graph is compiled the second time its structure (node types, static
attributes, shapes, dtypes, wiring) is seen, so one-off graphs never pay a compile.
Anything else (hooks, custom Functions, a version-counter or freed-buffer error, a
formula that raises) takes the per-node path, which reproduces torch's behaviour to the
letter, including what was accumulated before an error.
"""
import collections

import jax

from .graph import AccumulateGrad, GraphRoot

ENABLED = True  # set False to always run node by node
_MAX = 512
_cache = collections.OrderedDict()  # key -> compiled fn | sighting count | False
_SKIP, _ACC, _ROOT = "skip", "acc", "root"


def run(order, run_set, root, first, captures, captured, keep_graph):
    """Execute `order` fused when possible; False when the per-node path must run."""
    if not ENABLED:
        return False
    plan = _plan(order, run_set, root, first, captures)
    if plan is None:
        return False
    key, steps, factories, acc_nodes, cap_slots, ran = plan
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
            entry = _cache[key] = _compile(steps, factories, cap_slots)
        args = _arguments(order, ran, root, first)
        acc_out, cap_out = entry(*args)
    except Exception:
        if not callable(_cache.get(key)):
            _cache[key] = False
        return False  # the per-node path raises what torch raises, where torch does
    _cache.move_to_end(key)
    from ..tensor import _make
    for i, a in zip(acc_nodes, acc_out):
        if a is not None:
            order[i].apply([_make(a)])
    for (_, _, idx), a in zip(cap_slots, cap_out):
        if a is not None:
            captured[idx] = _make(a)
    if not keep_graph:
        for i in ran:
            order[i]._release()
    return True


def _plan(order, run_set, root, first, captures):
    """The static description of the run: a hashable key, the steps to trace, and the
    node indices of sinks, captures and nodes that run. None when not fusable."""
    index = {n: i for i, n in enumerate(order)}
    present = [set() for _ in order]
    present[0] = {j for j, g in enumerate(first) if g is not None}
    key, steps, factories, acc_nodes, cap_slots, ran = [], [], [], [], [], []
    for i, n in enumerate(order):
        if n._pre_hooks or n._post_hooks or n._tensor_pre_hooks or n._retain_hooks:
            return None
        caps = tuple(captures.get(n, ()))
        cap_slots.extend((i, nr, idx) for nr, idx in caps)
        ins = present[i]
        if run_set is not None and n not in run_set:
            steps.append((i, caps, _SKIP, None, ()))
            key.append((_SKIP, caps))
            continue
        ran.append(i)
        if isinstance(n, AccumulateGrad):
            if n.variable._hooks:
                return None
            acc_nodes.append(i)
            steps.append((i, caps, _ACC, None, ()))
            key.append((_ACC, n._meta_in, caps))
            continue
        if isinstance(n, GraphRoot):
            kind, nones, live = _ROOT, None, True
            key.append((_ROOT, len(n._grads), caps))
        else:
            nones = tuple(j not in ins for j in range(len(n._meta_in)))
            pure = n._pure_vjp(nones)
            if pure is None:
                return None
            kind, live = len(factories), bool(ins)
            factories.append(pure[1])
            key.append((type(n), pure[0], caps))
        edges = []
        for e in n._next:
            j = None
            if e is not None and live and (run_set is None or e[0] in run_set
                                           or e[0] in captures):
                j = index.get(e[0])
            if j is None:
                edges.append(None)
            else:
                present[j].add(e[1])
                edges.append((j, e[1]))
        edges = tuple(edges)
        key.append(edges)
        steps.append((i, caps, kind, nones, edges))
    return tuple(key), steps, factories, acc_nodes, cap_slots, ran


def _arguments(order, ran, root, first):
    if isinstance(root, GraphRoot):
        roots = [g._value for g in root._grads]
    else:
        roots = {j: g._value for j, g in enumerate(first) if g is not None}
    saved = [order[i]._saved_arrays() for i in ran
             if not isinstance(order[i], (AccumulateGrad, GraphRoot))]
    return roots, saved


def _compile(steps, factories, cap_slots):
    fns = [f() for f in factories]

    def fused(roots, saved):
        bufs = {0: dict(roots)} if isinstance(roots, dict) else {}
        acc_out, caps = [], {}
        s_iter = iter(saved)
        for i, step_caps, kind, nones, edges in steps:
            buf = bufs.pop(i, {})
            for nr, idx in step_caps:
                caps[idx] = buf.get(nr)
            if kind == _SKIP:
                continue
            if kind == _ACC:
                acc_out.append(buf.get(0))
                continue
            if kind == _ROOT:
                outs = roots
            else:
                sv = next(s_iter)
                if not buf:
                    continue
                outs = fns[kind](*[buf[j] for j, n in enumerate(nones) if not n], *sv)
            for e, g in zip(edges, outs):
                if e is not None and g is not None:
                    b = bufs.setdefault(e[0], {})
                    b[e[1]] = b[e[1]] + g if e[1] in b else g
        return acc_out, [caps.get(idx) for _, _, idx in cap_slots]

    return jax.jit(fused)
