"""eagergrad.save / eagergrad.load in torch's zip format: files move both ways between
torch and eagergrad (values, dtypes, shapes, Parameters, views, containers), and
weights_only, foreign and broken files behave as torch's load."""
import collections
import io
import pickle

import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import msg

_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64", "complex128"]


def _objects(L):
    """The same nested object built with library L."""
    rs = np.random.RandomState(0)
    w = L.tensor(rs.randn(3, 4).astype(np.float32))
    sd = collections.OrderedDict(weight=w, bias=L.tensor([1, 2, 3]),
                                 p=L.nn.Parameter(L.tensor([0.5, -1.0], dtype=L.float64)))
    return {"sd": sd, "view": w[:, 1], "t": w.t(), "scalar": L.tensor(2.5),
            "empty": L.zeros(0, 3), "dtypes": [L.ones(2, dtype=getattr(L, d)) for d in _DTYPES],
            "dtype": L.float16, "nums": (3, 1.5, "x", None, [True]),
            "grad": L.ones(2, requires_grad=True)}


def _flat(obj):
    """(path, description) pairs of a loaded object, library-neutral."""
    out = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, path + (k,))
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, path + (i,))
        elif hasattr(x, "shape") and hasattr(x, "dtype"):
            a = x.detach().resolve_conj()
            vals = a.to(torch.float32 if isinstance(a, torch.Tensor) and
                        a.dtype == torch.bfloat16 else a.dtype).numpy()
            out.append((path, "Parameter" if type(x).__name__ == "Parameter" else "Tensor",
                        str(x.dtype).split(".")[-1], tuple(x.shape), tuple(x.stride()),
                        x.requires_grad, vals.tolist()))
        else:
            out.append((path, str(x).replace("eagergrad", "torch")))
    walk(obj, ())
    return out


def _bytes(L, obj):
    buf = io.BytesIO()
    L.save(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("writer,reader", [("torch", "eagergrad"), ("eagergrad", "torch"),
                                           ("eagergrad", "eagergrad")])
def test_files_move_between_torch_and_eagergrad(writer, reader):
    W, R = (torch if writer == "torch" else eg), (torch if reader == "torch" else eg)
    loaded = R.load(io.BytesIO(_bytes(W, _objects(W))))
    assert _flat(loaded) == _flat(_objects(torch))


def test_saved_by_path_under_the_file_stem(tmp_path):
    import zipfile
    path = tmp_path / "model.pt"
    eg.save({"w": eg.arange(3)}, path)
    assert all(n.startswith("model/") for n in zipfile.ZipFile(path).namelist())
    assert torch.load(path)["w"].tolist() == [0, 1, 2]
    assert eg.load(str(path))["w"].tolist() == [0, 1, 2]


def test_a_module_state_dict_round_trip():
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Tanh())
    src = collections.OrderedDict(a=torch.randn(2, 3), b=torch.randn(3))
    m = eg.nn.Module()
    m.a = eg.nn.Parameter(eg.zeros(2, 3))
    m.register_buffer("b", eg.zeros(3))
    m.load_state_dict(eg.load(io.BytesIO(_bytes(torch, src))))
    assert np.array_equal(m.a.detach().numpy(), src["a"].numpy()) and net is not None
    again = torch.load(io.BytesIO(_bytes(eg, m.state_dict())))
    assert list(again) == ["a", "b"] and torch.equal(again["b"], src["b"])


class Custom:
    def __init__(self):
        self.x = 1


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the outcome is compared with torch's
        return (type(e).__name__, msg(e).split("\n")[0])


def test_weights_only_refuses_other_globals_as_torch():
    data = _bytes(torch, {"c": Custom()})
    t = _outcome(lambda: torch.load(io.BytesIO(data)))
    e = _outcome(lambda: eg.load(io.BytesIO(data)))
    assert e == t and t[0] == "UnpicklingError"
    assert eg.load(io.BytesIO(data), weights_only=False)["c"].x == 1


@pytest.mark.parametrize("damage", ["truncated", "not_a_zip", "empty"])
def test_broken_files_raise_torch_errors(damage):
    data = _bytes(torch, {"w": torch.ones(3)})
    bad = {"truncated": data[:len(data) // 2], "not_a_zip": b"hello world" * 10,
           "empty": b""}[damage]
    t = _outcome(lambda: torch.load(io.BytesIO(bad)))
    e = _outcome(lambda: eg.load(io.BytesIO(bad)))
    assert e[0] == t[0] and e[1] == t[1]


def test_doctests():
    import doctest
    from eagergrad import serialization
    assert doctest.testmod(serialization).failed == 0
    assert pickle is not None
