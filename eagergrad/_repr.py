"""torch's tensor printing: `tensor([1.0000, 2.5000], requires_grad=True)`."""
import numpy as np

_THRESHOLD = 1000
_EDGE = 3


def _float_fmt(vals):
    finite = vals[np.isfinite(vals)]
    if finite.size == 0:
        return lambda v: _special(v) or ""
    absf = np.abs(finite)
    ints = np.all(finite == np.round(finite))
    amax, amin = absf.max(), absf.min()
    if ints and amax < 1e8:
        fmt = lambda v: _special(v) or f"{v:.0f}."
    elif amax > 1e8 or (amin > 0 and (amax / amin > 1000 or amin < 1e-4)) or \
            (amin == 0 and amax > 0 and (amax > 1e8 or
                                          absf[absf > 0].min() < 1e-4)):
        fmt = lambda v: _special(v) or f"{v:.4e}"
    else:
        fmt = lambda v: _special(v) or f"{v:.4f}"
    return fmt


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _formatter(a):
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        f = lambda v: "True" if v else "False"
    elif np.issubdtype(a.dtype, np.complexfloating):
        fr = _float_fmt(flat.real.astype(np.float64))
        fi = _float_fmt(flat.imag.astype(np.float64))
        def f(v):
            im = fi(abs(v.imag))
            return f"{fr(v.real)}{'-' if v.imag < 0 or (v.imag == 0 and np.signbit(v.imag)) else '+'}{im}j"
    elif np.issubdtype(a.dtype, np.floating):
        f = _float_fmt(flat.astype(np.float64))
    else:
        f = str
    width = max((len(f(v)) for v in flat), default=0)
    return lambda v: f(v).rjust(width)


def _fmt(a, fmt, indent, summarize):
    if a.ndim == 0:
        return fmt(a.item() if a.dtype != np.bool_ else bool(a))
    if a.ndim == 1:
        if summarize and a.shape[0] > 2 * _EDGE:
            items = [fmt(v) for v in a[:_EDGE]] + ["..."] + [fmt(v) for v in a[-_EDGE:]]
        else:
            items = [fmt(v) for v in a]
        return "[" + ", ".join(items) + "]"
    if summarize and a.shape[0] > 2 * _EDGE:
        rows = [_fmt(r, fmt, indent + 1, summarize) for r in a[:_EDGE]] + ["..."] + \
               [_fmt(r, fmt, indent + 1, summarize) for r in a[-_EDGE:]]
    else:
        rows = [_fmt(r, fmt, indent + 1, summarize) for r in a]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def tensor_repr(t):
    from ._dtypes import get_default_dtype, int64, bool_, default_complex
    try:
        a = np.asarray(t._value)
        if a.dtype.name == "bfloat16":
            a = a.astype(np.float32)
    except Exception:  # a jax tracer
        body = f"<traced {tuple(t._shape)}>"
        a = None
    extras = []
    if a is not None:
        summarize = a.size > _THRESHOLD
        if a.size == 0:
            body = "[]" if a.ndim == 1 else "[]"
            if a.ndim != 1:
                extras.append(f"size=({', '.join(map(str, a.shape))}{',' if a.ndim == 1 else ''})")
        else:
            src = a
            if summarize:
                src = a
            fmt = _formatter(_summary_values(a) if summarize else a)
            body = _fmt(src, fmt, 7, summarize)
    if t.dtype not in (get_default_dtype(), int64, bool_, default_complex()):
        extras.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + extras) + ")"


def _summary_values(a):
    # the values shown when summarizing, for choosing the format
    idx = []
    for n in a.shape:
        idx.append(np.r_[0:min(n, _EDGE), max(n - _EDGE, 0):n])
    return a[np.ix_(*idx)] if a.ndim else a
