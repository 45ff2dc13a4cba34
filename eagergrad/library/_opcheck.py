"""torch.library.opcheck: the checks of a custom operator that mean something eagerly.

- test_schema: torch's SchemaCheckMode on the operator call (an input the schema does not
  declare mutable was mutated, an output aliases an input or another output without the
  schema saying so, an input returned as is);
- test_autograd_registration: torch's autograd_registration_check;
- test_faketensor: torch runs the fake impl on FakeTensors and compares the outputs'
  metadata with the real ones; eagergrad has no FakeTensor, so it runs the fake impl on
  clones of the real inputs (with grad mode off) and makes the same comparisons (number of
  outputs, sizes, strides, storage offset, dtype, requires_grad). A fake impl calling
  torch.library.get_ctx() raises NotImplementedError;
- test_aot_dispatch_static / _dynamic compile the operator with AOTAutograd: they raise
  NotImplementedError (they are in torch's defaults: pass test_utils without them).
"""
from ..engine.grad_mode import no_grad
from ..ops.compare import allclose
from ..tensor import Tensor
from . import _dispatch
from ._custom_ops import CustomOpDef
from ._schema import bind

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                      "test_aot_dispatch_dynamic")
ALL_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                  "test_aot_dispatch_static", "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    pass


class UnsupportedOperatorException(RuntimeError):
    """(torch._subclasses.fake_tensor's) an operator without a fake implementation."""


class MetadataMismatchError(RuntimeError):
    """(torch._subclasses.fake_tensor's) fake and real outputs' metadata differ."""


def _map_tensors(fn, v):
    if isinstance(v, Tensor):
        return fn(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_map_tensors(fn, x) for x in v)
    if isinstance(v, dict):
        return {k: _map_tensors(fn, x) for k, x in v.items()}
    return v


def _leaves(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _leaves(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _leaves(x)
    else:
        yield v


def _clone(t):
    with no_grad():
        y = t.clone()
    if t.is_leaf:
        y.requires_grad_(t.requires_grad)
        if t.grad is not None:
            y.grad = _clone(t.grad)
    return y


def _copy(args, kwargs):
    return _map_tensors(_clone, args), _map_tensors(_clone, kwargs)


# ---- test_schema ----------------------------------------------------------------------------
def _equal(a, b):
    return a.shape == b.shape and bool(allclose(a, b, equal_nan=True))


def _aliased(a, b):
    return isinstance(a, Tensor) and isinstance(b, Tensor) and a._storage is b._storage


def _schema_check(op, args, kwargs):
    args, kwargs = _copy(args, kwargs)
    schema = op._schema
    values = bind(schema, args, kwargs)
    before = [_map_tensors(_clone, v) for v in values]
    meta = [[(x.stride(), id(x._storage)) if isinstance(x, Tensor) else None
             for x in _leaves(v)] for v in values]
    out = op(*args, **kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    for i, a in enumerate(schema.arguments):
        after = values[i]
        if after is None:
            continue
        name = a.name if a.name != "self" else "input"
        for j, o in enumerate(outs):
            if any(_aliased(o, x) for x in _leaves(after)):
                r = schema.returns[j] if j < len(schema.returns) else None
                if a.alias_info is None or r is None or r.alias_info is None or \
                        not (a.alias_info.before_set & r.alias_info.before_set):
                    raise RuntimeError(f"Argument {name} is not defined to alias output but "
                                       "was aliasing")
            if after is o and isinstance(after, Tensor) and not a.is_write:
                raise RuntimeError("Dispatcher operators below autograd are not allowed to "
                                   f"directly return inputs.\nHowever, we found that "
                                   f"`outputs[{j}] is {name}")
        mutated = any(
            isinstance(b, Tensor) and isinstance(x, Tensor) and m is not None and not (
                b.shape == x.shape and _equal(b, x) and m[0] == x.stride()
                and m[1] == id(x._storage))
            for b, x, m in zip(_leaves(before[i]), _leaves(after), meta[i]))
        if mutated and not a.is_write:
            raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")
    rets = schema.returns
    for i in range(len(rets)):
        for j in range(i + 1, len(rets)):
            if _aliased(outs[i], outs[j]) and not (
                    rets[i].alias_info and rets[j].alias_info and
                    rets[i].alias_info.before_set & rets[j].alias_info.before_set):
                raise RuntimeError(f"Outputs {i} and {j} alias unexpectedly")
    return out


# ---- test_autograd_registration -------------------------------------------------------------
def _autograd_registration_check(op, args, kwargs):
    args, kwargs = _copy(args, kwargs)
    flat = list(_leaves((args, kwargs)))
    tensors = [x for x in flat if isinstance(x, Tensor)]
    if not any(t.requires_grad for t in tensors):
        return
    o = op._op()
    for key in ("AutogradCPU", "Autograd", "CompositeImplicitAutograd"):
        if _dispatch.KERNELS.get((o.qualname, key)):
            return
    prev = _dispatch.FALLBACK_MODE[0]
    _dispatch.FALLBACK_MODE[0] = "nothing"
    try:
        outs = op(*args, **kwargs)
    finally:
        _dispatch.FALLBACK_MODE[0] = prev
    ids = {id(x) for x in flat}
    if any(isinstance(t, Tensor) and t.requires_grad and id(t) not in ids
           for t in _leaves(outs)):
        raise AssertionError(
            f"{op.name()}: at least one output of this operator has requires_grad=True but the "
            "operator does not have an autograd kernel defined at an autograd key (e.g. "
            "DispatchKey::Autograd). This could mean that you have incorrectly registered an "
            "autograd kernel to a non-Autograd DispatchKey, which may lead to silently incorrect "
            "results. If your operator consists of regular PyTorch operations, consider not "
            "using an operator at all or registering your operator as "
            "CompositeImplicitAutograd. If you have an autograd.Function registered to a "
            "backend (CPU/CUDA/XPU) key, the correct location for it is the Autograd key.")


# ---- test_faketensor ------------------------------------------------------------------------
def _no_ctx():
    raise NotImplementedError("eagergrad does not implement torch.library.get_ctx() in "
                              "opcheck's test_faketensor yet (it runs fake impls on real "
                              "tensors)")


def _fake_check(op, args, kwargs):
    args, kwargs = _copy(args, kwargs)
    o = op._op()
    skip = {"dynamic_output_shape", "inplace_view", "data_dependent_output"}
    if any(t.name in skip for t in o.tags):
        return op(*args, **kwargs)
    fn = None
    for key in ("Fake", "Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd"):
        stack = _dispatch.KERNELS.get((o.qualname, key))
        if stack:
            fn = stack[-1][1]
            break
    if fn is None:
        raise UnsupportedOperatorException(str(op))
    fargs, fkwargs = _copy(args, kwargs)
    prev = _dispatch.CTX_GETTER[0]
    _dispatch.CTX_GETTER[0] = _no_ctx
    try:
        with no_grad():
            fake_r = _dispatch.returned(o, fn(*fargs, **fkwargs))
    finally:
        _dispatch.CTX_GETTER[0] = prev
    with no_grad():
        r = op(*args, **kwargs)
    context = f"When comparing the output of {op} on FakeTensor and concrete Tensors, found"
    r_flat, f_flat = list(_leaves(r)), list(_leaves(fake_r))
    if len(f_flat) != len(r_flat):
        raise AssertionError(f"{context} mismatch in number of returns {len(f_flat)} != "
                             f"{len(r_flat)}")
    for idx, (ro, fo) in enumerate(zip(r_flat, f_flat)):
        if isinstance(ro, Tensor) != isinstance(fo, Tensor):
            raise AssertionError(f"{context} mismatched number of tensor outputs")
        if not isinstance(ro, Tensor):
            continue
        err = _compare_meta(ro, fo)
        if err:
            where = "" if len(r_flat) == 1 else f" for output[{idx}]"
            raise MetadataMismatchError(f"{context} mismatched tensor metadata{where}: {err}")
    return r


def _compare_meta(a, b):
    if a.requires_grad != b.requires_grad:
        return (" mismatched requires_grad-ness of outputs. This usually means that you have "
                "added autograd support for your operator at a dispatch key other than "
                "Autograd, which will lead to problems")
    if a.storage_offset() != b.storage_offset():
        return " mismatched storage offset"
    if a.dtype != b.dtype:
        return f"Dtypes {a.dtype} and {b.dtype} are not equal!"
    if a.shape != b.shape:
        return f"Shapes {a.shape} and {b.shape} are not equal!"
    if a.numel() and a.stride() != b.stride():
        return (f"Stride mismatch! Strides are {a.stride()} and {b.stride()} (mismatched at "
                f"{next(i for i, (x, y) in enumerate(zip(a.stride(), b.stride())) if x != y)})!")
    return None


def _aot(op, args, kwargs):
    raise NotImplementedError("eagergrad does not implement torch.library.opcheck's "
                              "test_aot_dispatch tests yet (they compile the operator with "
                              "AOTAutograd); pass test_utils without them")


_TESTERS = {"test_schema": _schema_check,
            "test_autograd_registration": _autograd_registration_check,
            "test_faketensor": _fake_check,
            "test_aot_dispatch_static": _aot, "test_aot_dispatch_dynamic": _aot}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True,
            atol=None, rtol=None):
    """Check that a custom operator is registered correctly (torch.library.opcheck):
    returns {test name: "SUCCESS" or the exception}. See the module docstring for what each
    test does eagerly; the test_aot_dispatch tests raise NotImplementedError.

    >>> import eagergrad as torch
    >>> @torch.library.custom_op("doc::add1", mutates_args=())
    ... def add1(x: torch.Tensor) -> torch.Tensor:
    ...     return x + 1
    >>> torch.library.opcheck(add1, (torch.ones(2),), test_utils="test_schema")
    {'test_schema': 'SUCCESS'}
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify "
                         "both")
    if kwargs is None:
        kwargs = {}
    if isinstance(op, CustomOpDef):
        op = op._opoverload
    if isinstance(op, _dispatch.OpOverloadPacket):
        overloads = list(_dispatch.DEFS.get(op._qualified_op_name, {}))
        if len(overloads) != 1:
            raise RuntimeError("opcheck can only test operators without overloads. Got the "
                               f"following overloads for {op._qualified_op_name}: "
                               f"{overloads}")
        op = getattr(op, overloads[0] or "default")
    if not isinstance(op, _dispatch.OpOverload):
        raise ValueError("opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. "
                         f"torch.ops.aten.sin.default, got {type(op)}")
    if test_utils == "ALL":
        test_utils = ALL_TEST_UTILS
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be "
                         f"subset of {ALL_TEST_UTILS} but it was not")
    for t in test_utils:
        if _TESTERS[t] is _aot:
            _aot(op, args, kwargs)
    results = {}
    for t in test_utils:
        try:
            _TESTERS[t](op, args, kwargs)
            results[t] = "SUCCESS"
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {t} failed with {ex} (scroll up for "
                                   "stack trace)") from ex
            results[t] = ex
    return results
