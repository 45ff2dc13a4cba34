"""torch.Stream and torch.Event, the device-generic stream and event objects, as torch's
CPU build has them: a CPU (or meta) stream runs its work in order as it is issued, so it is
always done (`query()` is True, `synchronize()` waits for nothing, as eagergrad.cpu's); the
CPU backend records no events (torch's error), so an event is never recorded. Streams of a
device this machine lacks raise torch's error.

>>> import eagergrad as torch
>>> s = torch.Stream()
>>> s, s.query(), torch.Event().query()
(torch.Stream device_type=cpu, device_index=-1, stream_id=0, True, True)
"""
from . import cpu as _cpu
from . import cuda as _cuda
from .device import device as _device

# c10::DeviceType's numbers (Stream.device_type), by torch's device type names
_TYPES = ("cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla",
          "vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia",
          "privateuseone")
_LOCAL = ("cpu", "meta")  # the types whose streams torch's CPU build makes
_NO_HANDLE = "Backend doesn't support getting stream native handle."
_IPC = "torch.Event ipc is not supported yet, please open an issue if you need this!"


def _type_name(v):
    return type(v).__name__


def _check_type(cls, name, value, kind, position=None):
    ok = isinstance(value, bool) if kind is bool else \
        isinstance(value, int) and not isinstance(value, bool)
    if not ok:
        where = "" if position is None else f" (position {position})"
        raise TypeError(f"{cls}(): argument '{name}'{where} must be {kind.__name__}, not "
                        f"{_type_name(value)}")


def _device_type(cls, dev, keyword):
    """The device type a Stream/Event is made for: torch's CPU build makes them for the CPU
    and the meta device only."""
    if dev is None:
        return "cuda" if _cuda.is_available() else "cpu"  # (the current accelerator's)
    if not isinstance(dev, (str, _device, int)) or isinstance(dev, bool):
        where = "" if keyword else " (position 1)"
        raise TypeError(f"{cls}(): argument 'device'{where} must be torch.device, not "
                        f"{_type_name(dev)}")
    kind = _device(dev).type  # (an int: torch's accelerator error without one)
    if kind in _LOCAL:
        return kind
    if kind == "cuda" and _cuda.is_available():
        raise NotImplementedError(f"eagergrad does not implement torch.{cls} on cuda devices: "
                                  "jax orders the work on its devices itself")
    if kind == "lazy":
        raise RuntimeError("Backend doesn't support create a new Stream.")
    raise RuntimeError(f"PyTorch is not linked with support for {kind} devices")


def _args(cls, args, kwargs, names):
    if len(args) > 1:
        raise TypeError(f"{cls}() takes from 0 to 1 positional arguments but {len(args)} were "
                        "given")
    for k in kwargs:
        if k not in names:
            raise TypeError(f"{cls}() got an unexpected keyword argument '{k}'")
    if args and "device" in kwargs:
        raise TypeError(f"{cls}() got multiple values for argument 'device'")
    return (args[0], False) if args else (kwargs.get("device"), True)


def _no_events(kind):
    return RuntimeError(f"{kind} backend doesn't support events.")


def _sync(kind):
    if kind not in _LOCAL:  # (a stream made from its numbers, of a device this build lacks)
        raise RuntimeError(f"PyTorch is not linked with support for {kind} devices")
    _cpu.synchronize()


class Stream:
    """Stream(device=None, *, priority=0): an in-order queue of work on a device; on the
    CPU, work runs as it is issued. `Stream(stream_id=, device_index=, device_type=)` makes
    one from its numbers.

    >>> import eagergrad as torch
    >>> with torch.Stream("cpu") as s:
    ...     s.synchronize()
    """

    __slots__ = ("_kind", "_index", "_id")

    def __init__(self, *args, **kwargs):
        explicit = ("stream_id", "device_index", "device_type")
        if all(k in kwargs for k in explicit):
            if args:
                raise TypeError(f"Stream(): argument 'stream_id' (position 1) must be int, not "
                                f"{_type_name(args[0])}")
            for k in explicit + ("priority",):
                if k in kwargs:
                    _check_type("Stream", k, kwargs[k], int)
            for k in kwargs:
                if k not in explicit + ("priority",):
                    raise TypeError(f"Stream() got an unexpected keyword argument '{k}'")
            t = kwargs["device_type"]
            if not 0 <= t < len(_TYPES):
                raise RuntimeError("Expected isValidDeviceType(device_type) to be true, but got "
                                   "false.  (Could this error message be improved?  If so, "
                                   "please report an enhancement request to PyTorch.)")
            self._kind, self._index, self._id = _TYPES[t], kwargs["device_index"], \
                kwargs["stream_id"]
            return
        dev, keyword = _args("Stream", args, kwargs, ("device", "priority"))
        if "priority" in kwargs:
            _check_type("Stream", "priority", kwargs["priority"], int)
        self._kind, self._index, self._id = _device_type("Stream", dev, keyword), -1, 0

    @property
    def device(self):
        return _device(self._kind, None if self._index < 0 else self._index)

    @property
    def device_index(self):
        return self._index

    @property
    def device_type(self):
        return _TYPES.index(self._kind)

    @property
    def stream_id(self):
        return self._id

    @property
    def native_handle(self):
        raise RuntimeError(_NO_HANDLE)

    def query(self):
        """Whether all the work queued on this stream is done: True on the CPU."""
        if self._kind not in _LOCAL:
            raise RuntimeError(f"PyTorch is not linked with support for {self._kind} devices")
        return True

    def synchronize(self):
        """Wait for the work queued on this stream."""
        _sync(self._kind)

    def record_event(self, event=None):
        """Record `event` (a new one if None) on this stream: torch's CPU backend records no
        events (its error)."""
        if event is not None and not isinstance(event, Event):
            raise RuntimeError("expected event to be a torch.Event object")
        if event is None:
            event = Event(self.device)
        event.record(self)
        return event

    def wait_event(self, event):
        """Make later work on this stream wait for `event` (never recorded on the CPU: no
        wait)."""
        if not isinstance(event, Event):
            raise RuntimeError("expected event to be a torch.Event object")
        event.wait(self)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued on `stream` (through an
        event it records: torch's error on the CPU)."""
        if not isinstance(stream, Stream):
            raise RuntimeError("expected stream to be a torch.Stream object")
        self.wait_event(stream.record_event())

    def is_capturing(self):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __eq__(self, other):
        if not isinstance(other, Stream):
            return False
        return (self._kind, self._index, self._id) == (other._kind, other._index, other._id)

    def __hash__(self):
        return hash((self._kind, self._index, self._id))

    def __repr__(self):
        return (f"torch.Stream device_type={self._kind}, device_index={self._index}, "
                f"stream_id={self._id}")

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'torch.Stream' object")

    def __getattr__(self, name):
        raise AttributeError(f"'torch.Stream' object has no attribute '{name}'")


class Event:
    """Event(device=None, *, enable_timing=False, blocking=False, interprocess=False): a
    marker recorded on a stream to wait for or time work; torch's CPU backend records no
    events, so an Event there is never recorded (query() True, wait() and synchronize() do
    not wait, elapsed_time raises torch's error).

    >>> import eagergrad as torch
    >>> e = torch.Event(enable_timing=True)
    >>> e.query(), e.synchronize()
    (True, None)
    """

    __slots__ = ("_kind", "_timing")

    def __init__(self, *args, **kwargs):
        dev, keyword = _args("Event", args, kwargs,
                             ("device", "enable_timing", "blocking", "interprocess"))
        for k in ("enable_timing", "blocking", "interprocess"):  # (the last two: no-ops)
            if k in kwargs:
                _check_type("Event", k, kwargs[k], bool)
        self._kind = _device_type("Event", dev, keyword)
        self._timing = kwargs.get("enable_timing", False)

    @property
    def device(self):
        return _device(self._kind)

    @property
    def event_id(self):
        return 0

    def record(self, stream=None):
        """Record this event on `stream` (the current stream of its device if None)."""
        if stream is not None:
            if not isinstance(stream, Stream):
                raise RuntimeError("expected stream to be a torch.Stream object")
            if stream._kind != self._kind:
                raise RuntimeError(f"Event device type {self._kind.upper()} does not match "
                                   f"recording stream's device type {stream._kind.upper()}.")
        raise _no_events(self._kind)

    def wait(self, stream=None):
        """Make later work on `stream` wait for this event: never recorded, nothing to wait
        for."""

    def query(self):
        """Whether the work before the event's record is done: True (never recorded)."""
        return True

    def synchronize(self):
        """Wait until the event's work is done: never recorded, nothing to wait for."""

    def elapsed_time(self, end_event):
        """Milliseconds between this event's record and `end_event`'s: both must time and
        have been recorded (on the CPU they cannot be: torch's error)."""
        if not isinstance(end_event, Event):
            raise RuntimeError("expected other to be a torch.Event object")
        if not (self._timing and end_event._timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        raise NotImplementedError(_IPC)

    @classmethod
    def from_ipc_handle(cls, device, handle):
        raise NotImplementedError(_IPC)

    def __repr__(self):
        return (f"torch.Event device_type={self._kind}, device_index=-1, "
                f"event_flag={int(self._timing)}, event_id=0")

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'torch.Event' object")

    def __getattr__(self, name):
        raise AttributeError(f"'torch.Event' object has no attribute '{name}'")


Stream.__module__ = Event.__module__ = "eagergrad"
