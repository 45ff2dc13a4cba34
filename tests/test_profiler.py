"""torch.profiler and torch.autograd.profiler against torch's, on the same programs: the
events seen (names, counts, nesting under record_function, backward nodes and their links
to forward ops), input shapes, memory and FLOPs, the table's columns, the schedule's
actions and cycles, Chrome traces, the legacy profiler's stacks. Never timings."""
import gzip
import json
import os
import re
import threading
import warnings

import pytest
import torch

import eagergrad as eg
from eagergrad.engine import engine as eg_engine
from eagergrad.ops import _table

LIBS = (torch, eg)


def both(fn):
    """fn(lib) with torch and with eagergrad: the two results, asserted equal."""
    want, got = fn(torch), fn(eg)
    assert got == want
    return want


def _depth(e):
    d = 0
    while e.cpu_parent is not None:
        d, e = d + 1, e.cpu_parent
    return d


def _children(events, name):
    return [c.name for c in next(e for e in events if e.name == name).cpu_children]


def _columns(table):
    """The header row of a profiler table, as its column names."""
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def _program(m, **options):
    x = m.ones(3, 4, requires_grad=True)
    w = m.ones(4, 5)
    with m.profiler.profile(**options) as prof:
        with m.profiler.record_function("fwd"):
            z = m.mm(x, w).exp().sum()
        z.backward()
    return prof


def test_ops_ranges_and_backward_nodes():
    def f(m):
        prof = _program(m, record_shapes=True)
        ev = prof.events()
        fwd = next(e for e in ev if e.name == "fwd")
        ops = [c for c in fwd.cpu_children]
        evaluate = [e for e in ev if e.name.startswith("autograd::engine::evaluate_function")]
        nodes = [(e.name, [(c.name, c.scope, _depth(c)) for c in e.cpu_children])
                 for e in evaluate]
        # a backward node's sequence number is its forward op's
        links = [(c.name, [o.name for o in ops if o.sequence_nr == c.sequence_nr])
                 for e in evaluate for c in e.cpu_children if c.sequence_nr >= 0]
        counts = {a.key: a.count for a in prof.key_averages()
                  if a.key in ("fwd", "aten::exp", "aten::sum") or "Backward" in a.key
                  or "AccumulateGrad" in a.key}
        shapes = {}  # (the forward op's: the first group of its name)
        for a in prof.key_averages(group_by_input_shape=True):
            if a.key in ("aten::mm", "aten::exp"):
                shapes.setdefault(a.key, a.input_shapes)
        return ([o.name for o in ops], [o.input_shapes for o in ops[:2]], nodes, links,
                counts, shapes, (fwd.scope, fwd.is_user_annotation, fwd.cpu_parent),
                _columns(prof.key_averages().table()),
                _columns(prof.key_averages(group_by_input_shape=True).table()),
                _depth(fwd), prof.key_averages().table(top_level_events_only=True,
                                                       row_limit=1).splitlines()[1])
    got = both(f)
    assert got[0] == ["aten::mm", "aten::exp", "aten::sum"]
    assert [n for n, _ in got[3]] == ["SumBackward0", "ExpBackward0", "MmBackward0"]
    assert not _table.PROFILING and not eg_engine.PROFILING  # (the hot paths' check is off)


def test_create_graph_backward_runs_ops_inside_nodes():
    def f(m):
        x = m.ones(3, 4, requires_grad=True)
        with m.profiler.profile() as prof:
            y = x.exp().sum()
            m.autograd.grad(y, x, create_graph=True)
        ev = prof.events()
        return [(e.name, [(c.name, [g.name for g in c.cpu_children]) for c in e.cpu_children])
                for e in ev if e.name.startswith("autograd::engine")]
    got = both(f)
    assert got[1] == ("autograd::engine::evaluate_function: ExpBackward0",
                      [("ExpBackward0", ["aten::mul"])])


def test_schedule_actions():
    def f(m):
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for wait in (0, 1, 2):
                for warmup in (0, 1):
                    for active in (1, 3):
                        for repeat in (0, 2):
                            for skip in (0, 3):
                                for skw in (0, 1):
                                    s = m.profiler.schedule(
                                        wait=wait, warmup=warmup, active=active, repeat=repeat,
                                        skip_first=skip, skip_first_wait=skw)
                                    out.append([s(i).name for i in range(25)])
        return out
    both(f)
    for kw in (dict(wait=-1, warmup=1, active=1), dict(wait=1, warmup=1, active=0),
               dict(wait=1, warmup=1, active=1, repeat=-1)):
        msgs = []
        for m in LIBS:
            with pytest.raises(AssertionError) as e:
                m.profiler.schedule(**kw)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    for m in LIBS:
        with pytest.warns(UserWarning, match="won't be using warmup"):
            m.profiler.schedule(wait=1, warmup=0, active=1)
        with pytest.raises(AssertionError, match="Step must be non-negative"):
            m.profiler.schedule(wait=1, warmup=1, active=1)(-1)


def test_steps_cycles_and_trace_ready():
    def f(m):
        P = m.profiler
        x, w = m.ones(3, 4), m.ones(4, 5)
        seen = []

        def ready(p):
            names = {e.trace_name for e in p.events()} - {"aten::resolve_conj"}
            seen.append((p.step_num, p.current_action.name, sorted(names)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sch = P.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
            with P.profile(schedule=sch, on_trace_ready=ready) as p:
                actions = []
                for i in range(10):
                    m.mm(x, w) if i % 2 else x.exp()
                    actions.append(p.current_action.name)
                    p.step()
            acc = P.profile(schedule=P.schedule(wait=0, warmup=0, active=1, repeat=3),
                            acc_events=True)
            with acc:
                for _ in range(4):
                    x.exp()
                    acc.step()
        counts = [(a.key, a.count) for a in acc.key_averages()]
        return seen, actions, counts, p.step_num
    seen, actions, counts, _ = both(f)
    assert [s[0] for s in seen] == [5, 9]
    assert counts == [("ProfilerStep*", 3), ("aten::exp", 3)]


def test_memory_and_flops():
    def f(m):
        x, w, v = m.ones(3, 4), m.ones(4, 5), m.ones(5)
        b1, b2, b3 = m.ones(2, 3, 4), m.ones(2, 4, 5), m.ones(2, 3, 5)
        with m.profiler.profile(profile_memory=True, with_flops=True) as p:
            a = m.mm(x, w)
            b = x.exp()
            del b
            c = x * x
            d = m.addmm(v, x, w)
            e = m.bmm(b1, b2)
            g = m.baddbmm(b3, b1, b2)
        top = [(e.name, e.cpu_memory_usage, e.flops) for e in p.events()
               if e.cpu_parent is None and e.name in ("aten::mm", "aten::exp", "[memory]",
                                                      "aten::mul", "aten::addmm", "aten::bmm",
                                                      "aten::baddbmm")]
        del a, c, d, e, g
        return top, _columns(p.key_averages().table())
    top, columns = both(f)
    assert ("aten::mm", 60, 120) in top and ("[memory]", -48, None) in top
    assert "Total FLOPs" in columns and "Self CPU Mem" in columns


def test_with_stack_traces_python_calls():
    def f(m):
        x, w = m.ones(3, 4), m.ones(4, 5)

        def inner():
            return m.mm(x, w)
        inner()  # (compiled before: jax's Python compiling it would be traced too)
        with m.profiler.profile(with_stack=True) as p:
            inner()
        ev = p.events()
        mm = next(e for e in ev if e.name == "aten::mm")
        here = os.path.basename(__file__)
        up, q = [], mm.cpu_parent
        while q is not None:
            if here in q.name:
                up.append((q.name, q.is_python_function))
            q = q.cpu_parent
        return up[0], mm.stack, mm.is_python_function
    (name, is_py), stack, _ = both(f)
    assert name.endswith(": inner") and is_py and stack == []


def test_legacy_profiler_stacks():
    def f(m):
        from importlib import import_module
        L = import_module(m.__name__ + ".autograd.profiler_legacy")
        x, w = m.ones(3, 4), m.ones(4, 5)

        def inner():
            return m.mm(x, w)
        with L.profile(with_stack=True, record_shapes=True) as p:
            inner()
        mm = next(e for e in p.function_events if e.name == "aten::mm")
        return mm.stack[0], mm.is_legacy, mm.input_shapes, repr(L.profile())
    stack, legacy, _, _ = both(f)
    assert stack.endswith(": inner") and legacy


def test_chrome_trace(tmp_path):
    def f(m):
        prof = _program(m, record_shapes=True)
        path = str(tmp_path / f"{m.__name__}.json")
        prof.export_chrome_trace(path)
        with open(path) as fh:
            trace = json.load(fh)
        evs = trace["traceEvents"]
        xs = {(e["cat"], e["name"]) for e in evs if e["ph"] == "X"
              and e["name"] in ("fwd", "aten::mm", "aten::exp", "MmBackward0",
                                "autograd::engine::evaluate_function: MmBackward0")}
        mm = next(e for e in evs if e.get("name") == "aten::mm")
        args = {k: v for k, v in mm["args"].items()
                if k in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")}
        flows = sorted({e["ph"] for e in evs if e.get("cat") == "fwdbwd"})
        try:
            prof.export_chrome_trace(path)
        except RuntimeError as e:
            again = str(e)
        gz = str(tmp_path / f"{m.__name__}.json.gz")
        _program(m, record_shapes=True).export_chrome_trace(gz)
        with gzip.open(gz, "rt") as fh:
            same_gz = [e["name"] for e in json.load(fh)["traceEvents"] if e["ph"] == "X"] == \
                [e["name"] for e in evs if e["ph"] == "X"]
        out = tmp_path / f"tb_{m.__name__}"
        handler = m.profiler.tensorboard_trace_handler(str(out), worker_name="w")
        with m.profiler.profile(on_trace_ready=handler):
            m.ones(2).exp()
        files = [re.sub(r"\d+", "N", n) for n in os.listdir(out)]
        return (sorted(trace), sorted(xs), sorted(mm["args"]), args, flows, again, same_gz,
                files)
    both(f)


def test_autograd_profiler_legacy_api():
    def f(m):
        A = m.autograd
        x = m.ones(3, 4, requires_grad=True)
        with A.profiler.profile(record_shapes=True) as prof:
            (x.exp() * x).sum().backward()
        off = A.profiler.profile(enabled=False)
        return (_columns(prof.key_averages().table(sort_by="self_cpu_time_total")),
                prof.total_average().count == len(prof.function_events),
                repr(A.profiler.profile()), str(A.profiler.profile()), off.__enter__(),
                type(prof.function_events).__name__, prof.self_cpu_time_total > 0)
    both(f)


def test_profiler_controls():
    def f(m):
        P = m.profiler
        x = m.ones(3, 4)
        with P.profile() as p:
            x.exp()
            p.toggle_collection_dynamic(False, [P.ProfilerActivity.CPU])
            x.sin()
            p.toggle_collection_dynamic(True, [P.ProfilerActivity.CPU])
            x.cos()
        toggled = [e.name for e in p.events()]

        @P.record_function("deco")
        def g(t):
            return t.exp()
        with P.profile() as p:
            g(x)
            g(x)
            th = threading.Thread(target=lambda: x.tan())  # (another thread: not recorded)
            th.start()
            th.join()
        deco = [(a.key, a.count) for a in p.key_averages()]
        with P.record_function("outside"):  # (no profiler: nothing recorded)
            x.exp()
        return toggled, deco
    both(f)


def test_names_enums_and_errors():
    def f(m):
        A, P = m.autograd, m.profiler
        enums = [(e.__name__, [(k, int(v)) for k, v in e.__members__.items()])
                 for e in (A.ProfilerActivity, A.ProfilerState, A.DeviceType)]
        same_objects = (P.ProfilerActivity is A.ProfilerActivity, P.DeviceType is A.DeviceType,
                        P.record_function is A.profiler.record_function,
                        A.ProfilerActivity.CPU == 0, repr(A.ProfilerActivity.CPU),
                        str(A.DeviceType.CPU), [a.name for a in P.ProfilerAction])
        out = [enums, same_objects, [a.name for a in P.supported_activities()],
               P.kineto_available(),
               A.kineto_available(), sorted(A.profiler_util.__all__),
               A.profiler_legacy.__all__]
        for call in (lambda: A.ProfilerEvent(),
                     lambda: A.profiler.emit_nvtx().__enter__(),
                     lambda: P.profile(activities=[P.ProfilerActivity.CUDA]).__enter__(),
                     lambda: P.profile(activities=[P.ProfilerActivity.CPU,
                                                   P.ProfilerActivity.CPU]),
                     lambda: P.profile(activities=["cpu"])):
            try:
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    call()
                out.append(("ok", [str(x.message) for x in w]))
            except Exception as e:  # noqa: BLE001 - the error is the result compared
                out.append((type(e).__name__, str(e).replace("eagergrad", "torch")))
        p = A.profiler.profile()
        with p:
            pass
        try:
            p.__enter__()
        except RuntimeError as e:
            out.append(str(e))
        with A.profiler.emit_itt():
            m.ones(1).exp()
        u = A.profiler.EnforceUnique()
        u.see(1, 2)
        try:
            u.see(1, 2)
        except RuntimeError as e:
            out.append(str(e))
        return out
    both(f)
    assert not eg.profiler.itt.is_available()  # (a build without ITT, as torch's error says)
    with pytest.raises(RuntimeError, match="ITT functions not installed"):
        eg.profiler.itt.range_push("x")
