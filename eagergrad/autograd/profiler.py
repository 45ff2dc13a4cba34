"""torch.autograd.profiler: `profile` records the ops, `record_function` ranges and backward
nodes run inside it (NOTE [profiler events] in `_profiler_backend.py`), `record_function`
labels a region (nothing when no profiler records, as in torch).

>>> import eagergrad as torch
>>> x = torch.ones(2, 3, requires_grad=True)
>>> with torch.autograd.profiler.profile() as prof:
...     with torch.autograd.profiler.record_function("forward"):
...         y = (x * 2).sum()
...     y.backward()
>>> [e.name for e in prof.function_events if e.cpu_parent is None]
['forward', 'autograd::engine::evaluate_function: SumBackward0', \
'autograd::engine::evaluate_function: MulBackward0', \
'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad']
>>> [(e.key, e.count) for e in prof.key_averages()][:3]
[('forward', 1), ('aten::mul', 1), ('aten::sum', 1)]
"""
import contextlib
import gzip
import json
import os
import socket
import uuid
import warnings
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass
from time import perf_counter_ns

from . import _profiler_backend as _backend
from ._profiler_backend import (DeviceType, ProfilerActivity, ProfilerConfig,  # noqa: F401
                                ProfilerState, supported_activities as _supported_activities)
from .profiler_util import (MEMORY_EVENT_NAME, EventList, FunctionEvent,
                            MemRecordsAcc, _filter_stack_entry, _rewrite_name)
from .._torch_names import missing, module_getattr

# (torch's, without load_nvprof and parse_nvprof_trace: eagergrad has no nvprof reader)
__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "EnforceUnique",
           "KinetoStepTracker", "EventList", "FunctionEvent", "MemRecordsAcc"]

# whether a profiler runs (torch's fast Python check)
_is_profiler_enabled = False


def _set_is_profiler_enabled(enable):
    global _is_profiler_enabled
    _is_profiler_enabled = enable


def _run_on_profiler_start():
    _set_is_profiler_enabled(True)


def _run_on_profiler_stop():
    _set_is_profiler_enabled(False)


def kineto_available():
    """True, as torch's CPU build: the profiler records CPU activity (traces in Kineto's
    Chrome format)."""
    return True


@dataclass
class _ProfilerStats:
    "Profiler timing and stats (torch's)."
    profiling_window_duration_sec: float = 0
    number_of_events: int = 0
    profiler_prepare_call_duration_us: int = 0
    profiler_enable_call_duration_us: int = 0
    profiler_disable_call_duration_us: int = 0
    parse_kineto_call_duration_us: int = 0
    function_events_build_tree_call_duration_us: int = 0


_VALID_DEVICES = ("cuda", "xpu", "mtia", "hpu")


class profile:
    """profile(enabled=True, *, use_device=None, record_shapes=False, with_flops=False,
    profile_memory=False, with_stack=False, with_modules=False, use_kineto=False,
    use_cpu=True, acc_events=False, ...): a context manager recording the CPU events of
    the code inside (eagergrad's ops as `aten::<name>`, record_function ranges, backward
    nodes); `key_averages().table()` summarizes them.

    record_shapes: each op's input shapes (tensors', then `[]` per non-tensor argument);
    with_flops: torch's estimate for mm, addmm, bmm, baddbmm, mul, add; profile_memory:
    the bytes of each op's new outputs, and their release; with_stack: Python calls as
    events (torch's Python tracer); with_modules records nothing in eager mode (torch's
    too: TorchScript only).
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        if not self.enabled:
            return
        if experimental_config is not None:
            raise missing("torch.autograd.profiler.profile(experimental_config=...)")
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            self.use_device = "cuda"
        else:
            self.use_device = use_device
        self._function_events = None
        self._old_function_events = None
        self._needs_processing = False
        self.entered = False
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.experimental_config = None
        self.kineto_results = None
        self.profiling_start_time_ns = 0
        self.profiling_end_time_ns = 0
        self._stats = _ProfilerStats()
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.activity_filters = activity_filters or {}
        self.trace_id = ""
        if not self.use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto "
                                 "(use_kineto=True)")
        if self.use_device is not None:
            if self.use_device not in _VALID_DEVICES:
                warnings.warn(f"The {self.use_device} is not a valid device option.",
                              stacklevel=2)
                self.use_device = None
            elif self.use_device in ("cuda", "xpu", "hpu"):
                warnings.warn(f"{self.use_device.upper()} is not available, disabling "
                              f"{self.use_device.upper()} profiling", stacklevel=2)
                self.use_cuda = False
                self.use_device = None
        self.kineto_activities = set()
        if self.use_cpu:
            self.kineto_activities.add(ProfilerActivity.CPU)
        self.profiler_kind = ProfilerState.KINETO
        if self.use_device == "mtia":  # (not available: torch's error)
            raise AssertionError("Legacy MTIA profiling is not supported. Requires "
                                 "use_kineto=True on MTIA devices.")
        if len(self.kineto_activities) == 0:
            raise AssertionError("No activities specified for the profiler")
        if self.post_processing_timeout_s is not None and self.post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")
        self._session = None

    def default_trace_id(self):
        return f"{uuid.uuid4().int:032X}"

    def create_trace_id(self):
        if self.custom_trace_id_callback:
            return self.custom_trace_id_callback()
        return self.default_trace_id()

    def config(self, create_trace_id=False):
        if create_trace_id:
            self.trace_id = self.create_trace_id()
        return ProfilerConfig(self.profiler_kind, self.record_shapes, self.profile_memory,
                              self.with_stack, self.with_flops, self.with_modules,
                              self.experimental_config, self.trace_id)

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self):
        self.entered = True
        t0 = perf_counter_ns()
        self.config(create_trace_id=True)
        self._session = _backend.Session(self.record_shapes, self.profile_memory,
                                         self.with_flops, python_stack=self.with_stack)
        self._stats.profiler_prepare_call_duration_us = int((perf_counter_ns() - t0) / 1000)

    def _start_trace(self):
        self.entered = True
        _run_on_profiler_start()
        t0 = perf_counter_ns()
        if self._session is None:
            self._prepare_trace()
        self._session.start()
        t1 = perf_counter_ns()
        self._stats.profiler_enable_call_duration_us = int((t1 - t0) / 1000)
        self.profiling_start_time_ns = t1

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._needs_processing = True
        t0 = perf_counter_ns()
        if self._session is not None:
            self._session.stop()
        self.kineto_results = self._session
        self._stats.profiler_disable_call_duration_us = int((perf_counter_ns() - t0) / 1000)
        self.profiling_end_time_ns = t0
        _run_on_profiler_stop()
        self._stats.profiling_window_duration_sec = \
            (self.profiling_end_time_ns - self.profiling_start_time_ns) * 1.0 / 1e9
        if self.acc_events:
            self._ensure_function_events()
        return False

    def __repr__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    def _ensure_function_events(self):
        if self._function_events is not None:
            return
        self._needs_processing = False
        t0 = perf_counter_ns()
        parsed = _parse_session(self.kineto_results, self.use_device) \
            if self.kineto_results else []
        t1 = perf_counter_ns()
        self._stats.parse_kineto_call_duration_us = int((t1 - t0) / 1000)
        self._function_events = EventList(parsed, use_device=self.use_device,
                                          profile_memory=self.profile_memory,
                                          with_flops=self.with_flops)
        self._function_events._build_tree()
        self._stats.function_events_build_tree_call_duration_us = \
            int((perf_counter_ns() - t1) / 1000)
        self._stats.number_of_events = len(self._function_events)
        if self._old_function_events and self.acc_events:
            for evt in self._old_function_events:
                self._function_events.append(evt)
            self._old_function_events = None

    @property
    def function_events(self):
        if self._function_events is None or self._needs_processing:
            self._ensure_function_events()
        return self._function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._ensure_function_events()
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the trace as Kineto's Chrome trace JSON (gzipped for a '.gz' path)."""
        if self.kineto_results is None:
            raise AssertionError("Expected profiling results")
        if self.kineto_results.saved:  # (torch's result is saved once)
            raise RuntimeError("Trace is already saved.")
        _save_trace(self.kineto_results, path, metadata or {}, self.trace_id)
        self.kineto_results.saved = True

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._ensure_function_events()
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self._function_events.export_stacks(path, metric)

    def toggle_collection_dynamic(self, enabled, activities):
        """Turn the collection of CPU events (ops) off or on while recording."""
        if self._session is not None and ProfilerActivity.CPU in set(activities):
            self._session.cpu = bool(enabled)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._ensure_function_events()
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                  group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        self._ensure_function_events()
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events.total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self):
        """Total CPU time: the sum of all events' self times."""
        self._ensure_function_events()
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events.self_cpu_time_total


def _parse_session(session, use_device, legacy=False):
    """The FunctionEvents of a session's records (torch's _parse_kineto_results): times in
    us from the trace start, memory records summed into each event whose interval holds
    them, the others as top-level '[memory]' events; sorted by (start, -end)."""
    base = session.start_ns
    recs = sorted(session.recs, key=lambda r: (r.start, -r.end))
    mem = sorted(session.mem)
    times = [m[0] for m in mem]
    used = [False] * len(mem)
    events = []
    for i, r in enumerate(recs, 1):
        cpu_mem = 0
        if mem:
            for j in range(bisect_left(times, r.start), bisect_right(times, r.end)):
                cpu_mem += mem[j][1]
                used[j] = True
        events.append(FunctionEvent(
            id=i, name=_rewrite_name(r.name, with_wildcard=True),
            overload_name=None if legacy else "", trace_name=_rewrite_name(r.name),
            thread=r.tid, start_us=(r.start - base) / 1000, end_us=(r.end - base) / 1000,
            fwd_thread=r.tid, input_shapes=r.shapes or [],
            stack=[e for e in r.stack if _filter_stack_entry(e)] if r.stack else [],
            scope=r.scope,
            use_device=use_device, cpu_memory_usage=cpu_mem, sequence_nr=r.seq,
            device_type=DeviceType.CPU, flops=r.flops,
            is_user_annotation=(r.cat == "user_annotation" and not legacy),
            is_python_function=r.cat == "python_function", input_dtypes=r.dtypes,
            is_legacy=legacy,
            structured_input_shapes=r.shapes, structured_input_strides=r.strides))
    n = len(events)
    for j, (ns, nbytes, tid) in enumerate(mem):
        if not used[j]:
            n += 1
            t = (ns - base) / 1000
            events.append(FunctionEvent(
                id=n, name=MEMORY_EVENT_NAME, overload_name=None if legacy else "",
                trace_name=None, thread=tid, start_us=t, end_us=t, fwd_thread=tid,
                input_shapes=[], stack=[], scope=0, use_device=use_device,
                cpu_memory_usage=nbytes, sequence_nr=-1, device_type=DeviceType.CPU,
                is_legacy=legacy))
    events.sort(key=lambda e: [e.time_range.start, -e.time_range.end])
    return events


def _save_trace(session, path, metadata, trace_id):
    """Kineto's Chrome trace JSON of a session."""
    pid = os.getpid()
    off = session.wall_offset_ns
    base = session.start_ns
    end = session.end_ns if session.end_ns is not None else base
    base_time = (off + base) // 1_000_000_000 * 1_000_000_000

    def us(ns):  # trace timestamps: us since baseTimeNanoseconds
        return (off + ns - base_time) / 1000

    out = [{"ph": "M", "name": "process_name", "ts": us(base), "pid": pid, "tid": 0,
            "args": {"name": "python"}},
           {"ph": "M", "name": "process_labels", "ts": us(base), "pid": pid, "tid": 0,
            "args": {"labels": "CPU"}},
           {"ph": "M", "name": "process_sort_index", "ts": us(base), "pid": pid, "tid": 0,
            "args": {"sort_index": pid}}]
    for os_tid in sorted({r.os_tid for r in session.recs}):
        out.append({"ph": "M", "name": "thread_name", "ts": us(base), "pid": pid,
                    "tid": os_tid, "args": {"name": f"thread {os_tid} (python)"}})
        out.append({"ph": "M", "name": "thread_sort_index", "ts": us(base), "pid": pid,
                    "tid": os_tid, "args": {"sort_index": os_tid}})
    recs = sorted(session.recs, key=lambda r: (r.start, -r.end))
    fwd, flows = {}, []
    for i, r in enumerate(recs):
        ev = {"ph": "X", "cat": r.cat, "name": r.name, "pid": pid, "tid": r.os_tid,
              "ts": us(r.start), "dur": (r.end - r.start) / 1000}
        if r.cat == "python_function":
            args = {"Python parent id": None, "Python id": i + 1}
        else:
            args = {"External id": i + 1}
            if r.cat == "cpu_op":
                if r.seq >= 0:
                    args["Sequence number"] = r.seq
                args["Fwd thread id"] = 0
            args["Record function id"] = 0
            if r.shapes is not None and r.cat == "cpu_op":
                args["Concrete Inputs"] = [""] * len(r.shapes)
                args["Input type"] = r.dtypes or [""] * len(r.shapes)
                args["Input Strides"] = r.strides or [[] for _ in r.shapes]
                args["Input Dims"] = r.shapes
            if r.flops:
                args["flops"] = r.flops
        args["Ev Idx"] = i
        ev["args"] = args
        out.append(ev)
        if r.cat == "cpu_op" and r.seq >= 0:  # forward op -> backward node arrows
            if r.scope == 0 and not r.name.startswith("autograd::engine"):
                fwd.setdefault(r.seq, (r, i))
            elif r.scope == 1 and r.seq in fwd:
                fr = fwd[r.seq][0]
                flows.append({"ph": "s", "id": r.seq, "pid": pid, "tid": fr.os_tid,
                              "ts": us(fr.start), "cat": "fwdbwd", "name": "fwdbwd"})
                flows.append({"ph": "f", "id": r.seq, "pid": pid, "tid": r.os_tid,
                              "ts": us(r.start), "cat": "fwdbwd", "name": "fwdbwd",
                              "bp": "e"})
    out += flows
    for ns, nbytes, tid in session.mem:
        out.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                    "pid": pid, "tid": _os_tid(tid), "ts": us(ns),
                    "args": {"Bytes": nbytes, "Device Type": 0, "Device Id": -1}})
    out.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
                "tid": "PyTorch Profiler", "ts": us(base), "dur": (end - base) / 1000,
                "args": {"Op count": 0}})
    out.append({"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler",
                "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": us(base)})
    trace = {"schemaVersion": 1, "deviceProperties": [], "trace_id": trace_id}
    for k, v in metadata.items():
        try:
            trace[k] = json.loads(v) if isinstance(v, str) else v
        except ValueError:
            trace[k] = v
    trace.update({"host_name": socket.gethostname(), "displayTimeUnit": "ms",
                  "baseTimeNanoseconds": base_time, "traceEvents": out, "traceName": path})
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        json.dump(trace, f)


def _os_tid(tid):
    for n, t in _backend._TIDS.items():
        if t == tid:
            return n
    return tid


class record_function(contextlib.ContextDecorator):
    """record_function(name, args=None): label a region (context manager or decorator);
    a profiler recording shows it as a user annotation holding the region's events."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        self.record = _backend.range_enter(self.name, self.args)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return
        _backend.range_exit(self.record)
        self.record = None


class emit_itt:
    """emit_itt(enabled=True, record_shapes=False): torch's ITT annotation of every op for
    Intel VTune. eagergrad has no ITT: the ranges go nowhere (as torch's without VTune)."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        self.entered = True
        _run_on_profiler_start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        _run_on_profiler_stop()
        return False


class emit_nvtx:
    """emit_nvtx(enabled=True, record_shapes=False): NVTX ranges for nvprof; it needs CUDA
    (torch synchronizes CUDA on entry: torch's error without it)."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        from .. import cuda
        cuda.synchronize()
        _run_on_profiler_start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        from .. import cuda
        cuda.synchronize()
        _run_on_profiler_stop()
        return False


class EnforceUnique:
    """Raises an error if a key is seen more than once."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        """Observe a key; RuntimeError if it was seen before."""
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class KinetoStepTracker:
    """The global step count, the max over its requesters' counts (torch's)."""
    _current_step = 0
    _step_dict = defaultdict(int)

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        """Count a step of `requester`; returns the global step."""
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            delta = new_step - cls._current_step
            if delta > 1:
                warnings.warn("Profiler step count has increased more than 1 - "
                              f"current_step = {cls._current_step} step dict =  "
                              f"{cls._step_dict}", stacklevel=2)
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step


__getattr__ = module_getattr("eagergrad.autograd.profiler", "torch.autograd.profiler")
