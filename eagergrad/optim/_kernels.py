"""The update math of the optimizers on raw arrays, in the shape of torch's single-tensor
functions: `_single_tensor_adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *,
lr, beta1, ..., maximize, amsgrad, ...) -> (param, *states)`, the update of one parameter,
run over a whole param group's lists in one jitted program (torch's `foreach` shape: lists
in, lists out).

Each update follows torch 2.13's single-tensor implementation op by op: every Python-float
hyperparameter torch hands to a tensor op is rounded to the parameter's dtype where that op
would round it, and the scalar math torch does in Python doubles (bias corrections, step
sizes) is done in float64 here, from the float32 `step` as torch reads it with `.item()`.
Hyperparameters are keyword arguments by torch's names, with the few values torch derives
from them in Python (`one_minus_beta1`, ...: the kernel's `extra`); flags that torch
branches on in Python are static keywords. Complex parameters are updated through their
real views, as torch's `view_as_real`.

Each kernel declares next to it the tensors its outputs are written back to, in torch's
order, and the in-place ops torch's loop runs on each (`writes`: its version bumps, a
number or a function of the flags, the ops named in a comment). One write-back applies them
(`_write_back`): with `fused=True` only `step` is bumped (torch's fused kernels bump no
other version), and a state absent before (SGD's first momentum buffer) becomes a new one.

NOTE [optimizer kernels]: an optimizer's `step()` costs one jitted call per param group,
whatever the number of its parameters, and a new model's first step one XLA compile per
(group, state pattern), not one per parameter shape.

* Keying. Per update (sgd, adam, ...) there is one jitted function per combination of its
  static flags (`Kernel._jits`, a handful of booleans: maximize, nesterov, amsgrad,
  decoupled_weight_decay, has_weight_decay, ...). jax keys that function's executables on
  the structure and avals of its arguments, the list of per-parameter tuples (shapes,
  dtypes, which states are None: SGD's momentum buffer before its first step) and the
  hyperparameter vector: one executable per group signature. Each jitted function is
  tracked by the global executable bound (`EXECUTABLES.track`, NOTE [executable cache]):
  one that has seen more group signatures than its limit is cleared, which bounds the
  memory of a process that builds model after model.
* Hyperparameters are traced. Everything that may change from step to step (lr under a
  scheduler, betas and momentum under a cyclic one, weight_decay, eps, rho, the etas,
  ...) goes in as one float64 vector (the kernel's hyperparameter keywords, in signature
  order), each keyword a `_Hyper` that reads its element inside the trace, never a static
  argument or a cache key: a scheduler changing lr every step compiles nothing. Only what
  changes the program's structure is static; a flag like `has_weight_decay`, or `small`
  (which side of torch's lerp formula), compiles once per value.
* Same numbers as one parameter's kernel alone. The elements of the list are
  independent, each the same expression as a kernel of its own, and XLA compiles each to
  the same code, bit for bit, as long as the expression's graph is the same: XLA:CPU
  contracts a * b + c into one fused multiply-add where the graph allows, so even a
  hyperparameter sliced once and shared by every read (instead of sliced at each read)
  changed float32 scalars in the last bit. Hence `_Hyper` slices at each use, and the
  values torch derives in Python (1 - lr * weight_decay) come in computed, not traced.
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
import collections
import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._cache import EXECUTABLES
from .._mode import COMPILING
from ..creation import _finish
from ..ops._table import DTChain
from ..tensor import _make
from .optimizer import _put, _scalar_dtype


def filled(shape, value, dtype):
    """A new state tensor of `shape` and eagergrad `dtype` holding `value` everywhere
    (torch's zeros_like(p), full_like(p, lr), tensor(0.0)), made by numpy and put on the
    default device as a factory puts it: jnp.full would compile a broadcast for every
    new shape, and a first step would pay one compile per parameter shape again."""
    return _finish(jax.device_put(np.full(shape, value, dtype.np)), dtype, None, False)


def zeros_like(t):
    """A new state tensor of zeros shaped and typed as tensor `t` (compiles nothing); a
    DTensor's (torch.distributed.tensor) is a DTensor of its layout."""
    if t._vchain.__class__ is DTChain:
        return t._with_locals([zeros_like(x) for x in t._locals])
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


class _Hyper:
    """A traced hyperparameter, element `i` of the float64 vector `hv`, sliced anew at each
    use in an expression, as a kernel reading `h[i]` at each use (NOTE [optimizer kernels]:
    one slice shared by every use compiles to other code, whose float32 scalars may differ
    in the last bit)."""

    __slots__ = ("_hv", "_i")

    def __init__(self, hv, i):
        self._hv, self._i = hv, i

    def _v(self):
        return self._hv[self._i]

    def astype(self, dtype):
        return self._v().astype(dtype)

    def __neg__(self):
        return -self._v()

    def __add__(self, o):
        return self._v() + o

    def __radd__(self, o):
        return o + self._v()

    def __sub__(self, o):
        return self._v() - o

    def __rsub__(self, o):
        return o - self._v()

    def __mul__(self, o):
        return self._v() * o

    def __rmul__(self, o):
        return o * self._v()

    def __truediv__(self, o):
        return self._v() / o

    def __rtruediv__(self, o):
        return o / self._v()

    def __pow__(self, o):
        return self._v() ** o

    def __rpow__(self, o):
        return o ** self._v()


_NOT_POINTWISE = {"_single_tensor_adafactor", "_single_tensor_muon"}


class Kernel:
    """An optimizer's update of one parameter in torch's single-tensor shape, `fn(param,
    grad, *states, *, <hyperparameters>, <flags>) -> (param, *states)` on real arrays, run
    over a param group by `foreach` (NOTE [optimizer kernels]). `flags` names its static
    keywords (booleans), its other keywords are traced hyperparameters; `extra(**hypers)`
    gives the ones torch derives in Python; `checks` lists (state, kind) for
    `_check_states`; `writes` (tensor, in-place ops) for `_write_back`, in torch's order."""

    def __init__(self, fn, flags, writes, checks, extra):
        sig = inspect.signature(fn).parameters.values()
        self.args = tuple(a.name for a in sig if a.kind is a.POSITIONAL_OR_KEYWORD)
        keywords = [a.name for a in sig if a.kind is a.KEYWORD_ONLY]
        assert set(flags) <= set(keywords), (fn.__name__, flags)
        self.fn, self.flags, self.extra = fn, tuple(flags), extra
        self.hypers = tuple(n for n in keywords if n not in self.flags)
        self.given = set(self.flags + self.hypers) | (set() if extra is None else {
            a.name for a in inspect.signature(extra).parameters.values()
            if a.kind is a.POSITIONAL_OR_KEYWORD})
        self.writes = tuple((self.args.index(name), name, ops) for name, ops in writes)
        self.checks = tuple((self.args.index(name), kind) for name, kind in checks)
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__
        self._jits = {}  # tuple of the flags' values -> the group's tracked jitted function
        self._plans = {}  # (the flags' values, fused) -> the write-back of `_write_back`

    def one(self, arrays, hypers, **flags):
        """One parameter's update, arrays of the original dtypes in and out (traced)."""
        _check_states(arrays, self.checks)
        out = self.fn(*[_real(a) for a in arrays], **hypers, **flags)
        return tuple(None if o is None else _back(o, arrays[0]) if o.ndim else o
                     for o in out)

    def _jitted(self, key):
        f = self._jits.get(key)
        if f is None:
            statics = dict(zip(self.flags, key))

            def run(arrays, hv):
                hypers = {name: _Hyper(hv, i) for i, name in enumerate(self.hypers)}
                return [self.one(a, hypers, **statics) for a in arrays]

            run.__name__ = run.__qualname__ = self.__name__  # ("Compiling jit(...)")
            f = self._jits[key] = EXECUTABLES.track(jax.jit(run))
        return f

    def _plan(self, key, fused):
        """(argument index, output index, name, version bumps) per declared write."""
        plan = self._plans.get((key, fused))
        if plan is None:
            flags, plan = dict(zip(self.flags, key)), []
            for i, name, ops in self.writes:
                n = ops(flags) if callable(ops) else ops
                plan.append((i, max(i - 1, 0), name, n if name == "step" or not fused else 0))
            self._plans[(key, fused)] = plan
        return plan

    def foreach(self, params, item, state, *, fused=False, **kw):
        """Update `params`, a group's parameters with a grad, in order: `item(p)` gives
        the tensors the update reads, `(p, p.grad, *states)` in the order of `fn`'s
        arguments (None for an absent state); `state` is the optimizer's state (a new
        state is put in `state[p]`); `kw` the hyperparameters (torch's, `extra` adds the
        derived ones) and the static flags. One jitted call for the group, more for a large
        one or when a tensor it writes is met again (NOTE [optimizer kernels])."""
        if any(p._vchain.__class__ is DTChain for p in params):
            return self._by_rank(params, item, state, fused, kw)
        unexpected = sorted(set(kw) - self.given)
        flags = {n: kw.pop(n) for n in self.flags if n in kw}
        if self.extra is not None:
            kw.update(self.extra(**kw))
        missing = [n for n in self.flags + self.hypers if n not in flags and n not in kw]
        if missing or unexpected:
            raise TypeError(f"{self.__name__}: missing {missing}, unexpected {unexpected}")
        key = tuple(bool(flags[n]) for n in self.flags)
        f, plan = self._jitted(key), self._plan(key, bool(fused))
        hv = np.array([kw[n] for n in self.hypers], np.float64)
        if COMPILING.n and COMPILING.rec is not None:  # (NOTE [lifted hyperparameters])
            hv = COMPILING.rec.hyper(self, key, hv)
            if hv is None:  # (a replay's dry run: the vector is all it wanted)
                return
        run, written, read = [], set(), set()
        for p in params:
            ts = item(p)
            w, r = _storages(ts)
            if run and (not w.isdisjoint(written) or not w.isdisjoint(read) or r in written):
                self._call(f, run, hv, plan, state)
                run, written, read = [], set(), set()
                ts = item(p)  # (a state the call has just made)
                w, r = _storages(ts)
            run.append((p, ts))
            written |= w
            read.add(r)
        if run:
            self._call(f, run, hv, plan, state)

    def _by_rank(self, params, item, state, fused, kw):
        """`foreach` with DTensor parameters (torch.distributed.tensor): each one's update
        runs on every rank's locals, its gradient first laid out as the parameter (a
        Partial one reduced), as torch's pointwise update of DTensors does. Stacked locals
        (NOTE [stacked locals]) of a pointwise update are updated as one tensor, in one
        program over the mesh. A plain state (a scalar `step`) is updated on rank 0's
        tensor, the other ranks on copies; a state the update makes becomes a DTensor of
        the parameter's layout, or stays one plain tensor when it is a scalar."""
        plain = [p for p in params if p._vchain.__class__ is not DTChain]
        if plain:
            self.foreach(plain, item, state, fused=fused, **kw)
        for p in params:
            if p._vchain.__class__ is not DTChain:
                continue
            ts = list(item(p))
            if ts[1].placements != p.placements:
                ts[1] = ts[1].redistribute(p.device_mesh, p.placements)
            ranked = [t for i, t in enumerate(ts)
                      if i != 1 and t is not None and t._vchain.__class__ is DTChain]
            if self.__name__ not in _NOT_POINTWISE and all(
                    t._list is None for t in ts if t is not None and t._vchain.__class__
                    is DTChain):
                row = tuple(None if t is None else t._stack_tensor()
                            if t._vchain.__class__ is DTChain else t for t in ts)
                made = collections.defaultdict(dict)
                self.foreach([row[0]], lambda _, r=row: r, made, fused=fused, **dict(kw))
                for name, v in made[row[0]].items():
                    state[p][name] = p._over_stack(v) if v._shape == row[0]._shape else v
                continue
            locs = {id(t): t._locals for t in ts if t is not None and
                    t._vchain.__class__ is DTChain}
            rows = [tuple(None if t is None else locs[id(t)][r] if id(t) in locs
                          else t if r == 0 else t._fresh_copy() for t in ts)
                    for r in range(len(locs[id(p)]))]
            before = [locs[id(t)][0]._version_counter.version for t in ranked]
            made = collections.defaultdict(dict)
            by_id = {id(row[0]): row for row in rows}
            self.foreach([row[0] for row in rows], lambda lp, m=by_id: m[id(lp)], made,
                         fused=fused, **dict(kw))
            for t, v in zip(ranked, before):
                if t._list is None:  # (its locals were copies of its stacked ones)
                    t._write_stack_of(locs[id(t)])
                t._version_counter.version += locs[id(t)][0]._version_counter.version - v
            for name, first in made[rows[0][0]].items():
                vals = [made[row[0]][name] for row in rows]
                state[p][name] = p._with_locals(vals) if first._shape == rows[0][0]._shape \
                    else first

    def _call(self, f, run, hv, plan, state):
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
                _write_back(plan, state, p, ts, out)
            raise err from None
        for (p, ts), out in zip(run, outs):
            _write_back(plan, state, p, ts, out)


def _write_back(plan, state, p, ts, out):
    """Write one parameter's outputs into its tensors `ts` in place, in the kernel's
    declared order, each counting its declared in-place ops (`_put`); an output for a state
    absent before (SGD's first momentum buffer, torch's grad.clone()) becomes a new tensor
    of `state[p]`."""
    for i, o, name, bumps in plan:
        new = out[o]
        if new is None:
            continue
        if ts[i] is None:
            state[p][name] = _make(new)
        else:
            _put(ts[i], new, bumps)


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


def _kernel(flags, writes, checks=(), extra=None):
    return lambda fn: Kernel(fn, flags, writes, checks, extra)


def _decoupled(f):
    return f["has_weight_decay"] and f["decoupled_weight_decay"]


# ---- the updates ---------------------------------------------------------------------
# `writes`: per tensor, in torch's order, the in-place ops torch's single-tensor loop runs
# on it (its version bumps: a number, or a function of the flags' dict); a None state
# (amsgrad off, ...) is not written.
@_kernel(flags=("maximize", "has_weight_decay", "has_momentum", "nesterov"),
         extra=lambda lr, dampening, **_: dict(neg_lr=-lr, one_minus_dampening=1 - dampening),
         checks=(("momentum_buffer", "a"),),
         writes=(("momentum_buffer", 2),  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                 ("param", 1)))           # param.add_(grad, alpha=-lr)
def _single_tensor_sgd(param, grad, momentum_buffer, *, neg_lr, weight_decay, momentum,
                       one_minus_dampening, maximize, has_weight_decay, has_momentum,
                       nesterov):
    """momentum_buffer is None on a parameter's first step with momentum (torch's buffer
    starts as a clone of the gradient, a new state)."""
    s = lambda x: x.astype(param.dtype)
    grad = -grad if maximize else grad
    if has_weight_decay:
        grad = grad + s(weight_decay) * param
    buf = momentum_buffer
    if has_momentum:
        buf = grad if buf is None else buf * s(momentum) + s(one_minus_dampening) * grad
        grad = grad + s(momentum) * buf if nesterov else buf
    return param + s(neg_lr) * grad, buf


def _adam_extra(lr, beta1, beta2, weight_decay, **_):
    """The Adams' values torch computes in Python (AdamW's factor 1 - lr * weight_decay)."""
    return dict(one_minus_beta1=1 - beta1, one_minus_beta2=1 - beta2,
                one_minus_lr_wd=1 - lr * weight_decay)


@_kernel(flags=("maximize", "has_weight_decay", "decoupled_weight_decay", "amsgrad", "small"),
         extra=_adam_extra,
         checks=(("exp_avg", "a"), ("exp_avg_sq", "a"), ("step", "i"), ("max_exp_avg_sq", "a")),
         writes=(("step", 1),            # step_t += 1
                 ("exp_avg", 1),         # exp_avg.lerp_(grad, 1 - beta1)
                 ("exp_avg_sq", 2),      # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, ...)
                 ("max_exp_avg_sq", 1),  # torch.maximum(..., out=max_exp_avg_sq)
                 # (AdamW: param.mul_(1 - lr * weight_decay)), param.addcdiv_(exp_avg, ...)
                 ("param", lambda f: 1 + _decoupled(f))))
def _single_tensor_adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *, lr, beta1,
                        beta2, eps, weight_decay, one_minus_beta1, one_minus_beta2,
                        one_minus_lr_wd, maximize, has_weight_decay, decoupled_weight_decay,
                        amsgrad, small):
    """decoupled_weight_decay (AdamW): param *= 1 - lr * weight_decay first, else
    weight_decay * param is added to the gradient."""
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    grad = -grad if maximize else grad
    if has_weight_decay and decoupled_weight_decay:
        param = param * s(one_minus_lr_wd)
    elif has_weight_decay:
        grad = grad + s(weight_decay) * param
    exp_avg = _lerp(exp_avg, grad, s(one_minus_beta1), small)
    exp_avg_sq = exp_avg_sq * s(beta2) + s(one_minus_beta2) * grad * grad
    n = step.astype(jnp.float64)
    step_size = lr / (1 - beta1 ** n)
    bias_correction2_sqrt = jnp.sqrt(1 - beta2 ** n)
    if amsgrad:
        max_exp_avg_sq = jnp.maximum(max_exp_avg_sq, exp_avg_sq)
    denom = (jnp.sqrt(max_exp_avg_sq if amsgrad else exp_avg_sq) / s(bias_correction2_sqrt)
             + s(eps))
    return (param + s(-step_size) * exp_avg / denom, exp_avg, exp_avg_sq, max_exp_avg_sq,
            step)


@_kernel(flags=("maximize", "has_weight_decay", "centered", "has_momentum", "small"),
         extra=lambda alpha, **_: dict(one_minus_alpha=1 - alpha),
         checks=(("square_avg", "a"), ("grad_avg", "a"), ("momentum_buffer", "a")),
         writes=(("step", 1),             # step += 1
                 ("square_avg", 2),       # square_avg.mul_(alpha).addcmul_(grad, grad, ...)
                 ("grad_avg", 1),         # grad_avg.lerp_(grad, 1 - alpha)
                 ("momentum_buffer", 2),  # buf.mul_(momentum).addcdiv_(grad, avg)
                 ("param", 1)))           # param.add_(buf, ...) or param.addcdiv_(grad, avg, ...)
def _single_tensor_rmsprop(param, grad, square_avg, grad_avg, momentum_buffer, step, *, lr,
                           alpha, eps, weight_decay, momentum, one_minus_alpha, maximize,
                           has_weight_decay, centered, has_momentum, small):
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    grad = -grad if maximize else grad
    if has_weight_decay:
        grad = grad + s(weight_decay) * param
    square_avg = square_avg * s(alpha) + s(one_minus_alpha) * grad * grad
    if centered:
        grad_avg = _lerp(grad_avg, grad, s(one_minus_alpha), small)
        avg = jnp.sqrt(square_avg - grad_avg * grad_avg)  # addcmul(grad_avg, grad_avg, value=-1)
    else:
        avg = jnp.sqrt(square_avg)
    avg = avg + s(eps)
    buf = momentum_buffer
    if has_momentum:
        buf = buf * s(momentum) + grad / avg
        param = param + s(-lr) * buf
    else:
        param = param + s(-lr) * grad / avg
    return param, square_avg, grad_avg, buf, step


@_kernel(flags=("maximize", "has_weight_decay"),
         checks=(("step", "i"), ("state_sum", "a")),
         writes=(("step", 1),       # step_t += 1
                 ("state_sum", 1),  # state_sum.addcmul_(grad, grad, value=1)
                 ("param", 1)))     # param.addcdiv_(grad, std, value=-clr)
def _single_tensor_adagrad(param, grad, state_sum, step, *, lr, lr_decay, eps, weight_decay,
                           maximize, has_weight_decay):
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    grad = -grad if maximize else grad
    if has_weight_decay:
        grad = grad + s(weight_decay) * param
    clr = lr / (1 + (step.astype(jnp.float64) - 1) * lr_decay)
    state_sum = state_sum + grad * grad
    std = jnp.sqrt(state_sum) + s(eps)
    return param + s(-clr) * grad / std, state_sum, step


@_kernel(flags=("maximize", "has_weight_decay"),
         extra=lambda rho, **_: dict(one_minus_rho=1 - rho),
         checks=(("square_avg", "a"), ("acc_delta", "a")),
         writes=(("step", 1),        # step += 1
                 ("square_avg", 2),  # square_avg.mul_(rho).addcmul_(grad, grad, ...)
                 ("acc_delta", 2),   # acc_delta.mul_(rho).addcmul_(delta, delta, ...)
                 ("param", 1)))      # param.add_(delta, alpha=-lr)
def _single_tensor_adadelta(param, grad, square_avg, acc_delta, step, *, lr, rho, eps,
                            weight_decay, one_minus_rho, maximize, has_weight_decay):
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    grad = -grad if maximize else grad
    if has_weight_decay:
        grad = grad + s(weight_decay) * param
    square_avg = square_avg * s(rho) + s(one_minus_rho) * grad * grad
    std = jnp.sqrt(square_avg + s(eps))
    delta = jnp.sqrt(acc_delta + s(eps)) / std * grad
    acc_delta = acc_delta * s(rho) + s(one_minus_rho) * delta * delta
    return param + s(-lr) * delta, square_avg, acc_delta, step


@_kernel(flags=("maximize", "has_weight_decay", "small"),
         extra=lambda beta1, **_: dict(one_minus_beta1=1 - beta1),
         checks=(("exp_avg", "a"), ("exp_inf", "a"), ("step", "i")),
         writes=(("step", 1),     # step_t += 1
                 ("exp_avg", 1),  # exp_avg.lerp_(grad, 1 - beta1)
                 ("exp_inf", 2),  # torch.maximum(exp_inf.mul_(beta2), ..., out=exp_inf)
                 ("param", 1)))   # param.addcdiv_(exp_avg, exp_inf, value=-clr)
def _single_tensor_adamax(param, grad, exp_avg, exp_inf, step, *, lr, beta1, beta2, eps,
                          weight_decay, one_minus_beta1, maximize, has_weight_decay, small):
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    grad = -grad if maximize else grad
    if has_weight_decay:
        grad = grad + s(weight_decay) * param
    exp_avg = _lerp(exp_avg, grad, s(one_minus_beta1), small)
    exp_inf = jnp.maximum(exp_inf * s(beta2), jnp.abs(grad) + s(eps))
    clr = lr / (1 - beta1 ** step.astype(jnp.float64))
    return param + s(-clr) * exp_avg / exp_inf, exp_avg, exp_inf, step


@_kernel(flags=("maximize", "has_weight_decay", "decoupled_weight_decay", "small"),
         extra=_adam_extra,
         checks=(("step", "i"), ("exp_avg", "a"), ("exp_avg_sq", "a"), ("mu_product", "i")),
         writes=(("step", 1),        # step_t += 1
                 ("mu_product", 1),  # mu_product *= mu
                 ("exp_avg", 1),     # exp_avg.lerp_(grad, 1 - beta1)
                 ("exp_avg_sq", 2),  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, ...)
                 # (param.mul_(1 - lr * wd)), param.addcdiv_(grad, ...), .addcdiv_(exp_avg, ...)
                 ("param", lambda f: 2 + _decoupled(f))))
def _single_tensor_nadam(param, grad, exp_avg, exp_avg_sq, mu_product, step, *, lr, beta1,
                         beta2, eps, weight_decay, momentum_decay, one_minus_beta1,
                         one_minus_beta2, one_minus_lr_wd, maximize, has_weight_decay,
                         decoupled_weight_decay, small):
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    n = step.astype(jnp.float64)
    grad = -grad if maximize else grad
    bias_correction2 = 1 - beta2 ** n
    if has_weight_decay and decoupled_weight_decay:
        param = param * s(one_minus_lr_wd)
    elif has_weight_decay:
        grad = grad + s(weight_decay) * param
    mu = beta1 * (1.0 - 0.5 * 0.96 ** (n * momentum_decay))
    mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((n + 1) * momentum_decay))
    mu_product = mu_product * mu.astype(mu_product.dtype)
    exp_avg = _lerp(exp_avg, grad, s(one_minus_beta1), small)
    exp_avg_sq = exp_avg_sq * s(beta2) + s(one_minus_beta2) * grad * grad
    denom = jnp.sqrt(exp_avg_sq / s(bias_correction2)) + s(eps)
    mp = mu_product.astype(jnp.float64)
    param = param + s(-lr * (1.0 - mu) / (1.0 - mp)) * grad / denom
    param = param + s((-lr * mu_next) / (1.0 - mp * mu_next)) * exp_avg / denom
    return param, exp_avg, exp_avg_sq, mu_product, step


@_kernel(flags=("maximize", "has_weight_decay", "decoupled_weight_decay", "small"),
         extra=_adam_extra,
         checks=(("step", "i"), ("exp_avg", "a"), ("exp_avg_sq", "a")),
         writes=(("step", 1),        # step_t += 1
                 ("exp_avg", 1),     # exp_avg.lerp_(grad, 1 - beta1)
                 ("exp_avg_sq", 2),  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, ...)
                 ("param", lambda f: 1 + _decoupled(f))))  # (param.mul_(...)), param.add_(...)
def _single_tensor_radam(param, grad, exp_avg, exp_avg_sq, step, *, lr, beta1, beta2, eps,
                         weight_decay, one_minus_beta1, one_minus_beta2, one_minus_lr_wd,
                         maximize, has_weight_decay, decoupled_weight_decay, small):
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    n = step.astype(jnp.float64)
    grad = -grad if maximize else grad
    if has_weight_decay and decoupled_weight_decay:
        param = param * s(one_minus_lr_wd)
    elif has_weight_decay:
        grad = grad + s(weight_decay) * param
    exp_avg = _lerp(exp_avg, grad, s(one_minus_beta1), small)
    exp_avg_sq = exp_avg_sq * s(beta2) + s(one_minus_beta2) * grad * grad
    bias_correction1 = 1 - beta1 ** n
    bias_correction2 = 1 - beta2 ** n
    bias_corrected_exp_avg = exp_avg / s(bias_correction1)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * n * (beta2 ** n) / bias_correction2
    # (torch branches on rho_t > 5 in Python; both sides are computed here)
    rect = jnp.sqrt(jnp.abs((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)))
    adaptive_lr = 1 / (jnp.sqrt(exp_avg_sq) + s(eps)) * s(jnp.sqrt(bias_correction2))
    scaled = bias_corrected_exp_avg * s(lr)
    return (jnp.where(rho_t > 5.0, param - scaled * adaptive_lr * s(rect), param - scaled),
            exp_avg, exp_avg_sq, step)


@_kernel(flags=("maximize",),
         checks=(("prev", "b"), ("step_size", "a")),
         writes=(("step", 1),       # step += 1
                 ("step_size", 2),  # step_size.mul_(sign).clamp_(step_size_min, ...)
                 ("param", 1),      # param.addcmul_(grad.sign(), step_size, value=-1)
                 ("prev", 1)))      # prev.copy_(grad)
def _single_tensor_rprop(param, grad, prev, step_size, step, *, etaminus, etaplus,
                         step_size_min, step_size_max, maximize):
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    grad = -grad if maximize else grad
    sign = jnp.sign(grad * prev)
    sign = jnp.where(sign > 0, s(etaplus), sign)  # sign[sign.gt(0)] = etaplus, ...
    sign = jnp.where(sign < 0, s(etaminus), sign)
    sign = jnp.where(sign == 0, jnp.ones_like(sign), sign)
    step_size = jnp.clip(step_size * sign, s(step_size_min), s(step_size_max))
    grad = jnp.where(sign == s(etaminus), jnp.zeros_like(grad), grad)
    return param - jnp.sign(grad) * step_size, grad, step_size, step


@_kernel(flags=("maximize", "has_weight_decay", "default_f64"),
         checks=(("eta", "i"), ("mu", "i"), ("ax", "c"), ("step", "i")),
         writes=(("step", 1),   # step_t += 1
                 ("param", 2),  # param.mul_(1 - lambd * eta), param.add_(grad, alpha=-eta)
                 ("ax", 1),     # ax.add_(param.sub(ax).mul_(mu)) or ax.copy_(param)
                 ("eta", 1),    # eta.copy_(new_eta)
                 ("mu", 1)))    # mu.copy_(new_mu)
def _single_tensor_asgd(param, grad, ax, eta, mu, step, *, lr, lambd, alpha, t0, weight_decay,
                        maximize, has_weight_decay, default_f64):
    """default_f64: the default dtype is float64 (torch's new eta and mu are
    torch.as_tensor(a Python float), of the default dtype, copied into the states: a
    float64 state loaded for float64 parameters holds float32 values otherwise)."""
    s = lambda x: x.astype(param.dtype)
    step = step + 1
    grad = -grad if maximize else grad
    if has_weight_decay:
        grad = grad + s(weight_decay) * param
    eta_value = eta.astype(jnp.float64)
    param = param * s(1 - lambd * eta_value)
    param = param + s(-eta_value) * grad
    # (torch: ax.add_(param.sub(ax).mul_(mu)) if mu.item() != 1, else ax.copy_(param))
    ax = jnp.where(mu != 1, ax + (param - ax) * s(mu), param)
    n = step.astype(jnp.float64)
    as_tensor = jnp.float64 if default_f64 else jnp.float32
    eta = (lr / ((1 + lambd * lr * n) ** alpha)).astype(as_tensor).astype(eta.dtype)
    mu = (1 / jnp.maximum(1.0, n - t0)).astype(as_tensor).astype(mu.dtype)
    return param, ax, eta, mu, step


def _inv_sqrt(x):
    """1 / sqrt(x) rounded twice, as torch's rsqrt (XLA would rewrite it to an rsqrt that
    is not)."""
    return 1 / jax.lax.optimization_barrier(jnp.sqrt(x))


def _lerp_where(a, b, w):
    """torch's lerp with a weight only known at run time: both sides, chosen per value."""
    return jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _div_const(x, k):
    """x / k for a Python number k, rounded once as torch's division (XLA rewrites a
    division by a constant into a product with its rounded reciprocal)."""
    return x / jax.lax.optimization_barrier(jnp.asarray(k, x.dtype))


def _div_bcast(x, y):
    """x / y for a y that broadcasts to x's shape, rounded once as torch's division (XLA
    rewrites a division by a broadcast into a product with the rounded reciprocals)."""
    return x / jax.lax.optimization_barrier(jnp.broadcast_to(y, x.shape))


def _norm(x, axis=None):
    return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=axis is not None))


@_kernel(flags=("maximize", "has_weight_decay", "lr_f32"),
         extra=lambda lr, weight_decay, eps1, **_: dict(one_minus_lr_wd=1 - lr * weight_decay,
                                                        eps1_sq=eps1 * eps1),
         checks=(("step", "i"), ("variance", "a")),
         writes=(("step", 1),      # step_t += 1
                 ("row_var", 1),   # row_var.lerp_(row_mean, one_minus_beta2_t)
                 ("col_var", 1),   # col_var.lerp_(col_mean, one_minus_beta2_t)
                 ("variance", 1),  # variance.lerp_(grad_squared, one_minus_beta2_t)
                 # (param.mul_(1 - lr * weight_decay)), param.add_(update, alpha=...)
                 ("param", lambda f: 1 + f["has_weight_decay"])))
def _single_tensor_adafactor(param, grad, row_var, col_var, variance, step, *, lr, beta2_decay,
                             eps1, eps2, d, weight_decay, one_minus_lr_wd, eps1_sq, maximize,
                             has_weight_decay, lr_f32):
    """A parameter of more than one dimension keeps row_var and col_var (the factored
    second moment of its last two dimensions), any other the variance. lr_f32: lr is a
    float32 Tensor, and torch's scalar math with it rounds to float32 where it meets it
    (rho_t = lr, lr * weight_decay, alpha / denom)."""
    s = lambda x: x.astype(param.dtype)
    f64, f32 = jnp.float64, jnp.float32
    step = step + 1
    grad = -grad if maximize else grad
    n = step.astype(f64)
    one_minus_beta2_t = n ** beta2_decay
    inv_sqrt_n = _inv_sqrt(n)
    numel = float(param.size)
    rms = _div_const(_norm(param).astype(f64), numel ** 0.5)
    scale = jnp.where(rms > eps2._v(), rms, eps2._v())  # (Python's max(eps2, rms))
    if lr_f32:  # (a float32 comparison; alpha = max(...) * lr a float32 tensor then)
        lr_wins = ~(inv_sqrt_n.astype(f32) < lr.astype(f32))
        alpha_t = (scale.astype(f32) * lr.astype(f32)).astype(f64)
        alpha = jnp.where(lr_wins, alpha_t, scale * inv_sqrt_n)
        decay = (1 - lr.astype(f32) * weight_decay.astype(f32)).astype(f64)
    else:
        lr_wins = ~(inv_sqrt_n < lr._v())  # (Python's min(lr, 1 / step ** 0.5))
        alpha = scale * jnp.where(lr_wins, lr._v(), inv_sqrt_n)
        decay = one_minus_lr_wd
    if has_weight_decay:
        param = param * s(decay)
    w = s(one_minus_beta2_t)
    if row_var is not None:
        row_mean = _div_const(_norm(grad, -1) ** 2, grad.shape[-1])
        row_var = _lerp_where(row_var, row_mean, w)
        col_mean = _div_const(_norm(grad, -2) ** 2, grad.shape[-2])
        col_var = _lerp_where(col_var, col_mean, w)
        var_estimate = row_var * col_var  # (row_var @ col_var: one product per value)
        row_var_mean = _div_const(jnp.sum(row_var, -2, keepdims=True), row_var.shape[-2])
        var_estimate = _div_bcast(var_estimate, jnp.maximum(row_var_mean, s(eps1)))
    else:
        variance = _lerp_where(variance, grad * grad, w)
        var_estimate = variance
    update = _inv_sqrt(jnp.maximum(var_estimate, s(eps1_sq))) * grad
    ratio = _norm(update).astype(f64) / (numel ** 0.5 * d)
    denom = jnp.where(ratio > 1.0, ratio, 1.0)  # (Python's max(1.0, ratio))
    if lr_f32:
        step_t = (-alpha.astype(f32) / denom.astype(f32)).astype(f64)
        step_size = jnp.where(lr_wins, step_t, -alpha / denom)
    else:
        step_size = -alpha / denom
    return param + s(step_size) * update, row_var, col_var, variance, step


def _round_bf16(x):
    """float32 values rounded to bfloat16's, kept in float32 (an explicit conversion, which
    XLA keeps: each op of torch's bfloat16 math computes in float32 and rounds)."""
    return x.astype(jnp.bfloat16).astype(jnp.float32)


def _newton_schulz(grad, a, b, c, eps, ns_steps):
    """torch's _zeropower_via_newtonschulz: in bfloat16 (each addmm in float32, rounded
    once), the wide orientation, ns_steps quintic iterations."""
    f32 = jnp.float32
    x = _round_bf16(grad.astype(f32))  # (torch's .bfloat16() of a double goes via float)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    nrm = jnp.maximum(_round_bf16(_norm(x)), _round_bf16(eps.astype(f32)))
    x = _round_bf16(_div_bcast(x, nrm))
    a, b, c = a.astype(f32), b.astype(f32), c.astype(f32)

    def body(_, x):
        gram = _round_bf16(x @ x.T)
        gram_update = _round_bf16(b * gram + c * (gram @ gram))
        return _round_bf16(a * x + gram_update @ x)

    x = jax.lax.fori_loop(0, ns_steps.astype(jnp.int32), body, x)
    return x.T if tall else x


@_kernel(flags=("nesterov", "small", "small_nesterov", "original", "match_rms_adamw",
                "lr_f32"),
         extra=lambda lr, momentum, weight_decay, **_: dict(
             one_minus_momentum=1 - momentum, one_minus_lr_wd=1 - lr * weight_decay),
         checks=(("momentum_buffer", "a"),),
         writes=(("momentum_buffer", 1),  # buf.lerp_(grad, 1 - momentum)
                 ("param", 2)))           # param.mul_(1 - lr * wd), param.add_(update, ...)
def _single_tensor_muon(param, grad, momentum_buffer, *, lr, weight_decay, momentum, ns_a,
                        ns_b, ns_c, eps, ns_steps, one_minus_momentum, one_minus_lr_wd,
                        nesterov, small, small_nesterov, original, match_rms_adamw, lr_f32):
    """`small` / `small_nesterov`: which side of torch's lerp formula the weights
    1 - momentum and momentum take; `original` / `match_rms_adamw`: torch's _adjust_lr
    (neither: lr as it is); lr_f32: lr is a float32 Tensor (torch's lr * ratio and
    1 - lr * weight_decay are float32 tensors then)."""
    s = lambda x: x.astype(param.dtype)
    f64, f32 = jnp.float64, jnp.float32
    buf = _lerp(momentum_buffer, grad, s(one_minus_momentum), small)
    update = _lerp(grad, buf, s(momentum), small_nesterov) if nesterov else buf
    update = _newton_schulz(update, ns_a, ns_b, ns_c, eps, ns_steps)
    A, B = param.shape[:2]
    ratio = (math.sqrt(max(1, A / B)) if original else
             0.2 * math.sqrt(max(A, B)) if match_rms_adamw else 1.0)
    if lr_f32:
        adjusted_lr = (lr.astype(f32) * f32(ratio)).astype(f64)
        decay = (1 - lr.astype(f32) * weight_decay.astype(f32)).astype(f64)
    else:
        adjusted_lr, decay = lr * ratio, one_minus_lr_wd
    param = param * s(decay)
    return param + s(-adjusted_lr) * s(update), buf
