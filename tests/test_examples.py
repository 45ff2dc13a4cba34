"""Every script in examples/ (ordinary PyTorch programs) runs under real torch and under
`python -m eagergrad run`, and prints the same numbers: losses, accuracies, norms and
learning rates, float32 (each script draws its data and initial weights with numpy, so
both libraries start from the same state)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # (whole example programs)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
SCRIPTS = ["mlp_classifier.py", "cnn_batchnorm.py", "char_lstm.py", "tiny_gpt.py", "vae.py",
           "complex_fit.py"]
NUMBER = re.compile(r"[-+]?\d+\.\d+(?:e[-+]?\d+)?")


def _run(*args):
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _numbers(text):
    lines = text.splitlines()
    return [re.sub(NUMBER, "#", ln) for ln in lines], [float(v) for v in NUMBER.findall(text)]


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_prints_torch_s_numbers(script):
    path = os.path.join(EXAMPLES, script)
    want = _run(path)
    got = _run("-m", "eagergrad", "run", path)
    shape_w, nums_w = _numbers(want)
    shape_g, nums_g = _numbers(got)
    assert shape_g == shape_w, (got, want)  # the same lines, numbers aside
    assert len(nums_w) >= 5
    # float32 over a few optimizer steps: rtol 1e-4 (absolute 1e-5 for values near 0)
    np.testing.assert_allclose(nums_g, nums_w, rtol=1e-4, atol=1e-5, err_msg=got)


def test_every_example_is_tested():
    assert sorted(f for f in os.listdir(EXAMPLES)
                  if f.endswith(".py") and f != "cross_check.py") == sorted(SCRIPTS)
