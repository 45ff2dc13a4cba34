"""Tensor: a jax array (or a view of a storage) plus autograd metadata."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core as _jax_core
from jax.core import Tracer
from jaxlib._jax import ArrayImpl as _ArrayImpl  # (a concrete array's class)

from . import _dtypes as D
from . import _layouts
from ._mode import CAPTURING, COMPILING, FUNC, FWD, STATE
from ._repr import tensor_repr
from ._shapes import reorder_dims, wrap_dim as _wrap_dim
from ._torch_names import missing
from ._storage import (Storage, VersionCounter, contiguous_strides, register_special,
                       relative_chain, view_of, write_into)
from .size import Size
from .device import NO_ACCELERATOR, _jax_devices, device as _device, device_of

_new = object.__new__


def _make(arr):
    """A new base tensor over a jax array (no copy)."""
    return _make_as(arr, (arr.shape, D.FROM_NP[arr.dtype]))


def _make_as(arr, meta):
    """_make when the array's (shape, dtype) is known (call_op's executables know their
    output's): every field set by a plain slot store, the cheapest way Python has."""
    t = _new(Tensor)
    st = t._storage = _new(Storage)  # (slot stores: cheaper than calling __init__)
    st.array = arr
    st.generation = 0
    t._version_counter = vc = _new(VersionCounter)
    vc.version = 0
    t._vchain = None
    t._shape, t.dtype = meta
    t._requires_grad = False
    t._grad_fn = None
    t._out_nr = 0
    t._grad = None  # (.grad's slot: the checked setter would cost a call per op)
    t._accumulator_ref = None
    t._base = None
    t._inference = STATE.inference
    t._wrapped = False
    t._stride = None
    t._offset = 0
    t._retains_grad = False
    t._hooks = t._post_acc_hooks = None
    return t


def _tangent(t):
    """t's tangent at the current level, or None. A view without one of its own has
    the same view of its base's tangent (torch's lazy view forward grad)."""
    fw = getattr(t, "_fw", None)
    if fw is not None and fw[0] == FWD.gen:
        return fw[1]
    b = t._base
    if b is not None:
        fb = getattr(b, "_fw", None)
        if fb is not None and fb[0] == FWD.gen:
            chain = relative_chain(t._vchain, b._vchain)
            if chain is None:
                raise NotImplementedError("eagergrad does not implement forward AD through a "
                                          "view made before as_strided_ changed its base yet")
            tv = _view_over(fb[1], chain)
            t._fw = (FWD.gen, tv)
            return tv
    return None


def _view_over(src, chain):
    """A view of tensor `src` by the view functions `chain` (its storage shared)."""
    v = src._alias()
    v._version_counter = src._version_counter
    v._vchain = (src._vchain or ()) + tuple(chain)
    v._arr = view_of(src._storage.array, v._vchain)
    v._gen = src._storage.generation
    v._shape, v.dtype = v._arr.shape, D.FROM_NP[v._arr.dtype]
    v._stride = None
    v._base = src._base if src._base is not None else src
    v._attr_version, v._creation_meta, v._view_rg = src._version_counter.version, None, False
    return v


def _stop_gradient_k(a):
    return jax.lax.stop_gradient(a)


@jax.custom_jvp
def _written_detached(parent, v):
    return v


_written_detached.defjvp(lambda primals, tangents: (primals[1], tangents[0]))


# NOTE [detach under jax transforms]: detach() (and .data) shares the storage, so under a
# jax transform (torch.func's trace, the user's jax.grad) its array is the same tracer and
# jax would differentiate through it. There the alias reads its storage through one more
# chain element, stop_gradient, so that jax's derivative, as torch's, is zero through it.
# It is an identity view: a write through it gives the parent the written values, while
# the parent's derivative stays its own (torch: writing into a detached alias leaves the
# base's history as it was).
_STOP_GRADIENT = jax.jit(functools.partial(_stop_gradient_k))
register_special(_stop_gradient_k, _written_detached)


def _stop_gradient_view(t):
    t._vchain = (t._vchain or ()) + ((_STOP_GRADIENT, None),)
    t._arr, t._gen = None, -1  # (read when first needed)


def _zeros_meta(shape, dtype):
    return _make(jnp.zeros(shape, dtype.np))


def _wrap_outputs(op, tensors, attrs, out, multi, metas):
    """Tensors over an op's output arrays (views of tensors[0] for view ops): a tuple
    when the kernel returns one (`multi`), each output's (shape, dtype) in `metas`; the
    op table's _record wires them to their node. A view op's `out` may be None: its
    views are lazy (computed when read)."""
    if not multi:  # (one output: the common case, no list)
        return _make_as(out, metas[0]) if op.view is None else \
            _make_view(tensors[0], out, op, attrs, None, metas[0])
    if out is None:
        out = (None,) * len(metas)
    return tuple([_make_as(a, m) if op.view is None else
                  _make_view(tensors[0], a, op, attrs, i, m)
                  for i, (a, m) in enumerate(zip(out, metas))])


# Why a view may not be modified in place with autograd (torch's CreationMeta)
NO_GRAD_MODE, MULTI_OUTPUT, INFERENCE_MODE = "no_grad", "multi_output", "inference"
IN_CUSTOM_FUNCTION = "in_custom_function"


def _make_view(src, arr, op, attrs, idx, meta):
    """A view of `src`: shares its storage and version counter, reads through the chain
    of view functions from the base (`arr`, its array, or None: read when first needed).
    As in torch (`as_view`), a view of an inference tensor aliases its memory but is
    not a view for autograd (no `_base`), and a view requires grad when its base does,
    even when made under no_grad (with no grad_fn: gradients do not flow into it)."""
    t = _make_as(arr, meta)
    t._storage = src._storage
    t._version_counter = src._version_counter
    t._vchain = (src._vchain or ()) + ((op.fwd(attrs), idx),)
    t._arr = arr
    t._gen = src._storage.generation if arr is not None else -1
    t._stride, t._offset = op.view(src, attrs, idx, meta[0])
    t._inference = src._inference
    if src._inference:
        return t
    base = t._base = src._base if src._base is not None else src
    t._requires_grad = base._requires_grad and t.dtype.is_differentiable
    t._view_rg = False
    t._attr_version = t._version_counter.version
    # torch's CreationMeta and propagate_creation_meta
    if STATE.inference:
        meta = INFERENCE_MODE
    elif not STATE.grad:
        meta = NO_GRAD_MODE
    else:
        meta = MULTI_OUTPUT if idx is not None else None
    if src._base is not None and (meta is None or src._creation_meta == INFERENCE_MODE):
        meta = src._creation_meta
    t._creation_meta = meta
    return t


class RankLocal(NotImplementedError):
    """A rank-local tensor (torch.distributed.tensor's LocalTensor) whose ranks hold
    different values, read as one array: code that can run rank by rank catches it."""


class Tensor:
    """A multi-dimensional array with PyTorch's autograd semantics, backed by jax.

    >>> import eagergrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __module__ = "eagergrad"  # as torch.Tensor's is "torch" (pickles as eagergrad.Tensor)

    __slots__ = ("_storage", "_version_counter", "_vchain", "_arr", "_gen", "_shape", "dtype",
                 "_requires_grad", "_grad_fn", "_out_nr", "_grad", "_accumulator_ref", "_base",
                 "_inference", "_wrapped", "_stride",
                 "_offset", "_retains_grad", "_hooks", "_post_acc_hooks", "_attr_version",
                 "_creation_meta", "_view_rg", "_fw",
                 "__weakref__")

    # ---- storage ------------------------------------------------------------------
    @property
    def _value(self):
        ch = self._vchain
        if ch is None:
            return self._storage.array
        st = self._storage
        if self._gen != st.generation:  # (a lazy view, or its storage was written)
            a = st.array
            if a.__class__ is _ArrayImpl and _jax_core.trace_ctx.trace.__class__ is not \
                    _jax_core.EvalTrace:
                with jax.ensure_compile_time_eval():  # concrete, whatever jax is tracing
                    self._arr = view_of(a, ch)
            else:
                self._arr = view_of(a, ch)
            self._gen = st.generation
            if self._base is not None and self._base._requires_grad:
                self._requires_grad = True  # (its grad_fn is regenerated when next asked for)
        return self._arr

    def _write(self, arr):
        """Replace this tensor's values (shape and dtype kept); writes through views."""
        if arr.dtype != self.dtype.np:
            arr = arr.astype(self.dtype.np)
        if arr.shape != self._shape:
            arr = jnp.broadcast_to(arr, self._shape)
        st = self._storage
        if CAPTURING.n and FUNC.capture is not None:
            FUNC.capture.writes(st)
        if COMPILING.n and COMPILING.rec is not None:
            COMPILING.rec.writes(st)
        if self._vchain is None:
            st.array = arr
        else:
            st.array = write_into(st.array, self._vchain, arr)
            self._arr = arr
            self._gen = st.generation + 1
        st.generation += 1

    def _fresh_copy(self):
        """A new base tensor over the same (immutable) array: no aliasing, no history."""
        return _make(self._value)

    def _rank_values(self):
        """The values a check reads: this tensor's (every rank's, for a rank-local one of
        torch.distributed.tensor)."""
        return (self._value,)

    # ---- metadata -------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self._shape[_wrap_dim(dim, len(self._shape))]

    def dim(self):
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._shape)

    def numel(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def device(self):
        return device_of(self._value)

    @property
    def layout(self):
        """torch.strided: eagergrad's tensors are dense."""
        return _layouts.strided

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def get_device(self):
        d = self.device
        return -1 if d.type == "cpu" else d.index

    @property
    def itemsize(self):
        """The size of an element in bytes (element_size())."""
        return self.dtype.itemsize

    @property
    def nbytes(self):
        """The bytes of this tensor's elements, numel() * itemsize (a view's own)."""
        return self.numel() * self.dtype.itemsize

    def is_signed(self):
        return self.dtype.is_signed

    def is_nonzero(self):
        return is_nonzero(self)

    def is_same_size(self, other):
        if not isinstance(other, Tensor):
            raise TypeError("is_same_size(): argument 'other' (position 1) must be Tensor, "
                            f"not {type(other).__name__}")
        return self._shape == other._shape

    def dim_order(self, *, ambiguity_check=False):
        """The dims from the outermost to the innermost in memory (torch's dim_order, with
        its checks: `ambiguity_check` True, or a list of memory formats one of which the
        tensor must be in, raises when the order is not unique).

        >>> import eagergrad as torch
        >>> torch.empty(2, 3, 5, 7).transpose(1, 2).dim_order()
        (0, 2, 1, 3)
        """
        return _dim_order(self._shape, self.stride(), ambiguity_check)

    def is_shared(self):
        """False: a storage is a jax array of this process, never in shared memory."""
        return False

    def share_memory_(self):
        raise NotImplementedError(
            "eagergrad does not implement torch.Tensor.share_memory_: a tensor's storage is a "
            "jax array of this process, which other processes cannot share")

    def cpu(self, memory_format=None):
        """This tensor on the CPU: itself when it is there already, as torch."""
        return self if self.device.type == "cpu" else self.to("cpu")

    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        if not _jax_gpus():
            raise RuntimeError(NO_ACCELERATOR)
        return self

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """A copy on the GPU; without one, torch's errors."""
        if isinstance(device, int) and not isinstance(device, bool):
            if not _jax_gpus():
                raise RuntimeError(NO_ACCELERATOR)
            device = _device("cuda", device)
        device = _device("cuda" if device is None else device)
        if device.type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        return self.to(device.available())

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """With no argument, the legacy type name ('torch.FloatTensor'); with a dtype, a type
        name or a legacy type class, this tensor cast to it (itself if it already is).

        >>> import eagergrad as torch
        >>> t = torch.zeros(2)
        >>> t.type(), t.type(torch.int64).type(), t.type("torch.DoubleTensor").dtype
        ('torch.FloatTensor', 'torch.LongTensor', torch.float64)
        """
        if dtype is None:
            dtype = kwargs.pop("dtype", None)
        if dtype is None:
            cuda = "cuda." if self.device.type == "cuda" else ""
            return f"torch.{cuda}{self.dtype.scalar_name}Tensor"
        if isinstance(dtype, str):
            dt, cuda = _legacy_type_name(dtype)
        elif isinstance(dtype, D.dtype):
            dt, cuda = dtype, self.device.type == "cuda"
        elif dtype is Tensor:
            dt, cuda = D.get_default_dtype(), False
        elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), D.dtype):
            dt, cuda = dtype.dtype, dtype.is_cuda
        else:
            raise TypeError("dtype must be a type, str, or dtype object")
        if cuda and not _jax_gpus():
            raise RuntimeError(_NO_CUDA_LIBRARY)
        out = self.to(dt)
        if cuda != (self.device.type == "cuda"):
            out = out.to("cuda" if cuda else "cpu")
        return out

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def stride(self, dim=None):
        s = self._stride if self._stride is not None else contiguous_strides(self._shape)
        return s if dim is None else s[_wrap_dim(dim, len(s))]

    def storage_offset(self):
        return self._offset

    def is_contiguous(self, memory_format=None):
        if memory_format is not None and memory_format._name.startswith("channels_last"):
            raise missing(f"torch.Tensor.is_contiguous(memory_format=torch.{memory_format._name})")
        if self._stride is None:
            return True
        expected = 1
        for n, s in zip(reversed(self._shape), reversed(self._stride)):
            if n == 1:
                continue
            if s != expected:
                return False
            expected *= n
        return True

    def _is_view(self):
        return self._base is not None

    @property
    def _version(self):
        return self._version_counter.version

    def is_inference(self):
        return self._inference

    # ---- autograd metadata ---------------------------------------------------------
    @property
    def grad_fn(self):
        """The node that made this tensor (None for leaves). A view whose base changed
        in place since regenerates it from the base's history (AsStridedBackward0)."""
        if self._base is not None and self._attr_version != self._version_counter.version:
            self._sync_view()
        return self._grad_fn

    def _sync_view(self):
        """Regenerate the grad_fn of a view whose base changed in place (torch's
        VariableHooks::grad_fn); _tensor_methods.py puts ops/views.py's here."""

    @property
    def requires_grad(self):
        # a view requires grad when its base does (torch's DifferentiableViewMeta)
        return self._requires_grad or (self._base is not None and self._base._requires_grad)

    @requires_grad.setter
    def requires_grad(self, flag):
        flag = bool(flag)
        if self._grad_fn is not None:
            if not flag:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach().")
            return
        if flag and not self.dtype.is_differentiable:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if flag and self._inference and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = flag
        if self._base is not None:
            self._view_rg = flag

    def requires_grad_(self, requires_grad=True):
        # (torch's wording differs per entry point)
        if requires_grad and not self.dtype.is_differentiable:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._out_nr

    @property
    def retains_grad(self):
        return self._retains_grad is not False and self._grad_fn is not None

    def detach(self):
        """A tensor sharing storage and version counter, with no history."""
        t = self._alias()
        t._version_counter = self._version_counter
        if isinstance(self._storage.array, Tracer):
            _stop_gradient_view(t)
        return t

    def _alias(self):
        t = _make(self._storage.array)
        t._storage = self._storage
        t._shape = self._shape
        t.dtype = self.dtype
        if self._vchain is not None:
            t._vchain = self._vchain
            t._arr = self._arr
            t._gen = self._gen
        t._stride, t._offset = self._stride, self._offset
        t._inference = self._inference
        return t

    def detach_(self):
        if self._base is not None and self.grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        self._out_nr = 0
        return self

    @property
    def data(self):
        t = self._alias()  # shares storage, new version counter, as torch's .data
        if isinstance(self._storage.array, Tracer):
            _stop_gradient_view(t)
        return t

    @data.setter
    def data(self, other):
        self._storage = other._storage
        self._vchain = other._vchain
        if other._vchain is not None:
            self._arr, self._gen = other._arr, other._gen
        self._shape = other._shape
        self.dtype = other.dtype
        self._stride, self._offset = other._stride, other._offset

    # ---- conversion -------------------------------------------------------------------
    def jax(self):
        """The current jax array of this tensor (read through views; no copy)."""
        return self._value

    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._vchain is not None and not force and self.is_conj():
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                               "tensor.resolve_conj().numpy() instead.")
        return self._host("numpy")

    def _host(self, what):
        """The values as a numpy array; in a compiled call's trace, read from the trace
        (the compiled program then checks that value, _dynamo/_step.py)."""
        v = self._value
        if COMPILING.n and isinstance(v, Tracer):
            rec = COMPILING.rec
            if rec is not None:
                v = rec.read(v, what)
        return np.asarray(v)

    def item(self):
        return self._item("item")

    def _item(self, _what):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted "
                               "to Scalar")
        if FUNC.levels and isinstance(self._value, Tracer):
            return FUNC.levels[-1].item(self._value, _what)
        return self._host(_what).reshape(()).item()

    def tolist(self):
        return self._host("tolist").tolist()

    def __array__(self, dtype=None, copy=None):
        a = self._host("__array__")
        return a.astype(dtype) if dtype is not None else a

    def __jax_array__(self):
        return self._value

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.numel() == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is "
                               "ambiguous")
        return bool(self._item("bool"))

    def __index__(self):
        if self.dtype._kind != 1 or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted "
                            "to an index")
        return int(self.item())

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self):
        tangent = _tangent(self) if FWD.active else None
        return tensor_repr(self, None if tangent is None else repr(tangent))

    __str__ = __repr__

    def __format__(self, spec):
        if not self._shape:
            return self.item().__format__(spec)
        return repr(self)

    def __deepcopy__(self, memo):
        t = self.detach().clone()
        t._requires_grad = self._requires_grad
        if self.grad is not None:
            t.grad = self.grad.clone()
        return t


# torch's device and layout predicates: eagergrad's tensors are dense (strided), on the CPU
# or a jax GPU, never quantized or nested
for _name in ("meta", "mps", "xla", "xpu", "ipu", "maia", "mtia", "vulkan"):
    setattr(Tensor, "is_" + _name, property(lambda self, _t=_name: self.device.type == _t,
                                            doc=f"Whether the tensor is on a {_name} device."))
for _name in ("mkldnn", "nested", "quantized", "sparse", "sparse_csr"):
    setattr(Tensor, "is_" + _name, property(lambda self: False,
                                            doc=f"False: no eagergrad tensor is {_name}."))
del _name


def _dim_order(sizes, strides, ambiguity_check):
    """Tensor.dim_order (torch/_tensor.py, with _prims_common's
    compute_elementwise_output_logical_to_physical_perm for one tensor)."""
    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list) and
            all(isinstance(f, _layouts.memory_format) for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if (ambiguity_check is not False and (any(a == b for a, b in zip(strides, strides[1:])) or
                                          1 in sizes) and
            sum(_contiguous_as(sizes, strides, f, True) for f in formats) != 1):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    nd = len(sizes)
    if nd < 2:
        return tuple(range(nd))
    contiguous = _contiguous_as(sizes, strides, _layouts.contiguous_format)
    channels_last = _contiguous_as(sizes, strides, _layouts.channels_last)
    if contiguous and not channels_last:
        return tuple(range(nd))
    if channels_last and not contiguous:
        return (0, *range(2, nd), 1)

    def ge(a, b):
        return True if b == 0 else False if a == 0 else a >= b or a % b == 0

    def should_swap(a, b):
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(sizes[b], sizes[a]) else 1
        return -1 if ge(sb, sa) else 1 if ge(sa, sb) else 0

    perm = reorder_dims(nd, should_swap)
    if ambiguity_check and any(should_swap(perm[i], perm[i + 1]) != -1 for i in range(nd - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


def _contiguous_as(sizes, strides, fmt, aten=False):
    """Whether (sizes, strides) is contiguous in memory format `fmt`: _prims_common's
    checks, or (aten) TensorImpl::is_contiguous(fmt)'s."""
    name = fmt._name
    if name in ("channels_last", "channels_last_3d"):
        order = (1, 3, 2, 0) if name == "channels_last" else (1, 4, 3, 2, 0)
        if len(sizes) != len(order):
            return False
        expected = 1
        for d in order:
            if sizes[d] != 1:
                if strides[d] != expected:
                    return False
                expected *= sizes[d]
        return True
    if name != "contiguous_format" and not aten:
        raise RuntimeError(f"is_contiguous received unsupported memory format torch.{name}")
    numel = 1
    for n in sizes:
        numel *= n
    if numel < (1 if aten else 2):
        return True
    expected = expected_max = 1
    for n, s in reversed(tuple(zip(sizes, strides))):
        if n == 1:
            continue
        if s != expected and (aten or s != expected_max):
            return False
        expected *= n
        expected_max *= max(n, 1)
    return True


_grad_slot = Tensor._grad  # the slot behind the checked .grad property below
_gpus = []


def _set_grad(self, grad):
    """`.grad = g` with torch's checks (THPVariable_set_grad), in its order."""
    if grad is not None:
        if not isinstance(grad, Tensor):
            raise TypeError("assigned grad expected to be a Tensor or None but got grad of "
                            f"type {type(grad).__name__}")
        if grad is self:
            raise RuntimeError("can't assign Variable as its own grad")
        if grad.dtype is not self.dtype:
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{grad.dtype.cpp_name}' to a "
                f"tensor with grad_dtype '{self.dtype.scalar_name}'. The gradient must match "
                "the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                "gradient may break downstream systems that assume they match.")
        if not _gpus:
            _gpus.append(bool(_jax_devices("gpu")))
        if _gpus[0]:  # (on a CPU-only jax every tensor is on 'cpu')
            gd, sd = grad.device, self.device
            if gd.type != sd.type:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{gd.type}' to a "
                    f"tensor with device type '{sd.type}'. Please ensure that the gradient "
                    "and the tensor are on the same device")
            if gd.index != sd.index:
                raise RuntimeError(
                    f"attempting to assign a gradient located on device with index "
                    f"'{gd.index}' to a tensor located on device with index '{sd.index}'. "
                    "Please ensure that the gradient and the tensor are on the same device")
        if grad._shape != self._shape:
            raise RuntimeError(
                f"attempting to assign a gradient of size '{list(grad._shape)}' to a tensor "
                f"of size '{list(self._shape)}'. Please ensure that the gradient and the "
                "tensor are the same size")
    _grad_slot.__set__(self, grad)


Tensor.grad = property(_grad_slot.__get__, _set_grad, lambda self: _grad_slot.__set__(self, None),
                       doc="The gradient accumulated by backward (None until then).")


_NO_CUDA_LIBRARY = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by "
    "the dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library.")
_SCALAR_NAMES = {d.scalar_name: d for d in D.ALL}


def _jax_gpus():
    return _jax_devices("gpu")


def _legacy_type_name(name):
    """(dtype, is_cuda) of 'torch.FloatTensor', 'torch.cuda.LongTensor', 'torch.Tensor'."""
    parts = name.split(".")
    cuda = len(parts) == 3 and parts[1] == "cuda"
    if parts[0] in ("torch", "eagergrad") and len(parts) in (2, 3) and (len(parts) == 2 or cuda):
        last = parts[-1]
        if last == "Tensor" and not cuda:
            return D.get_default_dtype(), False
        if last.endswith("Tensor") and last[:-6] in _SCALAR_NAMES:
            return _SCALAR_NAMES[last[:-6]], cuda
    raise ValueError(f"invalid type: '{name}'")


def reset_grad(p, set_to_none=True):
    """What Module.zero_grad and Optimizer.zero_grad do to one parameter's .grad: drop it,
    or detach it from any graph and zero it in place."""
    if p.grad is None:
        return
    if set_to_none:
        p.grad = None
        return
    if p.grad.grad_fn is not None:
        p.grad.detach_()
    else:
        p.grad.requires_grad_(False)
    p.grad.zero_()


def typename(obj):
    """torch.typename as eagergrad's messages spell it: "eagergrad.FloatTensor" for a
    tensor, "int" for a builtin, else "module.Class"."""
    if isinstance(obj, Tensor):
        return f"eagergrad.{obj.dtype.scalar_name}Tensor"
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


# ---- torch.<name>(input) of tensor facts (the Tensor methods of the same name) ------------
def _tensor_arg(fn, v, arg="input", pos=1):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}")
    return v


def is_signed(input):
    """Whether the dtype holds negative values (every dtype but uint8 and bool).

    >>> import eagergrad as torch
    >>> torch.is_signed(torch.ones(1)), torch.is_signed(torch.ones(1, dtype=torch.uint8))
    (True, False)
    """
    return _tensor_arg("is_signed", input).dtype.is_signed


def is_nonzero(input):
    """Whether a one-element tensor is not zero (NaN is nonzero); more or fewer elements
    raise, as `bool(tensor)`.

    >>> import eagergrad as torch
    >>> torch.is_nonzero(torch.tensor([0.0])), torch.is_nonzero(torch.tensor([[2]]))
    (False, True)
    """
    n = _tensor_arg("is_nonzero", input).numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    _tensor_arg("is_same_size", input)
    _tensor_arg("is_same_size", other, "other", 2)
    return tuple(input._shape) == tuple(other._shape)


def is_inference(input):
    """Whether the tensor was made in inference mode (or is a view of one that was)."""
    return _tensor_arg("is_inference", input).is_inference()


def get_device(input):
    """The index of the tensor's device, -1 for the CPU."""
    return _tensor_arg("get_device", input).get_device()


def detach(input):
    """input.detach(): the same values and storage, no history."""
    return _tensor_arg("detach", input).detach()


def is_distributed(input):
    """Whether the tensor is distributed across processes (never, in eagergrad)."""
    _tensor_arg("is_distributed", input)
    return False


def public_typename(obj, /):
    """torch.typename: a tensor's legacy type ('torch.FloatTensor'), else "module.Class"
    (the builtins without a module).

    >>> import eagergrad as torch
    >>> torch.typename(torch.tensor([1, 2])), torch.typename(3)
    ('torch.LongTensor', 'int')
    """
    return obj.type() if isinstance(obj, Tensor) else typename(obj)


public_typename.__name__ = public_typename.__qualname__ = "typename"
for _f in (is_tensor, numel, is_floating_point, is_complex, is_signed, is_nonzero,
           is_same_size, is_inference, get_device, detach, is_distributed, public_typename):
    _f.__module__ = "eagergrad"  # (torch's report "torch")
del _f
