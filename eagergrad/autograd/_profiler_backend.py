"""The recorder behind torch.profiler and torch.autograd.profiler (torch's `_C._autograd` /
`_C._profiler` side): the enums, and sessions that collect events while they record.

NOTE [profiler events]: while a session records, `ops/_table.py`'s `PROFILING` is True and
every `call_op` goes through `_profiled_call` (one event per op, named `aten::<torch name>`,
its time taken after blocking on the outputs, so that it is the op's and not the next
op's), and the engine's `_run_node` through `_profiled_node` (torch's
`autograd::engine::evaluate_function: <node>` around `<node>`, scope BACKWARD_FUNCTION).
The recording thread's backwards run node by node (`fused.OFF`), as under anomaly mode, so
that every node has its events. Without a session the hot paths pay one module-level
boolean check. Events nest by their intervals (torch's `EventList._build_tree`); the clock
(`_now`) is strictly increasing, so that a child's interval is strictly inside its
parent's. Memory records (profile_memory) are +nbytes of each new output array and
-nbytes when that array is freed (`weakref.finalize`), attributed to every event whose
interval holds them, as torch's allocator records are.

What differs from torch's events: only the recording thread's events are kept (as torch);
an op event is eagergrad's op (`aten::mm` for torch.matmul of matrices, with none of
torch's nested helper ops such as `aten::resolve_conj`); factories (`torch.ones`,
`torch.randn`, backward's implicit `ones_like`) and in-place ops' writes do not go through
the op table (no `aten::ones`; `x.add_(y)` shows as `aten::add`); ops jax runs while
tracing a kernel (a backward node's first run) are not executions and record nothing, so a
node's ops appear under it only when its formulas run as ops (create_graph=True); a
node's event also holds the summing of its outputs into the next nodes' buffers.
"""
import enum
import itertools
import os
import sys
import threading
import time
import weakref

from jaxlib._jax import ArrayImpl as _ArrayImpl  # (a concrete array's class)


class _Enum(enum.Enum):
    """A pybind11 enum's behaviour: named members, int() gives the value, not equal to ints."""

    def __int__(self):
        return self.value

    __index__ = __int__


class DeviceType(_Enum):
    """torch.autograd.DeviceType (c10::DeviceType)."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20


class ProfilerActivity(_Enum):
    """torch.profiler.ProfilerActivity: the activity groups a profiler can trace."""
    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


class ProfilerState(_Enum):
    """torch.autograd.ProfilerState."""
    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class RecordScope(_Enum):
    """torch.profiler.RecordScope (at::RecordScope): what recorded an event."""
    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9


class ProfilerConfig:
    """ProfilerConfig(state, report_input_shapes, profile_memory, with_stack, with_flops,
    with_modules, experimental_config, trace_id=''): a profiler's settings (torch's)."""

    def __init__(self, state, report_input_shapes, profile_memory, with_stack, with_flops,
                 with_modules, experimental_config, trace_id=""):
        self._settings = (state, bool(report_input_shapes), bool(profile_memory),
                          bool(with_stack), bool(with_flops), bool(with_modules),
                          experimental_config, trace_id)


class ProfilerEvent:
    """torch.autograd.ProfilerEvent: an event of torch's legacy profiler, made by the
    profiler only (no constructor, as torch's)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("torch._C._autograd.ProfilerEvent: No constructor defined!")


def supported_activities():
    """The activities eagergrad can trace: CPU (no device profiler)."""
    return {ProfilerActivity.CPU}


# ---- clock and threads ------------------------------------------------------------------
_last = [0]


def _now():
    """perf_counter_ns, strictly increasing across calls."""
    t = time.perf_counter_ns()
    if t <= _last[0]:
        t = _last[0] + 1
    _last[0] = t
    return t


_TIDS = {}  # native thread id -> torch's small thread id (1, 2, ...)
_tid_count = itertools.count(1)


def _tid():
    n = threading.get_native_id()
    t = _TIDS.get(n)
    if t is None:
        t = _TIDS.setdefault(n, next(_tid_count))
    return t, n


class Rec:
    """One raw event: a closed interval [start, end] in ns on one thread."""
    __slots__ = ("name", "cat", "start", "end", "tid", "os_tid", "scope", "seq", "shapes",
                 "dtypes", "strides", "flops", "stack", "args")

    def __init__(self, name, cat, start, end, tid, os_tid, scope=0, seq=-1):
        self.name, self.cat, self.start, self.end = name, cat, start, end
        self.tid, self.os_tid, self.scope, self.seq = tid, os_tid, scope, seq
        self.shapes = self.dtypes = self.strides = self.stack = self.args = None
        self.flops = 0


# ---- sessions ------------------------------------------------------------------------------
ACTIVE = []  # the sessions recording now


class Session:
    """The events of one recording (torch's profiler result). python_stack: trace Python
    calls as events (torch.profiler's with_stack); op_stack: each op event keeps the
    Python stack it was called from (the legacy profiler's with_stack)."""

    def __init__(self, record_shapes=False, profile_memory=False, with_flops=False,
                 python_stack=False, op_stack=False):
        self.record_shapes = record_shapes or with_flops
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.python_stack = python_stack
        self.op_stack = op_stack
        self.cpu = True  # toggle_collection_dynamic
        self.recs = []
        self.mem = []    # (ns, nbytes, thread)
        self.recording = False
        self.start_ns = self.end_ns = None
        self.wall_offset_ns = 0
        self.saved = False  # (a trace is exported once, as torch's)
        self._finalizers = []
        self._py = threading.local()
        self._prev_profile = None
        self._thread = None

    def start(self):
        if self.start_ns is None:
            self.start_ns = _now()
            self.wall_offset_ns = time.time_ns() - time.perf_counter_ns()
        self.recording = True
        self._thread = threading.get_ident()
        ACTIVE.append(self)
        from ..engine import fused
        fused.OFF.depth += 1  # (NOTE [profiler events]: node by node)
        _update_hooks()
        if self.python_stack:
            _start_python_tracer(self)

    def stop(self):
        if not self.recording:
            return
        if self.python_stack:
            _stop_python_tracer(self)
        self.recording = False
        self.end_ns = _now()
        if self in ACTIVE:
            ACTIVE.remove(self)
        _update_hooks()
        if threading.get_ident() == self._thread:
            from ..engine import fused
            fused.OFF.depth -= 1
        for f in self._finalizers:
            f.detach()
        self._finalizers = []

    # -- recording
    def add(self, rec):
        self.recs.append(rec)

    def alloc(self, arr, ns, tid):
        n = int(arr.nbytes)
        self.mem.append((ns, n, tid))
        try:
            self._finalizers.append(weakref.finalize(arr, self._freed, n))
        except TypeError:  # (not weakly referenceable)
            pass

    def _freed(self, n):
        if self.recording:
            self.mem.append((_now(), -n, _tid()[0]))


_run = {}  # the unprofiled call_op and _run_node (imported late: the package's order)


def _update_hooks():
    from ..engine import engine
    from ..ops import _table
    on = bool(ACTIVE)
    _run["op"], _run["node"] = _table.call_op, engine._run_node
    _table.PROFILE, engine.PROFILE_NODE = _profiled_call, _profiled_node
    _table.PROFILING = engine.PROFILING = on


def is_enabled():
    return bool(ACTIVE)


def _here():
    """The sessions recording this thread's CPU events (torch's profiler records the
    thread that started it)."""
    me = threading.get_ident()
    return [s for s in ACTIVE if s.cpu and s._thread == me]


# ---- ops --------------------------------------------------------------------------------
# eagergrad op names that are not torch's aten name (an overload of it, or an internal op)
_ATEN = {
    "_rnn_transpose_": "transpose_", "add_scalar": "add", "sub_scalar": "sub",
    "mul_scalar": "mul", "div_scalar": "div", "div_mode": "div", "rsub_scalar": "rsub",
    "pow_scalar": "pow", "pow_tensor": "pow", "as_strided_view": "as_strided",
    "bernoulli_p": "bernoulli", "bernoulli_float_fill": "bernoulli_",
    "bernoulli_tensor_fill": "bernoulli_", "cauchy_fill": "cauchy_",
    "exponential_fill": "exponential_", "geometric_fill": "geometric_",
    "log_normal_fill": "log_normal_", "normal_fill": "normal_", "random_fill": "random_",
    "random_from_fill": "random_", "random_to_fill": "random_", "uniform_fill": "uniform_",
    "clamp_tensor": "clamp", "copysign_scalar": "copysign", "fft_c2c": "_fft_c2c",
    "fft_c2r": "_fft_c2r", "fft_r2c": "_fft_r2c", "fill": "fill_", "fill_tensor": "fill_",
    "fill_functional": "fill", "fill_tensor_functional": "fill", "zero": "zero_",
    "copy": "copy_", "floor_divide_scalar": "floor_divide", "fmod_scalar": "fmod",
    "histogram_bins": "histogram", "index_put_acc": "index_put", "lerp_scalar": "lerp",
    "mask_index": "index", "mask_take": "index", "mask_index_put": "index_put",
    "mask_put": "index_put", "mask_put_seq": "index_put", "masked_fill_tensor": "masked_fill",
    "max_dim": "max", "min_dim": "min", "mean_dim": "mean", "median_dim": "median",
    "nanmedian_dim": "nanmedian", "prod_dim": "prod", "sum_dim": "sum",
    "native_batch_norm_legit": "_native_batch_norm_legit",
    "native_batch_norm_legit_no_stats": "_native_batch_norm_legit",
    "norm_scalaropt_dim": "norm", "normal_float_tensor": "normal",
    "normal_tensor_float": "normal", "remainder_rscalar": "remainder",
    "remainder_scalar": "remainder", "round_decimals": "round", "scatter_reduce_arg": "scatter",
    "scatter_value": "scatter", "scatter_value_reduce": "scatter", "sort_stable": "sort",
    "special_xlog1py_scalar_other": "special_xlog1py",
    "special_xlog1py_scalar_self": "special_xlog1py",
    "special_zeta_scalar_other": "special_zeta", "special_zeta_scalar_self": "special_zeta",
    "squeeze0": "squeeze", "squeeze1": "squeeze", "squeeze2": "squeeze", "squeeze4": "squeeze",
    "squeeze0_copy": "squeeze_copy", "squeeze1_copy": "squeeze_copy",
    "squeeze2_copy": "squeeze_copy", "squeeze_dim_": "squeeze_", "squeeze_dims_": "squeeze_",
    "unsqueeze_fresh": "unsqueeze", "xlogy_tensor": "xlogy",
    "xlogy_tensor_scalar_other": "xlogy", "xlogy_tensor_scalar_self": "xlogy",
    # eagergrad's view machinery (reading or writing through a view): no torch op
    "view_gather": None, "view_scatter": None, "view_write": None,
}
_NAMES = {}  # OpDef -> event name (None: no event)


def aten_name(op):
    """The name torch's profiler gives the op: `aten::<torch's op name>`."""
    try:
        return _NAMES[op]
    except KeyError:
        base = _ATEN.get(op.name, op.name)
        name = _NAMES[op] = None if base is None else "aten::" + base
        return name


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _flops(name, shapes):
    """torch's estimate (profiler/util.cpp computeFlops) for the ops it knows."""
    try:
        if name == "aten::mm":
            (m, k), (_, n) = shapes[0], shapes[1]
            return 2 * m * k * n
        if name == "aten::addmm":
            (m, k), (_, n) = shapes[1], shapes[2]
            return 2 * m * k * n
        if name == "aten::bmm":
            (b, m, k), (_, _, n) = shapes[0], shapes[1]
            return 2 * b * m * k * n
        if name == "aten::baddbmm":
            (b, m, k), (_, _, n) = shapes[1], shapes[2]
            return 2 * b * m * k * n
        if name in ("aten::mul", "aten::add"):
            return _numel(shapes[0])
    except (ValueError, IndexError, TypeError):
        return 0
    return 0


def _arrays(out):
    from ..tensor import Tensor
    for t in (out if isinstance(out, (tuple, list)) else (out,)):
        if isinstance(t, Tensor):
            st = t._storage
            if st is not None:
                yield t, st.array


def _block(out):
    for _, a in _arrays(out):
        b = getattr(a, "block_until_ready", None)
        if b is not None:
            try:
                b()
            except Exception:  # noqa: BLE001 - a tracer or a deleted buffer: nothing to wait
                pass


def _profiled_call(op, tensors, attrs):
    """call_op while a session records (NOTE [profiler events])."""
    call_op = _run["op"]
    sessions = _here()
    name = aten_name(op)
    if not sessions or name is None:
        return call_op(op, tensors, attrs, True)
    tid, os_tid = _tid()
    start = _now()
    try:
        out = call_op(op, tensors, attrs, True)
        _block(out)
    except BaseException:
        end = _now()
        for s in sessions:
            s.add(Rec(name, "cpu_op", start, end, tid, os_tid))
        raise
    t_alloc = _now()
    end = _now()
    for _, a in _arrays(out):
        if a.__class__ is not _ArrayImpl:
            return out  # jax tracing a kernel or a transform: no op runs (no event)
        break
    seq = -1
    for t, _ in _arrays(out):
        fn = t._grad_fn
        if fn is not None:
            seq = getattr(fn, "_seq", -1)
        break
    for s in sessions:
        rec = Rec(name, "cpu_op", start, end, tid, os_tid, 0, seq)
        if s.record_shapes:
            rec.shapes = [list(t._shape) for t in tensors] + [[] for _ in attrs]
            rec.dtypes = [t.dtype.cpp_name for t in tensors] + ["Scalar"] * len(attrs)
            rec.strides = [list(t.stride()) for t in tensors] + [[] for _ in attrs]
            if s.with_flops:
                rec.flops = _flops(name, rec.shapes)
        if s.op_stack:
            rec.stack = _python_stack()
        if s.profile_memory:
            ins = {id(t._storage) for t in tensors}
            for t, a in _arrays(out):
                if id(t._storage) not in ins and hasattr(a, "nbytes"):
                    ins.add(id(t._storage))
                    s.alloc(a, t_alloc, tid)
        s.add(rec)
    return out


def _profiled_node(fn, buffers, run, captures, captured, retain_graph):
    """The engine's _run_node while a session records: torch's evaluate_function event
    around the node's (scope BACKWARD_FUNCTION)."""
    _run_node = _run["node"]
    sessions = _here()
    if not sessions:
        return _run_node(fn, buffers, run, captures, captured, retain_graph, True)
    name = fn.name()
    seq = -1 if name == "torch::autograd::AccumulateGrad" else getattr(fn, "_seq", -1)
    if run is not None and fn not in run:  # only captured (autograd.grad): torch's outer event
        start = _now()
        _run_node(fn, buffers, run, captures, captured, retain_graph, True)
        end = _now()
        tid, os_tid = _tid()
        for s in sessions:
            s.add(Rec("autograd::engine::evaluate_function: " + name, "cpu_op", start, end,
                      tid, os_tid, 0, seq))
        return None
    grads = buffers.get(fn)
    tid, os_tid = _tid()
    start = _now()
    inner = _now()
    try:
        _run_node(fn, buffers, run, captures, captured, retain_graph, True)
        for e in fn._next:
            if e is not None:
                _block(tuple(g for g in buffers.get(e[0]) or () if g is not None))
    finally:
        inner_end = _now()
        end = _now()
        for s in sessions:
            outer = Rec("autograd::engine::evaluate_function: " + name, "cpu_op", start, end,
                        tid, os_tid, 0, seq)
            node = Rec(name, "cpu_op", inner, inner_end, tid, os_tid, 1, seq)
            if s.record_shapes:
                outer.shapes = []
                node.shapes = [[] if g is None else list(g._shape)
                               for g in (grads or [None] * len(fn._meta_in))]
            s.add(outer)
            s.add(node)


# ---- record_function ------------------------------------------------------------------------
def range_enter(name, args=None):
    """Open a user range (record_function) in the recording sessions; a handle for exit."""
    if not ACTIVE:
        return None
    sessions = tuple(_here())
    tid, os_tid = _tid()
    stack = _python_stack() if any(s.op_stack for s in sessions) else None
    return (name, args, sessions, tid, os_tid, stack, _now())


def range_exit(handle):
    if handle is None:
        return
    name, args, sessions, tid, os_tid, stack, start = handle
    end = _now()
    for s in sessions:
        if s.recording:
            rec = Rec(name, "user_annotation", start, end, tid, os_tid, 7)
            rec.args = args
            if s.op_stack:
                rec.stack = stack
            if s.record_shapes:
                rec.shapes = []
            s.add(rec)


# ---- Python stacks ---------------------------------------------------------------------------
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the eagergrad package
# frames of eagergrad's dispatch layer (torch's is C++, absent from its stacks)
_DISPATCH = tuple(os.path.join(_HERE, p) for p in ("ops" + os.sep, "tensor.py",
                                                    "_tensor_methods.py", "autograd" + os.sep +
                                                    "_profiler_backend.py"))


def _python_stack():
    """The Python stack, innermost first, as the legacy profiler's entries:
    'path(line): function', without eagergrad's dispatch frames."""
    out = []
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_DISPATCH):
            out.append(f"{fn}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


def _prefixes():
    import site
    raw = list(sys.path)
    try:
        raw += site.getsitepackages() + [site.getuserbase(), site.getusersitepackages()]
    except AttributeError:
        pass
    raw.append(os.path.dirname(_HERE))
    return [p + os.sep for p in sorted({os.path.abspath(p) for p in raw if isinstance(p, str)},
                                       reverse=True)]


_PY_NAMES = {}  # code object -> event name


def _py_name(code, prefixes, line=None):
    """'<file, from its sys.path entry>(<line>): <function>' (torch's python tracer): the
    line is the function's first, or for a frame already running, its current line."""
    name = _PY_NAMES.get(code) if line is None else None
    if name is None:
        fn = code.co_filename
        for p in prefixes:
            if fn.startswith(p):
                fn = fn[len(p):]
                break
        name = f"{fn}({code.co_firstlineno if line is None else line}): {code.co_name}"
        if line is None:
            _PY_NAMES[code] = name
    return name


_ME = os.path.abspath(__file__)


def _start_python_tracer(session):
    """torch.profiler's with_stack: every Python call and builtin call as an event
    (torch's python tracer), the frames already running included."""
    prefixes = _prefixes()
    py = session._py

    def tracer(frame, event, arg):
        if not session.recording:
            sys.setprofile(getattr(session, "_prev_profile", None))
            return
        if frame.f_code.co_filename == _ME:
            return  # (the recorder's own frames and their builtin calls)
        stack = getattr(py, "stack", None)
        if stack is None:
            stack = py.stack = []
        if event == "call":
            stack.append((frame, _py_name(frame.f_code, prefixes), _now()))
        elif event == "c_call":
            stack.append(((frame, None), repr(arg), _now()))
        else:  # return, c_return, c_exception: close the frame's (or its builtin's) event
            c = event != "return"
            for i in range(len(stack) - 1, -1, -1):
                k = stack[i][0]
                if (k[0] is frame) if (c and k.__class__ is tuple) else (not c and k is frame):
                    _, name, start = stack.pop(i)
                    tid, os_tid = _tid()
                    session.add(Rec(name, "python_function", start, _now(), tid, os_tid))
                    break

    # the frames running now, outermost first (torch records them from the start)
    frames = []
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename != _ME:
            frames.append(f)
        f = f.f_back
    now = _now()
    py.stack = [(f, _py_name(f.f_code, prefixes, f.f_lineno), now) for f in reversed(frames)]
    session._prev_profile = sys.getprofile()
    sys.setprofile(tracer)


def _stop_python_tracer(session):
    sys.setprofile(getattr(session, "_prev_profile", None))
    stack = getattr(session._py, "stack", None) or []
    end = _now()
    tid, os_tid = _tid()
    for _, name, start in reversed(stack):
        session.add(Rec(name, "python_function", start, end, tid, os_tid))
    session._py.stack = []
