"""torch's tensor printing: `tensor([1.0000, 2.5000], requires_grad=True)`.

A port of torch/_tensor_str.py, with its print options (`set_printoptions`: precision 4,
threshold 1000, edgeitems 3, linewidth 80 by default), working on a numpy copy of the
values. Printing inspects values, so it is not tracer-safe: a tensor over a tracer prints
its shape.
"""
import contextlib
import dataclasses
import math

import numpy as np

from ._dtypes import bool_, default_complex, get_default_dtype, int64


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions: the digits, summarization threshold, edge items and line
    width of tensor printing; `profile` ("default", "short", "full") sets the first four,
    the other arguments override it; sci_mode None lets each tensor choose.

    >>> import eagergrad as torch
    >>> torch.set_printoptions(precision=2)
    >>> torch.tensor([1.12345])
    tensor([1.12])
    >>> torch.set_printoptions(profile="default")
    """
    if profile is not None and profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The print options, as keyword arguments of set_printoptions (torch._tensor_str's)."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """set_printoptions(**kwargs) inside the block only (torch._tensor_str's)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """torch's _Formatter: int mode / sci mode / fixed, chosen from the nonzero finite
    values; the width is the widest of those values."""

    def __init__(self, a):
        self.floating = a.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = a.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat.astype(np.float64)
        vals = vals[np.isfinite(vals) & (vals != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals)
        vmin, vmax = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        p = PRINT_OPTS.precision
        self.sci_mode = (vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        if self.sci_mode:
            for v in vals.tolist():
                self.max_width = max(self.max_width, len(f"{v:.{p}e}"))
        elif self.int_mode:
            for v in vals.tolist():
                self.max_width = max(self.max_width, len(f"{v:.0f}") + 1)
        else:
            for v in vals.tolist():
                self.max_width = max(self.max_width, len(f"{v:.{p}f}"))

    def width(self):
        return self.max_width

    def format(self, v):
        if self.floating:
            if self.sci_mode:
                ret = f"{v:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    ret += "."
            else:
                ret = f"{v:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{v}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(real_str, imag_str):
    imag_str = (imag_str + "j").lstrip()
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _scalar_str(a, f1, f2):
    v = a.item()
    if f2 is not None:
        return _complex_str(f1.format(v.real), f2.format(v.imag))
    return f1.format(v)


def _vector_str(a, indent, summarize, f1, f2):
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))

    def fmt(v):
        if f2 is not None:
            return _complex_str(f1.format(v.real), f2.format(v.imag))
        return f1.format(v)

    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = [fmt(v) for v in a[:edge].tolist()] + [" ..."] + \
               [fmt(v) for v in a[-edge:].tolist()]
    else:
        data = [fmt(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _scalar_str(a, f1, f2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    edge = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * edge:
        slices = [_tensor_str(a[i], indent + 1, summarize, f1, f2) for i in range(edge)] + \
                 ["..."] + [_tensor_str(a[i], indent + 1, summarize, f1, f2)
                            for i in range(a.shape[0] - edge, a.shape[0])]
    else:
        slices = [_tensor_str(a[i], indent + 1, summarize, f1, f2) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a):
    """torch's get_summarized_data: the values shown (used to choose the format)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        # (edgeitems 0: a[-0:] is all of a, as torch's self[-0:])
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[(slice(0, 0),) * a.ndim]
    rows = range(a.shape[0])
    if a.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(a.shape[0] - edge, a.shape[0]))
    return np.stack([_summarized(a[i]) for i in rows])


def _add_suffixes(tensor_str, suffixes, indent):
    out = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for s in suffixes:
        if last_line_len + len(s) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last_line_len = indent + len(s)
        else:
            out.append(", " + s)
            last_line_len += len(s) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t, tangent=None):
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    try:
        a = t._host("print")
    except Exception:  # noqa: BLE001 - a jax tracer (no values to show); repr never raises
        a = None
    if a is None:
        body = f"<traced {tuple(t._shape)}>"
        if t.dtype not in (get_default_dtype(), default_complex(), int64, bool_):
            suffixes.append(f"dtype={t.dtype!r}")
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if t.dtype is not get_default_dtype():
            suffixes.append(f"dtype={t.dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(a.shape)))
        if t.dtype not in (get_default_dtype(), default_complex(), int64, bool_):
            suffixes.append(f"dtype={t.dtype!r}")
        if t.dtype.is_floating_point and t.dtype.itemsize < 4:
            a = a.astype(np.float32)  # half, bfloat16 print as float
        summarize = a.size > PRINT_OPTS.threshold
        if a.dtype.kind == "c":
            re, im = a.real, a.imag
            f1 = _Formatter(_summarized(re) if summarize else re)
            f2 = _Formatter(_summarized(im) if summarize else im)
        else:
            f1 = _Formatter(_summarized(a) if summarize else a)
            f2 = None
        body = _tensor_str(a, indent, summarize, f1, f2)
    if t.grad_fn is not None:
        name = type(t.grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:  # a dual tensor (forward_ad): its tangent's repr
        suffixes.append("tangent=" + tangent)
    return _add_suffixes(prefix + body, suffixes, indent)
