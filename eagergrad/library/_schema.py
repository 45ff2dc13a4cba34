"""Operator schemas as torch's dispatcher reads them: torch.Tag, parsing and printing
"ns::name.overload(Tensor x, *, float a=1.) -> Tensor", and binding a call's arguments to
a schema with torch's conversions, errors and default-stripping (what a Python kernel
receives).

>>> from eagergrad.library._schema import parse_schema
>>> str(parse_schema("mylib::f(Tensor(a!) x, float k=2.0, *, int[2] s=[1, 1]) -> ()"))
'mylib::f(Tensor(a!) x, float k=2., *, int[2] s=1) -> ()'
"""
import enum
import math
import re

from .. import _layouts
from .._dtypes import dtype as _dtype_cls
from .. import _dtypes
from ..creation import Generator
from ..device import device as _device
from ..size import Size
from ..tensor import Tensor


class Tag(enum.Enum):
    """An operator tag (torch.Tag): `torch.Tag.inplace`, `torch.Tag.pt2_compliant_tag`, ...

    >>> import eagergrad as torch
    >>> torch.Tag.inplace, torch.Tag.inplace.value, torch.Tag.inplace.name
    (<Tag.inplace: 6>, 6, 'inplace')
    """

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19

    def __int__(self):
        return self.value

    __index__ = __int__

    def __hash__(self):
        return hash(self.value)


Tag.__module__ = "eagergrad"

# torch's ScalarType / Layout / MemoryFormat codes (c10's enums), which schemas print
_DTYPE_CODES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                "float32": 6, "float64": 7, "complex64": 9, "complex128": 10, "bool": 11,
                "bfloat16": 15}
_DTYPE_ALIASES = {"byte": "uint8", "char": "int8", "short": "int16", "int": "int32",
                  "long": "int64", "half": "float16", "float": "float32",
                  "double": "float64", "cfloat": "complex64", "cdouble": "complex128"}
_LAYOUTS = ["strided", "sparse_coo", "sparse_csr", "_mkldnn", "sparse_csc", "sparse_bsr",
            "sparse_bsc", "jagged"]
_FORMATS = ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]


def dtype_code(dt):
    return _DTYPE_CODES[str(dt).split(".")[-1]]


def dtype_of_code(code):
    for name, c in _DTYPE_CODES.items():
        if c == code:
            return getattr(_dtypes, "bool_" if name == "bool" else name)
    raise NotImplementedError(f"eagergrad does not implement the ScalarType {code} yet")


# ---- types ------------------------------------------------------------------------------
# the schema's base type -> what torch's JIT type prints (str(arg.type))
_JIT = {"Tensor": "Tensor", "int": "int", "SymInt": "int", "float": "float", "bool": "bool",
        "str": "str", "Scalar": "number", "ScalarType": "int", "Layout": "int",
        "MemoryFormat": "int", "Device": "Device", "Generator": "Generator",
        "complex": "complex", "SymFloat": "float", "SymBool": "bool"}
# types torch's parser knows that eagergrad does not bind
_UNSUPPORTED = {"Storage", "Stream", "Any", "QScheme", "ScalarList", "Layout?",
                "GenericList", "AnyEnumType", "DispatchKeySet", "t", "t1", "t2"}


class AliasInfo:
    """An alias annotation: `Tensor(a!)` has before_set {"a"}, is_write True."""

    def __init__(self, before, is_write, after=None):
        self.before_set = set(before)
        self.after_set = set(before if after is None else after)
        self.is_write = is_write

    def __str__(self):
        s = "|".join(sorted(self.before_set))
        if self.after_set != self.before_set:
            s += " -> " + "|".join(sorted(self.after_set))
        return s + ("!" if self.is_write else "")


class JitType:
    """What `arg.type` is: prints as torch's (`Tensor`, `List[int]`, `Optional[Tensor]`)."""

    def __init__(self, base, elem_optional=False, is_list=False, optional=False):
        self.base, self.elem_optional = base, elem_optional
        self.is_list, self.optional = is_list, optional

    def __str__(self):
        s = _JIT.get(self.base, self.base)
        if self.elem_optional:
            s = f"Optional[{s}]"
        if self.is_list:
            s = f"List[{s}]"
        if self.optional:
            s = f"Optional[{s}]"
        return s

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, JitType) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def is_tensor(self):
        return self.base == "Tensor" and not self.is_list and not self.elem_optional

    def is_tensor_like(self):
        return self.base == "Tensor" and not self.is_list

    def is_tensorlist_like(self):
        return self.base == "Tensor" and self.is_list


class Argument:
    """One argument (or return) of a FunctionSchema (torch.Argument)."""

    def __init__(self, name, decl, type_, alias_info, default=None, has_default=False,
                 kwarg_only=False, N=None):
        self.name, self._decl, self.type, self.alias_info = name, decl, type_, alias_info
        self.default_value, self._has_default = default, has_default
        self.kwarg_only, self.N = kwarg_only, N
        self.real_type = type_

    def has_default_value(self):
        return self._has_default

    @property
    def is_write(self):
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def is_out(self):
        return self.kwarg_only and self.is_write

    def __str__(self):
        s = self._decl + (f" {self.name}" if self.name else "")
        if self._has_default:
            s += "=" + _default_str(self)
        return s

    __repr__ = __str__


class FunctionSchema:
    """A parsed operator schema (torch.FunctionSchema)."""

    def __init__(self, name, overload_name, arguments, returns):
        self.name, self.overload_name = name, overload_name
        self.arguments, self.returns = arguments, returns

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    def _is_view_op(self):
        return any(a.alias_info is not None and not a.alias_info.is_write
                   for a in self.arguments) and \
            any(r.alias_info is not None and not r.alias_info.is_write for r in self.returns)

    def __str__(self):
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        if len(self.returns) == 1:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{name}({', '.join(parts)}) -> {rets}"

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def is_backward_compatible_with(self, old):
        raise NotImplementedError("eagergrad does not implement torch.FunctionSchema."
                                  "is_backward_compatible_with yet")

    def check_forward_compatible_with(self, old):
        raise NotImplementedError("eagergrad does not implement torch.FunctionSchema."
                                  "check_forward_compatible_with yet")

    def __hash__(self):
        return hash(str(self))


# ---- printing defaults ------------------------------------------------------------------
def _float_str(v):
    if math.isfinite(v) and -2 ** 63 <= v < 2 ** 63 and float(int(v)) == v:
        return f"{int(v)}."
    return "%.17g" % v


def _scalar_str(v):
    if v is None or isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return _float_str(v)
    if isinstance(v, str):
        return f'"{v}"'
    return str(v)


def _default_str(a):
    v = a.default_value
    if isinstance(v, list):
        if a.N is not None and v and all(x == v[0] for x in v):
            return _scalar_str(v[0])
        return "[" + ", ".join(_scalar_str(x) for x in v) + "]"
    if isinstance(v, _device):
        return str(v)
    return _scalar_str(v)


# ---- parsing ----------------------------------------------------------------------------
_TOKEN = re.compile(r"""\s*(?:(?P<arrow>->)
                     |(?P<number>-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))
                     |(?P<string>"[^"]*"|'[^']*')|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
                     |(?P<colons>::)|(?P<punct>[()\[\],=?!*.|]))""", re.X)


class _Parser:
    def __init__(self, text):
        self.text = text
        self.toks = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                self.toks.append(("?", text[pos], pos))
                break
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.toks.append(("eof", "", len(text)))
        self.i = 0

    def peek(self, k=0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self):
        t = self.peek()
        self.i += 1
        return t

    def error(self, what, tok=None):
        tok = tok or self.peek()
        kind = {"punct": tok[1], "colons": "::", "eof": "eof"}.get(tok[0], tok[0])
        width = max(len(tok[1]), 1)
        raise RuntimeError(f"{what} here:\n{self.text}\n{' ' * tok[2]}{'~' * width} <--- HERE\n"
                           if what.startswith("\n") else
                           f"expected {what} but found '{kind}' here:\n{self.text}\n"
                           f"{' ' * tok[2]}{'~' * width} <--- HERE\n")

    def expect(self, value):
        t = self.peek()
        if t[1] != value or t[0] in ("string",):
            self.error({"->": "arrow"}.get(value, value))
        return self.next()

    def accept(self, value):
        if self.peek()[1] == value and self.peek()[0] != "string":
            return self.next()
        return None

    def ident(self):
        t = self.peek()
        if t[0] != "ident":
            self.error("ident")
        return self.next()[1]

    # name [. overload]
    def op_name(self):
        name = self.ident()
        if self.accept("::"):
            name += "::" + self.ident()
        overload = ""
        if self.accept("."):
            overload = self.ident()
        return name, overload

    def alias(self):
        sets = [self.next()[1] if self.peek()[1] == "*" else self.ident()]
        while self.accept("|"):
            sets.append(self.ident())
        after = None
        if self.accept("->"):
            after = [self.next()[1] if self.peek()[1] == "*" else self.ident()]
        write = bool(self.accept("!"))
        self.expect(")")
        return AliasInfo(sets, write, after)

    def type_(self):
        tok = self.peek()
        base = self.ident()
        if base not in _JIT:
            if base in _UNSUPPORTED:
                raise NotImplementedError(f"eagergrad does not implement the schema type "
                                          f"{base} yet")
            raise RuntimeError(
                "\nunknown type specifier. Common valid schema types include Tensor, SymInt, "
                "int, float, bool, Scalar; for a full list, please see https://github.com/"
                "pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func :\n"
                f"{self.text}\n{' ' * tok[2]}{'~' * len(base)} <--- HERE\n")
        decl = base
        alias = None
        if base == "Tensor" and self.peek()[1] == "(":
            start = self.next()[2]
            alias = self.alias()
            decl += self.text[start:self.toks[self.i - 1][2] + 1]
        elem_opt = is_list = opt = False
        n = None
        if self.accept("?"):
            elem_opt, decl = True, decl + "?"
        if self.accept("["):
            is_list = True
            if self.peek()[0] == "number":
                n = int(self.next()[1])
            self.expect("]")
            decl += "[]" if n is None else f"[{n}]"
            if self.accept("?"):
                opt, decl = True, decl + "?"
        if elem_opt and not is_list:
            elem_opt, opt = False, True
        if alias is not None and is_list:  # (torch keeps a list element's alias set there)
            alias = AliasInfo((), alias.is_write)
        return decl, JitType(base, elem_opt, is_list, opt), alias, n

    def literal(self):
        t = self.peek()
        if t[1] == "[" and t[0] == "punct":
            self.next()
            vals = []
            if not self.accept("]"):
                vals.append(self.literal())
                while self.accept(","):
                    vals.append(self.literal())
                self.expect("]")
            return ("list", vals, t)
        self.next()
        return (t[0], t[1], t)

    def argument(self, kwarg_only):
        decl, typ, alias, n = self.type_()
        name = self.ident()
        a = Argument(name, decl, typ, alias, kwarg_only=kwarg_only, N=n)
        if self.accept("="):
            lit = self.literal()
            a.default_value, a._has_default = self.convert_default(typ, n, lit), True
        return a

    def returned(self):
        decl, typ, alias, n = self.type_()
        name = ""
        if self.peek()[0] == "ident":
            name = self.next()[1]
        return Argument(name, decl, typ, alias, N=n)

    def numeric_error(self, tok):
        raise RuntimeError(f"\ninvalid numeric default value:\n{self.text}\n"
                           f"{' ' * tok[2]}{'~' * max(len(tok[1]), 1)} <--- HERE\n")

    def convert_default(self, typ, n, lit):
        kind, val, tok = lit
        if kind == "ident" and val == "None":
            if not (typ.optional or typ.elem_optional) and typ.base != "Tensor":
                pass  # (torch accepts None for any type's default)
            return None
        if typ.is_list:
            if kind != "list":
                if n is None:
                    self.error("[", tok)
                return [self.convert_scalar(typ.base, lit)] * n
            if typ.base not in ("int", "SymInt", "float", "bool", "complex"):
                raise RuntimeError(f"\nlists are only supported for float, int and complex "
                                   f"types:\n{self.text}\n{' ' * tok[2]}~ <--- HERE\n")
            return [self.convert_scalar(typ.base, x) for x in val]
        if typ.base == "Tensor":
            self.error("None", tok)
        return self.convert_scalar(typ.base, lit)

    def convert_scalar(self, base, lit):
        kind, val, tok = lit
        if kind == "ident" and val in ("True", "False"):
            return val == "True"
        if base in ("str", "Device"):
            if kind != "string":
                self.error("string", tok)
            return val[1:-1] if base == "str" else _device(val[1:-1])
        if base == "ScalarType":
            if kind == "number":
                return int(val)
            name = _DTYPE_ALIASES.get(val, val)
            if name not in _DTYPE_CODES:
                self.numeric_error(tok)
            return _DTYPE_CODES[name]
        if base in ("Layout", "MemoryFormat"):
            if kind == "number":
                return int(val)
            if val in ("strided", "contiguous_format"):
                return 0
            self.numeric_error(tok)
        if kind != "number":
            self.numeric_error(tok)
        is_float = any(c in val for c in ".eE")
        if base in ("float", "SymFloat") or is_float:
            return float(val)
        return int(val)


def parse_schema(text, *, nameless=False):
    """A FunctionSchema from torch's schema syntax (torch.parse_schema); `nameless`
    parses "(Tensor x) -> Tensor" with an empty name."""
    p = _Parser(text)
    name, overload = ("", "") if nameless else p.op_name()
    p.expect("(")
    args, kwarg_only, seen_default = [], False, False
    if not p.accept(")"):
        while True:
            if p.accept("*"):
                kwarg_only = True
            else:
                a = p.argument(kwarg_only)
                if a._has_default:
                    seen_default = True
                elif seen_default and not kwarg_only and not a.type.is_list:
                    raise RuntimeError(
                        "Non-default positional argument follows default argument. "
                        f"Parameter {a.name} in {text}")
                args.append(a)
            if p.accept(","):
                continue
            p.expect(")")
            break
    p.expect("->")
    rets = []
    if p.peek()[1] == "(":
        p.next()
        if not p.accept(")"):
            rets.append(p.returned())
            while p.accept(","):
                rets.append(p.returned())
            p.expect(")")
    else:
        rets.append(p.returned())
    if p.peek()[0] != "eof":
        p.error("eof")
    return FunctionSchema(name, overload, args, rets)


# ---- binding a call ---------------------------------------------------------------------
class _Mismatch(Exception):
    pass


def _enum_code(v, allowed):
    """The int code of a dtype / layout / memory format of an allowed kind."""
    if isinstance(v, _dtype_cls) and "dtype" in allowed:
        return dtype_code(v)
    if isinstance(v, _layouts.layout) and "layout" in allowed and v._name in _LAYOUTS:
        return _LAYOUTS.index(v._name)
    if isinstance(v, _layouts.memory_format) and "format" in allowed:
        return _FORMATS.index(v._name)
    raise _Mismatch


def _int_like(v, allowed=()):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, Tensor) and v.dim() == 0:
        return int(v.item())
    return _enum_code(v, allowed)


def _from_code(table, code):
    if not 0 <= code < len(table):
        raise _Mismatch
    return getattr(_layouts, table[code])


def _convert(base, v):
    """One value of schema type `base`, as the Python kernel receives it."""
    if base == "Tensor":
        if isinstance(v, Tensor):
            return v
        raise _Mismatch
    if base == "int":
        return _int_like(v, ("dtype", "layout", "format"))
    if base == "SymInt":
        return _int_like(v)
    if base in ("float", "SymFloat"):
        if isinstance(v, (bool, int, float)):
            return float(v)
        if isinstance(v, Tensor) and v.dim() == 0:
            return float(v.item())
        raise _Mismatch
    if base in ("bool", "SymBool"):
        if v is None or isinstance(v, (bool, int, float, complex)):
            return bool(v)
        if isinstance(v, Tensor) and v.dim() == 0:
            return bool(v.item())
        raise _Mismatch
    if base == "complex":
        if isinstance(v, (bool, int, float, complex)):
            return complex(v)
        if isinstance(v, Tensor) and v.dim() == 0:
            return complex(v.item())
        raise _Mismatch
    if base == "str":
        if isinstance(v, str):
            return v
        raise _Mismatch
    if base == "Scalar":
        if isinstance(v, (bool, int, float, complex)):
            return v
        return _enum_code(v, ("dtype", "layout"))
    if base == "ScalarType":
        if isinstance(v, _dtype_cls):
            return v
        return dtype_of_code(_int_like(v))
    if base == "Layout":
        if isinstance(v, _layouts.layout):
            return v
        return _from_code(_LAYOUTS, _int_like(v))
    if base == "MemoryFormat":
        if isinstance(v, _layouts.memory_format):
            return v
        return _from_code(_FORMATS, _int_like(v))
    if base == "Device":
        if isinstance(v, (str, _device)):
            return _device(v)
        raise _Mismatch
    if base == "Generator":
        if isinstance(v, Generator):
            return v
        raise _Mismatch
    raise NotImplementedError(f"eagergrad does not implement the schema type {base} yet")


def convert(arg, v):
    """`v` for argument `arg`, converted as torch's argumentToIValue; _Mismatch if not."""
    t = arg.type
    if v is None and (t.optional or (t.elem_optional and not t.is_list)):
        return None
    if not t.is_list:
        return _convert(t.base, v)
    if t.base == "Tensor":
        if isinstance(v, Tensor) and t.elem_optional and v.dim() > 0:
            v = list(v.unbind(0))
        if not isinstance(v, (list, tuple)):
            raise _Mismatch
        if t.elem_optional:
            return [None if x is None else _convert("Tensor", x) for x in v]
        return [_convert("Tensor", x) for x in v]
    if arg.N is not None and isinstance(v, (bool, int)):
        return [int(v) if t.base in ("int", "SymInt") else _convert(t.base, v)] * arg.N
    if not isinstance(v, (list, tuple, Size)):
        raise _Mismatch
    if t.base in ("int", "SymInt") and any(isinstance(x, float) for x in v):
        raise _Mismatch
    return [_convert("SymInt" if t.base == "int" else t.base,
                     x.reshape(()) if isinstance(x, Tensor) and x.numel() == 1 else x)
            for x in v]


def bind(schema, args, kwargs):
    """The call's value of every schema argument (defaults filled in), with torch's
    errors for a call that does not fit the schema."""
    name = schema.name
    n = len(schema.arguments)
    if len(args) + len(kwargs) > n:
        raise RuntimeError(f"{name}() expected at most {n} argument(s) but received "
                           f"{len(args) + len(kwargs)} argument(s). Declaration: {schema}")
    out = []
    for i, v in enumerate(args):
        a = schema.arguments[i]
        if a.kwarg_only:
            raise RuntimeError(f"{name}() takes {i} positional argument(s) but {len(args)} "
                               f"was/were given.  Declaration: {schema}")
        out.append(_convert_or_raise(schema, i, a, v))
    used = 0
    for i in range(len(args), n):
        a = schema.arguments[i]
        if a.name in kwargs:
            out.append(_convert_or_raise(schema, i, a, kwargs[a.name]))
            used += 1
        elif a.has_default_value():
            d = a.default_value
            out.append(list(d) if isinstance(d, list) else d)
        else:
            raise RuntimeError(f"{name}() is missing value for argument '{a.name}'. "
                               f"Declaration: {schema}")
    if used != len(kwargs):
        names = [a.name for a in schema.arguments]
        for k in kwargs:
            if k not in names:
                raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{name}'. "
                                   f"Schema: {schema}")
            if names.index(k) < len(args):
                raise RuntimeError(f"Argument '{k}' specified both as positional and keyword "
                                   f"argument. Schema: {schema}")
    return out


def _convert_or_raise(schema, i, a, v):
    try:
        return convert(a, v)
    except _Mismatch:
        raise RuntimeError(
            f"{schema.name}() Expected a value of type '{a.type}' for argument '{a.name}' "
            f"but instead found type '{type(v).__name__}'.\nPosition: {i}\nValue: {v!r}\n"
            f"Declaration: {schema}\nCast error details: Unable to cast {v} to "
            f"{a.type}") from None


def _same(a, b):
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return a is b
    if isinstance(a, _dtype_cls):
        a = dtype_code(a)
    if isinstance(b, _dtype_cls):
        b = dtype_code(b)
    if isinstance(a, (_layouts.layout, _layouts.memory_format)) or \
            isinstance(b, (_layouts.layout, _layouts.memory_format)):
        return str(a) == str(b) or _int_or_none(a) == _int_or_none(b)
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    return a == b


def _int_or_none(v):
    try:
        return _int_like(v, ("dtype", "layout", "format"))
    except _Mismatch:
        return None


def kernel_args(schema, values):
    """What torch's dispatcher hands a Python kernel: positional arguments up to the last
    one differing from its default, and the keyword-only ones differing from theirs."""
    pos = [(a, v) for a, v in zip(schema.arguments, values) if not a.kwarg_only]
    end = len(pos)
    while end and pos[end - 1][0].has_default_value() and \
            _same(pos[end - 1][1], pos[end - 1][0].default_value):
        end -= 1
    args = [v for _, v in pos[:end]]
    kwargs = {a.name: v for a, v in zip(schema.arguments, values)
              if a.kwarg_only and not (a.has_default_value() and _same(v, a.default_value))}
    return args, kwargs


def fill_defaults(schema, args, kwargs):
    """(args, kwargs) with every schema argument present (torch._library.utils's)."""
    new_args, new_kwargs = [], {}
    for i, a in enumerate(schema.arguments):
        if a.kwarg_only:
            new_kwargs[a.name] = kwargs[a.name] if a.name in kwargs else a.default_value
        else:
            new_args.append(args[i] if i < len(args) else a.default_value)
    return tuple(new_args), new_kwargs
