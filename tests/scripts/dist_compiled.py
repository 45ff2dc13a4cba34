"""torch.compile over a device mesh (8 simulated CPU devices): each training step of the
examples' MLP (tensor parallel; 2-D: tensor parallel on "tp", fully_shard on "dp";
fully_shard, each rank its eighth of the batch, uneven shards padded) and tiny GPT
(tensor parallel; fully_shard) runs eagerly on one copy and compiled on another, 5 float64
steps, compared after every step: the loss on every rank, every rank's local of every
parameter, gradient and optimizer state, the parameters' version counters. Also: eager
DTensor ops run as SPMD programs over the 8 devices (no op rank by rank), the compiled
step is one program replayed (no recompile as a scheduler changes lr), and the
collectives XLA's partitioner leaves in the compiled program of one tensor-parallel
layer are torch's (ColwiseParallel: none in forward, one all-reduce in backward;
RowwiseParallel: one all-reduce in forward, none in backward). A compiled function of a
DTensor traces anew for other placements and another default dtype, and replays otherwise.
Prints `label | value`."""
import os

from _show import devices
import re

os.environ["XLA_FLAGS"] = devices(8)

import numpy as np
from eagergrad.runner import install

install()  # (the examples import torch: eagergrad)
import torch  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.fsdp import fully_shard  # noqa: E402
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor  # noqa: E402
from torch.distributed.tensor.parallel import (  # noqa: E402
    ColwiseParallel, RowwiseParallel, parallelize_module)
from eagergrad._dynamo import COUNTERS  # noqa: E402
from eagergrad.distributed.tensor import _spmd  # noqa: E402
import _examples  # noqa: E402

torch.set_default_dtype(torch.float64)
mesh = init_device_mesh("cpu", (8,))
mesh2d = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))


def ranks(t):
    """Every rank's value of t (a DTensor's or LocalTensor's locals), as numpy."""
    if t is None:
        return None
    if isinstance(t, DTensor) or hasattr(t, "_locals"):
        return [np.asarray(x._value) for x in t._locals]
    return [np.asarray(t._value)]


def differ(a, b):
    if a is None or b is None:
        return 0.0 if a is b else float("inf")
    return max(float(np.abs(x - y).max(initial=0)) for x, y in zip(a, b))


def build(which, mode):
    model, make_opt, batch, train = getattr(_examples, which)()
    if mode == "tp":
        parallelize_module(model, mesh, _examples.tp_plan(model))
    elif mode == "fsdp":
        _examples.shard_blocks(model, mesh)
        fully_shard(model, mesh=mesh)
    else:
        parallelize_module(model, mesh2d["tp"], _examples.tp_plan(model))
        fully_shard(model, mesh=mesh2d["dp"])
    opt = make_opt(model.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 1.0 / (1 + i))

    def step(x, y):
        return train(model, opt, x, y)
    return model, sched, batch, step


for which, mode in (("mlp", "tp"), ("mlp", "2-D"), ("mlp", "fsdp"), ("gpt", "tp"),
                    ("gpt", "fsdp")):
    m1, s1, batch, eager = build(which, mode)
    m2, s2, _, step = build(which, mode)
    o1, o2 = s1.optimizer, s2.optimizer
    compiled = torch.compile(step)
    worst, replayed = 0.0, COUNTERS["replayed"]
    spmd, by_rank = _spmd.RUNS["spmd"], _spmd.RUNS["by_rank"]
    versions = True
    for i in range(5):
        x, y = batch(i)
        if mode == "2-D":  # (each data-parallel rank its half of the batch)
            x, y = (distribute_tensor(t, mesh2d, [Shard(0), Replicate()]).to_local()
                    for t in (x, y))
        elif mode == "fsdp":  # (each rank its eighth)
            x, y = (distribute_tensor(t, mesh, [Shard(0)]).to_local() for t in (x, y))
        a, b = eager(x, y), compiled(x, y)
        s1.step()
        s2.step()
        worst = max(worst, differ(ranks(a), ranks(b)))
        for p, q in zip(m1.parameters(), m2.parameters()):
            worst = max(worst, differ(ranks(p), ranks(q)), differ(ranks(p.grad), ranks(q.grad)))
            versions &= p._version == q._version
            for k, v in o1.state[p].items():
                worst = max(worst, differ(ranks(v), ranks(o2.state[q][k])))
    ex = torch._dynamo.explain(compiled)
    sharded = all(len(p._stack.sharding.device_set) == 8 for p in m1.parameters()
                  if isinstance(p, DTensor))
    print(f"{which} {mode} compiled equals eager (1e-12) | {worst < 1e-12}")
    print(f"{which} {mode} versions equal | {versions}")
    print(f"{which} {mode} graphs, recompiles, breaks | {ex.graph_count} {ex.recompile_count} "
          f"{ex.graph_break_count}")
    print(f"{which} {mode} replays of the 5 steps | {COUNTERS['replayed'] - replayed}")
    print(f"{which} {mode} eager ops: some SPMD, none rank by rank, parameters on 8 devices | "
          f"{_spmd.RUNS['spmd'] > spmd} {_spmd.RUNS['by_rank'] == by_rank} {sharded}")
    print(f"{which} {mode} worst difference | {worst:.1e}", flush=True)


# a compiled function of a DTensor argument: its guard keys on the placements (another
# layout traces anew) and on the default dtype (a factory in its body); the other calls
# replay
got = []
traced, replayed = COUNTERS["traced"], COUNTERS["replayed"]


def twice_sum(x):
    return (x * 2).sum().full_tensor().to(torch.tensor(1.0).dtype)


compiled = torch.compile(twice_sum)
base = torch.arange(64.).reshape(8, 8)
S0, S1, f64, f32 = Shard(0), Shard(1), torch.float64, torch.float32
for pl, want in ((S0, f64), (S0, f64), (S0, f64), (S1, f64), (S1, f64), (S1, f32), (S1, f32)):
    torch.set_default_dtype(want)
    out = compiled(distribute_tensor(base, mesh, [pl]))
    got.append((out.item(), out.dtype == want))
torch.set_default_dtype(torch.float64)
print(f"layouts: values and dtypes | {got == [(4032.0, True)] * 7}")
print(f"layouts: recompiles | {torch._dynamo.explain(compiled).recompile_reasons}")
print(f"layouts: traced, replayed calls | {COUNTERS['traced'] - traced} "
      f"{COUNTERS['replayed'] - replayed}")


def collectives(text):
    return {k: len(re.findall(rf"= \S+ {k}(?:-start)?\(", text))
            for k in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                      "collective-permute")}


for style in (ColwiseParallel(), RowwiseParallel()):
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 8)
    parallelize_module(lin, mesh, style)
    x = torch.randn(4, 8 if isinstance(style, ColwiseParallel) else 1, requires_grad=True)

    def forward(x):
        with torch.no_grad():
            return lin(x)

    def forward_backward(x):
        y = lin(x).sum()
        y.backward()
        return y
    for f in (forward, forward_backward):
        c = torch.compile(f)
        c(x)
        c(x)
        found = [collectives(p) for p in torch._dynamo.explain(c).programs]
        print(f"{type(style).__name__} {f.__name__} collectives | {found}", flush=True)
