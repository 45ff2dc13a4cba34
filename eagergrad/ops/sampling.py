"""Random sampling (torch's Distributions.cpp): normal, bernoulli, multinomial, poisson,
binomial, _standard_gamma (with its reparameterized gradient _standard_gamma_grad),
_sample_dirichlet (_dirichlet_grad), and Tensor's in-place samplers (normal_, uniform_,
exponential_, cauchy_, geometric_, log_normal_, random_, bernoulli_), each recording
torch's node.

NOTE [random ops]: the numbers are drawn outside the op table, from eagergrad's generator
(creation.sample: a jax key split per draw, samplers compiled per size bucket), and the
op-table entry takes the drawn array as a nondifferentiable input: its kernel finishes the
values (`noise * std + mean`, `u < p`, ...) and records torch's node with torch's
formulas (zeros for the samplers torch does not differentiate, `grad *
_standard_gamma_grad(self, result)` for _standard_gamma, NotImplemented nodes for
binomial and _sample_dirichlet). The streams are eagergrad's, not torch's: what matches
torch is the distribution of the values, their shapes and dtypes, the graph and the
errors (torch's checks on values read them when they are concrete, and are skipped under
a jax trace).
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import digamma as _jdigamma

from .. import _dtypes as D
from .._shapes import broadcast_shape
from .._cache import EXECUTABLES
from ..creation import (_bucket, _next_key, _prefix, _size, _uniform, empty, from_jax,
                        sample)
from .._mode import CAPTURING, FWD
from ..engine.grad_mode import STATE
from ..tensor import Tensor
from . import pointwise as P
from ._table import call_op, defop
from .inplace import inplace as _inplace, overlap_rule as _overlap_rule

_F64 = jnp.float64


def _fmt(x):
    """A double as torch's messages print it (C++ `<<`: 6 significant digits)."""
    return f"{x:g}"


def _not_for(kernel, dt, exc=NotImplementedError):
    raise exc(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


def _concrete(t):
    """t's values as numpy, or None under a jax trace (torch's value checks are skipped)."""
    v = t._value
    if isinstance(v, jax.core.Tracer):
        return None
    return np.asarray(v)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"eagergrad does not implement torch.{name}(out=...) yet")


def _work(dt):
    """The dtype a draw for a tensor of dtype `dt` is made in: its own if floating, else
    float64 (integer and bool results of geometric_, bernoulli_)."""
    return dt.np if dt.is_floating_point else np.dtype(np.float64)


def _std_normal(key, shape, dt):
    """Standard normal draws of `shape` in dtype dt (complex: each part of variance 1/2)."""
    return sample(jax.random.normal, key, {"shape": tuple(shape), "dtype": dt.np})


def _unit_uniform(key, shape, np_dt):
    return sample(jax.random.uniform, key, {"shape": tuple(shape), "dtype": np_dt})


# ---- normal ----------------------------------------------------------------------------------
def _normal_meta(tensors, needs):
    out = {}
    for t, name in zip(tensors, ("mean", "std")):
        if name == "std" and len(tensors) == 2:  # (Tensor mean, float std): mean only
            break
        out[f"{name}_sym_sizes"] = tuple(t._shape)
    return out


def _std_meta(tensors, needs):
    return {"std_sym_sizes": tuple(tensors[0]._shape)}


def _scale_shift(noise, std, mean):
    # (torch's normal has no gradient: jax's derivative of the kernel is zero too)
    return jax.lax.stop_gradient(noise * std + mean)


NORMAL = defop("normal", lambda mean, std, noise: _scale_shift(
                   noise, std.astype(noise.dtype), mean.astype(noise.dtype)),
               inputs=("mean", "std", "noise"), node="NormalBackward3",
               saved_meta=(("mean_sym_sizes", "std_sym_sizes"), _normal_meta),
               mean=P._zeros, std=P._zeros)
NORMAL_TF = defop("normal_tensor_float", lambda mean, noise, std: _scale_shift(
                      noise, std, mean.astype(noise.dtype)),
                  inputs=("mean", "noise"), attrs=("std",), dynamic=("std",),
                  node="NormalBackward1", saved_meta=(("mean_sym_sizes",), _normal_meta),
                  mean=P._zeros)
NORMAL_FT = defop("normal_float_tensor", lambda std, noise, mean: _scale_shift(
                      noise, std.astype(noise.dtype), mean),
                  inputs=("std", "noise"), attrs=("mean",), dynamic=("mean",),
                  node="NormalBackward2", saved_meta=(("std_sym_sizes",), _std_meta),
                  std=P._zeros)
for _op in (NORMAL_TF, NORMAL_FT):
    _op.static_of = P.scalar_types
    delattr(_op.Node, f"_saved_{_op.attr_names[0]}")  # (torch's node keeps sizes only)
    delattr(_op.Node, f"_raw_saved_{_op.attr_names[0]}")

_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)\n")


def _arg_name(x):
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


def _normal_dtype_check(dt):
    if not (dt.is_floating_point or dt.is_complex):
        _not_for("normal_kernel_cpu", dt)


def _check_std_scalar(std, name="normal"):
    if not std >= 0.0:
        raise RuntimeError(f"{name} expects std >= 0.0, but found std {_fmt(std)}")


def _check_std_tensor(std):
    if std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    a = _concrete(std)
    if a is not None and a.size and not (a >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """torch.normal: draws from N(mean, std**2), mean and std tensors or numbers (two
    numbers take a `size`). Not differentiable (torch's NormalBackward nodes give zeros).

    >>> import eagergrad as torch
    >>> torch.normal(torch.zeros(2, 3), 1.0).shape, torch.normal(0.0, 1.0, (4,)).dtype
    (torch.Size([2, 3]), torch.float32)
    """
    _no_out("normal", out)
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    extra = dtype is not None or device is not None or requires_grad or layout is not None
    if (mt or st) == (size is not None) or (mt or st) and extra:
        got = [_arg_name(a) for a in (mean, std) + (() if size is None else (size,))]
        raise TypeError(f"normal() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n{_NORMAL_SIGNATURES}")
    if not (mt or st):
        dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
        _check_std_scalar(std)
        _normal_dtype_check(dt)
        t = empty(*_size((size,) if isinstance(size, int) else tuple(size)), dtype=dt,
                  device=device)
        t = _normal_fill(t, float(mean), float(std), generator=generator)
        return t.requires_grad_(True) if requires_grad else t
    if mt and mean.dtype.is_complex and STATE.grad and (
            mean.requires_grad or st and std.requires_grad):
        raise RuntimeError("normal does not support automatic differentiation for outputs "
                           "with complex dtype.")
    if mt and st:
        _check_std_tensor(std)
        _normal_dtype_check(mean.dtype)
        shape = broadcast_shape(mean._shape, std._shape)
        noise = from_jax(_std_normal(_next_key(generator), shape, mean.dtype))
        return call_op(NORMAL, (mean, std, noise))
    if mt:
        _check_std_scalar(std)
        _normal_dtype_check(mean.dtype)
        noise = from_jax(_std_normal(_next_key(generator), mean._shape, mean.dtype))
        return call_op(NORMAL_TF, (mean, noise), (float(std),))
    _check_std_tensor(std)
    _normal_dtype_check(std.dtype)
    noise = from_jax(_std_normal(_next_key(generator), std._shape, std.dtype))
    return call_op(NORMAL_FT, (std, noise), (float(mean),))


# ---- the in-place samplers ---------------------------------------------------------------------
def _fill_op(name, node, kernel, attrs=()):
    """An in-place sampler's op: `self` replaced by kernel(self, draw, *attrs), zero
    gradient for self (torch's `self: zeros_like(grad)`)."""
    op = defop(name, kernel, inputs=("self", "draw"), attrs=attrs, node=node, dynamic=attrs,
               self=P._zeros)
    if attrs:
        op.static_of = P.scalar_types
        for k in attrs:  # (torch's nodes keep nothing)
            delattr(op.Node, f"_saved_{k}")
            delattr(op.Node, f"_raw_saved_{k}")
    return op


def _cast(x, self):
    return x.astype(self.dtype)


def _normal_k(self, draw, mean, std):
    if jnp.iscomplexobj(self):  # (torch: each part of view_as_real(self), std / sqrt(2))
        s = std / math.sqrt(2.0)
        return jax.lax.complex(draw[..., 0] * s + mean, draw[..., 1] * s + mean)
    return draw * std + mean


def _cauchy_k(self, draw, median, sigma):
    u = draw.astype(jnp.promote_types(draw.dtype, jnp.float32))
    return _cast(median + sigma * jnp.tan(math.pi * (u - 0.5)), self)


def _geometric_k(self, draw, p):
    k = jnp.ceil(jnp.log1p(-draw) / jnp.log1p(-jnp.asarray(p, draw.dtype)))
    return _cast(jnp.maximum(k, 1), self)


NORMAL_ = _fill_op("normal_fill", "NormalBackward0", _normal_k, ("mean", "std"))
UNIFORM_ = _fill_op("uniform_fill", "UniformBackward0", lambda self, draw: draw)
EXPONENTIAL_ = _fill_op("exponential_fill", "ExponentialBackward0",
                        lambda self, draw, lambd: _cast(draw / lambd, self), ("lambd",))
CAUCHY_ = _fill_op("cauchy_fill", "CauchyBackward0", _cauchy_k, ("median", "sigma"))
GEOMETRIC_ = _fill_op("geometric_fill", "GeometricBackward0", _geometric_k, ("p",))
LOG_NORMAL_ = _fill_op("log_normal_fill", "LogNormalBackward0",
                       lambda self, draw, mean, std: jnp.exp(draw * std + mean),
                       ("mean", "std"))
# random_(from, to), random_(to), random_(): the same draw, three nodes as in torch
RANDOM_FROM_ = _fill_op("random_from_fill", "RandomBackward0", lambda self, draw: _cast(draw, self))
RANDOM_TO_ = _fill_op("random_to_fill", "RandomBackward1", lambda self, draw: _cast(draw, self))
RANDOM_ = _fill_op("random_fill", "RandomBackward2", lambda self, draw: _cast(draw, self))
BERNOULLI_F_ = _fill_op("bernoulli_float_fill", "BernoulliBackward2",
                        lambda self, draw, p: _cast(draw < p, self), ("p",))
_IDENTITY = frozenset((UNIFORM_, RANDOM_FROM_, RANDOM_TO_, RANDOM_))
BERNOULLI_T_ = defop("bernoulli_tensor_fill", lambda self, p, draw: _cast(
                         jnp.broadcast_to(draw < p.astype(draw.dtype), self.shape), self),
                     inputs=("self", "p", "draw"), node="BernoulliBackward1",
                     self=P._zeros, p=P._zeros)


@_overlap_rule(partial=False)
def _run_fill(t, op, draw, attrs):
    if op in _IDENTITY and draw.dtype is t.dtype and not FWD.active and not CAPTURING.n \
            and not (STATE.grad and t.requires_grad):
        # the draw is the value: no kernel, so no compile per shape (nn.init's uniform_)
        return draw
    return call_op(op, (t, draw), attrs)


@_overlap_rule(partial=False)
def _run_bernoulli_t(t, p, draw):
    return call_op(BERNOULLI_T_, (t, p, draw))


def _fill(self, op, draw, attrs=()):
    return _inplace(self, _run_fill, op, from_jax(draw), attrs)


def _normal_fill(self, mean=0.0, std=1.0, *, generator=None):
    """Tensor.normal_: self filled with draws from N(mean, std**2) (complex: each part
    of view_as_real(self) from N(mean, std**2 / 2)).

    >>> import eagergrad as torch
    >>> torch.zeros(3).normal_(0.0, 0.0)
    tensor([0., 0., 0.])
    """
    _check_std_scalar(std)
    dt = self.dtype
    _normal_dtype_check(dt)
    key = _next_key(generator)
    if dt.is_complex:
        draw = _std_normal(key, tuple(self._shape) + (2,), dt.to_real())
    else:
        draw = _std_normal(key, self._shape, dt)
    return _fill(self, NORMAL_, draw, (float(mean), float(std)))


def _uniform_fill(self, *args, generator=None, **kwargs):
    """Tensor.uniform_(from=0, to=1): self filled with draws from U[from, to) (complex:
    each part).

    >>> import eagergrad as torch
    >>> torch.zeros(2).uniform_(1.0, 1.0)
    tensor([1., 1.])
    """
    low, high = _bounds("uniform_", args, kwargs, (0.0, 1.0))
    dt = self.dtype
    if not (dt.is_floating_point or dt.is_complex):
        _not_for("check_uniform_bounds", dt)
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(low)} > to={_fmt(high)}")
    draw = _uniform(_next_key(generator), tuple(self._shape), dt, float(low), float(high))
    return _fill(self, UNIFORM_, draw)


def _bounds(name, args, kwargs, defaults):
    """(from, to) of uniform_/random_-style arguments (`from` is a keyword in Python)."""
    vals = list(args) + [None] * (2 - len(args))
    if len(args) > 2:
        raise TypeError(f"{name}() takes at most 2 arguments ({len(args)} given)")
    for i, k in enumerate(("from", "to")):
        if k in kwargs:
            vals[i] = kwargs.pop(k)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    return tuple(d if v is None else v for v, d in zip(vals, defaults))


def _continuous_check(what, dt, name):
    if not dt.is_floating_point:
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")


def _exponential_fill(self, lambd=1.0, *, generator=None):
    """Tensor.exponential_: self filled with draws from Exp(lambd) (mean 1 / lambd).

    >>> import eagergrad as torch
    >>> bool((torch.zeros(4).exponential_(2.0) >= 0).all())
    True
    """
    dt = self.dtype
    _continuous_check("Exponential", dt, dt.scalar_name)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    draw = sample(jax.random.exponential, _next_key(generator),
                  {"shape": tuple(self._shape), "dtype": dt.np})
    return _fill(self, EXPONENTIAL_, draw, (float(lambd),))


def _cauchy_fill(self, median=0.0, sigma=1.0, *, generator=None):
    """Tensor.cauchy_: self filled with draws from Cauchy(median, sigma).

    >>> import eagergrad as torch
    >>> torch.zeros(2, 3).cauchy_().shape
    torch.Size([2, 3])
    """
    dt = self.dtype
    _continuous_check("Cauchy", dt, dt.cpp_name)
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    draw = _unit_uniform(_next_key(generator), self._shape, dt.np)
    return _fill(self, CAUCHY_, draw, (float(median), float(sigma)))


def _geometric_fill(self, p, *, generator=None):
    """Tensor.geometric_: self filled with the number of Bernoulli(p) trials up to the
    first success (1, 2, ...).

    >>> import eagergrad as torch
    >>> bool((torch.zeros(5).geometric_(0.5) >= 1).all())
    True
    """
    dt = self.dtype
    if dt.is_complex or dt is D.bool_:
        _not_for("geometric_cpu", dt)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    draw = _unit_uniform(_next_key(generator), self._shape, _work(dt))
    return _fill(self, GEOMETRIC_, draw, (float(p),))


def _log_normal_fill(self, mean=1.0, std=2.0, *, generator=None):
    """Tensor.log_normal_: self filled with exp of draws from N(mean, std**2).

    >>> import eagergrad as torch
    >>> bool((torch.zeros(4).log_normal_() > 0).all())
    True
    """
    dt = self.dtype
    if not dt.is_floating_point:
        _not_for("log_normal_cpu", dt)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    draw = _std_normal(_next_key(generator), self._shape, dt)
    return _fill(self, LOG_NORMAL_, draw, (float(mean), float(std)))


def _random_range(dt):
    """[lowest, highest] of the integers random_ may write to a tensor of dtype dt."""
    if dt is D.bool_:
        return 0, 1
    if dt.is_floating_point:
        top = int(jnp.finfo(dt.np).max)
        return -top, top
    ii = np.iinfo(dt.np)
    return int(ii.min), int(ii.max)


def _random_default_to(dt):
    """torch's random_() range end (inclusive): the dtype's max for integers, 2**digits
    for floating types (every integer below is exact)."""
    if dt is D.bool_:
        return 1
    if dt.is_floating_point:
        return 2 ** {D.float16: 11, D.bfloat16: 8, D.float32: 24, D.float64: 53}[dt]
    return int(np.iinfo(dt.np).max)


def _random_fill(self, *args, generator=None, **kwargs):
    """Tensor.random_: integers from [from, to - 1] (random_(to): from 0; random_(): 0 to
    the dtype's largest exact integer).

    >>> import eagergrad as torch
    >>> torch.zeros(3).random_(4, 5)
    tensor([4., 4., 4.])
    """
    dt = self.dtype
    nargs = len(args) + sum(k in kwargs for k in ("from", "to"))
    if nargs == 0:
        if dt.is_complex:
            _not_for("random_kernel_cpu", dt)
        op, low, high = RANDOM_, 0, _random_default_to(dt)
    else:
        if len(args) == 1 and "to" not in kwargs and "from" not in kwargs:
            low, high, op = 0, args[0], RANDOM_TO_
        else:
            low, high = _bounds("random_", args, kwargs, (0, None))
            op = RANDOM_FROM_
        if dt.is_complex:
            _not_for("random_from_to_kernel_cpu", dt)
        lo, hi = _random_range(dt)
        if high is not None:
            if low >= high:
                raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                                   f"from={low} >= to={high}")
            if not lo <= low <= hi:
                raise RuntimeError(f"from is out of bounds for {dt.cpp_name}")
            if not lo <= high - 1 <= hi:
                raise RuntimeError(f"to - 1 is out of bounds for {dt.cpp_name}")
            high = high - 1
        else:
            if not lo <= low <= hi:
                raise RuntimeError(f"from is out of bounds for {dt.cpp_name}")
            high = _random_default_to(dt) if dt.is_floating_point else hi
    # inclusive [low, high]: jax's randint takes an exclusive end (int64's max stays out)
    top = min(int(high) + 1, 2 ** 63 - 1)
    draw = sample(jax.random.randint, _next_key(generator),
                  {"shape": tuple(self._shape), "dtype": jnp.int64}, minval=int(low), maxval=top)
    return _fill(self, op, draw)


def _bernoulli_fill(self, p=0.5, *, generator=None):
    """Tensor.bernoulli_: self filled with 1 (probability p, a number or a tensor
    broadcast to self) or 0.

    >>> import eagergrad as torch
    >>> torch.zeros(3).bernoulli_(1.0)
    tensor([1., 1., 1.])
    """
    dt = self.dtype
    key = _next_key(generator)
    if isinstance(p, Tensor):
        if dt.is_complex:
            _not_for("bernoulli_tensor_cpu_self_", dt)
        _check_p_tensor(p)
        if tuple(p._shape) != tuple(self._shape):
            p.expand(self._shape)  # (torch's expand error when p does not broadcast)
        draw = from_jax(_unit_uniform(key, self._shape, p.dtype.np))
        return _inplace(self, _run_bernoulli_t, p, draw)
    if dt.is_complex:
        _not_for("bernoulli_scalar_cpu_", dt)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    return _fill(self, BERNOULLI_F_, _unit_uniform(key, self._shape, np.float64), (float(p),))


# ---- bernoulli -----------------------------------------------------------------------------------
BERNOULLI = defop("bernoulli", lambda self, draw: _cast(draw < self, self),
                  inputs=("self", "draw"), self=P._zeros)
BERNOULLI_P = defop("bernoulli_p", lambda self, draw, p: _cast(draw < p, self),
                    inputs=("self", "draw"), attrs=("p",), dynamic=("p",), node="NotImplemented",
                    self=P._not_implemented("bernoulli"))
BERNOULLI_P.static_of = P.scalar_types
delattr(BERNOULLI_P.Node, "_saved_p")
delattr(BERNOULLI_P.Node, "_raw_saved_p")


def _check_p_tensor(p):
    if not p.dtype.is_floating_point:
        _not_for("bernoulli_tensor_cpu_p_", p.dtype)
    a = _concrete(p)
    if a is not None and a.size and not ((a >= 0) & (a <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")


def bernoulli(input, p=None, *, generator=None, out=None):
    """torch.bernoulli: 1 with probability `input` (or the number p), else 0, in input's
    dtype.

    >>> import eagergrad as torch
    >>> torch.bernoulli(torch.tensor([0.0, 1.0, 1.0]))
    tensor([0., 1., 1.])
    """
    _no_out("bernoulli", out)
    dt = input.dtype
    key = _next_key(generator)
    if p is None:
        if dt.is_complex:
            _not_for("bernoulli_tensor_cpu_self_", dt)
        _check_p_tensor(input)
        return call_op(BERNOULLI, (input, from_jax(_unit_uniform(key, input._shape, dt.np))))
    if dt.is_complex:
        _not_for("bernoulli_scalar_cpu_", dt)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    draw = from_jax(_unit_uniform(key, input._shape, np.float64))
    return call_op(BERNOULLI_P, (input, draw), (float(p),))


# ---- multinomial ------------------------------------------------------------------------------
def _with_replacement(key, probs, n, shape):
    logits = jnp.log(probs.astype(_F64))  # (zero probabilities: -inf, never drawn)
    draws = jax.random.categorical(key, logits, axis=-1, shape=(n,) + probs.shape[:-1])
    return jnp.moveaxis(draws, 0, -1).astype(jnp.int64)


def _without_replacement(key, probs, n, shape):
    # torch's: the top n of p / q, q ~ Exp(1) (the Gumbel top-k trick)
    q = jax.random.exponential(key, probs.shape, _F64)
    return jax.lax.top_k(probs.astype(_F64) / q, n)[1].astype(jnp.int64)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """torch.multinomial: `num_samples` category indices per row of `input`, drawn with
    probabilities proportional to its values (without replacement: distinct indices).

    >>> import eagergrad as torch
    >>> torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 2, True)
    tensor([1, 1])
    """
    _no_out("multinomial", out)
    if not 1 <= input.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.scalar_name}")
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = input._shape[-1]
    if not replacement and n > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if k > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = tuple(input._shape[:-1]) + (n,)
    if math.prod(shape) == 0:
        return empty(*shape, dtype=D.int64)
    a = _concrete(input)
    if a is not None:
        if not (np.isfinite(a) & (a >= 0)).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (a.sum(-1) <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    fn = _with_replacement if replacement else _without_replacement
    return from_jax(sample(fn, _next_key(generator), {"n": n, "shape": tuple(input._shape)},
                           probs=input._value))


# ---- poisson, _standard_gamma, _sample_dirichlet, binomial -----------------------------------
# NOTE [bucketed parameter draws]: a sampler whose draw depends on per-element parameters
# (gamma, poisson, binomial: rejection loops, seconds to compile) is compiled once per size
# bucket, as creation.sample's samplers are (NOTE [sampling buckets]): the parameters,
# broadcast and flattened, are padded to the bucket's length with 1 (a small kernel per
# shape), drawn elementwise, and the first n numbers taken (creation._prefix). A seed still
# fixes every draw of a shape.
_PADS = EXECUTABLES.owner({})


def _pad_flat(a, shape, b):
    return jnp.pad(jnp.broadcast_to(a, shape).reshape(-1), (0, b - math.prod(shape)),
                   constant_values=1)


def _elementwise(fn, key, shape, **params):
    """fn(key, shape=(b,), **flat params) for the bucket b of `shape`, its first
    prod(shape) numbers in `shape`."""
    n = math.prod(shape)
    b = _bucket(n)
    flat = {k: EXECUTABLES.get(_PADS, (v.shape, v.dtype, shape, b), lambda: jax.jit(
        functools.partial(_pad_flat, shape=shape, b=b)))(v) for k, v in params.items()}
    return _prefix(sample(fn, key, {"shape": (b,)}, **flat), n, shape, None)


def _poisson_draw(key, rate, shape):
    x = jax.random.poisson(key, rate.astype(_F64), shape, jnp.int64)
    return jnp.where(jnp.isinf(rate), rate, x.astype(rate.dtype))


def _gamma_draw(key, alpha, shape):
    # in double, clamped below at the dtype's smallest normal (NaN too), as torch's
    x = jax.random.gamma(key, alpha.astype(_F64), shape, _F64).astype(alpha.dtype)
    tiny = jnp.finfo(alpha.dtype).tiny
    return jnp.where(tiny < x, x, tiny)


def _gamma64_draw(key, alpha, shape):
    x = jax.random.gamma(key, alpha.astype(_F64), shape, _F64)
    return jnp.where(jnp.finfo(_F64).tiny < x, x, jnp.finfo(_F64).tiny)


def _normalized(self, draw):
    """_sample_dirichlet's kernel: double gamma draws normalized along the last dimension,
    clamped to [smallest normal, the float below 1] in self's dtype, as torch's."""
    x = (draw / draw.sum(-1, keepdims=True)) if draw.ndim else draw / draw
    fi = jnp.finfo(self.dtype)
    one = jnp.asarray(1, self.dtype)
    return jnp.clip(x.astype(self.dtype), fi.tiny, jnp.nextafter(one, jnp.zeros_like(one)))


def _binomial_draw(key, count, prob, shape):
    n, p = count.astype(_F64), prob.astype(_F64)
    safe_p = jnp.clip(jnp.where(jnp.isnan(p), 0.5, p), 0.0, 1.0)
    x = jax.random.binomial(key, jnp.maximum(n, 0.0), safe_p, shape, _F64)
    x = jnp.where((n <= 0) | (p <= 0), 0.0, jnp.where(p >= 1, n, x))
    return jnp.where(jnp.isnan(p), jnp.nan, x).astype(count.dtype)


POISSON = defop("poisson", lambda self, draw: draw, inputs=("self", "draw"), self=P._zeros)


def _gamma_back(grad, self, result):
    return grad * _standard_gamma_grad(self, result)


STANDARD_GAMMA = defop("_standard_gamma", lambda self, draw: draw, inputs=("self", "draw"),
                       node="StandardGammaBackward0", self=_gamma_back)
SAMPLE_DIRICHLET = defop("_sample_dirichlet", _normalized, inputs=("self", "draw"),
                         node="NotImplemented", self=P._not_implemented("_sample_dirichlet"))
BINOMIAL = defop("binomial", lambda count, prob, draw: draw, inputs=("count", "prob", "draw"),
                 node="NotImplemented", count=P._not_implemented("binomial"),
                 prob=P._not_implemented("binomial"))


def _float_only(kernel, dt, half=False):
    ok = (D.float32, D.float64) + ((D.float16, D.bfloat16) if half else ())
    if dt not in ok:
        _not_for(kernel, dt)


def poisson(input, generator=None):
    """torch.poisson: a draw from Poisson(rate) for each element of `input`, in its dtype.

    >>> import eagergrad as torch
    >>> torch.poisson(torch.zeros(3))
    tensor([0., 0., 0.])
    """
    _float_only("poisson_cpu", input.dtype, half=True)
    a = _concrete(input)
    if a is not None and a.size and not (a >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draw = _elementwise(_poisson_draw, _next_key(generator), tuple(input._shape),
                        rate=input._value)
    return call_op(POISSON, (input, from_jax(draw)))


def _standard_gamma(input, generator=None):
    """torch._standard_gamma: a draw from Gamma(input, 1) for each element; its gradient is
    the reparameterized one, `_standard_gamma_grad(input, result)`.

    >>> import eagergrad as torch
    >>> bool((torch._standard_gamma(torch.ones(4)) > 0).all())
    True
    """
    _float_only("gamma_cpu", input.dtype)
    draw = _elementwise(_gamma_draw, _next_key(generator), tuple(input._shape),
                        alpha=input._value)
    return call_op(STANDARD_GAMMA, (input, from_jax(draw)))


def _sample_dirichlet(input, generator=None):
    """torch._sample_dirichlet: a draw from Dirichlet(input) along the last dimension.

    >>> import eagergrad as torch
    >>> round(float(torch._sample_dirichlet(torch.ones(3)).sum()), 5)
    1.0
    """
    _float_only("dirichlet", input.dtype)
    draw = _elementwise(_gamma64_draw, _next_key(generator), tuple(input._shape),
                        alpha=input._value)
    return call_op(SAMPLE_DIRICHLET, (input, from_jax(draw)))


def binomial(count, prob, generator=None):
    """torch.binomial: draws from Binomial(count, prob), elementwise (count and prob
    floating tensors of one dtype).

    >>> import eagergrad as torch
    >>> torch.binomial(torch.tensor([3.0, 5.0]), torch.tensor([0.0, 1.0]))
    tensor([0., 5.])
    """
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype.scalar_name}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype.scalar_name} but expected "
                           f"{count.dtype.scalar_name}")
    _float_only("binomial_cpu", count.dtype)
    shape = broadcast_shape(count._shape, prob._shape)
    draw = _elementwise(_binomial_draw, _next_key(generator), shape, count=count._value,
                        prob=prob._value)
    return call_op(BINOMIAL, (count, prob, from_jax(draw)))


# ---- reparameterized gradients: torch's standard_gamma_grad_one, dirichlet_grad_one ----------
# torch compares its doubles with float literals (0.8f: 0.800000011920929)
_F32_08, _F32_09, _F32_11 = (float(np.float32(v)) for v in (0.8, 0.9, 1.1))


def _digamma(x):
    """torch's digamma_one: +inf at 0 and at the negative integers (jax: NaN)."""
    pole = (x == 0) | ((x < 0) & (x == jnp.floor(x)))
    return jnp.where(pole, jnp.inf, _jdigamma(x))


def _sgg_k(self, output):
    """-(d/dalpha cdf(x; alpha)) / pdf(x; alpha) for x drawn from Gamma(alpha): torch's
    three regimes (a Taylor series for small x, Rice's saddle point expansion for large
    alpha, a bivariate rational approximation otherwise), in double."""
    a = self.astype(_F64)
    x = output.astype(_F64)
    numer, denom = jnp.ones_like(x), a
    s1, s2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        s1 = s1 + numer / denom
        s2 = s2 + numer / (denom * denom)
    pow_x_a = x ** a
    pdf = x ** (a - 1) * jnp.exp(-x)
    cdf = pow_x_a * s1
    cdf_a = (jnp.log(x) - _digamma(a)) * cdf - pow_x_a * s2
    small = -cdf_a / pdf
    small = jnp.where(jnp.isnan(small), 0.0, small)

    near = (_F32_09 * a <= x) & (x <= _F32_11 * a)
    n1 = 1 + 24 * a * (1 + 12 * a)
    n2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
    saddle_near = n1 * n2 / (1244160 * (a * a) * (a * a))
    den = jnp.sqrt(8 * a)
    term2 = den / (a - x)
    term3 = (x - a - a * jnp.log(x / a)) ** -1.5
    term23 = jnp.where(x < a, term2 - term3, term2 + term3)
    term1 = jnp.log(x / a) * term23 - jnp.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    saddle = jnp.where(near, saddle_near, -stirling * (x * term1) / den)

    u, v = jnp.log(x / a), jnp.log(a)
    c = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_SGG_COEF)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    rational = jnp.exp(p / q)
    out = jnp.where(x < _F32_08, small, jnp.where(a > 8.0, saddle, rational))
    return out.astype(self.dtype)


_SGG_COEF = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def _sgg_not_implemented(grad):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


STANDARD_GAMMA_GRAD = defop("_standard_gamma_grad", lambda self, output: _sgg_k(
                                *jnp.broadcast_arrays(self, output)),
                            inputs=("self", "output"), node="StandardGammaGradBackward0",
                            self=_sgg_not_implemented)


def _standard_gamma_grad(self, output):
    """torch._standard_gamma_grad: the reparameterized gradient d x / d alpha of a draw x
    from Gamma(alpha, 1) (torch's approximations).

    >>> import eagergrad as torch
    >>> torch._standard_gamma_grad(torch.tensor([1.0]), torch.tensor([1.0]))
    tensor([1.1736])
    """
    _float_only("_standard_gamma_grad_cpu", self.dtype)
    return call_op(STANDARD_GAMMA_GRAD, (self, output))


def _beta_grad_alpha_small(x, alpha, beta):
    factor = _digamma(alpha) - _digamma(alpha + beta) - jnp.log(x)
    numer = jnp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * (i - beta) * x / i
        den = alpha + i
        series = series + numer / den * (factor + 1 / den)
    result = x * (1 - x) ** (-beta) * series
    return jnp.where(jnp.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas = jnp.ones_like(x), jnp.ones_like(x), jnp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return jnp.where(jnp.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = jnp.sqrt(alpha * beta / (total + 1)) / total
    a, b = alpha, beta
    poly = 47 * x * (b * b) * (b * b) + a * (
        (43 + 20 * (16 + 27 * b) * x) * (b * b) * b + a * (
            3 * (59 + 180 * b - 90 * x) * (b * b) + a * (
                (453 + 1620 * b * (1 - x) - 455 * x) * b + a * (8 * (1 - x) * (135 * b - 11)))))
    pre_num = (1 + 12 * a) * (1 + 12 * b) / (total * total)
    pre_den = 12960 * a * a * a * b * b * (1 + 12 * total)
    at_mean = pre_num / (1 - x) * poly / pre_den
    prefactor = -x / jnp.sqrt(2 * a * b / total)
    stirling = ((1 + 1 / (12 * a) + 1 / (288 * a * a)) * (1 + 1 / (12 * b) + 1 / (288 * b * b))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (a * a) * (x - 1) + a * b * (x - 1) - x * (b * b)
    axbx = a * (x - 1) + b * x
    term1 = term1_num / (jnp.sqrt(2 * a / b) * total ** 1.5 * axbx * axbx)
    term2 = 0.5 * jnp.log(a / (total * x))
    term3 = jnp.sqrt(8 * a * b / total) / (b * x + a * (x - 1))
    term4 = (b * jnp.log(b / (total * (1 - x))) + a * jnp.log(a / (total * x))) ** -1.5
    term1234 = term1 + term2 * (term3 + jnp.where(x < mean, term4, -term4))
    away = stirling * prefactor * term1234
    return jnp.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), at_mean, away)


_DG_COEF = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _dirichlet_grad_k(x, alpha, total):
    """torch's dirichlet_grad_one: a scaled reparameterized gradient of a Beta(alpha,
    total - alpha) draw x (asymptotics near 0 and 1 and for large parameters, else a
    rational correction of an analytic approximation), in double."""
    dt = x.dtype
    x, alpha, total = (jnp.broadcast_arrays(x, alpha, total))
    x, alpha, total = x.astype(_F64), alpha.astype(_F64), total.astype(_F64)
    beta = total - alpha
    boundary = total * x * (1 - x)
    near0 = _beta_grad_alpha_small(x, alpha, beta)
    near1 = -_beta_grad_beta_small(1 - x, beta, alpha)
    mid = _beta_grad_alpha_mid(x, alpha, beta)
    u = jnp.log(x)
    a = jnp.log(alpha) - u
    b = jnp.log(total) - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DG_COEF[0, i, j], _DG_COEF[1, i, j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = x * (_digamma(total) - _digamma(alpha)) / beta
    rational = p / q * approx
    out = jnp.where((x <= 0.5) & (boundary < 2.5), near0,
                    jnp.where((x >= 0.5) & (boundary < 0.75), near1,
                              jnp.where((alpha > 6) & (beta > 6), mid, rational)))
    return out.astype(dt)


DIRICHLET_GRAD = defop("_dirichlet_grad", _dirichlet_grad_k, inputs=("x", "alpha", "total"),
                       node="NotImplemented", x=P._not_implemented("_dirichlet_grad"),
                       alpha=P._not_implemented("_dirichlet_grad"),
                       total=P._not_implemented("_dirichlet_grad"))


def _dirichlet_grad(x, alpha, total):
    """torch._dirichlet_grad: the reparameterized gradient of a Dirichlet draw `x` with
    respect to its concentration `alpha` (`total`: alpha's sum, expanded), per element.

    >>> import eagergrad as torch
    >>> torch._dirichlet_grad(torch.tensor([0.5]), torch.tensor([1.0]), torch.tensor([2.0]))
    tensor([0.6931])
    """
    _float_only("_dirichlet_grad_cpu", x.dtype)
    return call_op(DIRICHLET_GRAD, (x, alpha, total))


# the in-place samplers, as Tensor methods (_tensor_methods.py binds them)
INPLACE_SAMPLERS = {
    "normal_": _normal_fill, "uniform_": _uniform_fill, "exponential_": _exponential_fill,
    "cauchy_": _cauchy_fill, "geometric_": _geometric_fill, "log_normal_": _log_normal_fill,
    "random_": _random_fill, "bernoulli_": _bernoulli_fill}
for _k, _v in INPLACE_SAMPLERS.items():
    _v.__name__ = _k
