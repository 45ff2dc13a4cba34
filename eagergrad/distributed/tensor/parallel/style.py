"""Tensor-parallel styles (torch's): how a module's parameters are laid out and how its
inputs and outputs are converted."""
from functools import partial

from ....nn.modules.linear import Linear
from ....nn.modules.sparse import Embedding
from ....nn.parameter import Parameter
from .._api import DTensor, distribute_module, distribute_tensor
from ..placement_types import Placement, Replicate, Shard


class ParallelStyle:
    """The base of the styles: `_apply(module, device_mesh)` parallelizes a module."""

    src_data_rank = 0

    def _apply(self, module, device_mesh):
        raise NotImplementedError


class _LinearStyle(ParallelStyle):
    """Colwise / Rowwise: parameters laid out by `partition`, inputs and outputs converted
    by the layouts."""

    def _distribute(self, module, mesh, placements_of):
        return distribute_module(
            module, mesh, partial(_shard_params_fn, placements_of),
            partial(_prepare_input, self.input_layouts, self.desired_input_layouts),
            partial(_prepare_output, self.output_layouts, self.use_local_output))

    def __repr__(self):
        return (f"{type(self).__name__}(input_layouts={self.input_layouts}, output_layouts="
                f"{self.output_layouts}, use_local_output={self.use_local_output})")


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


class ColwiseParallel(_LinearStyle):
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
            return self._distribute(module, device_mesh, lambda name: Shard(0))
        if isinstance(module, Embedding):
            return self._distribute(module, device_mesh, lambda name: Shard(1))
        raise NotImplementedError("ColwiseParallel currently only support nn.Linear and "
                                  "nn.Embedding!")


class RowwiseParallel(_LinearStyle):
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
            self.desired_input_layouts = (Shard(-1),)
            return self._distribute(module, device_mesh,
                                    lambda name: Shard(1) if name == "weight" else Replicate())
        if isinstance(module, Embedding):
            self.desired_input_layouts = (Replicate(),)
            return self._distribute(module, device_mesh, lambda name: Shard(0))
        raise NotImplementedError("RowwiseParallel currently only support nn.Linear and "
                                  "nn.Embedding!")


def _shard_params_fn(placements_of, name, module, mesh):
    if name == "":  # (distribute_module calls it for every submodule: the module itself)
        _shard_params(module, mesh, placements_of)


def _as_tuple(layouts):
    return (layouts,) if isinstance(layouts, Placement) else layouts


class PrepareModuleInput(ParallelStyle):
    """Lay out a module's inputs before its forward: each tensor input is read as laid out
    by `input_layouts` (a plain tensor: every rank's local) and redistributed to
    `desired_input_layouts`; a None layout leaves that input alone.

    >>> from eagergrad.distributed.tensor import Shard, Replicate
    >>> from eagergrad.distributed.tensor.parallel import PrepareModuleInput
    >>> PrepareModuleInput(input_layouts=Shard(0), desired_input_layouts=Replicate())
    PrepareModuleInput(input_layouts=(Shard(dim=0),), desired_input_layouts=(Replicate(),), \
input_kwarg_layouts={}, desired_input_kwarg_layouts={}, use_local_output=False)
    """

    def __init__(self, *, input_layouts=None, desired_input_layouts=None,
                 input_kwarg_layouts=None, desired_input_kwarg_layouts=None,
                 use_local_output=False):
        self.input_layouts = _as_tuple(input_layouts)
        self.desired_input_layouts = _as_tuple(desired_input_layouts)
        self.use_local_output = use_local_output
        if self.input_layouts is not None:
            if self.desired_input_layouts is None:
                raise AssertionError("desired module inputs should not be None!")
            if len(self.input_layouts) != len(self.desired_input_layouts):
                raise AssertionError("input_layouts and desired_input_layouts should have "
                                     "same length!")
        self.with_kwargs = input_kwarg_layouts is not None
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        if self.with_kwargs and len(self.input_kwarg_layouts) != len(
                self.desired_input_kwarg_layouts):
            raise AssertionError("input_kwarg_layouts and desired_input_kwarg_layouts should "
                                 "have same length!")

    def _prepare(self, x, mesh, layout, desired):
        if layout is None:
            return x
        if not isinstance(x, DTensor):
            if not hasattr(x, "dtype"):
                raise AssertionError("expecting input to be a torch.Tensor!")
            x = DTensor.from_local(x, mesh, (layout,), run_check=False)
        if desired is not None and layout != desired:
            x = x.redistribute(placements=(desired,))
        return x.to_local() if self.use_local_output else x

    def _inputs(self, inputs, mesh):
        if self.input_layouts is None:
            return inputs
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        if len(inputs) != len(self.input_layouts):
            raise ValueError("module inputs and input_layouts should have same length!")
        return tuple(self._prepare(x, mesh, a, b) for x, a, b in
                     zip(inputs, self.input_layouts, self.desired_input_layouts))

    def _apply(self, module, device_mesh):
        if self.with_kwargs:
            module.register_forward_pre_hook(lambda _, args, kwargs: (
                self._inputs(args, device_mesh),
                {k: self._prepare(v, device_mesh, self.input_kwarg_layouts.get(k),
                                  self.desired_input_kwarg_layouts.get(k))
                 for k, v in kwargs.items()}), with_kwargs=True)
        else:
            module.register_forward_pre_hook(lambda _, args: self._inputs(args, device_mesh))
        return module

    def __repr__(self):
        return (f"PrepareModuleInput(input_layouts={self.input_layouts}, desired_input_layouts="
                f"{self.desired_input_layouts}, input_kwarg_layouts={self.input_kwarg_layouts}, "
                f"desired_input_kwarg_layouts={self.desired_input_kwarg_layouts}, "
                f"use_local_output={self.use_local_output})")


class PrepareModuleOutput(ParallelStyle):
    """Lay out a module's outputs after its forward: each is read as laid out by
    `output_layouts` and redistributed to `desired_output_layouts` (then made local).

    >>> from eagergrad.distributed.tensor import Shard, Replicate
    >>> from eagergrad.distributed.tensor.parallel import PrepareModuleOutput
    >>> PrepareModuleOutput(output_layouts=Replicate(), desired_output_layouts=Shard(0))
    PrepareModuleOutput(output_layouts=(Replicate(),), desired_output_layouts=(Shard(dim=0),), \
use_local_output=True)
    """

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output=True):
        self.output_layouts = _as_tuple(output_layouts)
        self.desired_output_layouts = _as_tuple(desired_output_layouts)
        self.use_local_output = use_local_output
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError("output_layouts and desired_output_layouts should have same "
                                 "length!")

    def _outputs(self, outputs, mesh):
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        if len(outputs) != len(self.output_layouts):
            raise ValueError("module outputs and output_layouts should have same length!")
        out = []
        for y, layout, desired in zip(outputs, self.output_layouts,
                                      self.desired_output_layouts):
            if layout is None:
                out.append(y)
                continue
            if not isinstance(y, DTensor):
                y = DTensor.from_local(y, mesh, (layout,), run_check=False)
            if layout != desired:
                y = y.redistribute(placements=(desired,))
            out.append(y.to_local() if self.use_local_output else y)
        return out[0] if len(out) == 1 else tuple(out)

    def _apply(self, module, device_mesh):
        module.register_forward_hook(lambda _, args, outputs: self._outputs(outputs,
                                                                            device_mesh))
        return module

    def __repr__(self):
        return (f"PrepareModuleOutput(output_layouts={self.output_layouts}, "
                f"desired_output_layouts={self.desired_output_layouts}, use_local_output="
                f"{self.use_local_output})")


class SequenceParallel(ParallelStyle):
    """Run a norm or dropout module on inputs sharded along the sequence dim: its
    parameters replicated, its input read (or redistributed) as Shard(sequence_dim), its
    output a DTensor (local with `use_local_output`).

    >>> from eagergrad.distributed.tensor.parallel import SequenceParallel
    >>> SequenceParallel()
    SequenceParallel(sequence_dim=1, use_local_output=False)
    """

    def __init__(self, *, sequence_dim=1, use_local_output=False):
        self.sequence_sharding = (Shard(sequence_dim),)
        self.use_local_output = use_local_output

    @staticmethod
    def _replicate(name, module, mesh):
        for p_name, param in list(module.named_parameters()):
            module.register_parameter(p_name, Parameter(
                DTensor.from_local(param, mesh, [Replicate()], run_check=False)))

    @staticmethod
    def _prepare_input(sharding, mod, inputs, mesh):
        x = inputs[0]
        if isinstance(x, DTensor):
            return x if x.placements == sharding else x.redistribute(placements=sharding,
                                                                     async_op=True)
        if hasattr(x, "dtype"):
            return DTensor.from_local(x, mesh, sharding, run_check=False)
        raise ValueError(f"expecting input of {mod} to be a torch.Tensor or DTensor, but got "
                         f"{x}")

    def _apply(self, module, device_mesh):
        return distribute_module(
            module, device_mesh, self._replicate,
            partial(self._prepare_input, self.sequence_sharding),
            lambda mod, outputs, mesh: outputs.to_local() if self.use_local_output
            else outputs)

    def __repr__(self):
        return (f"SequenceParallel(sequence_dim={self.sequence_sharding[0].dim}, "
                f"use_local_output={self.use_local_output})")
