"""parallelize_module: apply tensor-parallel styles to a module or its submodules."""
import warnings
from fnmatch import fnmatch

from .style import ParallelStyle


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """Apply `parallelize_plan` (a ParallelStyle, or {submodule path (fnmatch patterns):
    style}) to `module` over `device_mesh`; returns the module.

    >>> import eagergrad as torch
    >>> from eagergrad.distributed.tensor.parallel import parallelize_module, RowwiseParallel
    >>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
    >>> m = parallelize_module(torch.nn.Sequential(torch.nn.Linear(4, 2)), mesh,
    ...                        {"0": RowwiseParallel()})
    >>> m[0].weight.placements, m[0].bias.placements
    ((Shard(dim=1),), (Replicate(),))
    >>> torch.distributed.destroy_process_group()
    """
    if device_mesh is None:
        raise RuntimeError("No device mesh is currently active, please create a DeviceMesh "
                           "first!")
    if parallelize_plan is None:
        warnings.warn("No parallelize_plan is provided and auto-parallel is not supported at "
                      "the moment, so this parallelize_module call will do nothing.",
                      stacklevel=2)
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan.src_data_rank = src_data_rank
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError("Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for "
                        f"parallelize_plan, {type(parallelize_plan)} found!")
    for path, style in parallelize_plan.items():
        if path == "":
            parallelize_module(module, device_mesh, style)
            continue
        token, _, rest = path.partition(".")
        matched = [m for name, m in module.named_children() if fnmatch(name, token)]
        if not matched:
            warnings.warn(f"Parallelize plan key '{path}' could not be resolved: no submodule "
                          f"matching token '{token}' in module {module}, skipping this plan "
                          "entry.", stacklevel=2)
            continue
        for sub in matched:
            if rest:
                parallelize_module(sub, device_mesh, {rest: style}, src_data_rank=src_data_rank)
            else:
                parallelize_module(sub, device_mesh, style, src_data_rank=src_data_rank)
    return module
