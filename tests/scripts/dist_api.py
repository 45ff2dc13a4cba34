"""torch.distributed's single-process API, printed line by line: run with `torch` or
`eagergrad` as argv[1] (and a free port as argv[2]); tests/test_distributed.py compares."""
import datetime
import importlib
import os
import sys

from _show import show

torch = importlib.import_module(sys.argv[1])
dist = importlib.import_module(sys.argv[1] + ".distributed")
PORT = sys.argv[2]



for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
    os.environ.pop(k, None)
show("available", lambda: (dist.is_available(), dist.is_initialized()))
for name in ("get_rank", "get_world_size", "barrier", "get_backend", "new_group",
             "destroy_process_group"):
    show(name, getattr(dist, name))
T = datetime.timedelta(seconds=5)
show("env", lambda: dist.init_process_group("gloo", timeout=T))
show("tcp no rank", lambda: dist.init_process_group(
    "gloo", init_method=f"tcp://127.0.0.1:{PORT}", timeout=T))
show("unknown backend", lambda: dist.init_process_group(
    "foo", init_method=f"tcp://127.0.0.1:{PORT}", rank=0, world_size=1))
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{PORT}", rank=0, world_size=1,
                        timeout=T)
show("twice", lambda: dist.init_process_group("gloo", rank=0, world_size=1))
show("state", lambda: (dist.is_initialized(), dist.get_rank(), dist.get_world_size(),
                       dist.get_backend(), dist.get_backend() == dist.Backend.GLOO,
                       dist.get_process_group_ranks(dist.group.WORLD)))
show("ops", lambda: (list(dist.ReduceOp.RedOpType.__members__)[:8], repr(dist.ReduceOp.SUM)))
for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
    for dt in (torch.int64, torch.float32):
        def reduce_(op=op, dt=dt):
            t = torch.tensor([3, 5], dtype=dt)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            return t.tolist(), t.dtype, t._version
        show(f"all_reduce {op} {dt}", reduce_)


def through_view():
    base = torch.arange(4.0)
    dist.all_reduce(base[1:])
    return base.tolist(), base._version


show("all_reduce view", through_view)


def async_work():
    w = dist.all_reduce(torch.ones(2), async_op=True)
    return w.wait(), w.is_completed()


show("async", async_work)
show("broadcast bad root", lambda: dist.broadcast(torch.ones(2), 1))


def gathers():
    out = [torch.zeros(2)]
    dist.all_gather(out, torch.tensor([1.0, 2.0]))
    o1, o2 = torch.zeros(2), torch.zeros(1, 2)
    dist.all_gather_into_tensor(o1, torch.tensor([3.0, 4.0]))
    dist.all_gather_into_tensor(o2, torch.tensor([5.0, 6.0]))
    rs = torch.zeros(2)
    dist.reduce_scatter_tensor(rs, torch.tensor([7.0, 8.0]))
    a2a = torch.zeros(3)
    dist.all_to_all_single(a2a, torch.tensor([1.0, 2.0, 3.0]))
    objs = [None]
    dist.all_gather_object(objs, {"a": (1, "x")})
    lst = [1, "two"]
    dist.broadcast_object_list(lst, 0)
    return [t.tolist() for t in (out[0], o1, o2, rs, a2a)], objs, lst


show("gathers", gathers)
show("new_group", lambda: (dist.get_rank(dist.new_group([0])),
                           dist.get_world_size(dist.new_group())))
show("new_group too big", lambda: dist.new_group([0, 1]))
show("barrier", dist.barrier)
show("destroy", dist.destroy_process_group)
show("after", dist.is_initialized)
show("destroy again", dist.destroy_process_group)
