"""torchrun on one machine: `python -m eagergrad run --nproc-per-node N script.py [args]`
starts N processes of `python -m eagergrad run script.py [args]` with torchrun's
environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT...).
When one fails, the others are stopped and its exit code is returned, as torchrun does."""
import os
import subprocess
import sys
import time
import uuid

from ._store import _free_port

_OPTIONS = {"--nproc-per-node": "nproc", "--nproc_per_node": "nproc",
            "--master-port": "port", "--master_port": "port",
            "--master-addr": "addr", "--master_addr": "addr",
            "--nnodes": "nnodes", "--node-rank": "node_rank", "--node_rank": "node_rank"}
_FLAGS = ("--standalone",)


def parse(argv):
    """(options, the rest) from torchrun's leading options in argv."""
    opts, i = {}, 0
    while i < len(argv) and argv[i].startswith("--"):
        key, eq, value = argv[i].partition("=")
        if key in _FLAGS:
            opts[key[2:]] = True
            i += 1
            continue
        if key not in _OPTIONS:
            break
        if not eq:
            if i + 1 >= len(argv):
                raise SystemExit(f"python -m eagergrad run: {key} needs a value")
            value, i = argv[i + 1], i + 1
        opts[_OPTIONS[key]] = value
        i += 1
    return opts, argv[i:]


def launch(opts, argv):
    """Run argv (a script and its arguments) in nproc local processes; their exit code."""
    nproc = opts.get("nproc", "1")
    nproc = os.cpu_count() if nproc in ("auto", "cpu") else int(nproc)
    if str(opts.get("nnodes", "1")) not in ("1", "1:1"):
        raise NotImplementedError("python -m eagergrad run --nnodes: one machine only; start "
                                  "each node's processes with torchrun's environment")
    addr = opts.get("addr", "127.0.0.1")
    port = str(opts["port"]) if "port" in opts and not opts.get("standalone") else \
        str(_free_port(addr))
    run_id = str(uuid.uuid4())
    procs = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), GROUP_RANK="0",
                   ROLE_RANK=str(rank), ROLE_NAME="default", WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), ROLE_WORLD_SIZE=str(nproc),
                   MASTER_ADDR=addr, MASTER_PORT=port, TORCHELASTIC_RUN_ID=run_id,
                   TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS="0")
        env.setdefault("OMP_NUM_THREADS", "1")
        procs.append(subprocess.Popen([sys.executable, "-m", "eagergrad", "run", *argv],
                                      env=env))
    failed = None
    while failed is None and any(p.poll() is None for p in procs):
        failed = next((p for p in procs if p.poll() not in (None, 0)), None)
        time.sleep(0.05)
    failed = failed or next((p for p in procs if p.returncode != 0), None)
    if failed is not None:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            p.wait()
        rank = procs.index(failed)
        print(f"python -m eagergrad run: rank {rank} (pid {failed.pid}) failed with exit code "
              f"{failed.returncode}", file=sys.stderr)
        return failed.returncode
    return 0
