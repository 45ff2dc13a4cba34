"""torch.profiler.profiler: `profile` (with schedules and `step()`), `schedule`,
`ProfilerAction`, `tensorboard_trace_handler`, over the recorder of
`eagergrad.autograd.profiler` (CPU activity only: eagergrad has no device profiler)."""
import os
import warnings
from enum import Enum
from functools import partial

from ..autograd import profiler as prof
from ..autograd._profiler_backend import ProfilerActivity, supported_activities
from .._torch_names import missing

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile"]  # (and torch's ExecutionTraceObserver, which eagergrad lacks)
PROFILER_STEP_NAME = "ProfilerStep"
_WARNINGS_SHOWN = set()


def _warn_once(msg, category=UserWarning, stacklevel=2):
    if msg not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(msg)
        warnings.warn(msg, category=category, stacklevel=stacklevel)


def _parse_activities(activities):
    """(set of activities, {activity: set of names}) from ProfilerActivity items and
    {activity: [names]} dicts (torch's)."""
    parsed, filters = set(), {}
    for item in activities:
        if isinstance(item, ProfilerActivity):
            if item in parsed:
                raise ValueError(f"Activity {item} specified more than once")
            parsed.add(item)
        elif isinstance(item, dict):
            for key, val in item.items():
                if key in parsed:
                    raise ValueError(f"Activity {key} specified more than once")
                parsed.add(key)
                filters[key] = set(val)
        else:
            raise TypeError(f"Expected ProfilerActivity or dict, got {type(item)}")
    return parsed, filters


class _KinetoProfile:
    """The profiler without a schedule: start()/stop(), the results of the last cycle."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            self.activities, self.activity_filters = _parse_activities(activities)
        else:
            self.activities = supported_activities()
            self.activity_filters = {}
        if experimental_config is not None:
            raise missing("torch.profiler.profile(experimental_config=...)")
        if execution_trace_observer is not None:
            raise missing("torch.profiler.profile(execution_trace_observer=...)")
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = None
        self.execution_trace_observer = None
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler = None
        self.has_cudagraphs = False
        self.mem_tl = None
        self.use_device = None
        for act, dev in ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
                         (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu"),
                         (ProfilerActivity.PrivateUse1, "privateuseone")):
            if act in self.activities:
                self.use_device = dev
                break
        self.preset_metadata = {}
        self._trace_metadata = {}

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        if self.profiler is not None and not self.acc_events:
            _warn_once("Warning: Profiler clears events at the end of each cycle. Only "
                       "events from the current cycle will be reported. To keep events "
                       "across cycles, set acc_events=True.")
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                use_cpu=ProfilerActivity.CPU in self.activities, use_device=self.use_device,
                record_shapes=self.record_shapes, with_flops=self.with_flops,
                profile_memory=self.profile_memory, with_stack=self.with_stack,
                with_modules=self.with_modules, use_kineto=True, acc_events=self.acc_events,
                custom_trace_id_callback=self.custom_trace_id_callback,
                post_processing_timeout_s=self.post_processing_timeout_s,
                activity_filters=self.activity_filters or None)
        self.profiler._prepare_trace()

    def start_trace(self):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler._start_trace()
        for flag in ("profile_memory", "with_stack", "record_shapes", "with_modules",
                     "with_flops"):
            if getattr(self, flag):
                self.add_metadata_json(flag, "1")
        for k, v in self.preset_metadata.items():
            self.add_metadata_json(k, v)

    def stop_trace(self):
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the last cycle's trace as Chrome trace JSON (gzipped for '.gz')."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        self.profiler.export_chrome_trace(path, self._trace_metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write the stacks of the events with `metric` (flame graph input)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)

    def toggle_collection_dynamic(self, enable, activities):
        """Stop or resume collecting the given activities (CPU: the ops) while recording."""
        if self.profiler is None:
            return
        self.profiler.toggle_collection_dynamic(enable, activities)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events averaged per name (and input shapes...): an EventList."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def events(self):
        """The unaggregated FunctionEvents of the last cycle."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler.function_events

    def add_metadata(self, key, value):
        """Add a string metadata entry to the trace."""
        self._trace_metadata[key] = '"' + value.replace('"', '\\"') + '"'

    def add_metadata_json(self, key, value):
        """Add a metadata entry (a JSON value) to the trace."""
        self._trace_metadata[key] = value

    def preset_metadata_json(self, key, value):
        """Metadata added to the trace when it starts."""
        self.preset_metadata[key] = value

    def get_trace_id(self):
        return None if self.profiler is None else self.profiler.trace_id

    def set_custom_trace_id_callback(self, callback):
        self.custom_trace_id_callback = callback

    def _memory_profile(self):
        raise missing("torch.profiler.profile._memory_profile")

    def export_memory_timeline(self, path, device=None):
        raise missing("torch.profiler.profile.export_memory_timeline")


class ProfilerAction(Enum):
    """What the profiler does at a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The step -> ProfilerAction function: skip `skip_first` steps, then cycles of `wait`
    idle, `warmup` and `active` recording steps (the last RECORD_AND_SAVE), `repeat` times
    (0: forever); skip_first_wait drops the first cycle's wait.

    >>> from eagergrad.profiler import schedule
    >>> [schedule(wait=1, warmup=1, active=2, repeat=1)(s).name for s in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod = step % num_steps
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An on_trace_ready handler writing each trace to
    `dir_name/<worker>.<ns>.pt.trace.json[.gz]` (worker: '<host>_<pid>')."""
    import socket
    import time

    def handler_fn(p):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        p.export_chrome_trace(os.path.join(dir_name, file_name),
                              use_python_export=use_python_export)

    return handler_fn


class profile(_KinetoProfile):
    """profile(*, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
    profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
    acc_events=False, ...): the profiler context manager. With a `schedule`, `step()`
    marks each step (a `ProfilerStep#<n>` range) and the schedule decides which steps are
    recorded; `on_trace_ready(prof)` runs at the end of each recorded cycle."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            acts = set()
            for item in activities:
                if isinstance(item, ProfilerActivity):
                    acts.add(item)
                elif isinstance(item, dict):
                    acts.update(item.keys())
        else:
            acts = supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            elif ProfilerActivity.CUDA in acts:
                acts.remove(ProfilerActivity.CUDA)
        if len(acts) == 0:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config,
                         execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events,
                         custom_trace_id_callback=custom_trace_id_callback,
                         post_processing_timeout_s=post_processing_timeout_s)
        if schedule:
            self.schedule = schedule
            self.record_steps = True  # ProfilerStep#<n> ranges in the trace and table
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        action = self.schedule(self.step_num)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the "
                             "profiler and must not be returned by a user-provided schedule")
        self.current_action = action
        self._prev_schedule_action = action
        A = ProfilerAction
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warnings.warn,
                                         "Incorrect schedule: WARMUP followed by NONE"),
                                 self.start_trace, self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warnings.warn,
                                         "Incorrect schedule: RECORD followed by NONE"),
                                 self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warnings.warn,
                                           "Incorrect schedule: RECORD followed by WARMUP"),
                                   self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready,
                                            self.prepare_trace, self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready,
                                                     self.prepare_trace, self.start_trace],
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }
        prof.KinetoStepTracker.init_step_count(PROFILER_STEP_NAME)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        prof.KinetoStepTracker.erase_step_count(PROFILER_STEP_NAME)

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Signal that the next step starts: end this step's range, act on the schedule's
        action for the next step."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        next_step = self.step_num + 1
        action = self.schedule(next_step)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the "
                             "profiler and must not be returned by a user-provided schedule")
        self.step_num = next_step
        self.current_action = action
        self._prev_schedule_action = action
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action)) or ():
            action()

    def _stats(self):
        return None if self.profiler is None else self.profiler._stats


def __getattr__(name):
    if name == "ExecutionTraceObserver":
        raise missing("torch.profiler.ExecutionTraceObserver")
    raise AttributeError(f"module 'eagergrad.profiler.profiler' has no attribute '{name}'")
