"""FSDP2 and tensor parallelism inside one process with 8 simulated CPU devices: the
examples' MLP classifier (SGD with momentum) and tiny GPT (AdamW, tied weights) train 10
float64 steps
- with fully_shard (each GPT block, then the model), once with every rank given the
  whole batch and once with each rank given its eighth (a LocalTensor);
- with tensor parallelism (ColwiseParallel / RowwiseParallel on the MLP's layers and on
  each GPT block's MLP, its qkv projection (output all-gathered) and output projection);
- with both on a 2x4 mesh: tensor parallelism on "tp", fully_shard on "dp", each dp rank
  given its half of the batch;
- with fully_shard on the 2x4 mesh (HSDP: replicated across dim 0, sharded across dim
  1), each rank given its eighth;
and alone on one device. Prints, per model and mode, whether parameters and losses match
the one-device run (1e-6), the parameters' layouts, and the differences."""
import os

from _show import devices

os.environ["XLA_FLAGS"] = devices(8)

import numpy as np
from eagergrad.runner import install

install()  # (the examples import torch: eagergrad)
import torch  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.fsdp import fully_shard  # noqa: E402
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor  # noqa: E402
from torch.distributed.tensor.parallel import parallelize_module  # noqa: E402
import _examples  # noqa: E402

torch.set_default_dtype(torch.float64)
mesh = init_device_mesh("cpu", (8,))
mesh2d = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))


def per_rank(t, split):
    """Each rank's eighth of the batch (dim 0); on the 2-D mesh, each data-parallel
    rank's half (the same for the ranks of one tensor-parallel group)."""
    if split == "2-D":
        return distribute_tensor(t, mesh2d, [Shard(0), Replicate()]).to_local()
    return distribute_tensor(t, mesh, [Shard(0)]).to_local()


def example(build):
    model, make_opt, batch, train = build()
    return model, make_opt, stepper(batch, train), _examples.tp_plan(model)


def stepper(batch, train):
    def step(model, opt, i, split):
        x, y = batch(i)
        if split:
            x, y = per_rank(x, split), per_rank(y, split)
        return train(model, opt, x, y)
    return step


def full(p):
    return (p.full_tensor() if isinstance(p, DTensor) else p).detach().numpy()


def mean_loss(loss):
    """The batch's loss: the mean of the ranks' (each the mean of an equal part)."""
    return float(np.mean([t.item() for t in loss._locals])) if hasattr(loss, "_locals") \
        else loss.item()


for name, build in (("mlp", _examples.mlp), ("gpt", _examples.gpt)):
    model, make_opt, step, _ = example(build)
    opt = make_opt(model.parameters())
    l0 = [step(model, opt, i, False).item() for i in range(10)]
    p0 = [full(p) for p in model.parameters()]
    for mode in ("fsdp same", "fsdp per-rank", "tp", "2-D fsdp x tp", "hsdp"):
        split = "2-D" if mode.startswith("2-D") else mode in ("fsdp per-rank", "hsdp")
        model, make_opt, step, plan = example(build)
        if mode == "tp":
            parallelize_module(model, mesh, plan)
        elif mode == "2-D fsdp x tp":
            parallelize_module(model, mesh2d["tp"], plan)
            _examples.shard_blocks(model, mesh2d["dp"])
            fully_shard(model, mesh=mesh2d["dp"])
        elif mode == "hsdp":
            _examples.shard_blocks(model, mesh2d)
            fully_shard(model, mesh=mesh2d)
        else:
            _examples.shard_blocks(model, mesh)
            fully_shard(model, mesh=mesh)
        opt = make_opt(model.parameters())
        losses = [mean_loss(step(model, opt, i, split)) for i in range(10)]
        p1 = [full(p) for p in model.parameters()]
        diff = max(float(np.abs(a - b).max()) for a, b in zip(p0, p1))
        ldiff = max(abs(a - b) for a, b in zip(l0, losses))
        layouts = sorted({(type(p).__name__, getattr(p, "placements", None))
                          for p in model.parameters()}, key=str)
        print(f"{name} {mode} | params {diff < 1e-6} | "
              f"losses {ldiff < 1e-6} | {type(model).__name__} {layouts} | trained "
              f"{losses[-1] < losses[0]} | {diff:.1e} {ldiff:.1e}", flush=True)
