"""Names real programs reach that no op database lists: torch.autograd.Variable, torch.onnx,
nn.DataParallel on one device, memory formats and layouts, `functorch` under the runner,
and a missing Tensor method taken from the class (`torch.Tensor.q_scale(x)`)."""
import pickle
import subprocess
import sys
import textwrap

import pytest

import eagergrad as eg
from conftest import same, same_error


def test_variable_is_the_tensor():
    def f(m):
        x = m.ones(2, 3)
        v = m.autograd.Variable(x, requires_grad=True)
        w = m.autograd.Variable(m.zeros(1))
        x.add_(1)
        return (v is x, v.requires_grad, v.is_leaf, x.requires_grad, w.requires_grad,
                isinstance(x, m.autograd.Variable), isinstance(3, m.autograd.Variable),
                (v * 2).sum(), v._version)
    same(f)


def test_variable_errors():
    same_error(lambda m: m.autograd.Variable([1.0]), "Variable data has to be a tensor",
               TypeError)


def test_onnx():
    assert eg.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="torch.onnx.export"):
        eg.onnx.export(eg.nn.Linear(2, 2), eg.ones(1, 2), "m.onnx")


def test_data_parallel_on_one_device():
    def f(m):
        m.manual_seed(0)
        net = m.nn.DataParallel(m.nn.Linear(3, 2))
        x = m.arange(6.0).reshape(2, 3)
        net.module.weight.data.copy_(m.arange(6.0).reshape(2, 3) / 10)
        net.module.bias.data.zero_()
        y = net(x)
        y.sum().backward()
        return (list(net.state_dict()), type(net).__name__, type(net).__module__
                .replace("eagergrad", "torch"), y, net.module.weight.grad)
    same(f)
    # (torch's functional form needs an accelerator: this machine has none)
    same_error(lambda m: m.nn.parallel.data_parallel(m.nn.Linear(3, 2), m.ones(2, 3)),
               "device type could not be determined")


@pytest.mark.parametrize("fmt", ["contiguous_format", "preserve_format", "channels_last"])
def test_memory_formats_are_accepted(fmt):
    def f(m):
        mf = getattr(m, fmt)
        x = m.arange(24.0).reshape(1, 2, 3, 4)
        return (repr(mf), x.float(memory_format=mf), x.double(memory_format=mf),
                x.to(memory_format=mf), x.clone(memory_format=mf),
                m.zeros_like(x, memory_format=mf).shape)
    same(f)


def test_layouts_and_pickles():
    assert repr(eg.strided) == "torch.strided" and repr(eg.sparse_coo) == "torch.sparse_coo"
    assert pickle.loads(pickle.dumps(eg.channels_last)) is eg.channels_last
    with pytest.raises(NotImplementedError, match="channels_last"):
        eg.ones(1, 2, 3, 4).is_contiguous(memory_format=eg.channels_last)


def test_missing_method_from_the_class():
    with pytest.raises(NotImplementedError, match="torch.Tensor.q_scale"):
        eg.Tensor.q_scale(eg.ones(8))
    assert not hasattr(eg.ones(1), "q_scale")


@pytest.mark.slow  # (a process)
def test_functorch_under_the_runner(tmp_path):
    script = tmp_path / "ft.py"
    script.write_text(textwrap.dedent("""
        import torch
        import functorch
        from functorch import grad, vmap
        x = torch.arange(3.0)
        print(functorch.__name__, grad(lambda t: (t ** 2).sum())(x).tolist(),
              vmap(torch.sin)(x).shape)
    """))
    r = subprocess.run([sys.executable, "-m", "eagergrad", "run", str(script)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["eagergrad.func", "[0.0,", "2.0,", "4.0]", "torch.Size([3])"]


def test_autograd_module_names():
    def f(m):
        a = m.autograd
        out = [a.is_multithreading_enabled()]
        with a.set_multithreading_enabled(False):
            out.append(a.is_multithreading_enabled())
        out += [a.is_multithreading_enabled(), a.is_view_replay_enabled(),
                a.is_tensor_like(m.ones(1)), a.is_tensor_like([1.0]),
                a.grad_mode.no_grad is m.no_grad, a.torch is m]
        with a.profiler.record_function("label"):
            out.append(m.ones(2) * 3)
        out.append(a.profiler.record_function("f")(lambda x: x + 1)(m.ones(1)))
        return out
    same(f)
