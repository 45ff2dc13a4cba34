"""torch.nn.parallel.DistributedDataParallel: one replica per process (a rank), gradients
averaged over the process group as torch's reducer does it.

* On construction the parameters and buffers are broadcast from rank 0; before each
  forward in training, the buffers too (`broadcast_buffers`).
* Each parameter's post-accumulate-grad hook marks it ready; when all are, the reducer
  all-reduces its buckets (parameters in reverse order, a first bucket of 1 MiB, then
  `bucket_cap_mb`) and copies the results back into the `.grad`s (a version bump each).
  Without a comm hook each gradient is divided by the world size before the sum, as
  torch's reducer; a comm hook (`register_comm_hook`) gets a `GradBucket` and returns a
  future of the reduced buffer.
* A process with several devices (simulated CPU devices, a TPU host) splits each batch
  across them (`_LocalDevices`): the replica of a rank is itself data-parallel, inside XLA.
* `no_sync()` leaves the gradients local (they accumulate); the next synced backward
  reduces the accumulated ones.
* A parameter that gets no gradient leaves the reduction unfinished, and the next forward
  raises torch's error, unless `find_unused_parameters=True`: then the forward's graph is
  walked, unreached parameters count as ready, and a parameter no rank used keeps its
  `.grad`.

>>> import eagergrad as torch, eagergrad.distributed as dist
>>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
...                         world_size=1)
>>> ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 1))
>>> list(ddp.state_dict())
['module.weight', 'module.bias']
>>> dist.destroy_process_group()
"""
import contextlib

from ... import _dtypes as D
from ...distributed import distributed_c10d as c10d
from ...engine.grad_mode import STATE
from ...ops.shape import cat
from ..modules.module import Module

_FIRST_BUCKET_BYTES = 1024 * 1024
_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}\n"
    " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either "
    "INFO or DETAIL to print out information about which particular parameters did not "
    "receive gradient on this rank as part of this error")


class GradBucket:
    """The gradients of a bucket, flattened into one buffer, as a comm hook sees them."""

    def __init__(self, index, params, buffer, is_last):
        self._index, self._params, self._buffer, self._is_last = index, params, buffer, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def gradients(self):
        out, at = [], 0
        for p in self._params:
            n = p.numel()
            out.append(self._buffer[at:at + n].view(p.shape))
            at += n
        return out

    def parameters(self):
        return list(self._params)

    def is_last(self):
        return self._is_last


class DistributedDataParallel(Module):
    """DistributedDataParallel(module, device_ids=None, ..., process_group=None,
    bucket_cap_mb=None, find_unused_parameters=False, ...): the module, replicated per
    process, with gradients averaged over the group after each backward."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        if mixed_precision is not None:
            raise NotImplementedError("torch.nn.parallel.DistributedDataParallel("
                                      "mixed_precision=...)")
        if delay_all_reduce_named_params is not None:
            raise NotImplementedError("torch.nn.parallel.DistributedDataParallel("
                                      "delay_all_reduce_named_params=...)")
        group = c10d._world() if process_group is None else process_group
        params = []
        for p in module.parameters():
            if p.requires_grad and all(p is not q for q in params):
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = group
        self.device_ids = None if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = (25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024
        object.__setattr__(self, "_ddp", _Reducer(params, group, cap, find_unused_parameters))
        if init_sync:
            for t in list(module.parameters()) + list(module.buffers()):
                c10d.broadcast(t.detach(), 0, group=group)
        object.__setattr__(self, "_local", _LocalDevices.of(device_mesh))
        if self._local is not None:
            for t in list(module.parameters()) + list(module.buffers()):
                self._local.replicate(t)

    def forward(self, *inputs, **kwargs):
        r = self._ddp
        if STATE.grad and self.require_backward_grad_sync:
            r.prepare_for_forward()
        if self.broadcast_buffers and self.training and self.process_group.size() > 1:
            for b in self.module.buffers():
                c10d.broadcast(b.detach(), 0, group=self.process_group)
        if self._local is not None:
            inputs = tuple(self._local.split(t) for t in inputs)
            kwargs = {k: self._local.split(v) for k, v in kwargs.items()}
        out = self.module(*inputs, **kwargs)
        if STATE.grad and self.require_backward_grad_sync:
            r.prepare_for_backward(out)
        else:
            r.active = False
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients stay local inside (they accumulate); the first backward after it
        reduces the accumulated ones."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """`hook(state, bucket) -> Future` of the reduced bucket buffer."""
        r = self._ddp
        if r.hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        r.hook, r.hook_state = hook, state

    def _register_builtin_comm_hook(self, comm_hook_type):
        from ...distributed.algorithms.ddp_comm_hooks import default_hooks as H
        name = getattr(comm_hook_type, "name", str(comm_hook_type))
        hooks = {"ALLREDUCE": H.allreduce_hook, "FP16_COMPRESS": H.fp16_compress_hook}
        self.register_comm_hook(None, hooks[name])


class _LocalDevices:
    """The devices of this process, when it has several: DDP inside the process is XLA's.
    The module's parameters and buffers are replicated on them and each input batch is
    split across them (dim 0); every op then runs as one sharded program, whose gradients
    XLA sums over the devices: the replicas' averaged gradient, as DDP's over ranks."""

    def __init__(self, mesh):
        from jax.sharding import NamedSharding, PartitionSpec
        self.n = mesh.devices.size
        self.whole = NamedSharding(mesh, PartitionSpec())
        self.rows = NamedSharding(mesh, PartitionSpec(mesh.axis_names[0]))

    @classmethod
    def of(cls, device_mesh):
        import jax
        if device_mesh is not None:
            if device_mesh.ndim != 1:
                raise NotImplementedError("DistributedDataParallel over a mesh of more than "
                                          "one dimension")
            mesh = device_mesh.jax_mesh
        else:
            devices = jax.local_devices()
            if len(devices) < 2:
                return None
            import numpy as np
            mesh = jax.sharding.Mesh(np.array(devices), ("dp",))
        return cls(mesh) if mesh.devices.size > 1 else None

    def replicate(self, t):
        import jax
        t._write(jax.device_put(t._value, self.whole))

    def split(self, t):
        """A tensor input not requiring grad whose rows divide evenly, split across the
        devices; anything else as it is (replicated: the same numbers, unsplit)."""
        from ...tensor import Tensor
        if (not isinstance(t, Tensor) or t.requires_grad or t.ndim == 0
                or t.shape[0] % self.n):
            return t
        import jax
        from ...creation import from_jax
        return from_jax(jax.device_put(t._value, self.rows))


class _Reducer:
    """The reducer's state: the parameters, their buckets and which are ready."""

    def __init__(self, params, group, cap, find_unused):
        self.params, self.group, self.find_unused = params, group, find_unused
        self.buckets = _buckets(params, cap)
        self.hook = self.hook_state = None
        self.active = False
        self.ready = set()
        self.used = set()
        for p in params:
            p.register_post_accumulate_grad_hook(self._ready)

    def prepare_for_forward(self):
        if self.active and len(self.ready) < len(self.params):
            missing = [str(i) for i, p in enumerate(self.params) if id(p) not in self.ready]
            raise RuntimeError(_UNFINISHED.format(rank=self.group.rank(),
                                                  indices=" ".join(missing)))

    def prepare_for_backward(self, out):
        self.active, self.ready = True, set()
        self.used = {id(p) for p in self.params}
        if self.find_unused:
            self.used = _reached(out, self.params)
            self.ready = {id(p) for p in self.params if id(p) not in self.used}
            if len(self.ready) == len(self.params):
                self._reduce()

    def _ready(self, p):
        if not self.active or id(p) in self.ready:
            return
        self.ready.add(id(p))
        if len(self.ready) == len(self.params):
            self._reduce()

    def _reduce(self):
        self.active = False
        n = self.group.size()
        used = None
        if self.find_unused:  # (which parameters any rank used: a MAX over the group)
            from ...creation import tensor
            mask = tensor([1 if id(p) in self.used else 0 for p in self.params],
                          dtype=D.int32)
            c10d.all_reduce(mask, c10d.ReduceOp.MAX, group=self.group)
            used = mask.tolist()
        index = {id(p): i for i, p in enumerate(self.params)}
        for b, params in enumerate(self.buckets):
            grads = [p.grad if p.grad is not None else _zeros(p) for p in params]
            buffer = cat([g.detach().reshape(-1) for g in grads])
            if self.hook is None:
                buffer = buffer / n
                c10d.all_reduce(buffer, group=self.group)
            else:
                bucket = GradBucket(b, params, buffer, b == len(self.buckets) - 1)
                buffer = self.hook(self.hook_state, bucket).wait()
            at = 0
            for p in params:
                k = p.numel()
                if used is None or used[index[id(p)]]:
                    value = buffer[at:at + k].view(p.shape)
                    if p.grad is None:
                        p.grad = value.clone()
                    else:
                        p.grad.detach().copy_(value)
                at += k


def _zeros(p):
    from ...creation import zeros_like
    return zeros_like(p)


def _buckets(params, cap):
    """torch's bucket assignment: parameters in reverse order, per dtype, a first bucket
    of at most 1 MiB, then `cap` bytes."""
    buckets, open_, limit = [], {}, {}
    for p in reversed(params):
        key = p.dtype
        size = p.numel() * p.element_size()
        cur = open_.get(key)
        if cur is None:
            cur = open_[key] = [[], 0]
            limit.setdefault(key, _FIRST_BUCKET_BYTES)
        cur[0].append(p)
        cur[1] += size
        if cur[1] >= limit[key]:
            buckets.append(cur[0])
            del open_[key]
            limit[key] = cap
    buckets.extend(c[0] for c in open_.values())
    return buckets


def _reached(out, params):
    """The ids of `params` the graph of the tensors in `out` reaches."""
    from ...tensor import Tensor
    want = {id(p): p for p in params}
    roots, stack = [], [out]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            roots.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
    found, seen = set(), set()
    nodes = []
    for t in roots:
        if id(t) in want:
            found.add(id(t))
        if t.grad_fn is not None:
            nodes.append(t.grad_fn)
    while nodes:
        node = nodes.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None and id(var) in want:
            found.add(id(var))
        nodes.extend(n for n, _ in node.next_functions)
    return found
