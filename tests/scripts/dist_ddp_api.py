"""DistributedDataParallel in a one-process group, printed line by line: run with `torch`
or `eagergrad` as argv[1] and a free port as argv[2]; tests/test_distributed.py compares.
Graph, state-dict names, .grad versions (with no_sync), the unfinished-reduction error,
find_unused_parameters, the no-parameter error, the repr, the comm-hook rules."""
import importlib
import sys

from _show import show

torch = importlib.import_module(sys.argv[1])
dist = importlib.import_module(sys.argv[1] + ".distributed")
nn = torch.nn
DDP = nn.parallel.DistributedDataParallel



show("no group", lambda: DDP(nn.Linear(2, 2)))
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{sys.argv[2]}", rank=0,
                        world_size=1)
m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
d = DDP(m)
x = torch.ones(5, 3)
out = d(x)
show("forward", lambda: (out.grad_fn.name(), type(d.module).__name__, list(d.state_dict())))
out.sum().backward()
g = m[0].weight.grad
show("first backward", lambda: (g._version, g.grad_fn, g.requires_grad))
d(x).sum().backward()
show("second backward", lambda: (m[0].weight.grad is g, g._version))
with d.no_sync():
    d(x).sum().backward()
show("no_sync", lambda: g._version)


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(3, 2), nn.Linear(3, 2)

    def forward(self, x):
        return self.a(x)


d2 = DDP(Two())
d2(x).sum().backward()
show("unused, next forward", lambda: d2(x))
show("no parameters", lambda: DDP(nn.ReLU()))
show("repr", lambda: repr(d))
d3 = DDP(Two(), find_unused_parameters=True)
d3(x).sum().backward()
show("find_unused", lambda: (d3.module.b.weight.grad, d3.module.a.weight.grad is not None))
d3(x).sum().backward()
show("find_unused again", lambda: d3.module.a.weight.grad._version)


def hook(state, bucket):
    fut = torch.futures.Future()
    fut.set_result(bucket.buffer() * 0 + state)
    return fut


d4 = DDP(nn.Linear(3, 2))
d4.register_comm_hook(7.0, hook)
show("hook twice", lambda: d4.register_comm_hook(None, hook))
d4(x).sum().backward()
show("hook result", lambda: d4.module.weight.grad.tolist())
dist.destroy_process_group()
