"""The update math of the optimizers, one jitted kernel per optimizer (compiled per
parameter shape/dtype and option flags), on raw arrays.

Each kernel follows torch 2.13's single-tensor implementation op by op: every Python-float
hyperparameter torch hands to a tensor op is rounded to the parameter's dtype where that op
would round it, and the scalar math torch does in Python doubles (bias corrections, step
sizes) is done in float64 here, from the float32 `step` as torch reads it with `.item()`.
`h` is a float64 vector of the hyperparameters (traced, so a schedule changing lr does not
recompile); flags that torch branches on in Python are static. Complex parameters are
updated through their real views, as torch's `view_as_real`.
"""
import functools

import jax
import jax.numpy as jnp


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


def _complex_aware(kernel, checks):
    """Run `kernel` on real views of complex array arguments (the first `n_arrays`), and
    give back arrays of the original dtypes."""
    @functools.wraps(kernel)
    def run(*arrays, h, **flags):
        _check_states(arrays, checks)
        out = kernel(*[_real(a) for a in arrays], h=h, **flags)
        return tuple(None if o is None else _back(o, arrays[0]) if o.ndim else o
                     for o in out)
    return run


def _lerp(a, b, w, small):
    """torch's lerp: a + w (b - a) for |w| < 0.5, else b - (b - a)(1 - w)."""
    return a + w * (b - a) if small else b - (b - a) * (1 - w)


def _jit(checks=(), **statics):
    return lambda f: jax.jit(_complex_aware(f, checks), static_argnames=tuple(statics))


@_jit(((2, "a"),), maximize=0, weight_decay=0, momentum=0, nesterov=0, first=0)
def sgd(p, g, buf, *, h, maximize, weight_decay, momentum, nesterov, first):
    """h = [-lr, weight_decay, momentum, 1 - dampening]."""
    s = lambda i: h[i].astype(p.dtype)
    g = -g if maximize else g
    if weight_decay:
        g = g + s(1) * p
    if momentum:
        buf = g if first else buf * s(2) + s(3) * g
        g = g + s(2) * buf if nesterov else buf
    return p + s(0) * g, buf


@_jit(((2, "a"), (3, "a"), (5, "i"), (4, "a")), maximize=0, weight_decay=0,
      decoupled=0, amsgrad=0, small=0)
def adam(p, g, m, v, vmax, step, *, h, maximize, weight_decay, decoupled, amsgrad, small):
    """h = [lr, beta1, beta2, eps, weight_decay, 1 - beta1, 1 - beta2, 1 - lr * wd];
    decoupled (AdamW): p *= 1 - lr * wd first, else wd * p is added to the gradient."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay and decoupled:
        p = p * s(h[7])
    elif weight_decay:
        g = g + s(h[4]) * p
    m = _lerp(m, g, s(h[5]), small)
    v = v * s(h[2]) + s(h[6]) * g * g
    n = step.astype(jnp.float64)
    step_size = h[0] / (1 - h[1] ** n)
    bc2_sqrt = jnp.sqrt(1 - h[2] ** n)
    if amsgrad:
        vmax = jnp.maximum(vmax, v)
    denom = jnp.sqrt(vmax if amsgrad else v) / s(bc2_sqrt) + s(h[3])
    return p + s(-step_size) * m / denom, m, v, vmax, step


@_jit(((2, "a"), (3, "a"), (4, "a")), maximize=0, weight_decay=0, centered=0,
      momentum=0, small=0)
def rmsprop(p, g, sq, gavg, buf, step, *, h, maximize, weight_decay, centered, momentum,
            small):
    """h = [lr, alpha, eps, weight_decay, momentum, 1 - alpha]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h[3]) * p
    sq = sq * s(h[1]) + s(h[5]) * g * g
    if centered:
        gavg = _lerp(gavg, g, s(h[5]), small)
        avg = jnp.sqrt(sq - gavg * gavg)  # addcmul(gavg, gavg, value=-1)
    else:
        avg = jnp.sqrt(sq)
    avg = avg + s(h[2])
    if momentum:
        buf = buf * s(h[4]) + g / avg
        p = p + s(-h[0]) * buf
    else:
        p = p + s(-h[0]) * g / avg
    return p, sq, gavg, buf, step


@_jit(((3, "i"), (2, "a")), maximize=0, weight_decay=0)
def adagrad(p, g, acc, step, *, h, maximize, weight_decay):
    """h = [lr, lr_decay, eps, weight_decay]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h[3]) * p
    clr = h[0] / (1 + (step.astype(jnp.float64) - 1) * h[1])
    acc = acc + g * g
    std = jnp.sqrt(acc) + s(h[2])
    return p + s(-clr) * g / std, acc, step


@_jit(((2, "a"), (3, "a")), maximize=0, weight_decay=0)
def adadelta(p, g, sq, acc, step, *, h, maximize, weight_decay):
    """h = [lr, rho, eps, weight_decay, 1 - rho]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h[3]) * p
    sq = sq * s(h[1]) + s(h[4]) * g * g
    std = jnp.sqrt(sq + s(h[2]))
    delta = jnp.sqrt(acc + s(h[2])) / std * g
    acc = acc * s(h[1]) + s(h[4]) * delta * delta
    return p + s(-h[0]) * delta, sq, acc, step


@_jit(((2, "a"), (3, "a"), (4, "i")), maximize=0, weight_decay=0, small=0)
def adamax(p, g, m, u, step, *, h, maximize, weight_decay, small):
    """h = [lr, beta1, beta2, eps, weight_decay, 1 - beta1]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h[4]) * p
    m = _lerp(m, g, s(h[5]), small)
    u = jnp.maximum(u * s(h[2]), jnp.abs(g) + s(h[3]))
    clr = h[0] / (1 - h[1] ** step.astype(jnp.float64))
    return p + s(-clr) * m / u, m, u, step


@_jit(((5, "i"), (2, "a"), (3, "a"), (4, "i")), maximize=0, weight_decay=0, decoupled=0,
      small=0)
def nadam(p, g, m, v, mu_product, step, *, h, maximize, weight_decay, decoupled, small):
    """h = [lr, beta1, beta2, eps, weight_decay, momentum_decay, 1 - beta1, 1 - beta2,
    1 - lr * wd]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    n = step.astype(jnp.float64)
    g = -g if maximize else g
    bc2 = 1 - h[2] ** n
    if weight_decay and decoupled:
        p = p * s(h[8])
    elif weight_decay:
        g = g + s(h[4]) * p
    mu = h[1] * (1.0 - 0.5 * 0.96 ** (n * h[5]))
    mu_next = h[1] * (1.0 - 0.5 * 0.96 ** ((n + 1) * h[5]))
    mu_product = mu_product * mu.astype(mu_product.dtype)
    m = _lerp(m, g, s(h[6]), small)
    v = v * s(h[2]) + s(h[7]) * g * g
    denom = jnp.sqrt(v / s(bc2)) + s(h[3])
    mp = mu_product.astype(jnp.float64)
    p = p + s(-h[0] * (1.0 - mu) / (1.0 - mp)) * g / denom
    p = p + s((-h[0] * mu_next) / (1.0 - mp * mu_next)) * m / denom
    return p, m, v, mu_product, step


@_jit(((4, "i"), (2, "a"), (3, "a")), maximize=0, weight_decay=0, decoupled=0, small=0)
def radam(p, g, m, v, step, *, h, maximize, weight_decay, decoupled, small):
    """h = [lr, beta1, beta2, eps, weight_decay, 1 - beta1, 1 - beta2, 1 - lr * wd]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    n = step.astype(jnp.float64)
    g = -g if maximize else g
    if weight_decay and decoupled:
        p = p * s(h[7])
    elif weight_decay:
        g = g + s(h[4]) * p
    m = _lerp(m, g, s(h[5]), small)
    v = v * s(h[2]) + s(h[6]) * g * g
    bc1 = 1 - h[1] ** n
    bc2 = 1 - h[2] ** n
    corrected = m / s(bc1)
    rho_inf = 2 / (1 - h[2]) - 1
    rho_t = rho_inf - 2 * n * (h[2] ** n) / bc2
    # (torch branches on rho_t > 5 in Python; both sides are computed here)
    rect = jnp.sqrt(jnp.abs((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)))
    adaptive = 1 / (jnp.sqrt(v) + s(h[3])) * s(jnp.sqrt(bc2))
    scaled = corrected * s(h[0])
    return (jnp.where(rho_t > 5.0, p - scaled * adaptive * s(rect), p - scaled), m, v, step)


@_jit(((2, "b"), (3, "a")), maximize=0)
def rprop(p, g, prev, step_size, step, *, h, maximize):
    """h = [etaminus, etaplus, step_size_min, step_size_max]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    sign = jnp.sign(g * prev)
    sign = jnp.where(sign > 0, s(h[1]), sign)  # sign[sign.gt(0)] = etaplus, ...
    sign = jnp.where(sign < 0, s(h[0]), sign)
    sign = jnp.where(sign == 0, jnp.ones_like(sign), sign)
    step_size = jnp.clip(step_size * sign, s(h[2]), s(h[3]))
    g = jnp.where(sign == s(h[0]), jnp.zeros_like(g), g)
    return p - jnp.sign(g) * step_size, g, step_size, step


@_jit(((3, "i"), (4, "i"), (2, "c"), (5, "i")), maximize=0, weight_decay=0)
def asgd(p, g, ax, eta, mu, step, *, h, maximize, weight_decay):
    """h = [lr, lambd, alpha, t0, weight_decay]."""
    s = lambda x: x.astype(p.dtype)
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + s(h[4]) * p
    eta_value = eta.astype(jnp.float64)
    p = p * s(1 - h[1] * eta_value)
    p = p + s(-eta_value) * g
    # (torch: ax.add_(param.sub(ax).mul_(mu)) if mu.item() != 1, else ax.copy_(param))
    ax = jnp.where(mu != 1, ax + (p - ax) * s(mu), p)
    n = step.astype(jnp.float64)
    eta = (h[0] / ((1 + h[1] * h[0] * n) ** h[2])).astype(eta.dtype)
    mu = (1 / jnp.maximum(1.0, n - h[3])).astype(mu.dtype)
    return p, ax, eta, mu, step
