"""DDP step time on 1, 2, 4 and 8 simulated CPU devices of one process, beside the ideal.

Each device count runs in its own process (XLA_FLAGS set before import): the MLP of
examples/mlp_classifier.py widened to 2-512-512-3, SGD with momentum, a global batch of
256 split across the devices by DistributedDataParallel, float32. Reported: the median
step time, the speed-up over 1 device and the ideal (the device count). The simulated
devices share this machine's cores, so this is a check that the sharded program is
correct and scales in structure (its result equals the 1-device run's), not a speed
claim: on a 2-core machine nothing beyond 2x is possible. Each child checks its final
parameters against the 1-device run of the same steps.

    python bench/ddp_scaling.py [--steps 30]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTS = (1, 2, 4, 8)


def child(devices, steps):
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    import time

    import numpy as np
    import eagergrad as torch
    import eagergrad.distributed as dist

    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)

    def build():
        rs = np.random.RandomState(0)
        model = torch.nn.Sequential(torch.nn.Linear(2, 512), torch.nn.ReLU(),
                                    torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                    torch.nn.Linear(512, 3))
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.tensor(rs.uniform(-0.1, 0.1, tuple(p.shape)),
                                     dtype=torch.float32))
        return model

    rs = np.random.RandomState(1)
    xs = torch.tensor(rs.randn(4, 256, 2), dtype=torch.float32)
    ys = torch.tensor(rs.randint(0, 3, (4, 256)))

    def run(net, model, n):
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        times = []
        for i in range(n):
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(xs[i % 4]), ys[i % 4])
            loss.backward()
            opt.step()
            loss.item()
            times.append(time.perf_counter() - t0)
        return times, [p.detach().numpy() for p in model.parameters()]

    model = build()
    net = torch.nn.parallel.DistributedDataParallel(model)
    times, params = run(net, model, steps)
    ref_model = build()  # (one device: not wrapped, never split)
    _, ref = run(ref_model, ref_model, steps)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(params, ref))
    devices_used = len(model[0].weight.jax().sharding.device_set)
    print(json.dumps({"devices": devices, "used": devices_used,
                      "median_ms": 1e3 * float(np.median(times[5:])), "max_diff": diff}))


def main(argv):
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 30
    if "--child" in argv:
        return child(int(argv[argv.index("--child") + 1]), steps)
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..") + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    rows = []
    for n in COUNTS:
        out = subprocess.run([sys.executable, __file__, "--child", str(n), "--steps",
                              str(steps)], capture_output=True, text=True, env=env)
        if out.returncode:
            print(out.stderr[-2000:], file=sys.stderr)
            return 1
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = rows[0]["median_ms"]
    print(f"{'devices':>8} {'used':>5} {'step ms':>9} {'speed-up':>9} {'ideal':>6} "
          f"{'max |diff| vs 1 device':>24}")
    ok = True
    for r in rows:
        good = r["used"] == r["devices"] and r["max_diff"] < 1e-4
        ok &= good
        print(f"{r['devices']:>8} {r['used']:>5} {r['median_ms']:>9.2f} "
              f"{base / r['median_ms']:>8.2f}x {r['devices']:>5}x {r['max_diff']:>24.1e}"
              f"{'' if good else '  WRONG'}")
    print("check:", "PASS (every count used all its devices and matched 1 device)" if ok
          else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
