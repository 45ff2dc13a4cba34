"""The examples' MLP classifier and tiny GPT as the distributed scripts train them: each
builder gives (model, optimizer factory, batch(i) -> (inputs, targets), train_step(model,
opt, x, y) -> loss), weights and data from numpy. Import it after `runner.install()`."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import torch
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel
import mlp_classifier
import tiny_gpt


def mlp():
    model = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 3))
    mlp_classifier.numpy_init(model, 0)
    x, y = mlp_classifier.make_data(n=160)
    x = x.double()

    def batch(i):
        return x[16 * i:16 * (i + 1)], y[16 * i:16 * (i + 1)]

    def train(model, opt, xb, yb):
        return mlp_classifier.train_step(model, torch.nn.CrossEntropyLoss(), opt, xb, yb)
    return model, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), batch, train


def gpt():
    chars = sorted(set(tiny_gpt.TEXT))
    data = torch.tensor([chars.index(c) for c in tiny_gpt.TEXT])
    model = tiny_gpt.GPT(len(chars), block=16)
    tiny_gpt.numpy_init(model, 0)
    starts = np.random.RandomState(1).randint(0, len(data) - 17, (10, 8))

    def batch(i):
        idx = torch.tensor(starts[i])[:, None] + torch.arange(17)
        return data[idx[:, :-1]], data[idx[:, 1:]]
    return model, lambda ps: torch.optim.AdamW(ps, lr=3e-3, betas=(0.9, 0.95),
                                               weight_decay=0.1), batch, tiny_gpt.train_step


def tp_plan(model):
    """The tensor-parallel plan of the MLP, or of the GPT: each block's MLP, its qkv
    projection (output all-gathered) and its output projection."""
    if not hasattr(model, "blocks"):
        return {"0": ColwiseParallel(), "2": RowwiseParallel()}
    return {"blocks.*.mlp.0": ColwiseParallel(), "blocks.*.mlp.2": RowwiseParallel(),
            "blocks.*.qkv": ColwiseParallel(output_layouts=Replicate()),
            "blocks.*.proj": RowwiseParallel(input_layouts=Replicate())}


def shard_blocks(model, mesh):
    """fully_shard each GPT block on `mesh` (the MLP has none)."""
    for blk in getattr(model, "blocks", ()):
        fully_shard(blk, mesh=mesh)
