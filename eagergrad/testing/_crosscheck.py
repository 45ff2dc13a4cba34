"""crosscheck: one eager function's gradients by independent routes.

(a) the tape: eagergrad's backward (`autograd.grad`, PyTorch's engine and formulas);
(b) JAX: the same function run with tensors holding tracers, differentiated by `jax.vjp`
    (JAX's own derivative rules), its cotangent convention converted to torch's:
    torch_vjp(v) = conj(jax_vjp(conj(v))) (docs/design.md §8);
(b') JAX's forward mode: `jax.jvp` along random directions u, compared through
    d phi(u) = Re sum(conj(v) * J u) = Re sum(conj(g) * u), which holds for torch's
    gradient g with no conversion at all (skipped where JAX has no forward mode, e.g.
    through a jax.custom_vjp);
(c) central finite differences in float64/complex128 of phi(x) = Re sum(conj(v) * f(x)),
    whose gradient in torch's convention is dphi/dRe(x) + i dphi/dIm(x) (fast_mode: one
    difference along each random direction u instead of two per element, as torch's
    gradcheck fast mode);
(d) real torch, when `fn` takes the module as its first argument and torch is installed.
Every route gets the same random cotangents v. With order=2 the routes differentiate the
first-order gradients once more (create_graph=True; jax.vjp of jax.vjp, jax.jvp of
jax.vjp; differences of the tape's first-order gradients; torch's double backward).
Routes by direction (jvp, fast fd) are compared on the projections Re sum(conj(g) * u).
"""
import inspect
import traceback

import jax
import numpy as np

from .. import _dtypes as D
from ..creation import from_jax, tensor
from ..engine.grad_mode import no_grad
from ..tensor import Tensor

ROUTES = ("tape", "jax", "jvp", "fd", "torch")
N_DIRECTIONS = 2  # random directions per input for the routes by direction


class CrosscheckError(AssertionError):
    """The routes disagree (raise_on_mismatch=True), or the function cannot be checked."""


class Projections:
    """A route by direction: its derivatives along `directions` (one per direction)."""

    def __init__(self, directions, values):
        self.directions, self.values = directions, np.asarray(values, np.float64)

    def of(self, g):
        """The same projections of a gradient in torch's convention: Re sum(conj(g) u)."""
        return np.array([np.real(np.sum(np.conj(g) * u)) for u in self.directions])

    def scale(self):
        """How atol grows for a projection (torch's fast mode: by sum |u|)."""
        return np.array([np.sum(np.abs(u)) for u in self.directions])


class InputReport:
    """One input's comparison: per route its gradient (numpy) or its Projections, the max
    abs and rel error against the tape, and the worst element (index and the values of
    every elementwise route there; routes by direction are compared per direction)."""

    def __init__(self, name, grads, rtol, atol, fd_rtol, fd_atol):
        self.name, self.grads = name, grads
        ref = grads["tape"]
        self.errors, self.ok = {}, True
        worst, worst_excess = None, -np.inf
        for route, g in grads.items():
            if route == "tape" or g is None:
                continue
            rt, at = (fd_rtol, fd_atol) if route == "fd" else (rtol, atol)
            if isinstance(g, Projections):
                want = g.of(ref)
                diff = np.abs(g.values - want)
                rel = diff / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
                self.errors[route] = (float(diff.max(initial=0)), float(rel.max(initial=0)))
                if np.isnan(g.values).any() != np.isnan(want).any() or \
                        (diff > at * g.scale() + rt * np.abs(want)).any():
                    self.ok = False
                continue
            diff = np.abs(g - ref)
            rel = diff / np.maximum(np.abs(ref), np.finfo(np.float64).tiny)
            self.errors[route] = (float(diff.max(initial=0)), float(rel.max(initial=0)))
            excess = diff - (at + rt * np.abs(ref))
            if excess.size and (np.isnan(g).any() != np.isnan(ref).any() or excess.max() > 0):
                self.ok = False
            if excess.size and excess.max() > worst_excess:
                worst_excess, worst = excess.max(), np.unravel_index(int(np.argmax(excess)),
                                                                     ref.shape)
        self.worst = None if worst is None else tuple(int(i) for i in worst)
        self.at_worst = {} if worst is None else {
            r: g[worst].item() for r, g in grads.items()
            if g is not None and not isinstance(g, Projections)}


class CrosscheckReport:
    """What crosscheck found: `ok`, `inputs` (InputReport per input), `routes` run, and
    `convention`, the conversion applied to JAX's vjp. Prints as a table."""

    def __init__(self, fn, inputs, routes, convention, order):
        self.fn, self.inputs, self.routes = fn, inputs, routes
        self.convention, self.order = convention, order
        self.ok = all(r.ok for r in inputs)

    def __bool__(self):
        return self.ok

    def __str__(self):
        name = getattr(self.fn, "__name__", repr(self.fn))
        lines = [f"crosscheck of {name}, order {self.order}: "
                 f"{'OK' if self.ok else 'MISMATCH'}; routes: {', '.join(self.routes)}",
                 f"convention: {self.convention}"]
        others = [r for r in self.routes if r != "tape"]
        along = {r for x in self.inputs for r, g in x.grads.items() if isinstance(g, Projections)}
        head = f"{'input':10s}" + "".join(
            f"{'|tape-' + r + ('|(u)' if r in along else '|') + ' abs/rel':>26s}" for r in others)
        lines.append(head + "  worst element: " + " / ".join(self.routes))
        for r in self.inputs:
            row = f"{r.name:10s}" + "".join(
                f"{r.errors[o][0]:>13.3g}{r.errors[o][1]:>13.3g}" if o in r.errors
                else f"{'-':>26s}" for o in others)
            if r.worst is not None:
                row += f"  {r.worst}: " + " / ".join(
                    f"{r.at_worst[o]:.6g}" if o in r.at_worst else "-" for o in self.routes)
            lines.append(row + ("" if r.ok else "   <- mismatch"))
        return "\n".join(lines)

    __repr__ = __str__


def crosscheck(fn, *inputs, order=1, rtol=None, atol=None, fd_rtol=1e-3, fd_atol=1e-5,
               eps=1e-6, seed=0, check_fd=True, check_jvp=True, check_torch=True,
               fast_mode=False, raise_on_mismatch=False):
    """Compare the gradients of `fn` at `inputs` by the tape, jax.vjp, jax.jvp, finite
    differences (fast_mode: along random directions only) and (if fn takes the module
    first and torch is installed) torch. Returns a CrosscheckReport; raises
    CrosscheckError on a mismatch with raise_on_mismatch=True.

    >>> import eagergrad as torch
    >>> z = torch.tensor([3 + 4j, 1 - 2j], dtype=torch.complex128)
    >>> report = torch.testing.crosscheck(lambda z: (z * z.conj()).real.sum(), z)
    >>> report.ok, report.routes
    (True, ['tape', 'jax', 'jvp', 'fd'])
    """
    if order not in (1, 2):
        raise ValueError(f"crosscheck: order must be 1 or 2, got {order}")
    if not inputs:
        raise ValueError("crosscheck: no inputs given")
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"crosscheck: input {i} is a {type(x).__name__}, not a tensor")
    diff = [i for i, x in enumerate(inputs) if x.dtype.is_differentiable]
    if not diff:
        raise CrosscheckError("crosscheck: no input is floating point or complex: nothing to "
                              "differentiate")
    takes_module = _takes_module(fn, len(inputs))
    module = __import__("eagergrad")
    call = (lambda L, *xs: fn(L, *xs)) if takes_module else (lambda L, *xs: fn(*xs))
    rng = np.random.default_rng(seed)
    values = [x.detach().resolve_conj().numpy() for x in inputs]
    outs = _outputs(call(module, *[tensor(v) for v in values]))
    vs = [_random(rng, o.shape, o.dtype.np) for o in outs]
    ws = [_random(rng, values[i].shape, values[i].dtype) for i in diff] if order == 2 else None

    dirs = [[_random(rng, values[i].shape, values[i].dtype) for _ in range(N_DIRECTIONS)]
            for i in diff]
    dirs = [[u / np.linalg.norm(u) for u in us] for us in dirs]
    grads = {"tape": _tape(module, call, values, diff, vs, ws)}
    grads["jax"] = _jax(call, module, values, diff, vs, ws)
    if check_jvp:
        jvp = _jvp(call, module, values, diff, vs, ws, dirs)
        if jvp is not None:
            grads["jvp"] = jvp
    if check_fd:
        grads["fd"] = (_fd_fast(module, call, values, diff, vs, ws, eps, dirs) if fast_mode
                       else _fd(module, call, values, diff, vs, ws, eps))
    torch = _torch() if takes_module and check_torch else None
    if torch is not None:
        grads["torch"] = _tape(torch, call, values, diff, vs, ws)
    reports = []
    names = _names(fn, len(inputs), takes_module)
    for k, i in enumerate(diff):
        rt, at = (rtol, atol) if rtol is not None else _default_tol(_dtype(values[i]))
        reports.append(InputReport(names[i], {r: g[k] for r, g in grads.items()}, rt, at,
                                   fd_rtol, fd_atol))
    report = CrosscheckReport(fn, reports, list(grads),
                              "torch's conjugate Wirtinger (dL/dz*); JAX's vjp converted as "
                              "conj(vjp(conj(v)))" if any(np.iscomplexobj(v) for v in values)
                              or any(np.iscomplexobj(v) for v in vs) else
                              "real: no conversion needed (conj is the identity)", order)
    if raise_on_mismatch and not report.ok:
        raise CrosscheckError(str(report))
    return report


def _takes_module(fn, n):
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    return len(params) == n + 1


def _names(fn, n, takes_module):
    """The inputs' parameter names where fn has them, else "input i"."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    params = params[1 if takes_module else 0:]
    return [params[i] if i < len(params) else f"input {i}" for i in range(n)]


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _dtype(a):
    return next(d for d in D.ALL if d.np == a.dtype)


def _default_tol(dt):
    """(rtol, atol) between the exact routes: single precision, or double."""
    return (1e-7, 1e-9) if dt in (D.float64, D.complex128) else (1e-4, 1e-5)


def _random(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a).astype(dtype)


def _outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        if not isinstance(o, Tensor) and not hasattr(o, "grad_fn"):
            raise CrosscheckError(f"crosscheck: fn must return tensors, got "
                                  f"{type(o).__name__}")
    return [o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex]


def _tape(L, call, values, diff, vs, ws):
    """Route (a) with L = eagergrad, route (d) with L = torch."""
    xs = [L.tensor(v) for v in values]
    for i in diff:
        xs[i].requires_grad_(True)
    pairs = [(o, L.tensor(v)) for o, v in zip(_outputs(call(L, *xs)), vs) if o.requires_grad]
    targets = [xs[i] for i in diff]
    if not pairs:
        return [np.zeros_like(values[i]) for i in diff]
    gs = L.autograd.grad([o for o, _ in pairs], targets, [v for _, v in pairs],
                         create_graph=ws is not None, allow_unused=True)
    if ws is not None:
        used = [(g, L.tensor(w)) for g, w in zip(gs, ws) if g is not None and g.requires_grad]
        if not used:
            return [np.zeros_like(values[i]) for i in diff]
        gs = L.autograd.grad([g for g, _ in used], targets, [w for _, w in used],
                             allow_unused=True)
    return [np.zeros_like(values[i]) if g is None else
            np.asarray(g.detach().resolve_conj().numpy()) for i, g in zip(diff, gs)]


def _pure(call, module, values, diff, vs):
    """The function of the differentiable inputs' jax arrays, and its first-order
    gradients in torch's convention (jax.vjp with the conversion)."""
    def f(*arrays):
        full = list(values)
        for i, a in zip(diff, arrays):
            full[i] = a
        return _jax_outputs(call, module, full)

    def first(*arrays):
        out, vjp = jax.vjp(f, *arrays)
        cot = tuple(np.conj(v).astype(o.dtype) for v, o in zip(vs, out))
        return tuple(jax.numpy.conj(g) for g in vjp(cot))
    return f, first


def _jax(call, module, values, diff, vs, ws):
    """Route (b): jax.vjp of the function on tracers, in torch's convention."""
    _, first = _pure(call, module, values, diff, vs)
    primals = [jax.numpy.asarray(values[i]) for i in diff]
    try:
        if ws is None:
            gs = first(*primals)
        else:
            _, vjp2 = jax.vjp(first, *primals)
            gs = tuple(jax.numpy.conj(g) for g in vjp2(tuple(np.conj(w) for w in ws)))
    except Exception as e:  # explained: not tracer-safe
        raise CrosscheckError(_not_tracer_safe(e)) from e
    return [np.asarray(g) for g in gs]


def _jvp(call, module, values, diff, vs, ws, dirs):
    """Route (b'): JAX's forward mode along each direction, as Projections per input:
    d phi(u) = Re sum(conj(v) * J u) (order 2: of the converted first-order gradients,
    against w). None where JAX has no forward mode for the function."""
    f, first = _pure(call, module, values, diff, vs)
    fn, weights = (f, vs) if ws is None else (first, ws)
    primals = [jax.numpy.asarray(values[i]) for i in diff]
    out = []
    for k, us in enumerate(dirs):
        proj = []
        for u in us:
            tangents = [jax.numpy.zeros_like(p) for p in primals]
            tangents[k] = jax.numpy.asarray(u.astype(primals[k].dtype))
            try:
                _, dy = jax.jvp(fn, primals, tangents)
            except TypeError as e:
                if "custom_vjp" in str(e):
                    return None  # JAX has no forward mode through a custom_vjp
                raise CrosscheckError(_not_tracer_safe(e)) from e
            except Exception as e:  # explained: not tracer-safe
                raise CrosscheckError(_not_tracer_safe(e)) from e
            proj.append(sum(float(np.real(np.sum(np.conj(w) * np.asarray(d))))
                            for w, d in zip(weights, dy)))
        out.append(Projections(us, proj))
    return out


def _jax_outputs(call, module, arrays):
    xs = [from_jax(a) if isinstance(a, jax.Array) or isinstance(a, jax.core.Tracer)
          else tensor(a) for a in arrays]
    return tuple(o._value for o in _outputs(call(module, *xs)))


def _not_tracer_safe(e):
    """Which op (and which line of the caller's code) broke under jax tracing, and why."""
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if "/eagergrad/" in f.filename.replace("\\", "/")
            and "/testing/" not in f.filename.replace("\\", "/")
            and "/interop.py" not in f.filename]
    user = [f for f in frames if "/eagergrad/" not in f.filename.replace("\\", "/")
            and "/jax/" not in f.filename.replace("\\", "/")]
    where = f" in eagergrad's {ours[-1].name}" if ours else ""
    line = f" (called from {user[-1].filename}:{user[-1].lineno}: {user[-1].line})" \
        if user else ""
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return (f"crosscheck: the function is not tracer-safe: it failed when run with tensors "
            f"holding jax tracers{where}{line}: {type(e).__name__}: {first}. Branching on a "
            f"tensor's value, .item(), .tolist(), .numpy() or data-dependent shapes cannot run "
            f"under jax.vjp.")


def _phi(module, call, values, vs):
    """Re sum(conj(v) * f(x)) over the float outputs, evaluated eagerly in float64."""
    with no_grad():
        outs = _outputs(call(module, *[tensor(v) for v in values]))
        total = 0.0
        for o, v in zip(outs, vs):
            a = o.detach().resolve_conj().numpy().astype(np.complex128)
            total += float(np.real(np.sum(np.conj(v) * a)))
    return total


def _wide(values):
    return [v.astype(np.complex128 if np.iscomplexobj(v) else np.float64)
            if v.dtype.kind in "fc" else v for v in values]


def _fd_phi(module, call, diff, vs, ws):
    """phi of route (c); order 2: Re sum(conj(w) * the tape's first-order gradients)."""
    if ws is None:
        return lambda vals: _phi(module, call, vals, vs)

    def phi(vals):
        gs = _tape(module, call, vals, diff, vs, None)
        return float(sum(np.real(np.sum(np.conj(w) * g)) for w, g in zip(ws, gs)))
    return phi


def _fd_fast(module, call, values, diff, vs, ws, eps, dirs):
    """Route (c) in fast mode: one central difference of phi along each direction."""
    wide, phi = _wide(values), _fd_phi(module, call, diff, vs, ws)
    out = []
    for i, us in zip(diff, dirs):
        proj = []
        for u in us:
            hi, lo = list(wide), list(wide)
            hi[i], lo[i] = wide[i] + eps * u, wide[i] - eps * u
            proj.append((phi(hi) - phi(lo)) / (2 * eps))
        out.append(Projections(us, proj))
    return out


def _fd(module, call, values, diff, vs, ws, eps):
    """Route (c): central differences of phi, two per element (real and imaginary
    steps for a complex element)."""
    wide, phi = _wide(values), _fd_phi(module, call, diff, vs, ws)
    out = []
    for i in diff:
        g = np.zeros(wide[i].shape, wide[i].dtype)
        for idx in np.ndindex(*wide[i].shape):
            steps = (1, 1j) if np.iscomplexobj(wide[i]) else (1,)
            for s in steps:
                hi, lo = [v.copy() for v in wide], [v.copy() for v in wide]
                hi[i][idx] += s * eps
                lo[i][idx] -= s * eps
                g[idx] += s * (phi(hi) - phi(lo)) / (2 * eps)
        out.append(g.astype(values[i].dtype))
    return out
