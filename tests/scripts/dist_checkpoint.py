"""Distributed checkpoints on 8 simulated CPU devices: a state dict of DTensors on a
2x4 mesh (nested, uneven shards, plain tensors, Python values) saved with dcp.save and
loaded into DTensors on an 8x1 mesh with other placements and into plain tensors (one
device); an FSDP2-trained MLP's sharded state dict loaded into a tensor-parallel copy
through get/set_model_state_dict. Prints `label | checks` lines."""
import os

from _show import devices
import tempfile

os.environ["XLA_FLAGS"] = devices(8)

import numpy as np
import eagergrad as torch
import eagergrad.distributed.checkpoint as dcp
from eagergrad.distributed.checkpoint.state_dict import (
    StateDictOptions, get_model_state_dict, set_model_state_dict)
from eagergrad.distributed.fsdp import fully_shard
from eagergrad.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from eagergrad.distributed.tensor.parallel import (
    ColwiseParallel, RowwiseParallel, parallelize_module)

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
W, V, X, P = (torch.tensor(rng.standard_normal(s)) for s in ((6, 8), (5,), (4, 3), (3,)))
mesh24 = torch.distributed.init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
mesh81 = torch.distributed.init_device_mesh("cpu", (8, 1))
S0, S1, R = Shard(0), Shard(1), Replicate()
path = tempfile.mkdtemp()


def same(t, want):
    full = t.full_tensor() if isinstance(t, DTensor) else t
    return bool(np.array_equal(full.numpy(), want.numpy()))


def laid_out(t, mesh, pl, want):
    """t has placements pl and every rank's local is what distributing `want` gives."""
    ref = distribute_tensor(want, mesh, pl)
    return t.placements == tuple(pl) and all(
        np.array_equal(a.numpy(), b.numpy()) for a, b in zip(t._locals, ref._locals))


saved = {"w": distribute_tensor(W, mesh24, [S0, S1]), "v": distribute_tensor(V, mesh24, [R, S0]),
         "nested": {"x": distribute_tensor(X, mesh24, [S1, R])}, "plain": P.clone(), "step": 7}
dcp.save(saved, checkpoint_id=path)
print("saved |", sorted(os.listdir(path)))

target = {"w": distribute_tensor(torch.zeros(6, 8), mesh81, [S1, R]),
          "v": distribute_tensor(torch.zeros(5), mesh81, [S0, R]),
          "nested": {"x": distribute_tensor(torch.zeros(4, 3), mesh81, [R, R])},
          "plain": torch.zeros(3), "step": 0}
w_version = target["w"]._version
dcp.load(target, checkpoint_id=path)
print("8x1 |", laid_out(target["w"], mesh81, [S1, R], W), laid_out(target["v"], mesh81, [S0, R], V),
      laid_out(target["nested"]["x"], mesh81, [R, R], X), same(target["plain"], P),
      target["step"], target["w"]._version - w_version)
one = {"w": torch.zeros(6, 8), "v": torch.zeros(5), "nested": {"x": torch.zeros(4, 3)},
       "plain": torch.zeros(3), "step": 0}
dcp.load(one, checkpoint_id=path)
print("one device |", same(one["w"], W), same(one["v"], V), same(one["nested"]["x"], X),
      same(one["plain"], P), one["step"], type(one["w"]).__name__)
try:
    dcp.load({"missing": torch.zeros(1)}, checkpoint_id=path)
except dcp.CheckpointException as e:
    print("missing key |", e)


def mlp():
    m = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    return m


mesh8 = torch.distributed.init_device_mesh("cpu", (8,))
base = mlp()
fsdp = fully_shard(mlp(), mesh=mesh8)
fsdp.load_state_dict({k: distribute_tensor(v, mesh8, [S0]) for k, v in base.state_dict().items()})
opt = torch.optim.SGD(fsdp.parameters(), lr=0.1)
x = torch.tensor(rng.standard_normal((8, 4)))
for _ in range(3):
    fsdp(x).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
sharded = get_model_state_dict(fsdp)
full = get_model_state_dict(fsdp, options=StateDictOptions(full_state_dict=True))
print("get_model_state_dict |",
      sorted({(type(v).__name__, v.placements) for v in sharded.values()}),
      sorted({type(v).__name__ for v in full.values()}))
dcp.save(sharded, checkpoint_id=os.path.join(path, "model"))
tp = parallelize_module(mlp(), torch.distributed.init_device_mesh("cpu", (4,)),
                        {"0": ColwiseParallel(), "2": RowwiseParallel()})
into = get_model_state_dict(tp)
dcp.load(into, checkpoint_id=os.path.join(path, "model"))
keys = set_model_state_dict(tp, into)
with torch.no_grad():
    y_tp, y_fsdp = tp(x), fsdp(x)
print("fsdp to tp |", keys, sorted({v.placements for v in get_model_state_dict(tp).values()},
                                   key=str),
      bool(np.allclose(np.asarray(y_tp._locals[0].numpy()), y_fsdp.numpy(), atol=1e-12)))
plain = mlp()
print("full into plain |", set_model_state_dict(plain, full),
      bool(np.allclose(plain(x).detach().numpy(), y_fsdp.numpy(), atol=1e-12)))
try:
    set_model_state_dict(plain, {"0.weight": full["0.weight"]})
except RuntimeError as e:
    print("strict |", str(e).splitlines()[0], str(e).splitlines()[1][:60])
