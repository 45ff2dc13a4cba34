"""Every script in examples/ (ordinary PyTorch programs) runs under real torch and under
`python -m eagergrad run`, and prints the same numbers: losses, accuracies, norms and
learning rates, float32 (each script draws its data and initial weights with numpy, so
both libraries start from the same state). The five training examples also run their
training step under torch.compile (--compile) with eager's losses, replaying one program."""
import json
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


# `python -m eagergrad run script --compile`, recording what torch.compile returned; then
# one line after the script's output: the compile counters and explain() of each function
_COMPILED_RUN = """
import json, sys
import eagergrad, eagergrad._dynamo as dynamo
from eagergrad.runner import run
made, compile_ = [], eagergrad.compile
def recording(*args, **kwargs):
    made.append(compile_(*args, **kwargs))
    return made[-1]
eagergrad.compile = recording
rc = run([sys.argv[1], "--compile"])
explained = [dynamo.explain(c) for c in made]
print("COMPILED " + json.dumps({
    "rc": rc, "counters": dynamo.COUNTERS, "functions": len(made),
    "graph_breaks": [r for e in explained for r in e.break_reasons],
    "recompiles": [r for e in explained for r in e.recompile_reasons]}, default=str))
"""

COMPILED = ["mlp_classifier.py", "char_lstm.py", "cnn_batchnorm.py", "vae.py", "tiny_gpt.py"]


@pytest.mark.parametrize("script", COMPILED)
def test_example_compiled_prints_eager_s_numbers(script):
    path = os.path.join(EXAMPLES, script)
    eager = _run("-m", "eagergrad", "run", path)
    out = _run("-c", _COMPILED_RUN, path)
    compiled, _, info = out.rpartition("COMPILED ")
    info = json.loads(info)
    assert info["rc"] == 0 and info["functions"] == 1, info
    shape_e, nums_e = _numbers(eager)
    shape_c, nums_c = _numbers(compiled)
    assert shape_c == shape_e, (compiled, eager)
    assert len(nums_e) >= 5
    # the compiled step is one XLA program, whose float32 fusions may round differently
    # from eager's op-by-op kernels: the last printed digit (1e-6) may differ (vae's
    # 27.519135 vs 27.519136), so rtol 1e-5 with atol 1e-6, one unit of that digit
    np.testing.assert_allclose(nums_c, nums_e, rtol=1e-5, atol=1e-6, err_msg=compiled)
    # the steps replayed the traced program: no graph break, no call run eagerly
    counters = info["counters"]
    assert counters["replayed"] > 0 and counters["eager"] == 0, info
    assert info["graph_breaks"] == [], info
