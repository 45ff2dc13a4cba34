"""torch.distributed.checkpoint.state_dict: a parallelized model's state dict by its
original names (a DDP wrapper's `module.` and torch.compile's `_orig_mod.` left out),
sharded or full, and set back into whatever layout the model has now."""
from ...engine.grad_mode import no_grad
from ...tensor import Tensor
from ..tensor._api import DTensor, distribute_tensor
from ..._torch_names import module_getattr


class StateDictOptions:
    """torch's options: `full_state_dict` gathers DTensors into plain tensors,
    `cpu_offload` (a no-op here: tensors are in host memory), `strict` for setting."""

    def __init__(self, full_state_dict=False, cpu_offload=False, ignore_frozen_params=False,
                 keep_submodule_prefixes=True, strict=True, broadcast_from_rank0=False,
                 flatten_optimizer_state_dict=False, dsd_fqn_modifiers="_fqn_modifiers"):
        self.full_state_dict, self.cpu_offload = full_state_dict, cpu_offload
        self.ignore_frozen_params = ignore_frozen_params
        self.keep_submodule_prefixes, self.strict = keep_submodule_prefixes, strict
        self.broadcast_from_rank0 = broadcast_from_rank0
        self.flatten_optimizer_state_dict = flatten_optimizer_state_dict
        self.dsd_fqn_modifiers = dsd_fqn_modifiers


def _inner(model):
    """The module whose names are the state dict's: under DDP and torch.compile wrappers."""
    while True:
        if type(model).__name__ == "DistributedDataParallel" or hasattr(model, "_orig_mod"):
            model = getattr(model, "_orig_mod", None) or model.module
        else:
            return model


def get_model_state_dict(model, *, submodules=None, options=None):
    """The model's state dict by its original names: DTensors as they are, or (with
    `full_state_dict`) gathered into plain tensors."""
    if submodules is not None:
        raise NotImplementedError("eagergrad does not implement get_model_state_dict's "
                                  "submodules= yet")
    options = options or StateDictOptions()
    inner = _inner(model)
    sd = inner.state_dict()
    if options.ignore_frozen_params:
        frozen = {n for n, p in inner.named_parameters() if not p.requires_grad}
        sd = type(sd)((k, v) for k, v in sd.items() if k not in frozen)
    if options.full_state_dict:
        for k, v in sd.items():
            if isinstance(v, DTensor):
                sd[k] = v.full_tensor().detach()
    return sd


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load `model_state_dict` (sharded or full, any layout) into the model's current
    layout; returns `_IncompatibleKeys` as `load_state_dict` does."""
    options = options or StateDictOptions()
    inner = _inner(model)
    current = inner.state_dict(keep_vars=True)
    given = {}
    with no_grad():
        for k, v in model_state_dict.items():
            target = current.get(k)
            if isinstance(target, DTensor) and isinstance(v, Tensor):
                if not isinstance(v, DTensor) or v.device_mesh != target.device_mesh:
                    full = v.full_tensor() if isinstance(v, DTensor) else v
                    v = distribute_tensor(full.detach(), target.device_mesh, target.placements)
            elif isinstance(v, DTensor):
                v = v.full_tensor().detach()
            given[k] = v
    return inner.load_state_dict(given, strict=options.strict)


__getattr__ = module_getattr("eagergrad.distributed.checkpoint.state_dict",
                             "torch.distributed.checkpoint.state_dict")
