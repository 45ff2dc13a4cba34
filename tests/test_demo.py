"""The README's first command: `python -m eagergrad demo` trains, cross-checks, and fits a
complex linear system with plain `z -= lr * z.grad`."""
import io
import subprocess
import sys

import numpy as np
import pytest

import eagergrad as torch
from eagergrad import demo

pytestmark = pytest.mark.slow  # (the demo, whole processes)


def test_demo_runs_and_passes_its_checks():
    r = subprocess.run([sys.executable, "-m", "eagergrad", "demo"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    assert "final accuracy" in out and "complex least squares" in out
    epochs = [ln for ln in out.splitlines() if ln.startswith("epoch")]
    assert len(epochs) == 60 and "\r" not in out  # not a terminal: a line per epoch, no bar
    assert float(out.split("final accuracy ")[1].split("%")[0]) > 95
    assert "crosscheck of <lambda>, order 1: OK" in out and out.rstrip().endswith("OK")


def test_complex_descent_needs_torchs_convention():
    """z.grad is dL/dz* (torch): stepping against it converges. Stepping against JAX's
    dL/dz (its conjugate) does not: the imaginary parts move the wrong way."""
    z, a, b, err = demo.fit_complex(steps=400, out=io.StringIO())
    assert err < 1e-6
    a_np, z_true, b_np = demo.complex_problem()
    zc = torch.zeros(len(z_true), dtype=torch.complex128, requires_grad=True)
    first = None
    for _ in range(400):
        loss = demo.complex_loss(torch, torch.from_numpy(a_np), torch.from_numpy(b_np), zc)
        first = loss.item() if first is None else first
        zc.grad = None
        loss.backward()
        with torch.no_grad():
            zc -= 0.15 * zc.grad.conj()
    assert np.linalg.norm(zc.detach().numpy() - z_true) / np.linalg.norm(z_true) > 0.1


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_tqdm_bar_per_epoch():
    out = _Terminal()
    demo.train(epochs=2, out=out)
    text = out.getvalue()
    assert "/8 [" in text and "it/s" in text and "loss=" in text  # tqdm's bar and postfix
    summaries = [ln for ln in text.replace("\n", "\r").split("\r") if "accuracy" in ln]
    assert [ln.split()[1] for ln in summaries] == ["1/2", "2/2"]
