"""Tensor-parallel styles (torch's): how a module's parameters are laid out and how its
inputs and outputs are converted."""
from functools import partial

from ....nn.modules.linear import Linear
from ....nn.modules.sparse import Embedding
from ....nn.parameter import Parameter
from .._api import DTensor, distribute_module, distribute_tensor
from ..placement_types import Replicate, Shard


class ParallelStyle:
    """The base of the styles: `_apply(module, device_mesh)` parallelizes a module."""

    src_data_rank = 0

    def _apply(self, module, device_mesh):
        raise NotImplementedError


def _shard_params(module, mesh, placements_of):
    for name, param in list(module.named_parameters()):
        module.register_parameter(name, Parameter(
            distribute_tensor(param, mesh, [placements_of(name)]),
            requires_grad=param.requires_grad))


def _prepare_input(input_layouts, desired, mod, inputs, mesh):
    x = inputs[0]
    if not isinstance(x, DTensor):
        x = DTensor.from_local(x, mesh, input_layouts, run_check=False)
    if input_layouts != desired:
        x = x.redistribute(placements=desired, async_op=True)
    return x


def _prepare_output(output_layouts, use_local_output, mod, outputs, mesh):
    if outputs.placements != output_layouts:
        outputs = outputs.redistribute(placements=output_layouts, async_op=True)
    return outputs.to_local() if use_local_output else outputs


class ColwiseParallel(ParallelStyle):
    """Shard a Linear's weight and bias (or an Embedding's weight, Shard(1)) by output
    feature: a replicated input gives an output sharded on its last dim.

    >>> from eagergrad.distributed.tensor.parallel import ColwiseParallel
    >>> ColwiseParallel().output_layouts
    (Shard(dim=-1),)
    """

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = (input_layouts or Replicate(),)
        self.output_layouts = (output_layouts or Shard(-1),)
        self.desired_input_layouts = (Replicate(),)
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        if isinstance(module, Linear):
            fn = partial(_shard_params_fn, lambda name: Shard(0))
        elif isinstance(module, Embedding):
            fn = partial(_shard_params_fn, lambda name: Shard(1))
        else:
            raise NotImplementedError("ColwiseParallel currently only support nn.Linear and "
                                      "nn.Embedding!")
        return distribute_module(
            module, device_mesh, fn,
            partial(_prepare_input, self.input_layouts, self.desired_input_layouts),
            partial(_prepare_output, self.output_layouts, self.use_local_output))

    def __repr__(self):
        return (f"ColwiseParallel(input_layouts={self.input_layouts}, output_layouts="
                f"{self.output_layouts}, use_local_output={self.use_local_output})")


class RowwiseParallel(ParallelStyle):
    """Shard a Linear's weight by input feature (bias replicated), or an Embedding's by
    row: an input sharded on its last dim gives a replicated output (one all-reduce).

    >>> from eagergrad.distributed.tensor.parallel import RowwiseParallel
    >>> RowwiseParallel().input_layouts
    (Shard(dim=-1),)
    """

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = (input_layouts or Shard(-1),)
        self.output_layouts = (output_layouts or Replicate(),)
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        if isinstance(module, Linear):
            fn = partial(_shard_params_fn,
                         lambda name: Shard(1) if name == "weight" else Replicate())
            self.desired_input_layouts = (Shard(-1),)
        elif isinstance(module, Embedding):
            fn = partial(_shard_params_fn, lambda name: Shard(0))
            self.desired_input_layouts = (Replicate(),)
        else:
            raise NotImplementedError("RowwiseParallel currently only support nn.Linear and "
                                      "nn.Embedding!")
        return distribute_module(
            module, device_mesh, fn,
            partial(_prepare_input, self.input_layouts, self.desired_input_layouts),
            partial(_prepare_output, self.output_layouts, self.use_local_output))

    def __repr__(self):
        return (f"RowwiseParallel(input_layouts={self.input_layouts}, output_layouts="
                f"{self.output_layouts}, use_local_output={self.use_local_output})")


def _shard_params_fn(placements_of, name, module, mesh):
    if name == "":  # (distribute_module calls it for every submodule: the module itself)
        _shard_params(module, mesh, placements_of)
