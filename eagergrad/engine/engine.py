"""execute(): run the backward graph with PyTorch's engine semantics (docs/design.md §6).

Dependencies are counted over everything reachable from the roots; a node runs once
all its consumers have run, highest sequence_nr first (AccumulateGrad first of all).
With `outputs` (autograd.grad or backward(inputs=...)) only nodes on a path to an
output run (torch's exec_info); gradients for autograd.grad are captured at the input
buffer of the output's node. Iterative: graph depth is bounded by memory, not the stack.
"""
import collections
import heapq
import itertools
import threading
import time

from .._cache import EXECUTABLES
from . import fused
from .._mode import ANOMALY, AUTOCAST, COMPILING, FWD
from .anomaly import report as anomaly_report, run_checked
from .graph import GRAD_OPS, AccumulateGrad, GraphRoot, _check_single, _hook_name, _validate
from .hooks import HOOK_GENERATION
from .saved import HOOKS
from .grad_mode import get_state, restore_state, set_enabled
from ..tensor import _make


def _needed(root, targets):
    """The nodes that lead to a target (targets included): torch's exec_info."""
    needed = set()
    done = set()
    stack = [(root, iter(root._next))]
    while stack:
        node, it = stack[-1]
        for e in it:
            if e is not None and e[0] not in done:
                done.add(e[0])
                stack.append((e[0], iter(e[0]._next)))
                break
        else:
            stack.pop()
            if node in targets or any(e is not None and e[0] in needed for e in node._next):
                needed.add(node)
    return needed


MAX_DEPTH = 60  # torch's max re-entrant depth before moving to a fresh thread


def execute(root_edges, root_grads, retain_graph, create_graph, outputs=None,
            accumulate_grad=True):
    """Run a backward; a re-entrant one (from inside a node) nested MAX_DEPTH deep runs
    on a new thread with this thread's grad mode and hooks, as torch's engine does."""
    if COMPILING.n and COMPILING.rec is not None:
        COMPILING.rec.backward_ran = True
    if len(_TASKS.stack) < MAX_DEPTH:
        return _execute(root_edges, root_grads, retain_graph, create_graph, outputs,
                        accumulate_grad)
    state, hooks, disabled = get_state(), list(HOOKS.stack), HOOKS.disabled
    box = []

    def target():
        restore_state(state)
        HOOKS.stack[:], HOOKS.disabled = hooks, disabled
        try:
            box.append((True, _execute(root_edges, root_grads, retain_graph, create_graph,
                                       outputs, accumulate_grad)))
        except BaseException as e:  # noqa: BLE001 - re-raised unchanged in the caller's thread
            box.append((False, e))
    t = threading.Thread(target=target, name="eagergrad-reentrant-backward")
    t.start()
    t.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


class Plan:
    """What one backward does, fixed before it starts (torch's GraphTask setup):

    order: the schedule, every node that runs or is captured, in execution order;
    run: the nodes that execute (None: all of order); captures: node -> [(input_nr,
    index of autograd.grad's result)]; steps: (start, stop, segment) over positions of
    order, a fused.Segment or None for nodes that run one by one (Python points, and
    stretches too short to fuse). Both executors consume it: `_run_plan` runs each step
    fused when it can, else node by node, and re-plans the steps left when a hook was
    registered or removed meanwhile.
    """

    __slots__ = ("order", "run", "captures", "steps")

    def __init__(self, order, run, captures, steps):
        self.order, self.run, self.captures, self.steps = order, run, captures, steps


def _plan_steps(order, run, captures, start=0):
    """Cut order[start:] into steps: maximal stretches of fusable nodes (at most
    fused.MAX_NODES op nodes each) between Python points (NOTE [fused segments])."""
    index = {n: p for p, n in enumerate(order)}

    def routed(c):
        return run is None or c in run or c in captures

    steps, segments = [], []
    lo, n_ops = None, 0

    def close(stop):
        if lo is None:
            return
        if n_ops < 2:  # one kernel either way: run it node by node
            steps.append((lo, stop, None))
        else:
            seg = fused.Segment(order, lo, stop, index, routed, captures)
            steps.append((lo, stop, seg))
            segments.append(seg)

    for p in range(start, len(order)):
        n = order[p]
        if (run is None or n in run) and n._fusable() and not n._tapped():
            is_op = type(n) is not AccumulateGrad
            if lo is not None and is_op and n_ops >= fused.MAX_NODES:
                close(p)
                lo = None
            if lo is None:
                lo, n_ops = p, 0
            n_ops += is_op
            continue
        close(p)
        lo = None
        steps.append((p, p + 1, None))
    close(len(order))
    fused.set_entries(segments, order, index, routed)
    return steps


def _make_plan(root, first, outputs, accumulate_grad, fusing):
    """The Plan of a backward from `root` (a plain backward of a structure planned
    before reuses that plan: no dependency count, schedule or segmentation)."""
    known = fused_plan = None
    if fusing and outputs is None:
        known = structure(root, first)
        fused_plan = _plans.get(known[0])
        if fused_plan is not None:
            nodes = known[1]
            return Plan([nodes[k] for k in fused_plan[0]], None, {}, fused_plan[1])
    captures, run = {}, None  # None: run every node
    if outputs is not None:
        targets = set()
        for i, e in enumerate(outputs):
            if e is not None:
                targets.add(e[0])
                if not accumulate_grad:
                    captures.setdefault(e[0], []).append((e[1], i))
        should = _needed(root, targets)
        run = should if accumulate_grad else {n for n in should
                                              if n not in captures or _leads(n, should)}
    order = _schedule(root, _deps(root), run, captures)
    steps = _plan_steps(order, run, captures) if fusing else [(0, len(order), None)]
    if known is not None:
        pos = {n: j for j, n in enumerate(known[1])}
        with _plans_lock:
            _plans[known[0]] = ([pos[n] for n in order], steps)
            while len(_plans) > _MAX_PLANS:
                _plans.popitem(last=False)
    return Plan(order, run, captures, steps)


_MAX_PLANS = 256
_plans = collections.OrderedDict()  # structure key -> (schedule, steps), LRU
_plans_lock = threading.Lock()


def structure(root, first):
    """A plain backward's graph read in one pass into a key that fixes it up to renaming,
    with the nodes in discovery order: (key, nodes). Discovery order is a function of the
    structure; each node's signature (or type and edge count) fixes its edges; the
    sequence-number ranks fix the schedule's ties; the Python-point flags fix the
    segments."""
    nodes = [root]
    pos = {root: 0}
    parts = []
    for n in nodes:
        sig = n._sig
        if sig is None:
            parts.append((type(n), len(n._next)))
        else:
            parts.append(sig)
            # flags only where they can differ from "fusable, untapped" (a tuple: no
            # edge index or signature looks like one)
            if n._pre_hooks or n._post_hooks or n._tensor_pre_hooks or n._retain_hooks \
                    or type(n) is AccumulateGrad:
                parts.append((n._fusable(), n._tapped()))
        for e in n._next:
            if e is None:
                parts.append(-1)
                continue
            c = e[0]
            j = pos.get(c)
            if j is None:
                j = pos[c] = len(nodes)
                nodes.append(c)
            parts.append(j)
            parts.append(e[1])
    seqs = [n._seq for n in nodes]
    key = (tuple(parts), tuple(sorted(range(len(nodes)), key=seqs.__getitem__)),
           None if isinstance(root, GraphRoot) else tuple(g is not None for g in first))
    return key, nodes


def _execute(root_edges, root_grads, retain_graph, create_graph, outputs=None,
             accumulate_grad=True):
    """Run backward from `root_edges` seeded with `root_grads`.

    outputs: edges `(node, input_nr)` (or None) whose gradients autograd.grad returns,
    or, with accumulate_grad, the only AccumulateGrad/retain_grad targets to run.
    Returns the captured gradients (one per output edge) when accumulate_grad is False.
    """
    if len(root_edges) == 1:
        root, nr = root_edges[0]
        first = [None] * len(root._meta_in)
        first[nr] = root_grads[0]
    else:
        root = GraphRoot(root_edges, root_grads)
        first = []
    # (under a dual level, formulas run as ops: their tangents are forward-over-reverse)
    # (under autocast, formulas run as ops too: they are cast, and no traced one keeps casts)
    # (in a torch.compile trace, a segment's own compile would be wasted: the program
    # the trace makes is compiled whole)
    fusing = not create_graph and not ANOMALY.enabled and fused.ENABLED and \
        not fused.OFF.depth and not FWD.active and not (AUTOCAST.n and AUTOCAST.tl.active) \
        and COMPILING.rec is None
    plan = _make_plan(root, first, outputs, accumulate_grad, fusing)
    captured = [None] * (len(outputs) if outputs is not None else 0)
    prev_mode = get_state()
    set_enabled(create_graph)
    # last: torch's checkpoint_valid (no inputs= / autograd.grad here or in an outer backward)
    _TASKS.stack.append((next(_task_ids), plan.order, plan.captures,
                         outputs is None and is_checkpoint_valid()))
    try:
        _run_plan(plan, root, first, captured, retain_graph)
    finally:
        _TASKS.stack.pop()
        restore_state(prev_mode)
    return captured


def _run_plan(plan, root, first, captured, retain_graph):
    """Execute the plan's steps in order: a segment fused when it can be, anything else
    node by node, summing gradients in per-node input buffers. After user code may have
    run (a step run node by node), a changed hook set re-plans the steps left."""
    buffers = {root: first}
    order, run, captures, steps = plan.order, plan.run, plan.captures, plan.steps
    generation = HOOK_GENERATION.n
    fn = None
    i = 0
    try:
        while i < len(steps):
            start, stop, seg = steps[i]
            i += 1
            if seg is not None:
                if fused.run(seg, order, buffers, captured, retain_graph, _make):
                    continue
                fused.COUNTS["segments_node_by_node"] += 1
                t0, compiles = time.perf_counter(), EXECUTABLES.compiles
            for p in range(start, stop):
                fn = order[p]
                _run_node(fn, buffers, run, captures, captured, retain_graph)
            if seg is not None and EXECUTABLES.compiles == compiles:
                fused.observe(seg, time.perf_counter() - t0)  # (NOTE [when to fuse])
            if HOOK_GENERATION.n != generation and i < len(steps):
                generation = HOOK_GENERATION.n
                steps = steps[:i] + _plan_steps(order, run, captures, stop)
    except Exception:
        if ANOMALY.enabled and fn is not None:
            anomaly_report(fn)  # torch's print_stack for the node that failed
        raise


class _Tasks(threading.local):
    def __init__(self):
        self.stack = []  # (task id, nodes that will execute) of the running backward calls


_TASKS = _Tasks()
_task_ids = itertools.count()


def current_graph_task_id():
    """The id of the backward running in this thread (-1 outside backward)."""
    return _TASKS.stack[-1][0] if _TASKS.stack else -1


def is_checkpoint_valid():
    """torch.autograd._is_checkpoint_valid: False inside a backward given inputs (autograd.grad,
    backward(inputs=...)) or nested in one, where reentrant checkpoint cannot run."""
    return not _TASKS.stack or _TASKS.stack[-1][3]


def will_execute(node):
    """Whether `node` runs (or is captured) in the backward running in this thread
    (torch's _will_engine_execute_node, with its error for a leaf autograd.grad captures)."""
    if not _TASKS.stack:
        return False
    _, order, captures, _ = _TASKS.stack[-1]
    if node not in order:  # the schedule (a list)
        return False
    if node in captures and all(e is None for e in node._next):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not "
                           "supported.")
    return True


def _deps(root):
    """How many edges lead to each node reachable from root."""
    deps = {}
    stack = [root]
    while stack:
        for e in stack.pop()._next:
            if e is not None:
                c = e[0]
                if c in deps:
                    deps[c] += 1
                else:
                    deps[c] = 1
                    stack.append(c)
    return deps


def _schedule(root, deps, run, captures):
    """The order nodes execute in. It depends on the graph alone (dependency counts,
    sequence numbers, pruning), never on gradient values, so it is computed up front:
    a node becomes ready when all its consumers ran; the ready node with the highest
    sequence_nr goes first (AccumulateGrad's is the maximum). Consumes `deps`."""
    order = []
    ready = [(-root._seq, 0, root)]
    tie = 1
    while ready:
        fn = heapq.heappop(ready)[2]
        order.append(fn)
        if run is not None and fn not in run:
            continue
        for e in fn._next:
            if e is None:
                continue
            c = e[0]
            d = deps[c] - 1
            deps[c] = d
            if d == 0 and (run is None or c in run or c in captures):
                heapq.heappush(ready, (-c._seq, tie, c))
                tie += 1
    return order


PROFILING = False  # a profiler records: nodes go through PROFILE_NODE (NOTE [profiler events])
PROFILE_NODE = None


def _run_node(fn, buffers, run, captures, captured, retain_graph, _profiled=False):
    """Run one node: its tensor hooks, captures, then (if it executes) torch's
    call_function; its outputs go to the input buffers of the nodes they flow to."""
    if PROFILING and not _profiled:
        return PROFILE_NODE(fn, buffers, run, captures, captured, retain_graph)
    grads = buffers.pop(fn, None)
    if grads is None:
        grads = [None] * len(fn._meta_in)
    cap = captures.get(fn) if captures else None
    raw = grads
    if fn._tensor_pre_hooks or fn._retain_hooks:
        grads = _tensor_pre_hooks(fn, grads)
    if run is not None and fn not in run:
        for nr, idx in cap or ():  # a skipped node: captured after tensor hooks
            captured[idx] = grads[nr]
        return
    for nr, idx in cap or ():  # torch captures an executed node's raw buffer
        captured[idx] = raw[nr]
    out = _call(fn, grads, run, captures)
    if not retain_graph:
        fn._release()
    for i, e in enumerate(fn._next):
        if e is None:
            continue
        g = out[i]
        if g is None:
            continue
        c, nr = e
        if run is not None and c not in run and c not in captures:
            continue
        buf = buffers.get(c)
        if buf is None:
            buf = buffers[c] = [None] * len(c._meta_in)
        old = buf[nr]
        buf[nr] = g if old is None else GRAD_OPS.add(old, g)


def _leads(node, should):
    return any(e is not None and e[0] in should for e in node._next)


def _tensor_pre_hooks(fn, grads):
    """Hooks of the tensors this node's inputs are the gradients of (Tensor.register_hook:
    one dict per tensor, in the order of their first hooks, each in registration order),
    called even on a None gradient; then retain_grad's (as torch's call_tensor_pre_hooks)."""
    grads = list(grads)
    pre = fn._tensor_pre_hooks
    if pre:
        for nr, hooks in list(pre.items()):
            for hook in list(hooks.values()):
                g = grads[nr]
                r = hook(g)
                if r is not None and r is not g:
                    grads[nr] = _check_single(hook, g, r)
    retain = fn._retain_hooks  # read now: a tensor hook may have called retain_grad()
    if retain:
        for nr, hook in list(retain.items()):
            if grads[nr] is not None:
                hook(grads[nr])
    return grads


def _check_tuple(hook, old, new):
    """torch's check_result: a node pre- or post-hook's replacement gradients."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(new)}, but expected {len(old)})")
    for o, n in zip(old, new):
        if n is not None:
            _check_single(hook, o, n)
    return new


def _call(fn, grads, run=None, captures=None):
    """torch's call_function after the tensor hooks (and retain_grad): node pre-hooks,
    the node, its outputs validated, node post-hooks (which see the node's inputs after
    the pre-hooks and, from a generated node, None for the edges this backward prunes)."""
    if fn._pre_hooks:
        go = tuple(grads)
        for hook in list(fn._pre_hooks.values()):
            r = hook(go)
            if r is not None and r is not go:
                go = _check_tuple(hook, go, r)
        grads = list(go)
    out = fn.apply(grads) if not ANOMALY.enabled else run_checked(fn, fn.apply, grads)
    out = _validate(fn, list(out))
    if fn._post_hooks:
        if run is not None and fn._builtin:
            out = [g if e is not None and (e[0] in run or e[0] in captures) else None
                   for g, e in zip(out, fn._next)]
        out_t = tuple(out)
        go = tuple(grads)
        for hook in list(fn._post_hooks.values()):
            r = hook(out_t, go)
            if r is not None and r is not out_t:
                out_t = _check_tuple(hook, out_t, r)
        out = list(out_t)
    return out
