"""torch.library and torch.Tag, differentially against torch: custom_op (schema inference,
kernels per device, register_autograd and its GeneratedBackwardFor_* nodes, mutation
version bumps, aliasing errors, Tag.inplace / Tag.out), Library define/impl at the CPU,
CompositeImplicitAutograd and Autograd keys with torch's autograd fallback, torch.ops
access, argument binding, schema parsing and printing, and opcheck. Every scenario runs
with torch and with eagergrad; the logs must be equal. Each scenario uses its own operator
namespace (registrations are process-wide, in torch as in eagergrad) and removes the
Library blocks it makes."""
import re
import typing
import warnings

import pytest
import torch

import eagergrad as eg
from conftest import same

_IMPL_IN = re.compile(r" \(with implementation in <module [^>]*>\)")


def _msg(e):
    """An exception's message as both libraries can agree on it: torch's names for
    eagergrad's, no "(with implementation in <module ...>)" (a file path), the first line
    of a multi-line argument error (the rest is pybind's cast details)."""
    text = _IMPL_IN.sub("", str(e)).replace("eagergrad.", "torch.")
    if "\nPosition: " in text:
        text = text.split("\n")[0]
    return text


def _try(log, tag, fn):
    try:
        log.append((tag, fn()))
    except Exception as e:  # noqa: BLE001 - compared with torch's
        log.append((tag, type(e).__name__, _msg(e)))


def _warned(log, tag, fn):
    """fn() with the warnings it raises logged (torch's C++ warnings end with where they
    were triggered: cut)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _try(log, tag, fn)
    log.append((tag, [(x.category.__name__, str(x.message).split(" (Triggered internally")[0])
                      for x in w]))


def _r(L, *shape, requires_grad=False):
    n = 1
    for s in shape:
        n *= s
    t = (L.arange(n, dtype=L.float32).reshape(shape) * 0.37 + 0.1)
    return t.requires_grad_(requires_grad)


# ---- custom_op and autograd ----------------------------------------------------------------
def test_custom_op_autograd():
    def f(L, log):
        Tensor = L.Tensor

        @L.library.custom_op("tl_ag::mysin", mutates_args=())
        def mysin(x: Tensor) -> Tensor:
            return x.sin()

        fake_calls = []

        @mysin.register_fake
        def _(x):
            fake_calls.append(1)
            return L.empty_like(x)

        x = _r(L, 3, requires_grad=True)
        y = mysin(x)  # no formula yet: the node exists, backward raises
        log.append(("no formula", y, type(y.grad_fn).__name__, len(y.grad_fn.next_functions)))
        _try(log, "backward without formula", lambda: y.sum().backward())

        def backward(ctx, grad):
            log.append(("needs", ctx.needs_input_grad, L.is_grad_enabled()))
            return grad * ctx.x.cos()

        def setup_context(ctx, inputs, output):
            log.append(("setup", type(inputs).__name__, len(inputs), output))
            ctx.x, = inputs

        mysin.register_autograd(backward, setup_context=setup_context)
        y = L.ops.tl_ag.mysin(x)
        y.sum().backward()
        log.append(("grad", y, x.grad, y.grad_fn.name(), fake_calls))
        y = L.ops.tl_ag.mysin.default(x)  # double backward through the formula's ops
        g, = L.autograd.grad(y.sum(), x, create_graph=True)
        log.append(("double", g, g.grad_fn.name(), L.autograd.grad(g.sum(), x)))
        log.append(("no grad paths", mysin(x.detach()), L.no_grad()(mysin)(x)))
        with L.inference_mode():
            log.append(("inference", mysin(x)))
        ops = L.ops.tl_ag.mysin
        log.append(("names", str(ops), repr(ops), str(ops.default), repr(ops.default),
                    ops.overloads(), ops.default.name(), ops._qualified_op_name,
                    ops.default._opname, ops.default._overloadname, ops.default.namespace,
                    str(ops.default._schema), mysin._schema, repr(mysin), mysin._qualname,
                    mysin._namespace, mysin._name, mysin._tags,
                    [str(t) for t in ops.default.tags], ops is L.ops.tl_ag.mysin,
                    mysin._opoverload is ops.default, hasattr(L.ops.tl_ag, "nope")))
        _try(log, "no overload", lambda: L.ops.tl_ag.mysin.nope)
        _try(log, "no op", lambda: L.ops.tl_ag.nope)
        # the direct form, with an explicit schema
        twice = L.library.custom_op("tl_ag::twice", lambda x, a: x * a, mutates_args=(),
                                    schema="(Tensor x, float a) -> Tensor")
        log.append(("direct", twice(x, 2), twice._schema, str(twice._opoverload._schema)))
    same(f)


@pytest.mark.slow
def test_custom_op_signatures_and_gradient_checks():
    def f(L, log):
        Tensor = L.Tensor

        @L.library.custom_op("tl_sig::two", mutates_args=())
        def two(x: Tensor, y: Tensor, k: float = 2.0) -> tuple[Tensor, Tensor]:
            return x * k, (x * y).sum()

        def bw(ctx, ga, gb):
            x, y = ctx.saved_tensors
            log.append(("needs", ctx.needs_input_grad, ctx.k))
            return (ga * ctx.k + gb * y, gb * x) + (None,) * (len(ctx.needs_input_grad) - 2)

        def sc(ctx, inputs, output):
            log.append(("inputs", inputs[2:], type(output).__name__))
            ctx.save_for_backward(inputs[0], inputs[1])
            ctx.k = inputs[2]

        two.register_autograd(bw, setup_context=sc)
        x, y = _r(L, 3, requires_grad=True), _r(L, 3)
        a, b = two(x, y)  # k=2.0 is the default: the kernel and the node do not get it
        log.append(("outs", a, b, a.grad_fn is b.grad_fn, len(a.grad_fn.next_functions)))
        (a.sum() + b).backward()
        a, b = two(x, y, k=3.0)
        (a.sum() + b).backward()
        log.append(("grad", x.grad))

        @L.library.custom_op("tl_sig::kw", mutates_args=())
        def kw(x: Tensor, *, alpha: float = 1.0) -> Tensor:
            return x * alpha

        def kwsc(ctx, inputs, keyword_only_inputs, output):
            log.append(("kw", len(inputs), keyword_only_inputs))
            ctx.alpha = keyword_only_inputs["alpha"]

        kw.register_autograd(lambda ctx, g: g * ctx.alpha, setup_context=kwsc)
        x = _r(L, 2, requires_grad=True)
        kw(x, alpha=3.0).sum().backward()
        kw(x).sum().backward()
        log.append(("kw grad", x.grad))
        _try(log, "kw positional", lambda: kw(x, 3.0))

        @L.library.custom_op("tl_sig::lst", mutates_args=())
        def lst(xs: list[Tensor], w: list[float]) -> list[Tensor]:
            return [t * s for t, s in zip(xs, w)]

        def lbw(ctx, grads):
            log.append(("list grads", type(grads).__name__, len(grads), ctx.needs_input_grad))
            return [g * s for g, s in zip(grads, ctx.w)], None

        lst.register_autograd(lbw, setup_context=lambda ctx, inputs, output:
                              setattr(ctx, "w", inputs[1]))
        xs = [_r(L, 2, requires_grad=True), _r(L, 2, requires_grad=True)]
        outs = lst(xs, [2.0, 3.0])
        log.append(("list outs", type(outs).__name__, outs))
        (outs[0].sum() + outs[1].sum()).backward()
        log.append(("list grad", [t.grad for t in xs]))

        @L.library.custom_op("tl_sig::bad", mutates_args=())
        def bad(x: Tensor, y: Tensor) -> Tensor:
            return x + y

        x = _r(L, 2, requires_grad=True)
        bad.register_autograd(lambda ctx, g: g)
        _try(log, "too few", lambda: bad(x, x).sum().backward())
        bad.register_autograd(lambda ctx, g: (g, g, g))
        _try(log, "to the metadata", lambda: bad(x, x).sum().backward())
        bad.register_autograd(lambda ctx, g: (g, 3))
        _try(log, "not a tensor", lambda: bad(x, x).sum().backward())

        @L.library.custom_op("tl_sig::cnt", mutates_args=())
        def cnt(x: Tensor) -> int:
            return 3
        log.append(("int out", cnt(x)))
    same(f)


def test_custom_op_mutation_aliasing_and_tags():
    def f(L, log):
        Tensor = L.Tensor

        @L.library.custom_op("tl_mut::addone_", mutates_args={"x"})
        def addone_(x: Tensor) -> None:
            x.add_(1)

        @L.library.custom_op("tl_mut::touch", mutates_args={"x"})
        def touch(x: Tensor) -> None:
            pass

        @L.library.custom_op("tl_mut::unk", mutates_args="unknown")
        def unk(x: Tensor, y: Tensor, n: int) -> None:
            pass

        x, y = _r(L, 3), _r(L, 2)
        v0 = x._version
        log.append(("addone_", addone_(x), x, x._version - v0))
        touch(x)
        unk(x, y, 2)
        log.append(("bumps", x._version - v0, y._version, unk._schema))
        with L.no_grad():
            touch(x)
        with L.inference_mode():
            touch(x)
        log.append(("modes", x._version - v0))
        leaf = _r(L, 3, requires_grad=True)
        _try(log, "leaf requiring grad", lambda: (addone_(leaf), leaf, leaf._version))
        _try(log, "autograd on a mutable op", lambda: addone_.register_autograd(lambda c, g: g))

        for name, body in [("retalias", lambda x: x), ("retview", lambda x: x.view(-1))]:
            op = L.library.custom_op(f"tl_mut::{name}", body, mutates_args=(),
                                     schema="(Tensor x) -> Tensor")
            _try(log, name, lambda: op(_r(L, 3)))

        @L.library.custom_op("tl_mut::rettwo", mutates_args=())
        def rettwo(x: Tensor) -> tuple[Tensor, Tensor]:
            y = x + 1
            return y, y
        _try(log, "two outputs alias", lambda: rettwo(_r(L, 3)))

        @L.library.custom_op("tl_mut::sin_", mutates_args={"x"}, tags=L.Tag.inplace)
        def sin_(x: Tensor) -> Tensor:
            x.sin_()
            return x

        x = _r(L, 3)
        v0 = x._version
        r = sin_(x)
        log.append(("inplace", r is x, x, x._version - v0, sin_._schema,
                    str(sin_._opoverload._schema), [str(t) for t in sin_._opoverload.tags]))
        _try(log, "inplace on a graph tensor", lambda: sin_(_r(L, 3, requires_grad=True)
                                                           .clone()).grad_fn.name())

        @L.library.custom_op("tl_mut::bad_", mutates_args={"x"}, tags=L.Tag.inplace)
        def bad_(x: Tensor) -> Tensor:
            return x.clone()
        _try(log, "inplace returning another", lambda: bad_(_r(L, 2)))

        @L.library.custom_op("tl_mut::sinout", mutates_args={"out"}, tags=L.Tag.out)
        def sinout(x: Tensor, *, out: Tensor) -> Tensor:
            out.copy_(x.sin())
            return out

        o = L.zeros(3)
        r = sinout(_r(L, 3), out=o)
        log.append(("out", r is o, o, o._version, sinout._schema))
        _try(log, "out requiring grad", lambda: sinout(_r(L, 3, requires_grad=True),
                                                       out=L.zeros(3)))
        _try(log, "out autograd", lambda: sinout.register_autograd(lambda c, g: g))
        _warned(log, "out fake", lambda: sinout.register_fake(lambda x, *, out: out) and None)
    same(f)


def test_custom_op_kernels_and_devices():
    def f(L, log):
        Tensor = L.Tensor

        @L.library.custom_op("tl_dev::k", mutates_args=())
        def k(x: Tensor) -> Tensor:
            return x * 0

        log.append(("default", k(_r(L, 2))))

        @k.register_kernel("cpu")
        def _(x):
            return x + 1

        log.append(("cpu", k(_r(L, 2))))
        with k.set_kernel_enabled("cpu", enabled=False):
            log.append(("disabled", k(_r(L, 2))))
        log.append(("enabled", k(_r(L, 2))))
        k.register_kernel(["cpu", "cuda"], lambda x: x + 2)
        log.append(("both", k(_r(L, 2)), sorted(str(d) for d in k._backend_fns)))
        L.library.register_kernel("tl_dev::k", "cpu", lambda x: x + 5)
        log.append(("by name", k(_r(L, 2))))

        @L.library.custom_op("tl_dev::fac", mutates_args=(), device_types="cpu")
        def fac(n: int, device: L.device) -> Tensor:
            return L.ones(n)

        log.append(("factory", fac(2, "cpu"), fac._schema))
        _try(log, "unregistered device", lambda: fac(2, "meta"))

        def nodev(n: int) -> Tensor:
            return L.ones(n)
        _try(log, "no device arg", lambda: L.library.custom_op(
            "tl_dev::nodev", nodev, mutates_args=(), device_types="cpu"))

        @L.library.custom_op("tl_dev::cu", mutates_args=(), device_types="cuda")
        def cu(x: Tensor) -> Tensor:
            return x * 2
        try:
            cu(_r(L, 2))
        except NotImplementedError as e:  # (the list of torch's backends differs)
            log.append(("cuda only", str(e).split(" 't")[0]))
    same(f)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_custom_ops_in_func_transforms():
    def f(L, log):
        @L.library.custom_op("tl_func::mysin", mutates_args=())
        def mysin(x: L.Tensor) -> L.Tensor:
            return x.sin()

        mysin.register_autograd(lambda ctx, g: g * ctx.x.cos(),
                                setup_context=lambda ctx, inputs, output:
                                setattr(ctx, "x", inputs[0]))
        x = _r(L, 3)
        _try(log, "grad", lambda: L.func.grad(lambda t: mysin(t).sum())(x))
        _try(log, "vjp", lambda: L.func.vjp(mysin, x)[1](L.ones(3)))
        log.append(("vmap", L.func.vmap(mysin)(_r(L, 2, 3))))
        fwd = L.autograd.forward_ad
        with fwd.dual_level():
            log.append(("dual", fwd.unpack_dual(mysin(fwd.make_dual(x, L.ones(3)))).tangent))
    same(f)
    with pytest.raises(NotImplementedError, match="torch.func.jvp"):
        eg.func.jvp(eg.ops.tl_func.mysin, (eg.ones(3),), (eg.ones(3),))


# ---- schema inference and parsing -----------------------------------------------------------
def test_infer_schema():
    def f(L, log):
        T = L.Tensor
        Opt, Seq, Lst = typing.Optional, typing.Sequence, typing.List

        def a1(x: T, y: Opt[T], z: Lst[T], w: Seq[int], f: float = 1.5, b: bool = True,
               s: str = "hi", n: Opt[int] = None, dt: L.dtype = L.float64,
               sc: typing.Union[int, float, bool] = 2) -> tuple[T, T]: ...

        def a2(x: "Tensor", n: "int" = 3) -> "Tensor": ...  # noqa: F821 (evaluated)

        def a3(x: T, d: L.device = "cpu", ls: list[float] = None) -> list[T]: ...

        def a4(x: T) -> tuple[T]: ...

        def a5(x: T, *, out: T) -> None: ...

        a2.__globals__.setdefault("Tensor", None)
        for fn, mut in [(a1, ()), (a1, ("x", "z")), (a1, "unknown"), (a3, ()), (a4, ()),
                        (a5, ["out"])]:
            _try(log, fn.__name__, lambda: L.library.infer_schema(fn, mutates_args=mut))
        def a6(x: T, y: Opt[T], f: float = 1.5) -> T: ...

        for fn, mut in [(a6, ("f",)), (a6, ("q",)), (a6, "foo")]:
            _try(log, "error", lambda: L.library.infer_schema(fn, mutates_args=mut))

        def b1(x: T, *args) -> T: ...

        def b2(x: T): ...

        def b3(x: T, n: int = [1]) -> T: ...

        def b4(x: T, /) -> T: ...

        def b5(x: T, y: dict) -> T: ...

        def b6(x: T) -> dict: ...

        for fn in (b1, b2, b3, b4, b5, b6):
            try:
                L.library.infer_schema(fn, mutates_args=())
            except ValueError as e:  # (the lists of valid types print differently)
                log.append((fn.__name__, _msg(e).split(" The valid types")[0]
                            .split(" Got func")[0]))
        _try(log, "op_name", lambda: L.library.infer_schema(a4, mutates_args=(), op_name="g"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(f)


_SCHEMAS = [
    "f(Tensor x, float a=2.0, float b=1.5, float c=1e-5, float d=1e20, float e=0.1, "
    "float g=100., float h=-2.5, float k=123456789.0) -> Tensor",
    "ns::f.ov(Tensor(a) x, Tensor(b!) y, Tensor(c!)[] z, Tensor? w=None, Tensor?[] q, "
    "int[2] s=[1, 1], int[2] s2=[1, 2], SymInt[] u=[], str m=\"hi\", bool p=True, "
    "Scalar sc=1, ScalarType? dt=None, ScalarType dt2=float, Device d=\"cpu\", int? o=2, "
    "*, int r=-1, float[3] fl=[1., 2, 3]) -> (Tensor(a), Tensor(b!) out, int, float[], "
    "Tensor[])",
    "f(Tensor x) -> Tensor(a)", "f() -> ()", "f(Tensor x) -> (Tensor)",
    "mylib::f(int x=0) -> (Tensor a, Tensor b)", "f(Tensor(a -> *) x) -> Tensor",
    "f(Tensor x, Layout l=strided, MemoryFormat m=contiguous_format) -> Tensor",
    "f(Tensor(a!) x) -> (Tensor(a) self)",
    "f(Tensor x -> Tensor", "f(Foo x) -> Tensor", "f(Tensor x) Tensor", "(Tensor x) -> Tensor",
    "f(Tensor x=1, Tensor y) -> Tensor", "f(int[] t=1) -> Tensor", "f(Tensor[] t=[]) -> Tensor",
]


def test_parse_schema():
    def f(L):
        out = []
        for s in _SCHEMAS:
            try:
                sc = L.parse_schema(s)
            except RuntimeError as e:
                out.append(("error", str(e).strip().split("\n")[0]))
                continue
            out.append((str(sc), sc.name, sc.overload_name, sc.is_mutable,
                        [(a.name, str(a.type), a.default_value if not isinstance(
                            a.default_value, (L.device,)) else str(a.default_value),
                          a.kwarg_only, a.N, a.is_write, a.is_out,
                          None if a.alias_info is None else
                          (a.alias_info.is_write, sorted(a.alias_info.before_set),
                           sorted(a.alias_info.after_set))) for a in sc.arguments],
                        [(r.name, str(r.type)) for r in sc.returns]))
        return out
    same(f)


def test_tag():
    def f(L):
        T = L.Tag
        return (list(T.__members__), [int(v) for v in T.__members__.values()],
                repr(T.inplace), str(T.inplace), T.inplace.name, T.inplace.value,
                int(T.out), T(6) == T.inplace, T.inplace == T.inplace, T.inplace == 6,
                hash(T.core) == hash(0), type(T).__name__ != "", T.__name__)
    same(f)


# ---- Library ---------------------------------------------------------------------------------
def test_library_keys_and_autograd_fallback():
    def f(L, log):
        lib = L.library.Library("tl_lib", "FRAGMENT")
        try:
            log.append(("repr", repr(lib), lib.define("foo(Tensor x, float a=2.0) -> Tensor"),
                        lib.define("foo.ov(Tensor x, int y) -> Tensor")))

            def foo_cpu(x, a=2.0, *rest, **kw):
                log.append(("kernel args", a, rest, kw, L.is_grad_enabled()))
                return x * a

            lib.impl("foo", foo_cpu, "CPU")
            lib.impl("foo.ov", lambda x, y: x + y, "CPU")
            x = _r(L, 3, requires_grad=True)
            y = L.ops.tl_lib.foo(x)  # the kernel's ops record; a hook warns in backward
            log.append(("recorded", y))
            _warned(log, "backward warns", lambda: y.sum().backward())
            log.append(("grad", x.grad, L.ops.tl_lib.foo(x, 3.0), L.ops.tl_lib.foo(x, a=2.0),
                        L.ops.tl_lib.foo(x, 5), L.ops.tl_lib.foo.ov(x, 2),
                        L.ops.tl_lib.foo.overloads()))
            for args, kwargs in [((x, 1, 2), {}), ((x,), {"b": 2}), ((), {}), ((x, "s"), {}),
                                 ((3.0,), {}), ((x,), {"x": x})]:
                _try(log, "bind", lambda: L.ops.tl_lib.foo.default(*args, **kwargs))
            _try(log, "no overload fits", lambda: L.ops.tl_lib.foo("a"))

            lib.define("nograd(Tensor x, Tensor y, int n) -> (Tensor, Tensor)")
            lib.impl("nograd", lambda x, y, n: (x.detach() * n, x * y), "CPU")
            a, b = L.ops.tl_lib.nograd(x, _r(L, 3), 2)  # a gets WarnNotImplemented
            log.append(("fallback node", a, b, len(a.grad_fn.next_functions),
                        a.grad_fn.next_functions[1][0] is None))
            x.grad = None
            _warned(log, "through WarnNotImplemented", lambda: a.sum().backward())
            log.append(("no gradient", x.grad))

            lib.define("ci(Tensor x) -> Tensor")
            lib.impl("ci", lambda x: x * 2, "CompositeImplicitAutograd")
            lib.define("both(Tensor x) -> Tensor")
            lib.impl("both", lambda x: x * 2, "CompositeImplicitAutograd")
            lib.impl("both", lambda x: x * 3, "CPU")
            lib.define("ag(Tensor x) -> Tensor")
            lib.impl("ag", lambda x: x * 5, "CPU")

            def agk(x):
                log.append(("autograd kernel", L.is_grad_enabled()))
                return x.detach() * 7
            lib.impl("ag", agk, "Autograd")
            lib.define("ft(Tensor x) -> Tensor")
            lib.impl("ft", lambda x: x.detach() * 2, "CPU")
            lib.impl("ft", L.library.fallthrough_kernel, "Autograd")
            lib.define("cx(Tensor x) -> Tensor")
            lib.impl("cx", lambda x: x * 4, "CompositeExplicitAutograd")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for name in ("ci", "both", "ag", "ft", "cx"):
                    op = getattr(L.ops.tl_lib, name)
                    log.append((name, op(x), op(x.detach())))
                    with L.no_grad():
                        log.append((name, "no_grad", op(x)))
            lib.define("undef(Tensor x) -> Tensor")
            try:
                L.ops.tl_lib.undef(x)
            except NotImplementedError as e:  # (torch lists its own backends)
                log.append(("no kernel", str(e).split(" is only available")[0]))
            lib.define("fac(int n) -> Tensor")
            lib.impl("fac", lambda n: L.ones(n), "CPU")
            try:
                L.ops.tl_lib.fac(2)
            except NotImplementedError as e:
                log.append(("no tensor args", str(e).split("  Available functions")[0]))
        finally:
            lib._destroy()
        log.append(("destroyed", hasattr(L.ops.tl_lib, "foo")))
    same(f)


def test_library_registration_api():
    def f(L, log):
        Tensor = L.Tensor
        lib = L.library.Library("tl_reg", "FRAGMENT")
        try:
            L.library.define("tl_reg::h", "(Tensor x, int n) -> Tensor", lib=lib)
            _try(log, "define error", lambda: L.library.define("tl_reg::g", "g(Tensor x) -> T"))
            _try(log, "define error", lambda: L.library.define("tl_reg_g", "(Tensor x) -> T"))
            L.library.impl("tl_reg::h", "cpu", lambda x, n: x * n, lib=lib)

            def hbw(ctx, g):
                return g * ctx.n, None

            def hsc(ctx, inputs, output):
                ctx.n = inputs[1]
            L.library.register_autograd("tl_reg::h", hbw, setup_context=hsc, lib=lib)
            x = _r(L, 2, requires_grad=True)
            y = L.ops.tl_reg.h(x, 3)
            y.sum().backward()
            log.append(("register_autograd", y, x.grad))
            L.library.register_fake("tl_reg::h", lambda x, n: L.empty_like(x), lib=lib)
            _warned(log, "impl_abstract", lambda: L.library.impl_abstract(
                "tl_reg::h", lambda x, n: L.empty_like(x), lib=lib) and None)
            _try(log, "bad op", lambda: L.library.register_fake(3))

            @L.library.define(lib, "k(Tensor x) -> Tensor")
            def k(x):
                return x * 4

            @L.library.impl(lib, "k", "CPU")
            def k2(x):
                return x * 5
            log.append(("decorators", L.ops.tl_reg.k(_r(L, 2)), L.ops.tl_reg.k(x)))

            lib.define("z(Tensor x) -> Tensor")
            lib.impl("z", lambda x: x + 1, "CPU")
            over = L.library.Library("tl_reg", "IMPL", "CPU")
            over.impl("z", lambda x: x + 2)
            log.append(("override", L.ops.tl_reg.z(_r(L, 1)), repr(over)))
            over._destroy()
            log.append(("restored", L.ops.tl_reg.z(_r(L, 1))))
            lib.impl(L.ops.tl_reg.z.default, lambda x: x + 3, "CPU")
            log.append(("by OpOverload", L.ops.tl_reg.z(_r(L, 1)), hasattr(L.ops, "tl_reg")))
            _try(log, "destroyed", lambda: over.impl("z", lambda x: x, "CPU"))
            _try(log, "bad key", lambda: lib.impl("z", lambda x: x, "Foo"))
            _try(log, "not callable", lambda: lib.impl("z", 3, "CPU"))
            _try(log, "IMPL define", lambda: over.define("w(Tensor x) -> Tensor"))
            _try(log, "reserved", lambda: L.library.Library("prim", "DEF"))
            _try(log, "kind", lambda: L.library.Library("tl_reg", "FOO"))
            _try(log, "alias analysis", lambda: lib.define("w(Tensor x) -> Tensor", "XX"))
            d = L.library.Library("tl_reg2", "DEF")
            try:
                d.define("g(Tensor x) -> Tensor")
                _try(log, "twice", lambda: d.define("g(Tensor x) -> Tensor"))
                _try(log, "second DEF", lambda: L.library.Library("tl_reg2", "DEF"))
                _try(log, "other namespace", lambda: d.define("other::g2(Tensor x) -> Tensor"))
            finally:
                d._destroy()
            log.append(("get_ctx", L.library.get_ctx()))

            lib.define("rt(Tensor x) -> (Tensor, Tensor)")
            lib.impl("rt", lambda x: [x + 1, x + 2], "CPU")
            lib.define("rl(Tensor x) -> Tensor[]")
            lib.impl("rl", lambda x: (x + 1, x + 2), "CPU")
            lib.define("rn(Tensor x) -> int")
            lib.impl("rn", lambda x: True, "CPU")
            lib.define("r0(Tensor x) -> Tensor")
            lib.impl("r0", lambda x: 3, "CPU")
            lib.define("r1(Tensor x) -> ()")
            lib.impl("r1", lambda x: x, "CPU")
            lib.define("r2(Tensor x) -> (Tensor, Tensor)")
            lib.impl("r2", lambda x: x, "CPU")
            z = _r(L, 1)
            log.append(("returns", type(L.ops.tl_reg.rt(z)).__name__,
                        type(L.ops.tl_reg.rl(z)).__name__, L.ops.tl_reg.rn(z)))
            for name in ("r0", "r1", "r2"):
                _try(log, name, lambda: getattr(L.ops.tl_reg, name)(z))
        finally:
            lib._destroy()

        @L.library.custom_op("tl_reg::co", mutates_args=())
        def co(x: Tensor) -> Tensor:
            return x + 1
        co2 = L.library.custom_op("tl_reg::co", lambda x: x + 2, mutates_args=(),
                                  schema="(Tensor x) -> Tensor")
        log.append(("redefined", co(_r(L, 1)), co2(_r(L, 1)), L.ops.tl_reg.co(_r(L, 1))))
    same(f)


def test_argument_conversions():
    """What a Python kernel receives for each schema type (and torch's errors)."""
    types = {"i": "int", "si": "SymInt", "f": "float", "b": "bool", "s": "str", "sc": "Scalar",
             "dt": "ScalarType", "dev": "Device", "il": "int[]", "i2": "int[2]",
             "fl": "float[]", "tl": "Tensor[]", "otl": "Tensor?[]", "oi": "int?",
             "ot": "Tensor?", "c": "complex"}

    def f(L, log):
        lib = L.library.Library("tl_conv", "FRAGMENT")
        try:
            for k, t in types.items():
                lib.define(f"{k}(Tensor x, {t} a) -> Tensor")
                lib.impl(k, lambda x, a, k=k: log.append((k, a)) or x.clone(), "CPU")
            x = L.zeros(1)
            vals = [1, True, 2.5, "cpu", L.tensor(3), L.tensor(2.5), L.tensor([1, 2]),
                    [1, 2], (1, 2), L.Size([1, 2]), [1.0, 2], [x, x], [x, None], None,
                    L.float64, L.device("cpu"), 1 + 2j, L.strided, []]
            for k in types:
                for v in vals:
                    _try(log, k, lambda: getattr(L.ops.tl_conv, k)(x, v) and None)
        finally:
            lib._destroy()
    same(f)


# ---- opcheck ----------------------------------------------------------------------------------
_UTILS = ["test_schema", "test_autograd_registration", "test_faketensor"]


@pytest.mark.slow
def test_opcheck():
    def f(L, log):
        Tensor = L.Tensor

        def check(tag, op, args, utils=_UTILS, **kw):
            try:
                r = L.library.opcheck(op, args, test_utils=utils, **kw)
                log.append((tag, {k: v if isinstance(v, str) else (type(v).__name__,
                                                                     _msg(v)[:200])
                                  for k, v in r.items()}))
            except Exception as e:  # noqa: BLE001 - compared with torch's
                log.append((tag, type(e).__name__, _msg(e)[:300],
                            type(e.__cause__).__name__))

        @L.library.custom_op("tl_chk::good", mutates_args=())
        def good(x: Tensor, n: int) -> Tensor:
            return x * n
        good.register_fake(lambda x, n: L.empty_like(x))
        good.register_autograd(lambda ctx, g: (g * ctx.n, None),
                               setup_context=lambda ctx, inputs, output:
                               setattr(ctx, "n", inputs[1]))
        check("good", good, (_r(L, 3, requires_grad=True), 2))
        check("packet", L.ops.tl_chk.good, (_r(L, 3), 2))

        @L.library.custom_op("tl_chk::nofake", mutates_args=())
        def nofake(x: Tensor) -> Tensor:
            return x * 2
        check("no fake", nofake, (_r(L, 3),))
        check("no raise", nofake, (_r(L, 3),), raise_exception=False)

        @L.library.custom_op("tl_chk::badfake", mutates_args=())
        def badfake(x: Tensor) -> Tensor:
            return x * 2
        for fake in (lambda x: x.new_empty(4), lambda x: x.new_empty(3, dtype=L.float64),
                     lambda x: x.new_empty(3, 2).t()[0]):
            badfake.register_fake(fake)
            check("bad fake", badfake, (_r(L, 3),), "test_faketensor")

        @L.library.custom_op("tl_chk::sneaky", mutates_args=())
        def sneaky(x: Tensor) -> Tensor:
            x.add_(1)
            return x + 1
        sneaky.register_fake(lambda x: L.empty_like(x))
        check("undeclared mutation", sneaky, (_r(L, 3),))

        lib = L.library.Library("tl_chk", "FRAGMENT")
        try:
            for name, schema, fn in [
                    ("rec", "(Tensor x) -> Tensor", lambda x: x * 2),
                    ("mut", "(Tensor x) -> Tensor", lambda x: x.add_(1)),
                    ("mut2", "(Tensor(a!) x) -> Tensor(a!)", lambda x: x.add_(1)),
                    ("al", "(Tensor x) -> Tensor", lambda x: x.view(-1)),
                    ("al2", "(Tensor x) -> (Tensor, Tensor)",
                     lambda x: (x * 2).view(-1).split(2))]:
                lib.define(name + schema)
                lib.impl(name, fn, "CPU")
            check("records in CPU", L.ops.tl_chk.rec.default, (_r(L, 4, requires_grad=True),))
            check("no grad", L.ops.tl_chk.rec.default, (_r(L, 4),))
            for name in ("mut", "mut2", "al", "al2"):
                check(name, getattr(L.ops.tl_chk, name).default, (_r(L, 4),), "test_schema")
            lib.define("meta(Tensor x) -> Tensor")
            lib.impl("meta", lambda x: x * 2, "CPU")
            lib.impl("meta", lambda x: x.new_empty(5), "Meta")
            check("meta kernel", L.ops.tl_chk.meta.default, (_r(L, 3),), "test_faketensor")
            lib.define("ov(Tensor x) -> Tensor")
            lib.define("ov.b(Tensor x, int y) -> Tensor")
            check("overloads", L.ops.tl_chk.ov, (_r(L, 3),))
        finally:
            lib._destroy()
        check("bad utils", good, (_r(L, 3), 2), "foo")
        check("one tolerance", good, (_r(L, 3), 2), atol=1e-3)
        check("not an op", lambda x: x, (_r(L, 3),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(f)
    with pytest.raises(NotImplementedError, match="test_aot_dispatch"):
        eg.library.opcheck(eg.ops.tl_chk.good, (eg.ones(3), 2))


def test_missing_names_raise():
    for name in ("triton_op", "wrap_triton", "register_vmap", "register_torch_dispatch",
                 "register_autocast", "get_kernel"):
        assert hasattr(torch.library, name)
        with pytest.raises(NotImplementedError, match=f"torch.library.{name}"):
            getattr(eg.library, name)
    for name in ("aten", "prims", "load_library"):
        with pytest.raises(NotImplementedError, match=f"torch.ops.{name}"):
            getattr(eg.ops, name)
