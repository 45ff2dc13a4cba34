"""DDP inside one process with 8 simulated CPU devices: the examples' MLP classifier (SGD
with momentum) and tiny GPT (AdamW, cosine schedule) train 10 steps in float64 through
DistributedDataParallel, each batch split across the 8 devices, and alone on one device.
Prints, per model, the largest parameter difference, the losses' and the shardings seen
(parameters replicated on 8 devices, activations split)."""
import os

from _show import devices
import sys

os.environ["XLA_FLAGS"] = devices(8)

import numpy as np
from eagergrad.runner import install

install()  # (the examples import torch: eagergrad)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import _examples  # noqa: E402

torch.set_default_dtype(torch.float64)
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=0,
                        world_size=1)


def with_step(build):
    model, make_opt, batch, train = build()
    return model, make_opt, lambda model, opt, i: train(model, opt, *batch(i))


for name, build in (("mlp", _examples.mlp), ("gpt", _examples.gpt)):
    results = []
    for parallel in (False, True):
        model, make_opt, step = with_step(build)
        net = torch.nn.parallel.DistributedDataParallel(model) if parallel else model
        opt = make_opt(model.parameters())
        seen = set()
        if parallel:
            model.register_forward_hook(lambda m, i, o: seen.add(
                (len(o.jax().sharding.device_set), o.jax().sharding.is_fully_replicated)))
        losses = [step(net, opt, i).item() for i in range(10)]
        params = [p.detach().numpy() for p in model.parameters()]
        shard = {(len(p.jax().sharding.device_set), p.jax().sharding.is_fully_replicated)
                 for p in model.parameters()}
        results.append((losses, params, shard, seen))
    (l0, p0, _, _), (l1, p1, shard, seen) = results
    diff = max(float(np.abs(a - b).max()) for a, b in zip(p0, p1))
    print(f"{name} | params {diff < 1e-6} {diff:.1e} | losses "
          f"{max(abs(a - b) for a, b in zip(l0, l1)) < 1e-6} | parameters {sorted(shard)} "
          f"| outputs {sorted(seen)} | trained {l1[-1] < l1[0]}", flush=True)
dist.destroy_process_group()
