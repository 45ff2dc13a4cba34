"""torch's storage API against torch: Tensor.untyped_storage() / storage() / data_ptr(),
UntypedStorage, TypedStorage and the legacy <Type>Storage classes (NOTE [storage objects]
in eagergrad/storage.py). Storage identity and addresses are compared as torch shows them
(the same object, equal or offset data_ptr()s, never the numbers themselves); bytes,
elements, types, warnings and errors as they are. Writes through a storage reach every
tensor over it and move no version counter, as in torch."""
import copy
import io
import pickle
import warnings

import numpy as np
import pytest

import eagergrad as eg
from conftest import attempt, msg, same

_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64", "complex128"]
_NAMES = ["FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
          "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
          "ComplexFloatStorage", "ComplexDoubleStorage"]


def _cls(obj):
    """The class of obj (or obj, a class) as torch names it."""
    c = obj if isinstance(obj, type) else type(obj)
    return f"{c.__module__}.{c.__qualname__}".replace("eagergrad", "torch")


def _quiet(fn):
    """fn with the TypedStorage deprecation warning silenced (tested on its own below)."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return run


def _values(L, dt):
    """A few exact values of dtype dt (named by `_DTYPES`)."""
    d = getattr(L, dt)
    if dt == "bool":
        return L.tensor([True, False, True], dtype=d)
    if dt.startswith("complex"):
        return L.tensor([1.5 - 2j, 0.25 + 1j, -3 + 0j], dtype=d)
    if dt == "uint8":
        return L.tensor([1, 200, 3], dtype=d)
    return L.tensor([1, -2, 100], dtype=d) if not d.is_floating_point else \
        L.tensor([1.5, -2.25, 100.0], dtype=d)


def test_storage_identity_and_addresses():
    """Views, detach(), .data, real/imag parts and transposes share one storage: the same
    UntypedStorage object, data_ptr() offset by storage_offset() * element_size(); other
    tensors have other storages; empty tensors have data_ptr() 0."""
    def f(L, log):
        x = L.arange(12.0).reshape(3, 4)
        views = {"row": x[1], "col": x[:, 2], "t": x.t(), "detach": x.detach(),
                 "data": x.data, "flat": x.view(-1)[5:], "empty_view": x[3:],
                 "detach_of_view": x[1:].detach(), "data_of_view": x[:, 1:].data}
        s = x.untyped_storage()
        for k, v in views.items():
            ptr = v.data_ptr() - x.data_ptr() if v.numel() else v.data_ptr()
            log.append((k, v.untyped_storage() is s, ptr,
                        v.const_data_ptr() == v.data_ptr(), x.is_set_to(v), v.is_set_to(v)))
        other = L.arange(12.0).reshape(3, 4)
        log.append(("other", other.untyped_storage() is s,
                    other.data_ptr() != x.data_ptr(),
                    other.untyped_storage().data_ptr() != s.data_ptr(), x.is_set_to(other)))
        log.append(("storage ptr", s.data_ptr() == x.data_ptr(),
                    x[1].untyped_storage().data_ptr() == s.data_ptr()))
        log.append(("empty", L.empty(0).data_ptr(), L.tensor([]).untyped_storage().data_ptr(),
                    L.zeros(0, 3).untyped_storage().nbytes()))
        z = L.tensor([1 + 2j, 3 - 4j], dtype=L.complex64)
        for k, v in {"real": z.real, "imag": z.imag, "imag1": z[1:].imag,
                     "conj": z.conj(), "var": L.view_as_real(z)}.items():
            log.append((k, v.untyped_storage() is z.untyped_storage(),
                        v.data_ptr() - z.data_ptr(), v.storage_offset(),
                        v.untyped_storage().nbytes()))
        attempt(log, "is_set_to int", lambda: x.is_set_to(3))
    same(f, runs=1)


def test_bytes_and_elements():
    """A storage's bytes (UntypedStorage) and elements (TypedStorage) in every dtype, read
    through a view; the same bytes as another dtype's elements; a few casts."""
    def f(L, log):
        for dt in _DTYPES:
            x = _values(L, dt)
            u = x[1:].untyped_storage()
            log.append((dt, u.tolist(), u.nbytes(), len(u), u.size(), u.element_size(),
                        repr(u), _cls(u), u.type(), u.device, u.get_device(), u.is_cuda,
                        u.is_sparse))
            s = x[1:].storage()
            log.append((s.tolist(), s.size(), len(s), s.nbytes(), s.element_size(), s.dtype,
                        _cls(s), s.type(), s.pickle_storage_type(), str(s), repr(s),
                        _cls(x.storage_type()), list(s), s[0], s[-1], s.device))
            log.append([isinstance(s, getattr(L, n)) for n in _NAMES])
            log.append((L.is_storage(s), L.is_storage(u), L.is_storage(x),
                        L.is_storage(L.FloatStorage)))
            t = L.TypedStorage(wrap_storage=u, dtype=L.int16)
            log.append((t.tolist() if u.nbytes() % 2 == 0 else t.size(), t.nbytes()))
        s = L.tensor([1.5, -2.25, 100.0]).storage()
        for conv in ("int", "bool", "complex_double"):
            c = getattr(s, conv)()
            log.append((conv, _cls(c), c.dtype, c.tolist(), c.data_ptr() != s.data_ptr()))
        u = s.untyped()
        log.append(("u.float", u.float().tolist(), u.bool().tolist(), _cls(u.int())))
    same(f, runs=1, quiet=True)


# (eagergrad's float -> uint8 cast of a negative value saturates where torch's wraps)
_CASTS = ("float", "int", "bool", "complex_float", "double", "byte", "char", "short",
          "long", "half", "bfloat16", "complex_double")


@pytest.mark.slow
@pytest.mark.parametrize("dt", _DTYPES)
def test_storage_casts(dt):
    """TypedStorage.float(), .int(), ... from every dtype: new storages of the cast
    elements (values that torch's casts define)."""
    def f(L, log):
        x = _values(L, dt)
        if x.dtype.is_floating_point or x.dtype.is_complex:
            x = x.abs() if x.dtype.is_floating_point else x.real.abs() + 0j * x.imag
        s = x.storage()
        for conv in _CASTS:
            c = getattr(s, conv)()
            log.append((conv, _cls(c), c.dtype, c.tolist(), c.data_ptr() != s.data_ptr()))
        log.append(("untyped", [getattr(s.untyped(), conv)().tolist() for conv in _CASTS]))
    same(f, runs=1, quiet=True)


def test_memory_order_of_strided_bases():
    """The bytes are in memory order: a column-major linalg result, a base restrided by
    resize_ (channels_last) and a transposed base."""
    def f(L, log):
        inv = L.linalg.inv(L.tensor([[1.0, 1.0], [0.0, 1.0]]))
        log.append((inv.stride(), inv.storage().tolist(), inv[0].storage().tolist(),
                    inv.t().untyped_storage() is inv.untyped_storage()))
        c = L.arange(24.0).resize_(1, 2, 3, 4)
        c.resize_((1, 2, 3, 4), memory_format=L.channels_last)
        log.append((c.stride(), c, c.storage().tolist()))
        c.untyped_storage()[4:8].copy_(L.tensor([-1.0]).untyped_storage())  # c[0, 1, 0, 0]
        log.append((c, c._version))
        y = L.arange(6.0).reshape(2, 3)
        y.t_()
        log.append((y.stride(), y[0].storage().tolist()))
    same(f, runs=1, quiet=True)


def test_writes_reach_every_tensor():
    """fill_, __setitem__ and copy_ through a storage (untyped, typed, a slice of one) are
    seen by the base, its views and aliases, and move no version counter."""
    def f(L, log):
        x = L.arange(6, dtype=L.int16)
        v, d, t = x[2:4], x.detach(), x.view(2, 3).t()
        u = v.untyped_storage()
        snap = lambda tag: log.append((tag, x, v, d, t, x._version, v._version, d._version))
        u[0] = 9
        snap("setitem")
        u[2:6] = 255
        snap("setitem slice")
        u[4:] .fill_(1)
        snap("slice fill_")
        u.fill_(0)
        snap("fill_")
        u.copy_(L.arange(6, dtype=L.int16).flip(0).untyped_storage())
        snap("copy_")
        s = t.storage()
        s[1] = 300.7
        snap("typed setitem")
        s.fill_(7)
        snap("typed fill_")
        s.copy_(L.ShortStorage([1, 2, 3, 4, 5, 6]))
        snap("typed copy_")
        log.append(("slice ptr", u[2:].data_ptr() - u.data_ptr(), u[2:].nbytes(),
                    u[5:1].data_ptr() - u.data_ptr(), u[20:].data_ptr() - u.data_ptr(),
                    u[2:] is u[2:], u[2:].resizable()))
        # a complex tensor through its imaginary part's storage
        z = L.tensor([1 + 2j, 3 - 4j], dtype=L.complex64)
        im = z.imag
        im.untyped_storage()[4:8] = 0
        log.append(("complex", z, im, z.real, z._version))
        w = L.tensor([1.0, 2.0], requires_grad=True)
        y = w * 1
        y.untyped_storage().fill_(0)
        log.append(("grad", y, y._version, y.grad_fn is not None))
    same(f, runs=1, quiet=True)


def test_untyped_storage_errors_and_constructors():
    """UntypedStorage's constructors, indexing, setitem, fill_, copy_ and resize_ with
    torch's conversions, errors and messages."""

    def f(L, log):
        S = L.UntypedStorage
        for tag, fn in [
                ("size", lambda: S(3).nbytes()), ("empty", lambda: (S().nbytes(), repr(S()))),
                ("seq", lambda: S([1, 2, 300, -1, True]).tolist()),
                ("bytes", lambda: S(b"ab").tolist()), ("tuple", lambda: S((1, 2)).tolist()),
                ("np size", lambda: S(np.int64(3)).nbytes()),
                ("device", lambda: S(2, device="cpu").device),
                ("negative", lambda: S(-1)), ("float", lambda: S(2.0)),
                ("bool", lambda: S(True)), ("str", lambda: S("ab")),
                ("float item", lambda: S([1.5])), ("np item", lambda: S([np.int64(3)])),
                ("two", lambda: S(2, 3)), ("dtype kw", lambda: S(3, dtype=L.float32))]:
            attempt(log, tag, fn)
        s = L.tensor([1, 2, 3], dtype=L.int16).untyped_storage()
        for tag, fn in [
                ("get", lambda: (s[0], s[-6], s[np.int64(2)])), ("get 6", lambda: s[6]),
                ("get -7", lambda: s[-7]), ("get float", lambda: s[1.0]),
                ("get bool", lambda: s[True]), ("get None", lambda: s[None]),
                ("get tensor", lambda: s[L.tensor(1)]), ("step", lambda: s[0:4:2]),
                ("slices", lambda: (s[5:2].nbytes(), s[2:100].tolist(), s[-2:].tolist())),
                ("set", lambda: s.__setitem__(0, 256) or s.__setitem__(1, -1) or s.tolist()),
                ("set float", lambda: s.__setitem__(0, 1.5)),
                ("set np", lambda: s.__setitem__(0, np.int64(3))),
                ("set bool value", lambda: s.__setitem__(0, True) or s.tolist()),
                ("set tensor", lambda: s.__setitem__(0, L.tensor(5))),
                ("set -1", lambda: s.__setitem__(-1, 9)), ("set 6", lambda: s.__setitem__(6, 9)),
                ("set float idx", lambda: s.__setitem__(1.0, 2)),
                ("set float both", lambda: s.__setitem__(1.0, 1.5)),
                ("set bool idx", lambda: s.__setitem__(True, 2)),
                ("set step", lambda: s.__setitem__(slice(0, 4, 2), 3)),
                ("set slices", lambda: s.__setitem__(slice(1, 10), 4) or
                 s.__setitem__(slice(3, 1), 5) or s.tolist()),
                ("fill", lambda: s.fill_(300).tolist()), ("fill -1", lambda: s.fill_(-1).tolist()),
                ("fill float", lambda: s.fill_(2.7)), ("fill np", lambda: s.fill_(np.int64(3))),
                ("fill tensor", lambda: s.fill_(L.tensor(3))),
                ("copy", lambda: s.copy_(S([1, 2, 3, 4, 5, 6])).tolist()),
                ("copy typed", lambda: s.copy_(L.ByteStorage([6, 5, 4, 3, 2, 1])).tolist()),
                ("copy self", lambda: s.copy_(s) is s),
                ("copy size", lambda: s.copy_(S(3))),
                ("copy typed size", lambda: s.copy_(L.FloatStorage(6))),
                ("copy list", lambda: s.copy_([1])), ("copy tensor", lambda: s.copy_(L.zeros(1))),
                ("new", lambda: (repr(s.new()), s.new().device)),
                ("misc", lambda: (s.is_shared(), s.is_pinned(), s.resizable(), s.filename,
                                  s.untyped() is s, s.cpu() is s, s.to(device="cpu") is s,
                                  s.is_hpu, s.is_sparse_csr)),
                ("to positional", lambda: s.to("cpu")),
                ("pin_memory", lambda: s.pin_memory()),
                ("clone", lambda: (s.clone().tolist(), _cls(s.clone()),
                                   s.clone().data_ptr() != s.data_ptr())),
                ("copies", lambda: (copy.copy(s).tolist(), copy.deepcopy(s).tolist(),
                                    [c[0] is c[1] for c in [copy.deepcopy([s, s])]])),
                ("iter", lambda: list(s)), ("type", lambda: s.type()),
                ("type same", lambda: s.type("torch.storage.UntypedStorage") is s),
                ("_to", lambda: s._to("float")),
                ("resize float", lambda: s.resize_(2.0)),
                ("resize slice", lambda: s[0:2].resize_(5)),
                ("resize negative", lambda: s.resize_(-1)),
                ("standalone resize", lambda: (S([1, 2, 3]).resize_(5).nbytes(),
                                               S([1, 2, 3]).resize_(2).tolist(),
                                               S([1, 2]).resize_(0).tolist()))]:
            attempt(log, tag, fn)
    same(f, runs=1, quiet=True)


def test_from_buffer_and_byteswap():
    """UntypedStorage.from_buffer / TypedStorage.from_buffer / FloatStorage.from_buffer
    (byte orders, count, offset, their errors) and byteswap."""
    def f(L, log):
        S = L.UntypedStorage
        for tag, fn in [
                ("little", lambda: S.from_buffer(b"abcd", "little", dtype=L.int16).tolist()),
                ("big", lambda: S.from_buffer(b"abcd", "big", dtype=L.int16).tolist()),
                ("native", lambda: S.from_buffer(b"abcd", "native", dtype=L.int16).tolist()),
                ("uint8", lambda: S.from_buffer(b"abcd", dtype=L.uint8).tolist()),
                ("int8 big", lambda: S.from_buffer(b"abcd", "big", dtype=L.int8).tolist()),
                ("no order", lambda: S.from_buffer(b"abcd", dtype=L.int16)),
                ("no dtype", lambda: S.from_buffer(b"abcd")),
                ("count offset", lambda: S.from_buffer(b"abcdef", "little", 1, 2,
                                                       dtype=L.int16).tolist()),
                ("too many", lambda: S.from_buffer(b"abcdef", "little", 3, 2, dtype=L.int16)),
                ("offset", lambda: S.from_buffer(b"abcdef", "little", -1, 7, dtype=L.int16)),
                ("multiple", lambda: S.from_buffer(b"abcde", "little", dtype=L.int16)),
                ("empty", lambda: S.from_buffer(b"", "little", dtype=L.int16).tolist()),
                ("list", lambda: S.from_buffer([1, 2], "little", dtype=L.int16)),
                ("bad order", lambda: S.from_buffer(b"ab", "middle", dtype=L.int16)),
                ("bool", lambda: S.from_buffer(b"\x01\x00\x02", "little", dtype=L.bool).tolist()),
                ("half big", lambda: S.from_buffer(b"\x01\x00\x02\x00", "big",
                                                   dtype=L.float16).tolist()),
                ("complex big", lambda: S.from_buffer(bytes(range(8)), "big",
                                                      dtype=L.complex64).tolist()),
                ("bytearray", lambda: S.from_buffer(bytearray(b"ab"), dtype=L.uint8).tolist()),
                ("float storage", lambda: L.FloatStorage.from_buffer(
                    np.array([1.5, -2.0], np.float32).tobytes(), "little").tolist()),
                ("typed", lambda: L.TypedStorage.from_buffer(b"abcd", "little",
                                                             dtype=L.int16).tolist()),
                ("typed default", lambda: L.TypedStorage.from_buffer(
                    np.array([3.0], np.float32).tobytes(), "little").tolist()),
                ("legacy dtype", lambda: L.FloatStorage.from_buffer(b"abcd", "little",
                                                                    dtype=L.int16))]:
            attempt(log, tag, _quiet(fn))
        for dt, n in [("int16", 8), ("complex64", 8), ("int64", 8), ("int16", 7),
                      ("uint8", 3), ("complex128", 16)]:
            s = S(list(range(1, n + 1)))
            attempt(log, ("byteswap", dt, n), lambda: s.byteswap(getattr(L, dt)) or s.tolist())
        x = L.tensor([1, 256], dtype=L.int16)
        x.untyped_storage().byteswap(L.int16)
        log.append(x)
    same(f, runs=1)


def test_typed_storage_classes():
    """TypedStorage and the legacy classes: constructors, their errors, element access,
    torch.Storage following the default dtype, StorageBase."""

    def f(L, log):
        for tag, fn in [
                ("float n", lambda: (L.FloatStorage(3).size(), L.FloatStorage(3).nbytes(),
                                     _cls(L.FloatStorage(3)))),
                ("float seq", lambda: L.FloatStorage([1, 2.5, 3]).tolist()),
                ("long seq", lambda: L.LongStorage((1, 2)).tolist()),
                ("bool seq", lambda: L.BoolStorage([0, 2]).tolist()),
                ("empty", lambda: (L.IntStorage().size(), repr(L.IntStorage()))),
                ("np size", lambda: L.DoubleStorage(np.int64(2)).size()),
                ("float arg", lambda: L.FloatStorage(2.0)),
                ("two args", lambda: L.FloatStorage(1, 2)),
                ("device kw", lambda: L.FloatStorage(2, device="cpu")),
                ("dtype kw", lambda: L.FloatStorage(2, dtype=L.float64)),
                ("wrap", lambda: L.FloatStorage(wrap_storage=L.UntypedStorage(8)).size()),
                ("wrap args", lambda: L.FloatStorage(2, wrap_storage=L.UntypedStorage(8))),
                ("wrap typed", lambda: L.FloatStorage(wrap_storage=L.FloatStorage(2))),
                ("typed", lambda: L.TypedStorage(3, dtype=L.int16).nbytes()),
                ("typed default", lambda: L.TypedStorage([1, 2]).dtype),
                ("typed seq", lambda: L.TypedStorage([1, 2], dtype=L.uint8).tolist()),
                ("typed empty", lambda: (L.TypedStorage().size(), L.TypedStorage().dtype)),
                ("typed wrap no dtype", lambda: L.TypedStorage(wrap_storage=L.UntypedStorage(2))),
                ("typed wrap str dtype", lambda: L.TypedStorage(wrap_storage=L.UntypedStorage(2),
                                                                dtype="float")),
                ("typed wrap device", lambda: L.TypedStorage(wrap_storage=L.UntypedStorage(2),
                                                             dtype=L.uint8, device="cpu")),
                ("typed two", lambda: L.TypedStorage(1, 2)),
                ("typed float", lambda: L.TypedStorage(1.5)),
                ("legacy base", lambda: L.storage._LegacyStorage()),
                ("class dtype", lambda: (L.FloatStorage.dtype, L.ComplexDoubleStorage.dtype)),
                ("Storage", lambda: _cls(L.Storage)),
                ("StorageBase", lambda: (issubclass(L.UntypedStorage, L.StorageBase),
                                         L.StorageBase.__name__)),
                ("module", lambda: (sorted(L.storage.__all__), _cls(L.storage.TypedStorage),
                                    L.storage.UntypedStorage is L.UntypedStorage)),
                ("untyped isinstance", lambda: (isinstance(L.UntypedStorage(2), L.TypedStorage),
                                                isinstance(L.UntypedStorage(2),
                                                           L.ByteStorage)))]:
            attempt(log, tag, fn)
        L.set_default_dtype(L.float64)
        try:
            log.append((_cls(L.Storage), L.TypedStorage(2).dtype))
        finally:
            L.set_default_dtype(L.float32)
        s = L.tensor([10, 20, 30, 40, 50, 60], dtype=L.int16).storage()
        for tag, fn in [
                ("get", lambda: (s[0], s[-6], s[5])), ("get 6", lambda: s[6]),
                ("get -7", lambda: s[-7]), ("get slice", lambda: s[0:2]),
                ("get float", lambda: s[1.0]), ("get np", lambda: s[np.int64(1)]),
                ("get bool", lambda: s[True]),
                ("set", lambda: s.__setitem__(0, 2.9) or s.tolist()),
                ("set slice", lambda: s.__setitem__(slice(1, 3), 7) or s.tolist()),
                ("set step", lambda: s.__setitem__(slice(None, None, 3), -1) or s.tolist()),
                ("set float idx", lambda: s.__setitem__(1.0, 1)),
                ("set out", lambda: s.__setitem__(9, 1)),
                ("set storage", lambda: s.__setitem__(0, L.ShortStorage(1))),
                ("set tensor", lambda: s.__setitem__(slice(0, 2), L.tensor([5, 6])) or s.tolist()),
                ("fill", lambda: s.fill_(3) is s and s.tolist()),
                ("copy_", lambda: s.copy_(L.ShortStorage([6, 5, 4, 3, 2, 1])).tolist()),
                ("copy_ size", lambda: s.copy_(L.IntStorage([4, 3]))),
                ("misc", lambda: (s.is_cuda, s.is_hpu, s.is_shared(), s.is_pinned(),
                                  s.resizable(), s.get_device(), s.filename,
                                  s.untyped() is s._untyped_storage, s.cpu().tolist(),
                                  s.to(device="cpu").tolist(), s.is_sparse)),
                ("clone", lambda: (s.clone().tolist(), s.clone().data_ptr() != s.data_ptr(),
                                   _cls(s.clone()), s.clone().dtype)),
                ("copies", lambda: (copy.copy(s).tolist(), copy.deepcopy(s).tolist(),
                                    copy.deepcopy(s).data_ptr() != s.data_ptr())),
                ("type", lambda: (s.type(), L.TypedStorage(2, dtype=L.int32).type())),
                ("_to", lambda: s._to("float")),
                ("data_ptr", lambda: s.data_ptr() == s._untyped_storage.data_ptr()),
                ("from_file", lambda: L.TypedStorage.from_file("x", False, 1)),
                ("wrapped", lambda: _cls(s._new_wrapped_storage(L.UntypedStorage(4))))]:
            attempt(log, tag, fn)
    same(f, runs=1, quiet=True)


def test_typed_storage_warning_once():
    """Tensor.storage() (and every public TypedStorage method, storage_type(), the legacy
    classes' dtype) warns torch's deprecation once per process, at the caller; the flag can
    be reset and set to always; untyped_storage() and _typed_storage() do not warn."""
    def f(L, log):
        L.storage._reset_warn_typed_storage_removal()
        x = L.ones(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x.untyped_storage()
            x._typed_storage().tolist
            log.append(("quiet", len(w)))
            s = x.storage()
            x.storage()
            s.tolist()
            log.append([(str(a.message), a.category.__name__, a.filename == __file__)
                        for a in w])
            L.storage._reset_warn_typed_storage_removal()
            log.append((_cls(x.storage_type()), len(w), w[-1].filename == __file__))
            L.storage._reset_warn_typed_storage_removal()
            log.append((L.FloatStorage.dtype, len(w), w[-1].filename == __file__))
            L.storage._reset_warn_typed_storage_removal()
            s.size()
            log.append((len(w), w[-1].filename == __file__))
            L.storage._set_always_warn_typed_storage_removal(True)
            try:
                s.size()
                s.nbytes()
                log.append(len(w))
            finally:
                L.storage._set_always_warn_typed_storage_removal(False)
            attempt(log, "always", lambda: L.storage._set_always_warn_typed_storage_removal(1))
    same(f, runs=1)


def test_save_and_load_keep_sharing_storage():
    """Tensors that torch.load gives back over one storage have one UntypedStorage, at
    torch's offsets (serialization's storages are eagergrad's)."""
    def f(L, log):
        x = L.arange(10.0)
        buf = io.BytesIO()
        L.save({"x": x, "v": x[3:7], "t": x.view(2, 5).t()}, buf)
        d = L.load(io.BytesIO(buf.getvalue()))
        s = d["x"].untyped_storage()
        log.append([(k, d[k].untyped_storage() is s, d[k].data_ptr() - d["x"].data_ptr())
                    for k in d])
        s[0:4] = 0
        log.append((d["x"], d["v"], d["t"]))
    same(f, runs=1)


def test_storage_resize():
    """resize_ of a tensor's storage: growing it keeps the tensor's elements and its bytes;
    a later tensor resize_ reads the kept elements (torch's new bytes are uninitialized:
    not compared)."""
    def f(L, log):
        x = L.arange(3.0)
        s = x.untyped_storage()
        s.resize_(20)
        log.append((s.nbytes(), s.tolist()[:12], x, x.untyped_storage().nbytes()))
        s.fill_(0)
        log.append(x)
        s[0:4] = 1
        del s
        x.resize_(5)
        log.append((x[:3], x.untyped_storage().nbytes()))
        y = L.arange(4.0)
        y.resize_(1)  # (the storage keeps its 16 bytes)
        s = y.untyped_storage()
        log.append((s.nbytes(), s.tolist()))
        s.resize_(12)
        log.append((s.nbytes(), s.tolist()))
        del s
        y.resize_(3)
        log.append(y)
    same(f, runs=1)


# ---- eagergrad's own limits ------------------------------------------------------------------
def test_unsupported_storage_operations_are_refused():
    """What eagergrad cannot do with torch's semantics raises NotImplementedError naming
    it: shrinking a tensor's storage below the tensor, sharing memory, files, pickling."""
    x = eg.arange(4.0)
    s = x.untyped_storage()
    with pytest.raises(NotImplementedError, match="resizing the storage of a tensor"):
        s.resize_(8)
    with pytest.raises(NotImplementedError, match="resizing the storage of a tensor"):
        s.resize_(17)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0] and s.nbytes() == 16
    with pytest.raises(NotImplementedError, match="share_memory_"):
        s.share_memory_()
    with pytest.raises(NotImplementedError, match="from_file"):
        eg.UntypedStorage.from_file("f", False, 4)
    with pytest.raises(NotImplementedError, match="pickling or saving storages"):
        pickle.dumps(s)
    with pytest.raises(NotImplementedError, match="pickling or saving storages"):
        eg.save(x._typed_storage(), io.BytesIO())
    with pytest.raises(NotImplementedError, match="allocator"):
        eg.UntypedStorage(2, allocator=1)


def test_traced_storages_are_refused():
    """Inside a torch.func transform a storage's size and address are known, its bytes are
    not: reading or writing them raises NotImplementedError."""
    seen = []

    def fn(x):
        s = x.untyped_storage()
        seen.append((s.nbytes(), x.data_ptr() == s.data_ptr()))
        with pytest.raises(NotImplementedError, match="traced storage"):
            s.tolist()
        with pytest.raises(NotImplementedError, match="traced storage"):
            s.fill_(0)
        return x.sin().sum()

    eg.func.grad(fn)(eg.ones(3))
    assert seen == [(12, True)]


def test_distinct_live_storages_have_disjoint_addresses():
    """data_ptr()s of storages alive together are distinct, their ranges disjoint (the
    virtual addresses of NOTE [storage objects]), and fixed while a storage lives."""
    ts = [eg.zeros(1000) for _ in range(50)]
    ranges = sorted((t.untyped_storage().data_ptr(), t.untyped_storage().nbytes()) for t in ts)
    assert all(a + n <= b for (a, n), (b, _) in zip(ranges, ranges[1:]))
    p = ts[0].data_ptr()
    ts[0].add_(1)
    ts[0].untyped_storage().fill_(3)
    assert ts[0].data_ptr() == p and ts[0][1:].data_ptr() == p + 4


def test_messages_name_torch_classes():
    """Messages and reprs name torch's classes (compared with torch's above): eagergrad's
    own module names never leak into them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = eg.tensor([1.0]).storage()
        assert "eagergrad" not in repr(s) + repr(s.untyped()) + s.type()
        with pytest.raises(TypeError) as e:
            eg.FloatStorage(2.0)
        assert msg(e.value) == str(e.value)
