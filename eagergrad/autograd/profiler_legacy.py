"""torch.autograd.profiler_legacy: the legacy profiler (deprecated in torch: use
torch.profiler). Its events carry the Python stack they ran from (with_stack) and
`is_legacy`; its Chrome trace is a plain list of events.

>>> import eagergrad as torch
>>> from eagergrad.autograd import profiler_legacy
>>> with profiler_legacy.profile() as prof:
...     y = torch.ones(2, 2).exp()
>>> [(e.name, e.is_legacy) for e in prof.function_events]
[('aten::exp', True)]
"""
from . import _profiler_backend as _backend
from ._profiler_backend import ProfilerConfig, ProfilerState
from .profiler_util import EventList

__all__ = ["profile"]


class profile:
    """DEPRECATED: use torch.profiler instead."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False):
        self.enabled = enabled
        if not self.enabled:
            return
        self.use_cuda = use_cuda
        self.function_events = None
        self.entered = False
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        if self.use_cuda:
            import warnings
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            self.use_cuda = False
        self.profiler_kind = ProfilerState.CPU
        self._session = None

    def config(self):
        return ProfilerConfig(self.profiler_kind, self.record_shapes, self.profile_memory,
                              self.with_stack, self.with_flops, self.with_modules, None)

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_trace()
        return self

    def _start_trace(self):
        self._session = _backend.Session(self.record_shapes, self.profile_memory,
                                         self.with_flops, op_stack=self.with_stack)
        self._session.start()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return None
        from .profiler import _parse_session
        self._session.stop()
        self.function_events = EventList(_parse_session(self._session, None, legacy=True),
                                         use_device=None, profile_memory=self.profile_memory,
                                         with_flops=self.with_flops)
        self.function_events._build_tree()
        return False

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished profiler_legacy.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished profile.profiler_legacy.profile>"
        return str(self.function_events)

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (a JSON list of events)."""
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self):
        """The sum of all events' self CPU times."""
        self._check_finish()
        return self.function_events.self_cpu_time_total
