"""torch.autograd.profiler_util: the profiler's events (`FunctionEvent`), their averages
(`FunctionEventAvg`) and the list that tabulates and exports them (`EventList`).

>>> import eagergrad as torch
>>> from eagergrad.autograd.profiler_util import EventList, FunctionEvent
>>> outer = FunctionEvent(id=0, name="outer", thread=1, start_us=0, end_us=10)
>>> inner = FunctionEvent(id=1, name="inner", thread=1, start_us=2, end_us=5)
>>> events = EventList([outer, inner])
>>> events._build_tree()
>>> inner.cpu_parent is outer, outer.self_cpu_time_total
(True, 7)
"""
import bisect
import itertools
import json
import math
import warnings
from collections import defaultdict, namedtuple
from operator import attrgetter
from typing import Any, NamedTuple

from ._profiler_backend import DeviceType
from .._torch_names import module_getattr

__all__ = ["EventList", "EventMetadata", "FormattedTimesMixin", "Interval", "Kernel",
           "FunctionEvent", "FunctionEventAvg", "StringTable", "MemRecordsAcc"]

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"
_DEVICE_TYPES = (DeviceType.CUDA, DeviceType.PrivateUse1, DeviceType.MTIA, DeviceType.HPU,
                 DeviceType.XPU)


def _device_attr(name):
    return name.replace("cuda", "device").replace("xpu", "device").replace("privateuse1",
                                                                          "device")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with table(), key_averages(),
    total_average(), export_chrome_trace() and export_stacks()."""

    def __init__(self, *args, **kwargs):
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._tree_built = False
        self._with_flops = with_flops

    def _build_tree(self):
        self._populate_cpu_children()
        self._remove_dup_nodes()
        self._set_backward_stacktraces()
        self._tree_built = True

    def __str__(self):
        return self.table()

    def _remove_dup_nodes(self):
        """Fold a child into its parent of the same name when it is the only child."""
        while True:
            drop = set()
            for i, evt in enumerate(self):
                p = evt.cpu_parent
                if p is not None and p.name == evt.name and len(p.cpu_children) == 1:
                    p.cpu_children = evt.cpu_children
                    p.kernels = evt.kernels
                    for ch in evt.cpu_children:
                        ch.cpu_parent = p
                    drop.add(i)
            if not drop:
                return
            kept = [e for i, e in enumerate(self) if i not in drop]
            self.clear()
            self.extend(kept)

    def _populate_cpu_children(self):
        """Parent/child links by interval nesting, per (thread, node): an event is a child
        of the innermost event whose interval holds its own."""
        sync = sorted((e for e in self if not e.is_async and e.device_type == DeviceType.CPU),
                      key=attrgetter("thread"))
        for _, evts in itertools.groupby(sync, key=lambda e: (e.thread, e.node_id)):
            stack = []
            for evt in sorted(evts, key=lambda e: [e.time_range.start, -e.time_range.end]):
                while stack:
                    parent = stack[-1]
                    if evt.time_range.start >= parent.time_range.end or \
                            evt.time_range.end > parent.time_range.end:
                        stack.pop()
                        continue
                    parent.append_cpu_child(evt)
                    if evt.cpu_parent is not None:
                        raise AssertionError(
                            f"There is already a CPU parent event for {evt.key}")
                    evt.set_cpu_parent(parent)
                    break
                stack.append(evt)

    def _set_backward_stacktraces(self):
        """A backward event's stack: that of the forward op with its sequence number."""
        def bw_parent(evt):
            while evt is not None and evt.scope != 1:
                evt = evt.cpu_parent
            return evt

        fwd = {}
        for evt in self:
            if bw_parent(evt) is None and evt.stack is not None:
                fwd.setdefault((evt.sequence_nr, evt.thread), evt.stack)
        for evt in self:
            p = bw_parent(evt)
            if p is not None:
                if p.fwd_thread is None:
                    raise AssertionError("Expected fwd_thread to be set for backward parent")
                evt.stack = fwd.get((p.sequence_nr, p.fwd_thread), [])

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The events as torch's table: sort_by an attribute (`cpu_time_total`,
        `self_cpu_time_total`, `count`, `cpu_memory_usage`...), at most row_limit rows."""
        return _build_table(self, sort_by=sort_by, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            profile_memory=self._profile_memory, with_flops=self._with_flops,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (a JSON list of complete events)."""
        device = "cuda" if not self._use_device else self._use_device
        out, next_id = [], 0
        for evt in self:
            if evt.trace_name is None:
                continue
            tid = evt.thread if not evt.is_remote else \
                f" node_id:{evt.node_id}, thread_id:{evt.thread} "
            out.append({"name": evt.trace_name, "ph": "X", "ts": evt.time_range.start,
                        "dur": evt.time_range.elapsed_us(), "tid": tid,
                        "pid": "CPU functions", "args": {}})
            for _ in evt.kernels:
                out.append({"name": evt.trace_name, "ph": "s", "ts": evt.time_range.start,
                            "tid": evt.thread, "pid": "CPU functions", "id": next_id,
                            "cat": f"cpu_to_{device}", "args": {}})
                next_id += 1
        with open(path, "w") as f:
            json.dump(out, f)

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """Write each event's stack (outermost first, ';'-joined) and its metric."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        table = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for evt in self:
                if evt.stack:
                    value = getattr(evt, _device_attr(metric))
                    if int(value) > 0:
                        line = ";".join(e.translate(table) for e in reversed(evt.stack))
                        f.write(f"{line} {int(value)}\n")

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events averaged per name (and input shapes, stack, overload if asked)."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [str(evt.key), str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_overload_name:
                key.append(evt.overload_name)
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        avg = EventList(stats.values(), use_device=self._use_device,
                        profile_memory=self._profile_memory, with_flops=self._with_flops)
        for evt in avg:
            evt.stack = evt.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                evt.input_shapes = ""
            if not group_by_overload_name:
                evt.overload_name = ""
        return avg

    def total_average(self):
        """All events summed into one FunctionEventAvg keyed "Total"."""
        total = FunctionEventAvg()
        for evt in self:
            total += evt
            total.key = None
        total.key = "Total"
        return total


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        if time_us != 0:
            raise AssertionError(f"Expected time_us == 0 but got {time_us}")
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes * 1.0 / size:.2f} {unit}"
    return str(nbytes) + " B"


def _attr_formatter(name):
    return property(lambda self: _format_time(getattr(self, name)))


def _deprecated_property(fn, message):
    def get(self):
        warnings.warn(message, FutureWarning, stacklevel=2)
        return fn(self)
    return property(get)


class FormattedTimesMixin:
    """cpu_time / device_time (averages per call) and the *_str formatted times."""
    cpu_time_str = _attr_formatter("cpu_time")
    device_time_str = _attr_formatter("device_time")
    cpu_time_total_str = _attr_formatter("cpu_time_total")
    device_time_total_str = _attr_formatter("device_time_total")
    self_cpu_time_total_str = _attr_formatter("self_cpu_time_total")
    self_device_time_total_str = _attr_formatter("self_device_time_total")

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else 1.0 * self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else 1.0 * self.device_time_total / self.count

    cuda_time = _deprecated_property(
        lambda self: self.device_time,
        "`cuda_time` is deprecated, please use `device_time` instead.")


class Interval:
    """[start, end] in microseconds."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class EventMetadata(NamedTuple):
    """A device event's metadata (kernels, memory copies, collectives): torch's fields."""
    registers_per_thread: Any
    shared_memory: Any
    grid: Any
    block: Any
    priority: Any
    blocks_per_sm: Any
    warps_per_sm: Any
    occupancy: Any
    est_occupancy_pct: Any
    queued: Any
    graph_id: Any
    graph_node_id: Any
    stream: Any
    context: Any
    channel: Any
    channel_type: Any
    bytes: Any
    bandwidth_gb_s: Any
    collective_name: Any
    dtype: Any
    in_msg_nelems: Any
    out_msg_nelems: Any
    in_split_size: Any
    out_split_size: Any
    global_rank_start: Any
    global_rank_stride: Any
    group_size: Any
    process_group_name: Any
    process_group_desc: Any
    group_ranks: Any
    rank: Any
    src_rank: Any
    dst_rank: Any
    seq: Any
    is_async: Any


class FunctionEvent(FormattedTimesMixin):
    """One profiled function: an op, a record_function range, a backward node, a Python
    call; times in microseconds from the trace's start."""

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None,
                 input_shapes=None, stack=None, scope=0, use_device=None, cpu_memory_usage=0,
                 device_memory_usage=0, is_async=False, is_remote=False, sequence_nr=-1,
                 node_id=-1, device_type=DeviceType.CPU, device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None,
                 concrete_inputs=None, kwinputs=None, is_user_annotation=False,
                 is_python_function=False, activity_type=None, metadata_json=None,
                 flow_id=None, flow_type=None, flow_start=None, external_id=0,
                 linked_correlation_id=0, extra_meta=None, structured_input_shapes=None,
                 structured_input_strides=None, input_dtypes=None, python_id=-1,
                 python_parent_id=-1, python_module_id=-1):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        self.activity_type = activity_type
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1
        self._metadata_json = metadata_json
        self.flow_id = flow_id
        self.flow_type = flow_type
        self.flow_start = flow_start
        self.external_id = external_id
        self.linked_correlation_id = linked_correlation_id
        self.event_metadata = None
        if extra_meta:
            fields = {f: extra_meta.get(f) for f in EventMetadata._fields}
            if any(v is not None for v in fields.values()):
                self.event_metadata = EventMetadata(**fields)
        self.structured_input_shapes = structured_input_shapes
        self.structured_input_strides = structured_input_strides
        self.input_dtypes = input_dtypes
        self.python_id = python_id
        self.python_parent_id = python_parent_id
        self.python_module_id = python_module_id

    def append_kernel(self, name, device, duration):
        if self.device_type != DeviceType.CPU:
            raise AssertionError("Expected device_type to be CPU")
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child):
        """Add a direct child (self times subtract the children's)."""
        if self.device_type != DeviceType.CPU:
            raise AssertionError("Expected device_type to be CPU")
        if not isinstance(child, FunctionEvent):
            raise AssertionError("Expected child to be a FunctionEvent")
        if child.device_type != DeviceType.CPU:
            raise AssertionError("Expected child device_type to be CPU")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        """Set the direct parent (the event is not top-level then)."""
        if self.device_type != DeviceType.CPU:
            raise AssertionError("Expected device_type to be CPU")
        if not isinstance(parent, FunctionEvent):
            raise AssertionError("Expected parent to be a FunctionEvent")
        if parent.device_type != DeviceType.CPU:
            raise AssertionError("Expected parent device_type to be CPU")
        self.cpu_parent = parent

    @property
    def self_cpu_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.device_memory_usage - sum(c.device_memory_usage
                                              for c in self.cpu_children)

    metadata_json = _deprecated_property(
        lambda self: self._metadata_json,
        "`metadata_json` is deprecated. Use `event_metadata` instead.")
    self_cuda_memory_usage = _deprecated_property(
        lambda self: self.self_device_memory_usage,
        "`self_cuda_memory_usage` is deprecated. Use `self_device_memory_usage` instead.")

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self):
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        if self.device_type == DeviceType.CPU:
            if not self.is_legacy:
                return sum(k.duration for k in self.kernels) + \
                    sum(c.device_time_total for c in self.cpu_children)
            return sum(k.duration for k in self.kernels)
        if self.device_type not in _DEVICE_TYPES:
            raise AssertionError("Expected device_type to be CUDA, PrivateUse1, MTIA, HPU or "
                                 f"XPU, but got {self.device_type}")
        return self.time_range.elapsed_us()

    cuda_time_total = _deprecated_property(
        lambda self: self.device_time_total,
        "`cuda_time_total` is deprecated. Use `device_time_total` instead.")

    @property
    def self_device_time_total(self):
        if self.is_async or not self.use_device:
            return 0
        if self.device_type == DeviceType.CPU:
            return self.device_time_total - sum(c.device_time_total
                                                for c in self.cpu_children)
        if self.device_type not in _DEVICE_TYPES:
            raise AssertionError("Expected device_type to be CUDA, PrivateUse1, MTIA, HPU or "
                                 f"XPU, but got {self.device_type}")
        return self.device_time_total

    self_cuda_time_total = _deprecated_property(
        lambda self: self.self_device_time_total,
        "`self_cuda_time_total` is deprecated. Use `self_device_time_total` instead.")

    @property
    def key(self):
        return self.name

    def __repr__(self):
        d = self.use_device
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"overload_name={self.overload_name} device_type={self.device_type} "
                f"node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={str([c.id for c in self.cpu_children])} "
                f"{d}_time={self.device_time_str} name={self.name} thread={self.thread} "
                f"input_shapes={str(self.input_shapes)} "
                f"cpu_memory_usage={self.cpu_memory_usage} "
                f"{d}_memory_usage={self.device_memory_usage} is_async={self.is_async} "
                f"is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """The statistics of several FunctionEvents of one key, summed (`count` calls)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0

    def add(self, other):
        if self.key is None:  # the first event: its fields
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        d = "cuda" if not self.use_device else self.use_device
        return (f"<FunctionEventAvg key={self.key} "
                f"self_cpu_time={self.self_cpu_time_total_str} cpu_time={self.cpu_time_str} "
                f" self_{d}_time={self.self_device_time_total_str} "
                f"{d}_time={self.device_time_str} input_shapes={str(self.input_shapes)} "
                f"cpu_memory_usage={self.cpu_memory_usage} "
                f"{d}_memory_usage={self.device_memory_usage}>")


class StringTable(defaultdict):
    """Demangled names, memoized (eagergrad's names are not mangled: themselves)."""

    def __missing__(self, key):
        self[key] = key
        return key


class MemRecordsAcc:
    """The memory records (pairs [record, used]; a record has start_ns()) in an interval."""

    def __init__(self, mem_records):
        self._mem_records = mem_records
        self._start_nses = []
        self._indices = []
        if mem_records:
            tmp = sorted((r[0].start_ns(), i) for i, r in enumerate(mem_records))
            self._start_nses, self._indices = (list(x) for x in zip(*tmp))

    def in_interval(self, start_ns, end_ns):
        """The records with start_ns <= their time <= end_ns."""
        lo = bisect.bisect_left(self._start_nses, start_ns)
        hi = bisect.bisect_right(self._start_nses, end_ns)
        for i in range(lo, hi):
            yield self._mem_records[self._indices[i]]


def _filter_stack_entry(entry):
    filtered = [("autograd/__init__", "_make_grads"), ("autograd/__init__", "backward"),
                ("torch/tensor", "backward"), ("_internal/common_utils", "prof_callable"),
                ("_internal/common_utils", "prof_func_call"),
                ("_internal/common_utils", "prof_meth_call")]
    return all(not (a in entry and b in entry) for a, b in filtered)


def _filter_name(name):
    return name in (MEMORY_EVENT_NAME, OUT_OF_MEMORY_EVENT_NAME,
                    "profiler::_record_function_enter", "profiler::_record_function_enter_new",
                    "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr",
                    "aten::_version")


def _rewrite_name(name, with_wildcard=False):
    if with_wildcard and name.startswith("ProfilerStep#"):
        return "ProfilerStep*"
    return name


def _time_str(time_us, default, unit):
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return default


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, with_flops=False,
                 profile_memory=False, top_level_events_only=False, time_unit=None):
    """torch's table of events (FunctionEvent or FunctionEventAvg): same columns, widths
    and formats."""
    if len(events) == 0:
        return ""
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage > 0 for e in events)
    use_device = events[0].use_device
    if not use_device and has_device_time:
        raise RuntimeError("use_device is None, but there is device performance data.")
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0
                           for e in events)
    has_overload_names = any(e.overload_name is not None and len(e.overload_name) > 0
                             for e in events)
    if sort_by is not None:
        events = EventList(sorted(events, key=lambda e: getattr(e, _device_attr(sort_by)),
                                  reverse=True),
                           use_device=use_device, profile_memory=profile_memory,
                           with_flops=with_flops)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    width = 12
    stacks = [e.stack for e in events if e.stack is not None and len(e.stack) > 0]
    has_stack = len(stacks) > 0
    src_width = None
    if has_stack:
        src_width = max(max(len(entry) for entry in s) for s in stacks) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name"] + (["Overload Name"] if has_overload_names else []) + [
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    device_name = use_device.upper() if use_device is not None else "None"
    if has_device_time:
        headers += [f"Self {device_name}", f"Self {device_name} %", f"{device_name} total",
                    f"{device_name} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            headers += [f"{device_name} Mem", f"Self {device_name} Mem"]
    headers.append("# of Calls")
    append_node_id = any(e.node_id != -1 for e in events)
    if append_node_id:
        headers.append("Node ID")

    spacing = 2
    row_format, header_sep, line_length = "", "", -spacing

    def add_column(padding, text_dir=">"):
        nonlocal row_format, header_sep, line_length
        row_format += "{: " + text_dir + str(padding) + "}" + " " * spacing
        header_sep += "-" * padding + " " * spacing
        line_length += padding + spacing

    add_column(name_width)
    if has_overload_names:
        add_column(name_width)
    for _ in headers[1 + has_overload_names:]:
        add_column(width)
    if has_input_shapes:
        headers.append("Input Shapes")
        add_column(shapes_width)
    if has_stack:
        headers.append("Source Location")
        add_column(src_width, text_dir="<")
    flops_scale = 1.0
    if with_flops:
        raw = [e.flops for e in events if e.flops > 0]
        if raw:
            units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
            log = max(0, min(math.log10(min(raw)) / 3, float(len(units) - 1)))
            flops_scale = pow(10, math.floor(log) * -3.0)
            headers.append(f"Total {units[int(log)]}")
            add_column(width)
        else:
            with_flops = False

    sum_self_cpu = 0
    sum_self_device = 0
    for e in events:
        sum_self_cpu += e.self_cpu_time_total
        if e.device_type == DeviceType.CPU and e.is_legacy:
            sum_self_device += e.self_device_time_total
        elif e.device_type in (DeviceType.CUDA, DeviceType.PrivateUse1, DeviceType.MTIA,
                               DeviceType.XPU) and not e.is_user_annotation:
            sum_self_device += e.self_device_time_total

    result = []

    def append(s):
        result.append(s)
        result.append("\n")

    if header is not None:
        append("=" * line_length)
        append(header)
    if top_level_events_only:
        append("=" * line_length)
        append("This report only display top-level ops statistics")
    append(header_sep)
    append(row_format.format(*headers))
    append(header_sep)

    def trim_path(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        e.self_cpu_percent = _format_time_share(e.self_cpu_time_total, sum_self_cpu)
        e.total_cpu_percent = _format_time_share(e.cpu_time_total, sum_self_cpu) \
            if not e.is_async else 0
        row = [name]
        if has_overload_names:
            ov = e.overload_name
            if max_name_column_width is not None and len(ov) >= max_name_column_width - 3:
                ov = ov[:max_name_column_width - 3] + "..."
            row.append(ov)
        row += [e.self_cpu_percent,
                _time_str(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
                e.total_cpu_percent,
                _time_str(e.cpu_time_total, e.cpu_time_total_str, time_unit),
                _time_str(e.cpu_time, e.cpu_time_str, time_unit)]
        if has_device_time:
            e.total_device_percent = _format_time_share(e.self_device_time_total,
                                                        sum_self_device)
            row += [_time_str(e.self_device_time_total, e.self_device_time_total_str,
                              time_unit),
                    e.total_device_percent,
                    _time_str(e.device_time_total, e.device_time_total_str, time_unit),
                    _time_str(e.device_time, e.device_time_str, time_unit)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                row += [_format_memory(e.device_memory_usage),
                        _format_memory(e.self_device_memory_usage)]
        row.append(e.count)
        if append_node_id:
            row.append(e.node_id)
        if has_input_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if with_flops:
            row.append("--" if e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        if has_stack:
            row.append(trim_path(e.stack[0]) if len(e.stack) > 0 else "")
        append(row_format.format(*row))
        if has_stack:
            empty = [""] * (len(headers) - 1)
            for entry in e.stack[1:]:
                append(row_format.format(*(empty + [trim_path(entry)])))
            empty.append("")
            append(row_format.format(*empty))

    append(header_sep)
    append(f"Self CPU time total: "
           f"{_time_str(sum_self_cpu, _format_time(sum_self_cpu), time_unit)}")
    if has_device_time:
        append(f"Self {use_device.upper() if use_device is not None else 'None'} time total: "
               f"{_time_str(sum_self_device, _format_time(sum_self_device), time_unit)}")
    return "".join(result)


__getattr__ = module_getattr("eagergrad.autograd.profiler_util",
                             "torch.autograd.profiler_util")
