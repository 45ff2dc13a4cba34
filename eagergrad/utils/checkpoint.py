"""torch.utils.checkpoint: activation checkpointing, trading compute for memory.

`checkpoint(fn, *args, use_reentrant=False)` runs `fn` keeping none of the tensors its ops
save for backward: saved-tensor hooks pack a small holder instead, and the first unpack in
a backward reruns `fn` (with the RNG state of the forward) to fill the holders, stopping as
soon as all of them are filled (torch's NOTE [ Nestable Checkpoint ] rules, nesting
included). `use_reentrant=True` is torch's older CheckpointFunction: forward under no_grad,
backward reruns `fn` under enable_grad and calls autograd.backward inside the backward.

Not as torch: `debug=True` gives the same errors as without (no operator traces: eagergrad
has no dispatch modes to log ops with), and selective checkpointing
(`create_selective_checkpoint_contexts`) is not implemented.
"""
import contextlib
import enum
import uuid
import warnings
import weakref
from collections import defaultdict

import jax

from .._torch_names import missing, module_getattr
from ..creation import get_rng_state, set_rng_state
from ..engine.engine import current_graph_task_id, execute, is_checkpoint_valid
from ..engine.function import Function
from ..engine.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..engine.saved import SavedTensor, saved_tensors_hooks
from ..nn import Sequential
from ..tensor import Tensor

__all__ = [
    "checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
    "check_backward_validity", "detach_variable", "get_device_states", "set_device_states",
    "noop_context_fn", "set_checkpoint_early_stop", "DefaultDeviceType",
    "set_checkpoint_debug_enabled", "CheckpointPolicy", "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts", "GraphExecGroup",
]

__getattr__ = module_getattr("eagergrad.utils.checkpoint", "torch.utils.checkpoint")

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Override `debug` of every checkpoint in the block (None: defer to each call)."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints whose forward runs in the block stop recomputing as
    soon as every needed tensor is recomputed (default True)."""
    global _enable_checkpoint_early_stop
    prev, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs):
    """The tuple with each tensor detached, keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG state checkpoint stashes besides the CPU's."""

    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """(device ids, RNG states) of the accelerators the tensors in args live on: eagergrad
    runs on the CPU, whose state checkpoint stashes apart."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    pass


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _get_rng_state():
    with jax.ensure_compile_time_eval():  # a concrete state under a jax trace too
        return get_rng_state()


@contextlib.contextmanager
def _rng_restored(state, enabled):
    """Run the block from RNG state `state`, then put the surrounding state back (torch's
    fork_rng + set_rng_state)."""
    if not enabled:
        yield
        return
    outer = _get_rng_state()
    with jax.ensure_compile_time_eval():
        set_rng_state(state)
    try:
        yield
    finally:
        with jax.ensure_compile_time_eval():
            set_rng_state(outer)


# ---- use_reentrant=True -------------------------------------------------------------------
class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _get_rng_state()
        ctx.inputs, ctx.tensor_indices, tensor_inputs = [], [], []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _rng_restored(getattr(ctx, "fwd_cpu_state", None), ctx.preserve_rng_state):
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, g in zip(outputs, args):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(g)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        # torch.autograd.backward(outputs_with_grad, args_with_grad), inside this backward
        execute([o._edge() for o in outputs_with_grad], args_with_grad, False, False)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


# ---- use_reentrant=False: saved-tensor hooks ------------------------------------------------
class CheckpointError(RuntimeError):
    pass


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. "
                             "Please report this bug by filing an issue to PyTorch.")


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _Handle:
    pass


class _Holder:
    """What a checkpointed forward packs in place of a saved tensor: per backward (graph
    task id), a handle keying the recomputed tensor (None once unpacked)."""

    def __init__(self):
        self.handles = {}


class _StopRecomputationError(Exception):
    pass


class _CheckpointFrame:
    def __init__(self, recompute_fn, early_stop, metadata_fn):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        # weak keys: a recomputed tensor goes with its handle, when it is unpacked or its
        # node's saved tensors are freed
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.x_metadatas = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        # saved as a node saves them: an enclosing checkpoint's hooks pack them (Rule 2)
        self.saved_args = [SavedTensor(a, False) if isinstance(a, Tensor) else a
                           for a in args]

    def get_inputs(self):
        return [a.unpack() if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}")
        different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(holder.handles.get(gid) is not None)
            x_meta = self.x_metadatas[idx]
            recomputed_meta = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if x_meta != recomputed_meta:
                different.append((idx, x_meta, recomputed_meta))
        if different:
            mismatched = "".join(f"tensor at position {idx}:\nsaved metadata: {a}\n"
                                 f"recomputed metadata: {b}\n" for idx, a, b in different)
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{mismatched}.\n{_debug_tip_msg}")


class _recomputation_hook(saved_tensors_hooks):
    """During recomputation: each saved tensor fills the next holder of the frame."""

    def __init__(self, target_frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = target_frame_ref()
            _internal_assert(frame is not None)
            recomp_idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if recomp_idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:
                    # backward inside the checkpointed forward, early stop off
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during "
                    f"recomputation than during the original forward pass.\n{_debug_tip_msg}")
            holder = frame.weak_holders[recomp_idx]()
            # (a holder already freed by a backward inside the forward needs nothing)
            if holder is not None:
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    """During the checkpointed forward: a saved tensor packs a holder (and its metadata)."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = GraphExecGroup._get_current_group()
            if gid is None:
                gid = current_graph_task_id()
                if gid == -1:  # unpacked outside backward
                    gid = int(uuid.uuid4())
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                extra = ""
                if GraphExecGroup._get_current_group() is not None:
                    extra = ("Performing two backward calls that overlap (i.e. require the same "
                             "saved activation in order to compute gradients) is not allowed "
                             "while under the torch.utils.checkpoint.GraphExecGroup context. ")
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    f"already unpacked once. {extra}If you are calling ctx.saved_tensors in "
                    "backward, make sure to do so only once. Otherwise please open an issue "
                    "with details on your use case.")
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        super().__init__(pack_hook, unpack_hook)


_FORWARD_SUPPRESSED = (
    "torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
    "exception raised during the checkpointed forward. This is not supported because "
    "checkpoint cannot return a value for a failed forward.")


def _checkpoint_without_reentrant(fn, preserve_rng_state, context_fn, determinism_check,
                                  debug, early_stop, args, kwargs):
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
    metadata_fn = _allowed_determinism_checks_to_fns.get(determinism_check)
    if metadata_fn is None:
        raise ValueError("determinism_check should be one of "
                         f"{list(_allowed_determinism_checks_to_fns.keys())}, "
                         f"but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    fwd_state = _get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs):
        with _rng_restored(fwd_state, preserve_rng_state), recompute_context:
            fn(*inputs, **kwargs)

    if not is_grad_enabled():
        return fn(*args, **kwargs)
    frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None
        else early_stop,
        metadata_fn)
    frame.save_inputs(*args)
    ret, completed = None, False
    with _checkpoint_hook(frame), forward_context:
        ret = fn(*args, **kwargs)
        completed = True
    if not completed:  # the forward context swallowed the forward's exception
        raise RuntimeError(_FORWARD_SUPPRESSED)
    frame.forward_completed = True
    return ret


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True,
               **kwargs):
    """Run `function(*args, **kwargs)` without keeping its intermediate tensors for
    backward; backward recomputes them (keyword `preserve_rng_state=True` replays the
    forward's random numbers). Pass `use_reentrant` explicitly (None warns and means True,
    as torch 2.13); `use_reentrant=False` is recommended.

    >>> import eagergrad as torch
    >>> from eagergrad.utils.checkpoint import checkpoint
    >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
    >>> y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False)
    >>> y.sum().backward()
    >>> x.grad
    tensor([1.0000, 1.2534])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         debug, early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run the modules/functions in order, checkpointing `segments - 1` equal chunks
    (the last chunk runs normally).

    >>> import eagergrad as torch
    >>> from eagergrad.utils.checkpoint import checkpoint_sequential
    >>> model = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.Tanh())
    >>> x = torch.zeros(2, requires_grad=True)
    >>> checkpoint_sequential(model, 2, x, use_reentrant=False)
    tensor([0.4621, 0.4621], grad_fn=<TanhBackward0>)
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


class GraphExecGroup:
    """Backward calls inside one group recompute each checkpointed region at most once
    (they must not need the same saved activation)."""

    _current = None

    def __enter__(self):
        if GraphExecGroup._current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. "
                               f"Already inside group {GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *args):
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls):
        return GraphExecGroup._current


# ---- selective activation checkpoint: the policy types; the contexts need op dispatch modes
class CheckpointPolicy(enum.Enum):
    """What selective checkpoint does with an op's output: save it or recompute it."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective checkpoint policy function gets: is_recompute."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    raise missing("torch.utils.checkpoint.create_selective_checkpoint_contexts")
