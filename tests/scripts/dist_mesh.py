"""DeviceMesh on 8 devices, printed line by line: argv[1] is `torch` (rank 0 of a fake
8-rank group) or `eagergrad` (one process, 8 simulated CPU devices)."""
import importlib
import os
import sys

from _show import devices, show

if sys.argv[1] == "eagergrad":
    os.environ["XLA_FLAGS"] = devices(8)
dist = importlib.import_module(sys.argv[1] + ".distributed")
if sys.argv[1] == "torch":
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
from_mesh = importlib.import_module(sys.argv[1] + ".distributed.device_mesh")



init = from_mesh.init_device_mesh
m = init("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
show("mesh", lambda: (repr(m), m.mesh.tolist(), m.shape, m.ndim, m.size(), m.size(1),
                      m.size("tp") if sys.argv[1] == "eagergrad" else m.size(1),
                      m.mesh_dim_names, m.device_type))
for names in ("tp", "dp", ("dp", "tp"), ("tp", "dp"), "x"):
    show(f"slice {names}", lambda names=names: (repr(m[names]), m[names].mesh.tolist(),
                                                m[names].mesh_dim_names))
flat = m._flatten("dp_tp")
show("flatten", lambda: (repr(flat), flat.mesh.tolist(), repr(m["dp_tp"])))
show("coordinate", lambda: (m.get_coordinate(), m.get_local_rank("tp"), m.get_local_rank(0)))
show("local rank of 2-d", lambda: m.get_local_rank())
show("too big", lambda: init("cpu", (3, 4)))
show("names length", lambda: init("cpu", (2, 4), mesh_dim_names=("a",)))
show("repeated names", lambda: init("cpu", (8,), mesh_dim_names=("a", "a")))
m1 = init("cpu", (8,))
show("unnamed", lambda: (repr(m1), m1.mesh_dim_names, m1.get_local_rank()))
show("slice unnamed", lambda: m1["x"])
m3 = init("cpu", (2, 2, 2), mesh_dim_names=("a", "b", "c"))
show("3-d", lambda: [(repr(m3[n]), m3[n].mesh.tolist()) for n in
                     ("a", "b", "c", ("a", "c"), ("b", "c"))])
show("equal", lambda: (m == init("cpu", (2, 4), mesh_dim_names=("dp", "tp")),
                       hash(m) == hash(init("cpu", (2, 4), mesh_dim_names=("dp", "tp"))),
                       m == m1))
