"""torch.distributed's process groups and collectives (c10d) over jax's processes.

A rank is a process, as with torchrun: `init_process_group` meets the other processes
(_store.py) and, when there is more than one, starts jax.distributed with a coordinator
on the master's host. Each process drives its own local devices; a DeviceMesh may span
all of them (device_mesh.py). The collectives here act on ordinary tensors, one per
process, and write their results in place through the tensor's storage as ATen's do
(no version bump). Across processes they gather with jax (multihost_utils) and reduce on
the host: a correctness path; sharded programs communicate inside XLA instead.
"""
import datetime
import enum
import os
import warnings

import numpy as np

from ..creation import from_jax
from ..tensor import Tensor
from ._errors import DistStoreError
from ._store import rendezvous

default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INIT = "Default process group has not been initialized, please make sure to call " \
            "init_process_group."


class Backend(str):
    """A backend name, as `torch.distributed.Backend("gloo")`: gloo, nccl and xla all run
    on jax (the collectives of one XLA program, or jax's between processes)."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    XLA = "xla"
    _KNOWN = ("gloo", "nccl", "xla", "ucc", "mpi", "xccl")

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = name.lower()
        for part in value.split(","):
            backend = part.split(":")[-1]
            if backend not in cls._KNOWN:
                raise AssertionError(f"Unknown backend type {backend}")
            if backend in ("ucc", "mpi", "xccl"):
                raise NotImplementedError(f"torch.distributed backend {backend!r}: eagergrad "
                                          f"runs gloo, nccl and xla on jax")
        return str.__new__(cls, value)


class ReduceOp:
    """The reduction of a collective: `ReduceOp.SUM`, AVG, PRODUCT, MIN, MAX, BAND, BOR,
    BXOR (PREMUL_SUM is not supported)."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM, AVG, PRODUCT, MIN, MAX = RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT, \
        RedOpType.MIN, RedOpType.MAX
    BAND, BOR, BXOR, PREMUL_SUM = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, \
        RedOpType.PREMUL_SUM


_REDUCE = {ReduceOp.SUM: np.sum, ReduceOp.AVG: np.mean, ReduceOp.PRODUCT: np.prod,
           ReduceOp.MIN: np.min, ReduceOp.MAX: np.max,
           ReduceOp.BAND: np.bitwise_and.reduce, ReduceOp.BOR: np.bitwise_or.reduce,
           ReduceOp.BXOR: np.bitwise_xor.reduce}


class ProcessGroup:
    """A group of ranks (processes), as `dist.new_group(ranks)` returns it."""

    def __init__(self, ranks, backend, timeout):
        self._ranks = list(ranks)
        self._backend = backend
        self._timeout = timeout

    def rank(self):
        r = _STATE.rank
        return self._ranks.index(r) if r in self._ranks else -1

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._backend


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD = None


class Work:
    """The handle of a collective run with `async_op=True`; the collective has already
    finished when it is returned (jax dispatches it; reading the result waits). Its
    future's value is the list of the collective's output tensors."""

    def __init__(self, result=None):
        self._result = result

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def result(self):
        return self._result

    def get_future(self):
        from ..futures import Future
        f = Future()
        f.set_result(self._result)
        return f


class BuiltinCommHookType(enum.Enum):
    ALLREDUCE = 1
    FP16_COMPRESS = 2


class _State:
    world = None   # the default ProcessGroup
    rank = -1
    jax_distributed = False


_STATE = _State()


def is_available():
    return True


def is_initialized():
    return _STATE.world is not None


def is_gloo_available():
    return True


def is_nccl_available():
    return True


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    return backend.lower() in ("gloo", "nccl", "xla")


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _env(name, method):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using {method} rendezvous: "
                         f"environment variable {name} expected, but not set")
    return value


def _parse_init(init_method, rank, world_size):
    """(host, port, rank, world_size) from env:// or tcp://host:port, as torch reads them."""
    if init_method is None or init_method.startswith("env://"):
        if rank == -1:
            rank = int(_env("RANK", "env://"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE", "env://"))
        host = _env("MASTER_ADDR", "env://")
        port = int(_env("MASTER_PORT", "env://"))
        return host, port, rank, world_size
    if init_method.startswith("tcp://"):
        if rank == -1:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: "
                             "rank parameter missing")
        if world_size == -1:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: "
                             "world size parameter missing")
        host, _, port = init_method[len("tcp://"):].partition(":")
        return host, int(port.split("?")[0].rstrip("/")), rank, world_size
    raise NotImplementedError(f"torch.distributed.init_process_group(init_method="
                              f"{init_method!r}): eagergrad meets through env:// and tcp://")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the default process group: env:// (torchrun's MASTER_ADDR, MASTER_PORT, RANK,
    WORLD_SIZE) or tcp://host:port. With more than one process this starts
    jax.distributed; a peer that does not come within `timeout` raises DistStoreError.

    >>> import eagergrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_rank(), dist.get_world_size()
    (0, 1)
    >>> dist.destroy_process_group()
    """
    if _STATE.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("torch.distributed.init_process_group(store=...): eagergrad "
                                  "meets through env:// and tcp://")
    backend = Backend(backend or "gloo")
    timeout = default_pg_timeout if timeout is None else timeout
    if world_size == 1 and rank in (-1, 0):
        rank = 0
    else:
        host, port, rank, world_size = _parse_init(init_method, rank, world_size)
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, world size {world_size}")
    if world_size > 1:
        _start_jax(host, port, rank, world_size, timeout.total_seconds())
    _STATE.rank = rank
    _STATE.world = ProcessGroup(range(world_size), backend, timeout)
    group.WORLD = GroupMember.WORLD = _STATE.world


def _start_jax(host, port, rank, world_size, timeout):
    import jax
    from jax._src import xla_bridge
    if xla_bridge.backends_are_initialized():
        raise RuntimeError("init_process_group() must be called before any tensor is made: "
                           "jax's backend is already running, and jax.distributed can only "
                           "start before it")
    coordinator = rendezvous(host, port, rank, world_size, timeout)
    try:
        jax.distributed.initialize(f"{host}:{coordinator}", world_size, rank,
                                   initialization_timeout=max(int(timeout), 1))
    except RuntimeError as e:
        raise DistStoreError(str(e)) from None
    _STATE.jax_distributed = True


def _world():
    if _STATE.world is None:
        raise ValueError(_NOT_INIT)
    return _STATE.world


def _group(g):
    pg = _world() if g is None else g
    if pg is not _STATE.world and pg.size() != _STATE.world.size():
        raise NotImplementedError("torch.distributed collectives on a group smaller than the "
                                  "world: eagergrad runs them over all processes")
    return pg


def destroy_process_group(group=None):
    """Leave the default process group (or forget `group`)."""
    if _STATE.world is None:
        raise AssertionError("Process group cannot be None")
    if group is not None and group is not _STATE.world:
        return
    if _STATE.jax_distributed:
        import jax
        jax.distributed.shutdown()
        _STATE.jax_distributed = False
    _STATE.world = None
    _STATE.rank = -1
    globals()["group"].WORLD = GroupMember.WORLD = None


def get_rank(group=None):
    pg = _world() if group is None else group
    return pg.rank()


def get_world_size(group=None):
    pg = _world() if group is None else group
    return pg.size()


def get_backend(group=None):
    pg = _world() if group is None else group
    return pg._backend


def get_process_group_ranks(group):
    return list((_world() if group is None else group)._ranks)


def get_global_rank(group, group_rank):
    return get_process_group_ranks(group)[group_rank]


def get_group_rank(group, global_rank):
    return get_process_group_ranks(group).index(global_rank)


def get_pg_count():
    return 1 if _STATE.world is not None else 0


def get_node_local_rank(fallback_rank=None):
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A process group of `ranks` (all of them if None)."""
    world = _world()
    ranks = list(range(world.size())) if ranks is None else list(ranks)
    if len(ranks) > world.size():
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    return ProcessGroup(sorted(ranks) if sort_ranks else ranks,
                        Backend(backend) if backend else world._backend,
                        timeout or world._timeout)


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every process of the group reaches here."""
    _group(group)
    if _STATE.jax_distributed:
        from jax.experimental import multihost_utils
        multihost_utils.sync_global_devices("eagergrad.distributed.barrier")
    return Work() if async_op else None


# ---- collectives on one tensor per process ------------------------------------------------
def _gathered(tensor):
    """(world, *shape) numpy array: every process's value of `tensor`."""
    value = np.asarray(tensor._value)
    if not _STATE.jax_distributed:
        return value[None]
    from jax.experimental import multihost_utils
    return np.asarray(multihost_utils.process_allgather(value, tiled=False))


def _put(tensor, value):
    import jax.numpy as jnp
    tensor._write(jnp.asarray(np.asarray(value).astype(tensor.dtype.np, copy=False)))


def _check_tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")


def _reduce(stack, op, dtype):
    op = ReduceOp.RedOpType(op)
    if op is ReduceOp.PREMUL_SUM:
        raise NotImplementedError("torch.distributed.ReduceOp.PREMUL_SUM")
    integral = not (dtype.is_floating_point or dtype.is_complex)
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and not integral:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op is ReduceOp.AVG and integral:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dtype.scalar_name}")
    return _REDUCE[op](stack, axis=0)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` across the processes, in place: every process gets the result.

    >>> import eagergrad as torch, eagergrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> t = torch.tensor([1.0, 2.0]); dist.all_reduce(t); t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor)
    _group(group)
    if _STATE.jax_distributed:
        _put(tensor, _reduce(_gathered(tensor), op, tensor.dtype))
    else:  # (one process: the value is its own reduction; no trip through the host)
        _reduce(np.zeros((1, 0), tensor.dtype.np), op, tensor.dtype)
    if op == ReduceOp.AVG:  # (gloo sums, then divides in place: a version bump)
        tensor._version_counter.version += 1
    return Work([tensor]) if async_op else None


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Every process's `tensor` becomes rank `src`'s, in place."""
    _check_tensor(tensor)
    pg = _group(group)
    src = group_src if src is None else src
    if not 0 <= src < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::broadcast: invalid root rank: {src}")
    _put(tensor, _gathered(tensor)[src])
    return Work([tensor]) if async_op else None


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """`tensor_list[i]` becomes rank i's `tensor`."""
    _check_tensor(tensor)
    pg = _group(group)
    if len(tensor_list) != pg.size():
        raise ValueError(f"ProcessGroupGloo::allgather: invalid output tensor list at index "
                         f"0 (expected length {pg.size()}, got {len(tensor_list)})")
    for t, value in zip(tensor_list, _gathered(tensor)):
        if tuple(t.shape) != tuple(tensor.shape):
            raise RuntimeError("ProcessGroupGloo::allgather: invalid tensor size")
        _put(t, value)
    return Work(list(tensor_list)) if async_op else None


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """`output_tensor` becomes every rank's `input_tensor`, concatenated on dim 0 (or
    stacked, if it has one more dimension)."""
    _check_tensor(input_tensor, "input_tensor")
    pg = _group(group)
    got = _gathered(input_tensor)
    n, shape = pg.size(), tuple(input_tensor.shape)
    concat = (n * shape[0],) + shape[1:] if shape else None
    if tuple(output_tensor.shape) == (n,) + shape and pg._backend != Backend.GLOO:
        _put(output_tensor, got)  # (stacked: nccl's, not gloo's)
    elif tuple(output_tensor.shape) == concat:
        _put(output_tensor, got.reshape(concat))
    else:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                           f"(expected ({', '.join(map(str, shape))}), got "
                           f"({', '.join(map(str, output_tensor.shape))}))")
    return Work([output_tensor]) if async_op else None


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """`output` becomes this rank's chunk (dim 0) of the reduction of every rank's `input`."""
    _check_tensor(input, "input")
    pg = _group(group)
    n = pg.size()
    if input.shape[0] != n * output.shape[0] or tuple(input.shape[1:]) != tuple(
            output.shape[1:]):
        raise ValueError("input tensor must be the same size as output size times world size")
    total = _reduce(_gathered(input), op, input.dtype)
    k = output.shape[0]
    _put(output, total[pg.rank() * k:(pg.rank() + 1) * k])
    return Work([output]) if async_op else None


def _deprecated(name, new):
    def f(*args, **kwargs):
        warnings.warn(f"`torch.distributed.{name}` is deprecated. Please use "
                      f"`torch.distributed.{new.__name__}` instead.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Deprecated in torch 2.13: {new.__name__}."
    return f


all_gather_into_tensor = _deprecated("all_gather_into_tensor", all_gather_single)
reduce_scatter_tensor = _deprecated("reduce_scatter_tensor", reduce_scatter_single)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Rank i's `output` is the concatenation of chunk i of every rank's `input` (dim 0)."""
    pg = _group(group)
    if output_split_sizes is not None or input_split_sizes is not None:
        if pg.size() > 1:
            raise NotImplementedError("torch.distributed.all_to_all_single with split sizes")
    got = _gathered(input)
    n, r = pg.size(), pg.rank()
    k = input.shape[0] // n
    _put(output, np.concatenate([g[r * k:(r + 1) * k] for g in got]))
    return Work([output]) if async_op else None


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Rank `dst`'s `tensor` becomes the reduction of every rank's; the others keep theirs."""
    pg = _group(group)
    dst = group_dst if dst is None else dst
    total = _reduce(_gathered(tensor), op, tensor.dtype)
    if pg.rank() == dst:
        _put(tensor, total)
    return Work([tensor]) if async_op else None


def all_gather_object(object_list, obj, group=None):
    """`object_list[i]` becomes rank i's picklable `obj`."""
    import pickle
    pg = _group(group)
    data = np.frombuffer(pickle.dumps(obj), np.uint8)
    sizes = _gathered(from_jax(np.array([data.size], np.int64)))[:, 0]
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[:data.size] = data
    got = _gathered(from_jax(padded))
    for i in range(pg.size()):
        object_list[i] = pickle.loads(got[i][:sizes[i]].tobytes())


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """`object_list`'s items become rank `src`'s."""
    src = group_src if src is None else src
    got = [None] * _group(group).size()
    all_gather_object(got, list(object_list), group)
    object_list[:] = got[src]
