"""eagergrad.save / eagergrad.load in torch's zip format: files move both ways between
torch and eagergrad (values, dtypes, shapes, Parameters, views, containers); tensors that
share a storage in the file share it after load, as in torch; and weights_only, foreign
and damaged files (each damage derived from a real torch.save output) behave as torch's
load."""
import collections
import io
import pickle

import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import Log, Options, attempt, msg, same

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


# ---- storage sharing through save/load ----------------------------------------------------
def _sharing(L):
    """name -> object whose tensors share storages in ways torch writes and reads."""
    x6, x = L.arange(6.), L.arange(12.).reshape(3, 4)
    a = L.arange(1., 5., requires_grad=True)
    p = L.nn.Parameter(L.arange(4.).reshape(2, 2))
    z = L.tensor([1 + 2j, 3 - 4j, -5 + 0.5j])
    xi = L.arange(10).reshape(2, 5)
    return {
        "issue_offset": {"x": x6, "v": x6[2:5]},
        "views": {"x": x, "row": x[1], "col": x[:, 2], "t": x.t(), "step": x.view(-1)[::2],
                  "block": x[1:, 1:3], "flat": x.view(12), "scalar": x[1, 2]},
        "views_only": {"block": x[1:, 1:3], "t": x.t()},
        "view_before_base": {"v": x[1:], "x": x, "e": x[:1, 4:]},
        "expand_diagonal_unfold": {"x": x, "e": x[:, :1].expand(3, 5), "d": x.diagonal(),
                                   "u": x6.unfold(0, 2, 2), "x6": x6},
        "two_storages_nested": [x6, (x, {"k": x6[1:], "t": x.t()[::2]})],
        "same_tensor_twice": {"a": x6, "b": x6, "v": x6[1:]},
        "int64": {"x": xi, "v": xi[:, ::2]},
        "complex_conj": {"z": z, "c": z.conj(), "tail": z[1:]},
        "complex_parts": {"r": z.real, "i": z.imag},
        "requires_grad": {"a": a, "v": a[1:], "p": p, "pv": p.data[0]},
    }


def _tensors(obj, path=()):
    """(path, leaf) pairs of nested dicts, lists and tuples, in order."""
    if isinstance(obj, dict):
        return [x for k, v in obj.items() for x in _tensors(v, path + (k,))]
    if isinstance(obj, (list, tuple)):
        return [x for i, v in enumerate(obj) for x in _tensors(v, path + (i,))]
    return [(path, obj)]


def _shared_log(writer, reader, name):
    """The loaded tensors (values, strides, offsets, versions, leaves, _base, requires_grad),
    then after an in-place write through each of them in turn, all of them again."""
    log = Log(Options(layout=True, exact=True))
    loaded = reader.load(io.BytesIO(_bytes(writer, _sharing(writer)[name])))
    flat = [t for _, t in _tensors(loaded)]
    log.append([type(t).__name__ for t in flat])
    log.append([[a is b for b in flat] for a in flat])
    log.append(flat)
    for i, t in enumerate(flat):
        with reader.no_grad():
            attempt(log, i, lambda: t.add_(100 * (i + 1)) is t)
        log.append(flat)
    return list(log)


@pytest.mark.parametrize("name", list(_sharing(torch)))
def test_storage_sharing_survives_load_as_in_torch(name):
    """Tensors that share a storage in the file share it after load, in eagergrad's and
    torch's files alike, and torch reads eagergrad's files the same: each combination of
    writer and reader gives torch's own round trip."""
    want = _shared_log(torch, torch, name)
    assert _shared_log(torch, eg, name) == want
    assert _shared_log(eg, eg, name) == want
    assert _shared_log(eg, torch, name) == want


@pytest.mark.parametrize("name", ["views", "two_storages_nested", "requires_grad"])
def test_loaded_tensors_hold_as_many_storages_as_torchs(name):
    """torch: equal untyped_storage().data_ptr(); eagergrad: one Storage object."""
    def storages(L, tensors):
        if L is torch:
            return sorted(len(t.untyped_storage()) // t.element_size() for t in
                          {t.untyped_storage().data_ptr(): t for t in tensors}.values())
        return sorted(t._storage.array.size for t in
                      {id(t._storage): t for t in tensors}.values())

    for writer in (torch, eg):
        data = _bytes(writer, _sharing(writer)[name])
        got = [storages(L, [t for _, t in _tensors(L.load(io.BytesIO(data)))])
               for L in (torch, eg)]
        assert got[1] == got[0] and len(got[0]) == (2 if name != "views" else 1)


def test_saving_parts_of_one_storage_as_different_types_is_refused_as_torch():
    for L in (torch, eg):
        z = L.tensor([1 + 2j])
        with pytest.raises(RuntimeError, match="view the same data as different types"):
            L.save({"z": z, "r": z.real}, io.BytesIO())


def test_a_write_through_a_loaded_view_reaches_a_saved_tensor_as_in_torch():
    def f(L):
        x0 = L.arange(3.)
        o = L.load(io.BytesIO(_bytes(L, {"x": x0, "v": x0[1:]})))
        x, v = o["x"].requires_grad_(), o["v"]
        y = (x * x).sum()
        with L.no_grad():
            v.mul_(10)  # v's version counter is its own: the saved x is not checked
        y.backward()
        return x.grad, x._version, v._version
    same(f)


def test_a_loaded_tensor_that_shares_nothing_is_a_plain_tensor():
    t = eg.load(io.BytesIO(_bytes(torch, {"w": torch.ones(2, 3)})))["w"]
    assert t._vchain is None and t._base is None and t._version == 1


# ---- damaged files --------------------------------------------------------------------------
class _G:
    """A global in an edited data.pkl (written back as GLOBAL module name)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # REDUCE while reading: keep the call to edit it
        if (self.module, self.name) == ("collections", "OrderedDict"):
            return collections.OrderedDict(*args)
        return _Call(self, list(args))


class _Call:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args


class _Pid:
    def __init__(self, pid):
        self.pid = list(pid)


class _Reader(pickle.Unpickler):
    def find_class(self, module, name):
        return _G(module, name)

    def persistent_load(self, pid):
        return _Pid(pid)


class _Writer(pickle._Pickler):
    dispatch = dict(pickle._Pickler.dispatch)

    def persistent_id(self, obj):
        return tuple(obj.pid) if isinstance(obj, _Pid) else None

    def reducer_override(self, obj):
        return (obj.fn, tuple(obj.args)) if isinstance(obj, _Call) else NotImplemented

    def save_global(self, obj, name=None):
        if not isinstance(obj, _G):
            return super().save_global(obj, name)
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)


_Writer.dispatch[_G] = _Writer.save_global


def _records(data):
    import zipfile
    z = zipfile.ZipFile(io.BytesIO(data))
    return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def _zip(records):
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in records:
            z.writestr(name, data)
    return buf.getvalue()


def _edit_record(data, suffix, fn):
    """The archive with record `suffix` replaced by fn(record) (None: removed)."""
    out = [(n, fn(d) if n.endswith(suffix) else d) for n, d in _records(data)]
    return _zip([(n, d) for n, d in out if d is not None])


def _edit_tensor(data, fn):
    """The archive with fn(call) applied to the rebuild call of tensor "w" in data.pkl."""
    def edit(pkl):
        obj = _Reader(io.BytesIO(pkl)).load()
        fn(obj["w"])
        buf = io.BytesIO()
        _Writer(buf, protocol=2).dump(obj)
        return buf.getvalue()
    return _edit_record(data, "data.pkl", edit)


def _arg(i, v):
    def f(call):
        call.args[i] = v
    return f


def _pid(i, v):
    def f(call):
        call.args[0].pid[i] = v
    return f


def _cut_out(data, n):
    """n bytes of tensor w's storage record cut out of the file (the zip's offsets break)."""
    i = data.index(np.arange(4, dtype=np.float32).tobytes())
    return data[:i] + data[i + n:]


def _flip(data):
    """A bit of w's stored values flipped (the record's CRC no longer matches)."""
    b = bytearray(data)
    b[data.index(np.arange(4, dtype=np.float32).tobytes()) + 5] ^= 0xFF
    return bytes(b)


# damage -> (file from a torch.save of {"a": ones(2), "w": arange(4.)}, weights_only,
#            a phrase torch's message and eagergrad's share; None when torch loads it)
_DAMAGE = {
    "version_99": (lambda d: _edit_record(d, "/version", lambda r: b"99\n"), True,
                   "with version 99, but the maximum supported version for reading is 10"),
    "version_0": (lambda d: _edit_record(d, "/version", lambda r: b"0\n"), True,
                  "with version 0, but the minimum supported version for reading is 1"),
    "version_abc": (lambda d: _edit_record(d, "/version", lambda r: b"abc"), True,
                    "Couldn't parse the version abc"),
    "version_empty": (lambda d: _edit_record(d, "/version", lambda r: b""), True,
                      "Couldn't parse the version"),
    "version_missing": (lambda d: _edit_record(d, "/version", lambda r: None), True,
                        'Expected hasRecord("version") to be true, but got false'),
    "version_3abc": (lambda d: _edit_record(d, "/version", lambda r: b" 3abc"), True, None),
    "version_in_data_folder": (lambda d: _zip([(n.replace("/version", "/.data/version"), r)
                                               for n, r in _records(d)]), True, None),
    "byteorder_junk": (lambda d: _edit_record(d, "/byteorder", lambda r: b"middle"), True,
                       "Unknown endianness type: middle"),
    "byteorder_big": (lambda d: _edit_record(d, "/byteorder", lambda r: b"big"), True, None),
    "byteorder_missing": (lambda d: _edit_record(d, "/byteorder", lambda r: None), True, None),
    "alignment_junk": (lambda d: _edit_record(d, "/.storage_alignment", lambda r: b"x"), True,
                       "invalid literal for int()"),
    "offset_negative": (lambda d: _edit_tensor(d, _arg(1, -1)), True,
                        "Tensor: invalid storage offset -1"),
    "offset_past_the_end": (lambda d: _edit_tensor(d, _arg(1, 3)), True,
                            "Trying to resize storage that is not resizable"),
    "offset_not_an_int": (lambda d: _edit_tensor(d, _arg(1, 0.0)), True,
                          "set_() received an invalid combination of arguments"),
    "size_negative": (lambda d: _edit_tensor(d, _arg(2, (-1,))), True,
                      "numel: integer multiplication overflow"),
    "size_negative_2d": (lambda d: _edit_tensor(d, lambda c: c.args.__setitem__(
        slice(2, 4), [(2, -1), (1, 1)])), True, "numel: integer multiplication overflow"),
    "size_past_the_end": (lambda d: _edit_tensor(d, _arg(2, (5,))), True,
                          "Trying to resize storage that is not resizable"),
    "size_huge": (lambda d: _edit_tensor(d, (lambda c: c.args.__setitem__(
        slice(2, 4), [(2 ** 62, 4), (1, 1)]))), True, "numel: integer multiplication overflow"),
    "stride_negative": (lambda d: _edit_tensor(d, _arg(3, (-1,))), True,
                        "Storage size calculation overflowed with sizes=[4] and strides=[-1]"),
    "stride_past_the_end": (lambda d: _edit_tensor(d, _arg(3, (2,))), True,
                            "Trying to resize storage that is not resizable"),
    "stride_zero": (lambda d: _edit_tensor(d, _arg(3, (0,))), True, None),
    "stride_length": (lambda d: _edit_tensor(d, _arg(3, (1, 1))), True,
                      "unequal size length (1) and stride length (2)"),
    "numel_negative": (lambda d: _edit_tensor(d, _pid(4, -1)), True,
                       "incompatible function arguments"),
    "numel_larger": (lambda d: _edit_tensor(d, _pid(4, 5)), True,
                     "record size (16 bytes) does not match expected size (20 bytes"),
    "storage_short": (lambda d: _edit_record(d, "/data/1", lambda r: r[:-4]), True,
                      "record size (12 bytes) does not match expected size (16 bytes"),
    "storage_long": (lambda d: _edit_record(d, "/data/1", lambda r: r + bytes(4)), True,
                     "record size (20 bytes) does not match expected size (16 bytes"),
    "storage_odd_bytes": (lambda d: _edit_record(d, "/data/1", lambda r: r[:-1]), True,
                          "record size (15 bytes) does not match expected size"),
    "storage_missing": (lambda d: _edit_record(d, "/data/1", lambda r: None), True,
                        "PytorchStreamReader failed locating file data/1: file not found"),
    "storage_key_unknown": (lambda d: _edit_tensor(d, _pid(2, "7")), True,
                            "PytorchStreamReader failed locating file data/7: file not found"),
    "storage_type_unknown": (lambda d: _edit_tensor(d, _pid(1, _G("torch", "FooStorage"))),
                             True, "Weights only load failed"),
    "storage_location_unknown": (lambda d: _edit_tensor(d, _pid(3, "foo")), True,
                                 "tagged with foo"),
    "storage_location_cuda": (lambda d: _edit_tensor(d, _pid(3, "cuda:0")), True,
                              "torch.cuda.is_available() is False"),
    "storage_cut_out_of_the_file": (lambda d: _cut_out(d, 16), True,
                                    "invalid header or archive is corrupted"),
    "storage_half_cut_out": (lambda d: _cut_out(d, 8), True,
                             "invalid header or archive is corrupted"),
    "storage_bit_flipped": (_flip, True, None),  # torch checks no CRC: neither do we
    "persistent_id_short": (lambda d: _edit_tensor(d, lambda c: setattr(
        c.args[0], "pid", c.args[0].pid[:4])), True, "not enough values to unpack"),
    "persistent_id_kind": (lambda d: _edit_tensor(d, _pid(0, "module")), False,
                           "Unknown typename for persistent_load"),
    # (the type depends on where the cut falls: every cut is tested below)
    "pkl_truncated": (lambda d: _edit_record(d, "data.pkl", lambda r: r[:len(r) // 2]), True,
                      None),
    "pkl_truncated_unsafe": (lambda d: _edit_record(d, "data.pkl", lambda r: r[:len(r) // 2]),
                             False, None),
    "pkl_garbage": (lambda d: _edit_record(d, "data.pkl", lambda r: b"\x80\x02\xff"), True,
                    "Weights only load failed"),
    "pkl_missing": (lambda d: _edit_record(d, "data.pkl", lambda r: None), True,
                    "PytorchStreamReader failed locating file data.pkl: file not found"),
    "zip_truncated": (lambda d: d[:len(d) // 2], True, "failed finding central directory"),
    "zip_end_cut": (lambda d: d[:-10], True, "failed finding central directory"),
    "zip_not_in_a_folder": (lambda d: _zip([("data.pkl", b"")] + _records(d)), True,
                            "file in archive is not in a subdirectory: data.pkl"),
    "zip_empty": (lambda d: _zip([]), True, "Weights only load failed"),
    "not_a_zip": (lambda d: b"hello world" * 10, True, None),
    "empty": (lambda d: b"", True, None),
}


def _source_file():
    return _bytes(torch, {"a": torch.ones(2), "w": torch.arange(4.)})


def _loaded(L, data, weights_only):
    try:
        out = L.load(io.BytesIO(data), weights_only=weights_only)
        return ("ok", {k: v.tolist() for k, v in out.items()})
    except Exception as e:  # noqa: BLE001 - the outcome is compared with torch's
        return (type(e).__name__, msg(e))


@pytest.mark.parametrize("damage", list(_DAMAGE))
def test_damaged_files_are_refused_as_torch_refuses_them(damage):
    """Each damage of a real torch.save output: torch's exception type (a RuntimeError
    where torch's is one) and the key phrase of its message, or torch's values when torch
    loads the file."""
    make, weights_only, phrase = _DAMAGE[damage]
    bad = make(_source_file())
    t = _loaded(torch, bad, weights_only)
    e = _loaded(eg, bad, weights_only)
    assert e[0] == t[0], (t, e)
    if t[0] == "ok":
        assert e == t
    elif phrase is not None:
        assert phrase in t[1] and phrase in e[1], (t, e)


def test_the_damage_table_starts_from_a_file_both_load():
    good = _source_file()
    assert _loaded(eg, good, True) == _loaded(torch, good, True) == \
        ("ok", {"a": [1.0, 1.0], "w": [0.0, 1.0, 2.0, 3.0]})
    assert _loaded(eg, _zip(_records(good)), True)[0] == "ok"  # (rewritten by zipfile)


@pytest.mark.parametrize("weights_only", [False, True])
def test_data_pkl_cut_anywhere_is_refused_as_torch(weights_only):
    """Every prefix of data.pkl. With weights_only=False torch's unpickler is pickle's, so
    the exception types are the same at every cut; with True torch's own pure-Python
    unpickler also raises IndexError or struct.error where pickle's says truncated."""
    good = _source_file()
    pkl = dict(_records(good))["archive/data.pkl"]
    for cut in range(0, len(pkl), 3):
        bad = _edit_record(good, "data.pkl", lambda r: r[:cut])
        t, e = _loaded(torch, bad, weights_only)[0], _loaded(eg, bad, weights_only)[0]
        assert t != "ok" and e in ("EOFError", "UnpicklingError"), (cut, t, e)
        if not weights_only or t in ("EOFError", "UnpicklingError") and \
                (t, e) != ("EOFError", "UnpicklingError"):
            assert e == t, (cut, t, e)


def test_a_zip_cut_anywhere_is_refused_as_torch():
    good = _source_file()
    for cut in list(range(6)) + list(range(6, len(good), 97)):
        t, e = _loaded(torch, good[:cut], True), _loaded(eg, good[:cut], True)
        assert e[0] == t[0] != "ok", (cut, t, e)


def test_a_torch_file_without_crcs_loads():
    torch.serialization.set_crc32_options(False)
    try:
        data = _bytes(torch, {"w": torch.arange(3.)})
    finally:
        torch.serialization.set_crc32_options(True)
    assert eg.load(io.BytesIO(data))["w"].tolist() == [0.0, 1.0, 2.0]
