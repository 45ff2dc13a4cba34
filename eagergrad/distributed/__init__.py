"""torch.distributed on jax: process groups and collectives (distributed_c10d.py), device
meshes (device_mesh.py). A rank is a process; each process drives its local devices.
Importing starts no jax backend, so `init_process_group` can start jax.distributed."""
from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError  # noqa: F401
from .distributed_c10d import (  # noqa: F401
    Backend, BuiltinCommHookType, GroupMember, ProcessGroup, ReduceOp, Work, all_gather,
    all_gather_into_tensor, all_gather_object, all_gather_single, all_reduce,
    all_to_all_single, barrier, broadcast, broadcast_object_list, default_pg_timeout,
    destroy_process_group, get_backend, get_global_rank, get_group_rank,
    get_node_local_rank, get_pg_count, get_process_group_ranks, get_rank, get_world_size,
    group, init_process_group, is_available, is_backend_available, is_gloo_available,
    is_initialized, is_mpi_available, is_nccl_available, is_torchelastic_launched,
    is_ucc_available, is_xccl_available, new_group, reduce, reduce_scatter_single,
    reduce_scatter_tensor)
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from .._torch_names import module_getattr

__getattr__ = module_getattr("eagergrad.distributed", "torch.distributed")
