"""`python -m eagergrad run script.py`: an unchanged PyTorch script runs with torch
resolved to eagergrad and prints torch's numbers; a torch API eagergrad lacks stops it
with NotImplementedError at the script's line. `python -m eagergrad coverage` counts."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # (whole processes)

HERE = os.path.dirname(__file__)
MLP = os.path.join(HERE, "scripts", "mlp_sgd.py")


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          cwd=cwd or HERE, timeout=300)


def _losses(text):
    return [float(v) for v in re.findall(r"loss (\S+)", text)]


def test_a_training_script_prints_torch_s_losses():
    want = _run(MLP, "0.1")
    got = _run("-m", "eagergrad", "run", MLP, "0.1")
    assert want.returncode == 0, want.stderr
    assert got.returncode == 0, got.stderr
    assert len(_losses(got.stdout)) == len(_losses(want.stdout)) == 5
    assert _losses(got.stdout) == pytest.approx(_losses(want.stdout), rel=1e-5)
    assert _losses(got.stdout)[-1] < _losses(got.stdout)[0]  # it trains


def test_torch_is_eagergrad_and_real_torch_is_never_loaded(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch, torch.nn.functional, torch.optim.lr_scheduler, torch.utils.data
        import torch.cuda, torch.backends.cudnn
        from torch import nn
        print(torch.__name__, torch.nn.functional.__name__, nn is torch.nn, sys.argv[1:])
        print(sorted({m.split(".")[0] for m in sys.modules if m.startswith("torch")}))
        print(any(getattr(m, "__file__", "") and "site-packages/torch/" in m.__file__
                  for m in list(sys.modules.values())))
    """))
    r = _run("-m", "eagergrad", "run", str(script), "--flag", "x")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "eagergrad eagergrad.nn.functional True ['--flag', 'x']"
    assert lines[2] == "False"


@pytest.mark.parametrize("code,name", [
    ("import torch\nx = torch.ones(8)\ny = torch.quantize_per_tensor(x, 0.1, 0, x.dtype)\n",
     "torch.quantize_per_tensor"),
    ("import torch\nimport torch.distributions\nw = torch.distributions.Wishart\n",
     "torch.distributions.Wishart"),
    ("import torch\nx = torch.ones(3)\nx.q_scale()\n", "torch.Tensor.q_scale"),
    ("from torch.nn import SyncBatchNorm\n", "torch.nn.SyncBatchNorm"),
])
def test_missing_api_stops_at_the_script_line(tmp_path, code, name):
    script = tmp_path / "uses_missing.py"
    script.write_text(code)
    r = _run("-m", "eagergrad", "run", str(script))
    line = len(code.rstrip("\n").splitlines())
    assert r.returncode == 1
    assert f"{script}:{line}: NotImplementedError: eagergrad does not implement {name} yet" \
        in r.stderr, r.stderr


def test_bad_command_lines():
    assert _run("-m", "eagergrad", "run").returncode == 2
    r = _run("-m", "eagergrad", "run", "no_such_script.py")
    assert r.returncode == 2 and "can't open file" in r.stderr


def test_coverage_counts_every_namespace():
    import eagergrad
    from eagergrad import _torch_names as N
    r = _run("-m", "eagergrad", "coverage", "--missing")
    assert r.returncode == 0, r.stderr
    counts = dict((m.group(1), (int(m.group(2)), int(m.group(3)))) for m in re.finditer(
        r"^(torch\S*)\s+(\d+) of\s+(\d+)", r.stdout, re.M))
    assert counts["torch.nn.init"][1] == len(N.NN_INIT_NAMES)
    have = sum(1 for n in N.NN_FUNCTIONAL_NAMES if hasattr(eagergrad.nn.functional, n))
    assert counts["torch.nn.functional"] == (have, len(N.NN_FUNCTIONAL_NAMES))
    missing = r.stdout.split("missing:")[1].split("\n")[0]
    assert {n.strip() for n in missing.split(",")} == {
        n for n in N.TORCH_NAMES if not hasattr(eagergrad, n)}


def test_cuda_and_backends_answer_as_torch_on_this_machine():
    from conftest import same

    def f(L):
        return (L.cuda.is_available(), L.cuda.device_count(), L.backends.mps.is_available(),
                L.backends.cudnn.deterministic, L.backends.cudnn.benchmark)
    same(f)
