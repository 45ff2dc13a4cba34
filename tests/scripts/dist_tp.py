"""Tensor parallelism of an MLP on a 4-rank mesh (ColwiseParallel, then RowwiseParallel),
printed line by line: argv[1] is `torch` (LocalTensorMode over a fake 4-rank group) or
`eagergrad` (one process, 4 simulated CPU devices). Weights and data come from numpy."""
import contextlib
import importlib
import os
import sys

import numpy as np
from _show import devices, show

if sys.argv[1] == "torch":
    import torch
    import torch.distributed as dist
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=4)
    mode = LocalTensorMode(4)

    def ranks(t):
        t = t.wait() if hasattr(t, "wait") else t  # (an async collective's result)
        return [t._local_tensors[r] for r in range(4)]
else:
    os.environ["XLA_FLAGS"] = devices(4)
    import eagergrad as torch
    mode = contextlib.nullcontext()

    def ranks(t):
        return t._locals
dt = importlib.import_module(sys.argv[1] + ".distributed.tensor")
tp = importlib.import_module(sys.argv[1] + ".distributed.tensor.parallel")
nn = torch.nn


def fmt(t):
    return [round(v, 9) for v in t.flatten().tolist()]


def lay(y):
    return (type(y).__name__, y.placements, tuple(y.shape),
            [fmt(x) for x in ranks(y.to_local())], fmt(y.full_tensor()))


rng = np.random.default_rng(0)
W1, B1 = rng.standard_normal((16, 4)), rng.standard_normal(16)
W2, B2 = rng.standard_normal((3, 16)), rng.standard_normal(3)
X, Y = rng.standard_normal((8, 4)), rng.standard_normal((8, 3))


def mlp():
    m = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).double()
    with torch.no_grad():
        for p, v in zip(m.parameters(), (W1, B1, W2, B2)):
            p.copy_(torch.tensor(v))
    return m


with mode:
    mesh = dt.init_device_mesh("cpu", (4,))
    model = tp.parallelize_module(mlp(), mesh, {"0": tp.ColwiseParallel(),
                                                "2": tp.RowwiseParallel()})
    show("params", lambda: [(n, type(p).__name__, isinstance(p, nn.Parameter), p.placements,
                             tuple(p.to_local().shape), p.requires_grad)
                            for n, p in model.named_parameters()])
    show("styles", lambda: (tp.ColwiseParallel(), tp.RowwiseParallel()))
    x, y = torch.tensor(X), torch.tensor(Y)
    out = model(x)
    show("output", lambda: (isinstance(out, torch.Tensor), tuple(out.shape),
                            [fmt(o) for o in ranks(out)]))
    loss = ((out - y) ** 2).mean()
    loss.backward()
    show("loss", lambda: [fmt(v) for v in ranks(loss)])
    for n, p in model.named_parameters():
        show(f"grad {n}", lambda p=p: lay(p.grad))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        opt.step()
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        show(f"step {step} loss", lambda: [fmt(v) for v in ranks(loss)])
    for n, p in model.named_parameters():
        show(f"param {n}", lambda p=p: lay(p))
        show(f"momentum {n}", lambda p=p: lay(opt.state[p]["momentum_buffer"]))
    wrapped = tp.parallelize_module(mlp(), mesh, {
        "": tp.PrepareModuleInput(input_layouts=dt.Shard(0),
                                  desired_input_layouts=dt.Replicate(), use_local_output=True),
        "0": tp.ColwiseParallel(), "2": tp.RowwiseParallel(use_local_output=False)})
    tp.parallelize_module(wrapped, mesh, tp.PrepareModuleOutput(
        output_layouts=dt.Replicate(), desired_output_layouts=dt.Shard(0)))
    x_shard = dt.distribute_tensor(x, mesh, [dt.Shard(0)]).to_local()
    out = wrapped(x_shard)
    show("prepared output", lambda: (tuple(out.shape), [fmt(o) for o in ranks(out)]))
    norm = nn.LayerNorm(4).double()
    with torch.no_grad():
        norm.weight.copy_(torch.tensor(W1[0]))
    tp.parallelize_module(norm, mesh, tp.SequenceParallel())
    seq = torch.tensor(rng.standard_normal((2, 8, 4)))
    y = norm(seq)
    (y * y).sum().backward()
    show("sequence parallel", lambda: (tp.SequenceParallel(), lay(y), lay(norm.weight.grad),
                                       lay(norm.bias.grad)))
    logits = torch.tensor(rng.standard_normal((8, 8)))
    labels = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7])
    xl = dt.distribute_tensor(logits, mesh, [dt.Shard(1)]).requires_grad_()
    with tp.loss_parallel():
        lsm = xl.log_softmax(-1)
        loss = torch.nn.functional.cross_entropy(xl, labels)
        loss.backward()
    show("loss_parallel", lambda: (lay(lsm), lay(loss), lay(xl.grad)))
    show("prepare styles", lambda: (tp.PrepareModuleInput(input_layouts=dt.Shard(0),
                                                          desired_input_layouts=dt.Replicate()),
                                    tp.PrepareModuleOutput(output_layouts=dt.Replicate(),
                                                           desired_output_layouts=dt.Shard(0))))
