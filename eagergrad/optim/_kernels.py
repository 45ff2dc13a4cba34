"""The update math of the optimizers on raw arrays: per optimizer, the update of one
parameter (`p, g, *states -> p, *states`), run over a whole param group's lists in one
jitted program (torch's `foreach` shape: lists in, lists out).

Each update follows torch 2.13's single-tensor implementation op by op: every Python-float
hyperparameter torch hands to a tensor op is rounded to the parameter's dtype where that op
would round it, and the scalar math torch does in Python doubles (bias corrections, step
sizes) is done in float64 here, from the float32 `step` as torch reads it with `.item()`.
Hyperparameters are read by name (`h.lr`, `h.beta1`: the fields of each optimizer's
NamedTuple, `AdamHyper`, ...); flags that torch branches on in Python are static. Complex
parameters are updated through their real views, as torch's `view_as_real`.

NOTE [optimizer kernels]: an optimizer's `step()` costs one jitted call per param group,
whatever the number of its parameters, and a new model's first step one XLA compile per
(group, state pattern), not one per parameter shape.

* Keying. Per update (sgd, adam, ...) there is one jitted function per combination of its
  static flags (`Kernel._jits`, a handful of booleans: maximize, nesterov, amsgrad,
  decoupled, weight_decay != 0, ...). jax keys that function's executables on the
  structure and avals of its arguments, the list of per-parameter tuples (shapes, dtypes,
  which states are None: SGD's momentum buffer before its first step) and the
  hyperparameter vector: one executable per group signature. Each jitted function is
  tracked by the global executable bound (`EXECUTABLES.track`, NOTE [executable cache]):
  one that has seen more group signatures than its limit is cleared, which bounds the
  memory of a process that builds model after model.
* Hyperparameters are traced. Everything that may change from step to step (lr under a
  scheduler, betas and momentum under a cyclic one, weight_decay, eps, rho, the etas,
  ...) goes in as one float64 vector (the NamedTuple's values, in its field order) and is
  read by field name inside the trace (`_Reads`), never as a static argument or a cache
  key: a scheduler changing lr every step compiles nothing. Only what changes the
  program's structure is static; a flag like `weight_decay != 0`, or `small` (which side
  of torch's lerp formula), compiles once per value.
* Same numbers as one parameter's kernel alone. The elements of the list are
  independent, each the same expression as a kernel of its own, and XLA compiles each to
  the same code, bit for bit, as long as the expression's graph is the same: XLA:CPU
  contracts a * b + c into one fused multiply-add where the graph allows, so even a
  hyperparameter sliced once and shared by every read (instead of sliced at each read)
  changed float32 scalars in the last bit. Hence `_Reads`.
* Large groups. Compile time grows with the program (~15 ms per parameter, against
  ~100 ms for a small program of its own), so a group of more than ONE_CALL parameters
  in which shapes repeat runs in chunks of one parameter per shape (`_chunked`): a model
  of 12 identical blocks compiles a block's program and calls it 12 times.
* Order as torch's loop, in two cases. A tensor written for one parameter and read or
  written for a later one (a parameter listed twice, views of one storage) starts a new
  call, so the later parameter sees the earlier update; and a state that does not fit
  its parameter (`_check_states`, at trace time) fails after the parameters before it
  are updated.
* New state (zeros, Rprop's step sizes, the scalar step) is made by numpy and put on the
  device (`filled`): jnp.zeros/jnp.full, and even jnp.asarray of a numpy array, compile
  a program per new shape.
"""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._cache import EXECUTABLES
from ..creation import _finish
from .optimizer import _scalar_dtype


def filled(shape, value, dtype):
    """A new state tensor of `shape` and eagergrad `dtype` holding `value` everywhere
    (torch's zeros_like(p), full_like(p, lr), tensor(0.0)), made by numpy and put on the
    default device as a factory puts it: jnp.full would compile a broadcast for every
    new shape, and a first step would pay one compile per parameter shape again."""
    return _finish(jax.device_put(np.full(shape, value, dtype.np)), dtype, None, False)


def zeros_like(t):
    """A new state tensor of zeros shaped and typed as tensor `t` (compiles nothing)."""
    return filled(t._shape, 0, t.dtype)


def scalar(value):
    """A new scalar state tensor (`step`, ASGD's `eta`, NAdam's `mu_product`) of the
    optimizers' scalar dtype: float64 when that is the default dtype, else float32."""
    return filled((), value, _scalar_dtype())


def _real(a):
    return None if a is None else (jnp.stack([a.real, a.imag], -1)
                                   if jnp.iscomplexobj(a) else a)


def _back(a, like):
    return jax.lax.complex(a[..., 0], a[..., 1]) if jnp.iscomplexobj(like) else a


def _broadcast(a, b):
    """torch's infer_size of shapes a and b, with its error."""
    n = max(len(a), len(b))
    a1, b1 = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i in reversed(range(n)):
        if a1[i] != b1[i] and a1[i] != 1 and b1[i] != 1:
            raise RuntimeError(f"The size of tensor a ({a1[i]}) must match the size of tensor "
                               f"b ({b1[i]}) at non-singleton dimension {i}")
    return tuple(y if x == 1 else x for x, y in zip(a1, b1))


def _output_error(out, shape):
    return RuntimeError(f"output with shape {list(out)} doesn't match the broadcast shape "
                        f"{list(shape)}")


def _check_states(arrays, checks):
    """torch's error for a state tensor (say a loaded one) that does not fit its parameter,
    checked at trace time (every new shape traces). `checks` lists (argument index, kind)
    in the order torch's single-tensor loop meets them: "a" a state updated in place with a
    gradient-shaped operand (state.lerp_(grad)), "b" one read as grad.mul(state) and
    written last, "c" one that may be larger than the parameter (ax.copy_(param)), "i" a
    scalar state torch reads with .item(). A state larger than the parameter fails at the
    parameter's own update, after the others."""
    p = arrays[0]
    real = (2,) if jnp.iscomplexobj(p) else ()  # (torch updates complex through real views)
    ps = tuple(p.shape) + real
    late = None
    for i, kind in checks:
        a = arrays[i]
        if a is None:
            continue
        if kind == "i":
            if a.size != 1:
                raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to "
                                   "Scalar")
            continue
        s = tuple(a.shape) + real
        if s == ps:
            continue
        b = _broadcast(ps, s) if kind == "b" else _broadcast(s, ps)
        if b != s and kind != "b":
            raise _output_error(s, b)
        if late is None and (b != s or kind != "c"):
            late = _output_error(s, b) if b != s else _output_error(ps, b)
    if late is not None:
        raise late


def _lerp(a, b, w, small):
    """torch's lerp: a + w (b - a) for |w| < 0.5, else b - (b - a)(1 - w)."""
    return a + w * (b - a) if small else b - (b - a) * (1 - w)


def _first_bad(arrays, checks):
    """(index, error) of the first element of a group whose states `_check_states`
    rejects, or None."""
    for i, a in enumerate(arrays):
        try:
            _check_states(a, checks)
        except RuntimeError as e:
            return i, e
    return None


class _Reads:
    """The traced hyperparameter vector read by name: `h.lr` is `hv[index["lr"]]`, sliced
    at each read, as a per-parameter kernel read `h[0]` (NOTE [optimizer kernels]: one
    slice shared by every read compiles to other code, whose float32 scalars may differ
    in the last bit)."""

    __slots__ = ("_index", "_hv")

    def __init__(self, index, hv):
        self._index, self._hv = index, hv

    def __getattr__(self, name):
        try:
            return self._hv[self._index[name]]
        except KeyError:
            raise AttributeError(name) from None


class Kernel:
    """An optimizer's update of one parameter, `fn(p, g, *states, h=Hyper, **flags) ->
    (p, *states)` on real arrays, run over a param group by `foreach` (NOTE [optimizer
    kernels]). `hyper` is the NamedTuple class of its hyperparameters; `checks` the state
    checks of `_check_states`; `flags` the names of its static flags, all booleans."""

    def __init__(self, fn, hyper, checks, flags):
        self.fn, self.Hyper, self.checks, self.flags = fn, hyper, checks, flags
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__
        self._jits = {}  # tuple of the flags' values -> the group's tracked jitted function

    def one(self, arrays, h, **flags):
        """One parameter's update, arrays of the original dtypes in and out (traced)."""
        _check_states(arrays, self.checks)
        out = self.fn(*[_real(a) for a in arrays], h=h, **flags)
        return tuple(None if o is None else _back(o, arrays[0]) if o.ndim else o
                     for o in out)

    def _jitted(self, flags):
        key = tuple(bool(flags[n]) for n in self.flags)
        f = self._jits.get(key)
        if f is None:
            if len(flags) != len(self.flags):
                raise TypeError(f"{self.__name__}: flags {sorted(flags)}, expected "
                                f"{list(self.flags)}")
            statics = dict(zip(self.flags, key))
            index = {name: i for i, name in enumerate(self.Hyper._fields)}

            def run(arrays, hv):
                h = _Reads(index, hv)
                return [self.one(a, h, **statics) for a in arrays]

            run.__name__ = run.__qualname__ = self.__name__  # ("Compiling jit(adam)")
            f = self._jits[key] = EXECUTABLES.track(jax.jit(run))
        return f

    def foreach(self, params, item, write, h, **flags):
        """Update `params`, a group's parameters with a grad, in order: `item(p)` gives
        the tensors the update reads, `(p, p.grad, *states)` in the order of `fn`'s
        arguments (None for an absent state); `write(p, tensors, out)` writes `fn`'s
        outputs back in place (with torch's version bumps). `h` is a `Hyper`; `flags` the
        static flags. One jitted call for the group, more for a large one or when a
        tensor it writes is met again (NOTE [optimizer kernels])."""
        f = self._jitted(flags)
        hv = np.array(h, np.float64)
        run, written, read = [], set(), set()
        for p in params:
            ts = item(p)
            w, r = _storages(ts)
            if run and (not w.isdisjoint(written) or not w.isdisjoint(read) or r in written):
                self._call(f, run, hv, write)
                run, written, read = [], set(), set()
                ts = item(p)  # (a state the call has just made)
                w, r = _storages(ts)
            run.append((p, ts))
            written |= w
            read.add(r)
        if run:
            self._call(f, run, hv, write)

    def _call(self, f, run, hv, write):
        arrays = [tuple(None if t is None else t._value for t in ts) for _, ts in run]
        try:
            outs = _chunked(f, run, arrays, hv)
        except RuntimeError:
            bad = _first_bad(arrays, self.checks)
            if bad is None:
                raise
            # a state that does not fit: torch's loop has updated the parameters before it
            i, err = bad
            for (p, ts), out in zip(run, _chunked(f, run, arrays[:i], hv) if i else ()):
                write(p, ts, out)
            raise err from None
        for (p, ts), out in zip(run, outs):
            write(p, ts, out)


def _storages(ts):
    """The storages (ids) an update writes (the parameter and its states), and the one
    it only reads (the gradient's)."""
    return {id(t._storage) for i, t in enumerate(ts) if t is not None and i != 1}, \
        id(ts[1]._storage)


ONE_CALL = 64  # a group of at most this many parameters is always one call (_chunked)


def _chunked(f, run, arrays, hv):
    """`f(arrays, hv)`, the group's update: one call for a group of up to ONE_CALL
    parameters or of parameters of all different shapes, else one call per chunk, chunk k
    holding the k-th parameter of each (shape, dtype), in order. A program's compile time
    grows with its elements (~15 ms each, against ~100 ms for a kernel of its own: one
    program for 200 parameters takes ~3 s), so a large model that repeats a block (12
    identical layers: chunks 0-11 alike) compiles a few programs of one block each."""
    n = len(arrays)
    if n <= ONE_CALL:
        return f(arrays, hv)
    count, chunk = {}, []
    for p, _ in run[:n]:
        key = (p._shape, p.dtype)
        k = count.get(key, 0)
        count[key] = k + 1
        chunk.append(k)
    if len(count) == n:
        return f(arrays, hv)
    chunks = [[] for _ in range(max(count.values()))]
    for i, k in enumerate(chunk):
        chunks[k].append(i)
    outs = [None] * n
    for idx in chunks:
        for i, out in zip(idx, f([arrays[i] for i in idx], hv)):
            outs[i] = out
    return outs


def _kernel(hyper, checks=(), flags=()):
    return lambda fn: Kernel(fn, hyper, checks, flags)


# ---- the updates ---------------------------------------------------------------------
class SGDHyper(NamedTuple):
    neg_lr: float               # -lr
    weight_decay: float
    momentum: float
    one_minus_dampening: float  # 1 - dampening


@_kernel(SGDHyper, ((2, "a"),), ("maximize", "weight_decay", "momentum", "nesterov"))
def sgd(p, g, buf, *, h, maximize, weight_decay, momentum, nesterov):
    """buf is None on a parameter's first step with momentum (torch's buffer starts as a
    clone of the gradient)."""
    s = lambda x: x.astype(p.dtype)
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h.weight_decay) * p
    if momentum:
        buf = g if buf is None else buf * s(h.momentum) + s(h.one_minus_dampening) * g
        g = g + s(h.momentum) * buf if nesterov else buf
    return p + s(h.neg_lr) * g, buf


class AdamHyper(NamedTuple):
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float
    one_minus_beta1: float
    one_minus_beta2: float
    one_minus_lr_wd: float      # 1 - lr * weight_decay (AdamW's factor)


@_kernel(AdamHyper, ((2, "a"), (3, "a"), (5, "i"), (4, "a")),
         ("maximize", "weight_decay", "decoupled", "amsgrad", "small"))
def adam(p, g, m, v, vmax, step, *, h, maximize, weight_decay, decoupled, amsgrad, small):
    """decoupled (AdamW): p *= 1 - lr * wd first, else wd * p is added to the gradient."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay and decoupled:
        p = p * s(h.one_minus_lr_wd)
    elif weight_decay:
        g = g + s(h.weight_decay) * p
    m = _lerp(m, g, s(h.one_minus_beta1), small)
    v = v * s(h.beta2) + s(h.one_minus_beta2) * g * g
    n = step.astype(jnp.float64)
    step_size = h.lr / (1 - h.beta1 ** n)
    bc2_sqrt = jnp.sqrt(1 - h.beta2 ** n)
    if amsgrad:
        vmax = jnp.maximum(vmax, v)
    denom = jnp.sqrt(vmax if amsgrad else v) / s(bc2_sqrt) + s(h.eps)
    return p + s(-step_size) * m / denom, m, v, vmax, step


class RMSpropHyper(NamedTuple):
    lr: float
    alpha: float
    eps: float
    weight_decay: float
    momentum: float
    one_minus_alpha: float


@_kernel(RMSpropHyper, ((2, "a"), (3, "a"), (4, "a")),
         ("maximize", "weight_decay", "centered", "momentum", "small"))
def rmsprop(p, g, sq, gavg, buf, step, *, h, maximize, weight_decay, centered, momentum,
            small):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h.weight_decay) * p
    sq = sq * s(h.alpha) + s(h.one_minus_alpha) * g * g
    if centered:
        gavg = _lerp(gavg, g, s(h.one_minus_alpha), small)
        avg = jnp.sqrt(sq - gavg * gavg)  # addcmul(gavg, gavg, value=-1)
    else:
        avg = jnp.sqrt(sq)
    avg = avg + s(h.eps)
    if momentum:
        buf = buf * s(h.momentum) + g / avg
        p = p + s(-h.lr) * buf
    else:
        p = p + s(-h.lr) * g / avg
    return p, sq, gavg, buf, step


class AdagradHyper(NamedTuple):
    lr: float
    lr_decay: float
    eps: float
    weight_decay: float


@_kernel(AdagradHyper, ((3, "i"), (2, "a")), ("maximize", "weight_decay"))
def adagrad(p, g, acc, step, *, h, maximize, weight_decay):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h.weight_decay) * p
    clr = h.lr / (1 + (step.astype(jnp.float64) - 1) * h.lr_decay)
    acc = acc + g * g
    std = jnp.sqrt(acc) + s(h.eps)
    return p + s(-clr) * g / std, acc, step


class AdadeltaHyper(NamedTuple):
    lr: float
    rho: float
    eps: float
    weight_decay: float
    one_minus_rho: float


@_kernel(AdadeltaHyper, ((2, "a"), (3, "a")), ("maximize", "weight_decay"))
def adadelta(p, g, sq, acc, step, *, h, maximize, weight_decay):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h.weight_decay) * p
    sq = sq * s(h.rho) + s(h.one_minus_rho) * g * g
    std = jnp.sqrt(sq + s(h.eps))
    delta = jnp.sqrt(acc + s(h.eps)) / std * g
    acc = acc * s(h.rho) + s(h.one_minus_rho) * delta * delta
    return p + s(-h.lr) * delta, sq, acc, step


class AdamaxHyper(NamedTuple):
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float
    one_minus_beta1: float


@_kernel(AdamaxHyper, ((2, "a"), (3, "a"), (4, "i")), ("maximize", "weight_decay", "small"))
def adamax(p, g, m, u, step, *, h, maximize, weight_decay, small):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h.weight_decay) * p
    m = _lerp(m, g, s(h.one_minus_beta1), small)
    u = jnp.maximum(u * s(h.beta2), jnp.abs(g) + s(h.eps))
    clr = h.lr / (1 - h.beta1 ** step.astype(jnp.float64))
    return p + s(-clr) * m / u, m, u, step


class NAdamHyper(NamedTuple):
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float
    momentum_decay: float
    one_minus_beta1: float
    one_minus_beta2: float
    one_minus_lr_wd: float      # 1 - lr * weight_decay (decoupled weight decay's factor)


@_kernel(NAdamHyper, ((5, "i"), (2, "a"), (3, "a"), (4, "i")),
         ("maximize", "weight_decay", "decoupled", "small"))
def nadam(p, g, m, v, mu_product, step, *, h, maximize, weight_decay, decoupled, small):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    n = step.astype(jnp.float64)
    g = -g if maximize else g
    bc2 = 1 - h.beta2 ** n
    if weight_decay and decoupled:
        p = p * s(h.one_minus_lr_wd)
    elif weight_decay:
        g = g + s(h.weight_decay) * p
    mu = h.beta1 * (1.0 - 0.5 * 0.96 ** (n * h.momentum_decay))
    mu_next = h.beta1 * (1.0 - 0.5 * 0.96 ** ((n + 1) * h.momentum_decay))
    mu_product = mu_product * mu.astype(mu_product.dtype)
    m = _lerp(m, g, s(h.one_minus_beta1), small)
    v = v * s(h.beta2) + s(h.one_minus_beta2) * g * g
    denom = jnp.sqrt(v / s(bc2)) + s(h.eps)
    mp = mu_product.astype(jnp.float64)
    p = p + s(-h.lr * (1.0 - mu) / (1.0 - mp)) * g / denom
    p = p + s((-h.lr * mu_next) / (1.0 - mp * mu_next)) * m / denom
    return p, m, v, mu_product, step


class RAdamHyper(NamedTuple):
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float
    one_minus_beta1: float
    one_minus_beta2: float
    one_minus_lr_wd: float      # 1 - lr * weight_decay (decoupled weight decay's factor)


@_kernel(RAdamHyper, ((4, "i"), (2, "a"), (3, "a")),
         ("maximize", "weight_decay", "decoupled", "small"))
def radam(p, g, m, v, step, *, h, maximize, weight_decay, decoupled, small):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    n = step.astype(jnp.float64)
    g = -g if maximize else g
    if weight_decay and decoupled:
        p = p * s(h.one_minus_lr_wd)
    elif weight_decay:
        g = g + s(h.weight_decay) * p
    m = _lerp(m, g, s(h.one_minus_beta1), small)
    v = v * s(h.beta2) + s(h.one_minus_beta2) * g * g
    bc1 = 1 - h.beta1 ** n
    bc2 = 1 - h.beta2 ** n
    corrected = m / s(bc1)
    rho_inf = 2 / (1 - h.beta2) - 1
    rho_t = rho_inf - 2 * n * (h.beta2 ** n) / bc2
    # (torch branches on rho_t > 5 in Python; both sides are computed here)
    rect = jnp.sqrt(jnp.abs((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)))
    adaptive = 1 / (jnp.sqrt(v) + s(h.eps)) * s(jnp.sqrt(bc2))
    scaled = corrected * s(h.lr)
    return (jnp.where(rho_t > 5.0, p - scaled * adaptive * s(rect), p - scaled), m, v, step)


class RpropHyper(NamedTuple):
    etaminus: float
    etaplus: float
    step_size_min: float
    step_size_max: float


@_kernel(RpropHyper, ((2, "b"), (3, "a")), ("maximize",))
def rprop(p, g, prev, step_size, step, *, h, maximize):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    sign = jnp.sign(g * prev)
    sign = jnp.where(sign > 0, s(h.etaplus), sign)  # sign[sign.gt(0)] = etaplus, ...
    sign = jnp.where(sign < 0, s(h.etaminus), sign)
    sign = jnp.where(sign == 0, jnp.ones_like(sign), sign)
    step_size = jnp.clip(step_size * sign, s(h.step_size_min), s(h.step_size_max))
    g = jnp.where(sign == s(h.etaminus), jnp.zeros_like(g), g)
    return p - jnp.sign(g) * step_size, g, step_size, step


class ASGDHyper(NamedTuple):
    lr: float
    lambd: float
    alpha: float
    t0: float
    weight_decay: float


@_kernel(ASGDHyper, ((3, "i"), (4, "i"), (2, "c"), (5, "i")), ("maximize", "weight_decay"))
def asgd(p, g, ax, eta, mu, step, *, h, maximize, weight_decay):
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h.weight_decay) * p
    eta_value = eta.astype(jnp.float64)
    p = p * s(1 - h.lambd * eta_value)
    p = p + s(-eta_value) * g
    # (torch: ax.add_(param.sub(ax).mul_(mu)) if mu.item() != 1, else ax.copy_(param))
    ax = jnp.where(mu != 1, ax + (p - ax) * s(mu), p)
    n = step.astype(jnp.float64)
    eta = (h.lr / ((1 + h.lambd * h.lr * n) ** h.alpha)).astype(eta.dtype)
    mu = (1 / jnp.maximum(1.0, n - h.t0)).astype(mu.dtype)
    return p, ax, eta, mu, step
