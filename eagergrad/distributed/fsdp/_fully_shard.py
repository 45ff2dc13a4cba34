"""FSDP2's fully_shard (torch.distributed.fsdp).

NOTE [fully_shard]
Each parameter a `fully_shard`ed module owns (not one of an inner fully_shard's, nor
ignored) becomes an nn.Parameter over a Shard(0) DTensor of the data-parallel mesh:
torch.chunk's pieces, uneven ones included. A forward pre-hook all-gathers each into
an unsharded plain tensor (an `_AllGather` Function, cast to `param_dtype`) and puts it
where the parameter was (every module that shares it, as a tied weight); the forward
hook puts the sharded parameters back. `_AllGather`'s backward is the reduce-scatter:
every rank's gradient of the unsharded tensor (the same on every rank for a plain
input; a LocalTensor's, rank by rank, when each rank has its own batch) is averaged
across the ranks in `reduce_dtype` and chunked into a Shard(0) gradient of the sharded
parameter, which the optimizer updates rank by rank. On a 2-D mesh (HSDP) parameters are
(Replicate(), Shard(0)): gradients are averaged across both dims.
"""
from ...engine.function import Function
from ...nn.parameter import Parameter
from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor._api import (DTensor, _groups, _positions, _rank_locals, _relaid, _Spec,
                           distribute_tensor)
from ..tensor.placement_types import Partial, Replicate, Shard


class MixedPrecisionPolicy:
    """Module-level mixed precision: `param_dtype` for the unsharded parameters (forward
    and backward), `reduce_dtype` for the gradient reduction, `output_dtype` for floating
    outputs; `cast_forward_inputs` casts floating inputs to `param_dtype`.

    >>> from eagergrad.distributed.fsdp import MixedPrecisionPolicy
    >>> MixedPrecisionPolicy()
    MixedPrecisionPolicy(param_dtype=None, reduce_dtype=None, output_dtype=None, \
cast_forward_inputs=True)
    """

    def __init__(self, param_dtype=None, reduce_dtype=None, output_dtype=None,
                 cast_forward_inputs=True):
        self.param_dtype, self.reduce_dtype = param_dtype, reduce_dtype
        self.output_dtype, self.cast_forward_inputs = output_dtype, cast_forward_inputs

    def __eq__(self, other):
        return isinstance(other, MixedPrecisionPolicy) and vars(self) == vars(other)

    def __hash__(self):
        return hash(tuple(vars(self).values()))

    def __repr__(self):
        return (f"MixedPrecisionPolicy(param_dtype={self.param_dtype}, reduce_dtype="
                f"{self.reduce_dtype}, output_dtype={self.output_dtype}, cast_forward_inputs="
                f"{self.cast_forward_inputs})")


class OffloadPolicy:
    """No offloading (the default)."""

    def __repr__(self):
        return "OffloadPolicy()"


class CPUOffloadPolicy(OffloadPolicy):
    """Offload sharded parameters, gradients and optimizer states to the CPU."""

    def __init__(self, pin_memory=True):
        self.pin_memory = pin_memory


class UnshardHandle:
    """What `unshard(async_op=True)` returns: `wait()` for the all-gather."""

    def wait(self):
        return None


class FSDPModule:
    """The class `fully_shard` mixes into a module (`FSDPLinear` for an nn.Linear)."""

    def reshard(self):
        """Put the sharded parameters back (after forward, they already are)."""
        self._fsdp_state.reshard()

    def unshard(self, async_op=False):
        """All-gather the parameters now, as the forward pre-hook does."""
        self._fsdp_state.unshard()
        return UnshardHandle() if async_op else None

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        for m in self.modules() if recurse else (self,):
            if isinstance(m, FSDPModule):
                m._fsdp_state.reshard_after_forward = reshard_after_forward

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        if not requires_gradient_sync:
            raise NotImplementedError("eagergrad does not implement "
                                      "FSDPModule.set_requires_gradient_sync(False) yet")


_CLASSES = {}
_NO_MP, _NO_OFFLOAD = MixedPrecisionPolicy(), OffloadPolicy()  # (torch's defaults)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, sharded, param_dtype, reduce_dtype):
        ctx.spec, ctx.shape, ctx.dtype = sharded._spec, sharded._shape, sharded.dtype
        ctx.reduce_dtype = reduce_dtype or param_dtype
        full = sharded.full_tensor()
        return full if param_dtype is None else full.to(param_dtype)

    @staticmethod
    def backward(ctx, g):
        n = _positions(ctx.spec.mesh)
        gs = _rank_locals(g, n)
        if ctx.reduce_dtype is not None:
            gs = [x.to(ctx.reduce_dtype) for x in gs]
        avg = DTensor._new(gs, _Spec(ctx.spec.mesh, (Partial("avg"),) * ctx.spec.mesh.ndim),
                           ctx.shape, gs[0].dtype)
        out = _relaid(avg, ctx.spec.placements)
        if out.dtype is not ctx.dtype:
            out = out._with_locals([x.to(ctx.dtype) for x in out._locals])
        return out, None, None


class _State:
    def __init__(self, module, mesh, params, mp_policy, reshard_after_forward):
        self.module, self.mesh, self.mp = module, mesh, mp_policy
        self.params = params  # [(sharded parameter, [(owner module, name), ...])]
        self.reshard_after_forward = reshard_after_forward

    def unshard(self):
        for p, places in self.params:
            full = _AllGather.apply(p, self.mp.param_dtype, self.mp.reduce_dtype)
            for owner, name in places:
                owner._parameters[name] = full

    def reshard(self):
        for p, places in self.params:
            for owner, name in places:
                owner._parameters[name] = p

    def pre_forward(self, module, args, kwargs):
        self.unshard()
        dt = self.mp.param_dtype
        if dt is not None and self.mp.cast_forward_inputs:
            args = tuple(_cast(a, dt) for a in args)
            kwargs = {k: _cast(v, dt) for k, v in kwargs.items()}
        return args, kwargs

    def post_forward(self, module, args, output):
        self.reshard()
        dt = self.mp.output_dtype
        if dt is not None:
            return _cast(output, dt)
        return output


def _average_gradient_across(p, mesh):
    """A parameter already laid out on another slice of `mesh`'s mesh (tensor parallel):
    it stays so, replicated across `mesh`, and each gradient is averaged across `mesh`
    before it accumulates (where torch would shard it across `mesh` as well)."""
    if getattr(p, "_fsdp_averaged", False) or p.device_mesh == mesh:
        return
    root, dims = mesh._layout()
    proot, pdims = p.device_mesh._layout()
    if proot is not root or set(dims) & set(pdims):
        raise NotImplementedError("eagergrad does not implement fully_shard of a DTensor "
                                  "parameter on another mesh than a sibling slice of its own")

    def average(g):
        locs = list(g._locals)
        for d in dims:
            for group in _groups(root.shape, d):
                mean = sum(locs[i] for i in group) / len(group)
                for i in group:
                    locs[i] = mean
        return g._with_locals(locs)
    p.register_hook(average)
    p._fsdp_averaged = True


def _cast(x, dtype):
    if hasattr(x, "is_floating_point") and x.is_floating_point():
        return x.to(dtype)
    if isinstance(x, (tuple, list)):
        return type(x)(_cast(y, dtype) for y in x)
    return x


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=_NO_MP, offload_policy=_NO_OFFLOAD, ignored_params=None):
    """Shard `module`'s parameters over the data-parallel `mesh` (NOTE [fully_shard]);
    returns the module, now also an FSDPModule.

    >>> import eagergrad as torch
    >>> from eagergrad.distributed.fsdp import fully_shard
    >>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
    >>> m = fully_shard(torch.nn.Linear(3, 2), mesh=mesh)
    >>> m(torch.ones(1, 3)).shape, isinstance(m.weight, torch.nn.Parameter)
    (torch.Size([1, 2]), True)
    >>> torch.distributed.destroy_process_group()
    """
    if isinstance(module, (list, tuple)):
        raise NotImplementedError("eagergrad does not implement fully_shard of a list of "
                                  "modules yet")
    if isinstance(offload_policy, CPUOffloadPolicy):
        raise NotImplementedError("eagergrad does not implement CPUOffloadPolicy yet (the "
                                  "parameters already live in host memory on the CPU)")
    if shard_placement_fn is not None:
        raise NotImplementedError("eagergrad does not implement fully_shard's "
                                  "shard_placement_fn yet")
    if mesh is None:
        import jax
        mesh = init_device_mesh("cpu", (len(jax.devices()),))
    if not isinstance(mesh, DeviceMesh):
        raise ValueError(f"fully_shard expects a DeviceMesh but got {mesh}")
    if mesh.ndim > 2:
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh}")
    # a 2-D mesh is HSDP: replicated across dim 0, sharded across dim 1 (NOTE [fully_shard])
    layout = [Shard(0)] if mesh.ndim == 1 else [Replicate(), Shard(0)]
    ignored = {id(p) for p in ignored_params or ()}
    places = {}
    for owner in module.modules():
        for name, p in list(owner._parameters.items()):
            if p is None or id(p) in ignored:
                continue
            if isinstance(p, DTensor):
                _average_gradient_across(p, mesh)
                continue
            places.setdefault(id(p), (p, []))[1].append((owner, name))
    params = []
    for p, where in places.values():
        sharded = Parameter(distribute_tensor(p.detach(), mesh, layout),
                            requires_grad=p.requires_grad)
        for owner, name in where:
            owner._parameters[name] = sharded
        params.append((sharded, where))
    state = _State(module, mesh, params, mp_policy,
                   True if reshard_after_forward is None else reshard_after_forward)
    module._fsdp_state = state
    module.register_forward_pre_hook(state.pre_forward, with_kwargs=True)
    module.register_forward_hook(state.post_forward)
    cls = module.__class__
    new = _CLASSES.get(cls)
    if new is None:
        new = _CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    module.__class__ = new
    return module
