"""DDP between the processes of a torchrun launch: each rank trains an MLP on its own
half of a batch for 10 steps (float64), in four variants (plain SGD, Adam with no_sync
accumulation, the fp16 compression hook, an unused parameter with
find_unused_parameters). Rank 0 also trains the same MLP alone on the whole batch: with
DDP's averaging, its parameters must be the DDP ones. Prints one line per variant and
rank; tests/test_distributed.py compares them with torch's own torchrun."""
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

torch.set_default_dtype(torch.float64)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()


class Net(nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(8, 3)
        self.spare = nn.Linear(3, 3) if unused else None

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def batches(step):  # (numpy's: eagergrad's generator is not torch's)
    r = np.random.default_rng(100 + step)
    return (torch.tensor(r.standard_normal((4 * world, 6))),
            torch.tensor(r.integers(0, 3, 4 * world)))


def train(model, opt, step_fn, steps=10):
    for step in range(steps):
        x, y = batches(step)
        step_fn(model, opt, x, y, step)
    return model


def local(x, y):
    return x[rank * 4:(rank + 1) * 4], y[rank * 4:(rank + 1) * 4]


def ddp_step(model, opt, x, y, step):
    opt.zero_grad()
    xs, ys = local(x, y)
    nn.functional.cross_entropy(model(xs), ys).backward()
    opt.step()


def accumulate_step(model, opt, x, y, step):
    opt.zero_grad()
    xs, ys = local(x, y)
    with model.no_sync():
        nn.functional.cross_entropy(model(xs[:2]), ys[:2]).backward()
    nn.functional.cross_entropy(model(xs[2:]), ys[2:]).backward()
    opt.step()


def alone_step(model, opt, x, y, step):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


def summary(model):
    m = getattr(model, "module", model)
    return " ".join(f"{n}:{p.sum().item():.15e}/{p.grad.abs().sum().item():.15e}"
                    if p.grad is not None else f"{n}:{p.sum().item():.15e}/None"
                    for n, p in m.named_parameters())


def make(unused=False, seed=None):
    """Parameters from numpy, different on each rank: DDP broadcasts rank 0's."""
    net = Net(unused)
    r = np.random.default_rng(1 + rank if seed is None else seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.tensor(r.uniform(-0.5, 0.5, tuple(p.shape))))
    return net


lines = []
ddp = nn.parallel.DistributedDataParallel(make())
sgd = train(ddp, torch.optim.SGD(ddp.parameters(), lr=0.5), ddp_step)
lines.append(f"sgd {summary(sgd)}")

ddp = nn.parallel.DistributedDataParallel(make())
adam = train(ddp, torch.optim.Adam(ddp.parameters(), lr=0.05), accumulate_step)
lines.append(f"adam_no_sync {summary(adam)}")

ddp = nn.parallel.DistributedDataParallel(make())
ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
fp16 = train(ddp, torch.optim.SGD(ddp.parameters(), lr=0.5), ddp_step)
lines.append(f"fp16_hook {summary(fp16)}")

ddp = nn.parallel.DistributedDataParallel(make(unused=True), find_unused_parameters=True)
unused = train(ddp, torch.optim.SGD(ddp.parameters(), lr=0.5, momentum=0.9), ddp_step)
lines.append(f"unused {summary(unused)}")

if rank == 0:  # the same training alone on the whole batch
    alone = make(seed=1)
    train(alone, torch.optim.SGD(alone.parameters(), lr=0.5), alone_step)
    diff = max((a - b).abs().max().item() for a, b in
               zip(alone.parameters(), sgd.module.parameters()))
    lines.append(f"alone_matches_ddp {diff < 1e-12}")
for line in lines:
    os.write(1, f"rank {rank} {line}\n".encode())
dist.destroy_process_group()
