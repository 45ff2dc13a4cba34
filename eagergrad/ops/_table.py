"""The op table machinery: `defop` declares an op once (forward kernel, formulas per
differentiable input) and generates its Backward node class.

NOTE [formulas]: a formula is a function whose parameter names say what it needs:
`grad` (gradient of the only/first output) or `grads` (all output gradients, None
replaced by zeros), the op's tensor inputs by their torch names (`self`, `other`, ...),
`result` (or the output names of a multi-output op), and the op's static attributes
(`dim`, `keepdim`, ...). The tensors a node saves are inferred from those names, and
only for the inputs that need a gradient, as torch does. Formulas are written with
eagergrad tensor ops, so they run recorded under create_graph=True (higher order for
free) and are traced once by jax.jit on raw arrays for the ordinary backward.
Broadcast reduction and dtype/real-part casts happen once, here (fast path) or in the
engine's validation; formulas never repeat them.
"""
import functools
import inspect
import weakref
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxlib._jax import ArrayImpl as _ArrayImpl  # (a concrete array's class)

from .. import _dtypes as D
from .._cache import EXECUTABLES, keyed, put_bounded
from .._dtypes import FROM_NP
from .._mode import ANOMALY, AUTOCAST, CAPTURING, DONATING, FUNC, FWD
from ..engine.grad_mode import STATE
from ..engine.anomaly import record as anomaly_record
from ..engine.graph import Node, init_node, intern_sig
from ..engine.saved import SavedTensor
from .._storage import view_of
from ..tensor import RankLocal, _make, _make_as, _tangent, _wrap_outputs, _zeros_meta

_new = object.__new__

OPS = {}  # name -> OpDef, for the table-driven tests


class NodeSpec(NamedTuple):
    """Everything static about a recorded node's backward: with which gradients are
    None, all OpDef.vjp needs (and, interned, the node's `_sig`)."""
    attrs: tuple
    input_metas: tuple   # (shape, dtype) per differentiable input; None: needs no grad
    output_metas: tuple  # (shape, dtype) per output: the gradients the node receives
    layout: tuple        # the saved arrays: (name, list length or None) each
    n_var: int           # edges of the variadic input, if differentiable


class SavePlan(NamedTuple):
    """What a node saves for one pattern of inputs needing a gradient."""
    inputs: tuple   # (name, input index)
    outputs: tuple  # (name, output index)
    layout: tuple   # the saved arrays in order: (name, list length or None)


_new_spec = tuple.__new__  # a NamedTuple without its Python-level __new__ (hot path)


# how often call_op took its view paths (tests check the paths really ran)
VIEW_COUNTS = {"fused": 0, "lazy": 0}
REPLAYED_IN = weakref.WeakSet()  # the replay functions of replay_in view ops (defop)


def _sum_to(a, shape):
    """Sum the broadcast dimensions of array `a` away to get `shape`."""
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and a.shape[i + lead] != 1)
    if axes:
        a = jnp.sum(a, axis=axes, keepdims=True)
    return a.reshape(shape)


def _fit(a, shape, np_dtype):
    a = _sum_to(a, shape)
    if a.dtype != np_dtype:
        if jnp.iscomplexobj(a) and not jnp.issubdtype(np_dtype, jnp.complexfloating):
            a = jnp.real(a)
        a = a.astype(np_dtype)
    return a


class _OpNode(Node):
    """Base of generated nodes; the class carries `_op` (its OpDef) and `_jit_cache`."""

    __slots__ = ("_saved", "_attrs", "_n_var", "_spec", "_extra")

    def _release(self):
        for s in self._saved.values():
            if type(s) is SavedTensor:  # SavedTensor.free, inlined (every node, every backward)
                s._freed = True
                s._t = s._arr = s._packed = s._src = None
            else:
                for x in s:
                    x.free()

    def apply(self, grads):
        if all(g is None for g in grads):
            return [None] * len(self._next)
        if STATE.grad or FWD.active or AUTOCAST.n and AUTOCAST.tl.active:
            # (dual level: the formulas' tangents are wanted; autocast: the formulas' ops
            # are cast, as torch's, and never in a cached traced vjp: NOTE [autocast])
            return self._apply_recorded(grads)
        key = (self._spec, tuple(g is None for g in grads))
        entry = self._jit_cache.get(key)
        if entry is None:
            return self._apply_first(key, grads)
        entry[1] = EXECUTABLES.now
        fn, links = entry[0]
        try:
            values = [g._value for g in grads if g is not None]
        except RankLocal:  # every rank's gradient: the formulas run rank by rank
            return self._apply_recorded(grads)
        arrays = fn(*values, *self._saved_arrays())
        if links is None:
            return [None if a is None else _make(a) for a in arrays]
        return _linked(arrays, links, grads)

    def _apply_first(self, key, grads):
        """apply's first call for a key: jit the pure vjp and learn, while it is traced,
        which gradients it hands on unchanged (NOTE [aliased gradients])."""
        try:
            values = [g._value for g in grads if g is not None]
        except RankLocal:
            return self._apply_recorded(grads)
        traced = []
        fn = jax.jit(self._op.vjp(*key, traced))
        arrays = fn(*values, *self._saved_arrays())
        # a new jitted function always traces on its first call; without that, no links
        links = traced[-1] if traced else None
        EXECUTABLES.put(self._jit_cache, key, (fn, links))
        if links is None:
            return [None if a is None else _make(a) for a in arrays]
        return _linked(arrays, links, grads)

    def _apply_recorded(self, grads):
        grads = [g if g is not None else _zeros_meta(*m) for g, m in zip(grads, self._meta_in)]
        env = dict(zip(self._op.attr_names, self._attrs))
        for k, s in self._saved.items():
            env[k] = [x.unpack(self) for x in s] if isinstance(s, list) else s.unpack(self)
        env["grads"] = grads
        env["grad"] = grads[0]
        return self._op.evaluate(env, tuple(e is not None for e in self._next), self._n_var)

    def _vjp_maker(self):
        op, spec = self._op, self._spec
        return lambda nones: op.vjp(spec, nones)

    def _saved_arrays(self):
        """The saved values as arrays (version-checked, unpack hooks run)."""
        out = []
        for s in self._saved.values():
            for x in (s if isinstance(s, list) else (s,)):
                out.append(x.array(self))
        return out

    def _gather_saved(self, out):
        """Append the saved arrays for a fused segment (version-checked); False, with
        nothing appended, when one has unpack hooks (they must run when the node runs)."""
        k = len(out)
        for x in self._saved.values():
            # SavedTensor.array's common case inlined: a live, unhooked input
            if (type(x) is SavedTensor and not x._is_output and x._unpack is None
                    and x._t is not None and x._version_counter.version == x._version):
                t = x._t  # (its _value, inlined for a base tensor)
                out.append(t._storage.array if t._vchain is None else t._value)
                continue
            for y in (x if type(x) is list else (x,)):
                if y._unpack is not None:
                    del out[k:]
                    return False
                out.append(y.array(self))
        return True


def _linked(arrays, links, grads):
    """apply's result when some gradients are handed on unchanged: links[i] is None (a
    new tensor over arrays[i]), k >= 0 (the incoming gradient grads[k] itself) or
    -1 - j (the same tensor as result j < i)."""
    out = []
    for a, k in zip(arrays, links):
        if a is None:
            out.append(None)
        elif k is None:
            out.append(_make(a))
        else:
            out.append(grads[k] if k >= 0 else out[-1 - k])
    return out


def _unpack(node, key):
    s = node._saved.get(key)
    if s is None:
        return None
    return [x.unpack(node) for x in s] if isinstance(s, list) else s.unpack(node)


def _trace_links(outs, ins, nones, links):
    """At trace time (NOTE [aliased gradients]): a result that is a zero materialized for
    a None gradient becomes a zero of its own; `links` (if a list) gets the links."""
    found = []
    for i, a in enumerate(outs):
        if a is None:
            found.append(None)
            continue
        k = next((k for k, g in enumerate(ins) if g is a), None)
        if k is not None and nones[k]:
            a = outs[i] = jnp.zeros(a.shape, a.dtype)
            k = None
        if k is None:
            k = next((-1 - j for j in range(i) if outs[j] is a), None)
        found.append(k)
    if links is not None:
        links.append(None if all(k is None for k in found) else tuple(found))
    return outs


class Baked:
    """A dynamic attribute's value that an op's static_of keeps a constant of the kernel
    (a value XLA and torch compute specially: add's alpha == 1, pow's x ** 2): bound
    into the kernel, never passed. Equal by type and value (-0.0 and NaN kept apart)."""
    __slots__ = ("value", "_key")

    def __init__(self, value):
        self.value = value
        self._key = (value.__class__, keyed(value))

    def __eq__(self, other):
        return other.__class__ is Baked and other._key == self._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"Baked({self.value!r})"


class OpDef:
    """One row of the op table."""

    def __init__(self, name, node, kernel, inputs, attrs, formulas, outputs, view, nondiff,
                 saved_meta=None, complex_error=None, dynamic=(), fuse=True, replay_in=False):
        self.name = name
        self.fuse = fuse  # False: its node runs alone, never inside a fused segment
        self.replay_in = replay_in  # a view op its consumers replay in their kernel
        self.kernel = kernel if complex_error is None else _no_complex(kernel, complex_error)
        self.inputs = inputs
        self.attr_names = attrs
        self.attr_set = frozenset(attrs)
        self.outputs = outputs
        self.view = view          # None or fn(input tensor, attrs) -> (stride, offset)
        self.nondiff = nondiff    # output indices that never require grad
        # saved_meta: (names, fn(tensors, needs_grad) -> dict), plain values torch's node
        # keeps beside its tensors (sizes, strides), exposed as _saved_<name>
        self.meta_names, self.saved_meta = saved_meta or (frozenset(), None)
        self._fwd = {}   # attrs -> shape-agnostic jitted kernel (fwd)
        self._jit = {}   # static attrs -> the jitted kernel behind _fwd's entries
        self._exe = EXECUTABLES.owner({})  # (attrs, shapes, dtypes) -> [kernel, stamp]
        # dynamic: attributes passed to the kernel as traced scalars, so that one compiled
        # kernel serves every value (select's index: a Dataset reads x[i] for every i)
        self.dynamic = frozenset(attrs.index(k) for k in dynamic)
        self.static_of = self.static_attrs  # fn(attrs) -> the kernel's static attrs
        self._save_plans = {}
        self.variadic = bool(inputs) and inputs[-1].startswith("*")
        self.simple = len(outputs) == 1 and view is None and not self.variadic
        self.nfix = len(inputs) - self.variadic
        names = tuple(n.lstrip("*") for n in inputs)
        self.input_names = names
        diff = [n for n in names if n in formulas]
        self.diff_inputs = tuple(diff)
        self.diff_index = tuple(names.index(n) for n in diff)
        self.diff_all = self.diff_index == tuple(range(len(names)))  # every input
        self.var_diff = self.variadic and names[-1] in formulas
        fs = tuple(formulas[n] for n in diff)
        ps = tuple(tuple(inspect.signature(f).parameters) for f in fs)
        self.formulas, self.params = fs, ps
        known = set(names) | set(attrs) | set(outputs) | {"grad", "grads", "result"}
        for p in ps:
            bad = set(p) - known
            if bad:
                raise TypeError(f"{name}: formula uses unknown names {sorted(bad)}")
        tensors = set(names) | set(outputs) | {"result"}
        # which saved tensors each edge's formula needs
        self.saves_for = tuple(frozenset(x for x in p if x in tensors) for p in ps)
        self.saved_names = frozenset().union(*self.saves_for) if fs else frozenset()
        self.Node = type(node, (_OpNode,), {"__slots__": (), "_op": self,
                                            "_jit_cache": EXECUTABLES.owner({}),
                                            **self._saved_properties()})
        if node == "NotImplemented":  # (a torch built-in node: its name() is qualified)
            self.Node.name = lambda _: "torch::autograd::NotImplemented"

    def _saved_properties(self):
        """`_saved_<name>` / `_raw_saved_<name>` for every attribute, saved value and
        saved_meta entry, as torch's generated nodes expose them (properties, not a
        __getattr__: that would slow every attribute read of every node)."""
        props = {}
        for i, k in enumerate(self.attr_names):
            props[f"_saved_{k}"] = props[f"_raw_saved_{k}"] = property(
                lambda node, i=i: node._attrs[i])
        for k in self.meta_names - self.attr_set:
            props[f"_saved_{k}"] = property(lambda node, k=k: node._extra[k])
        for k in self.saved_names - self.attr_set:
            props[f"_raw_saved_{k}"] = property(lambda node, k=k: node._saved.get(k))
            if k not in self.meta_names:
                props[f"_saved_{k}"] = property(lambda node, k=k: _unpack(node, k))
        return props

    def evaluate(self, env, want, n_var):
        """Gradients for every edge (None where not wanted), formulas run on `env`.
        The variadic input, if differentiable, is last and has n_var edges."""
        out = []
        nfix = len(want) - n_var
        for j, (f, ps) in enumerate(zip(self.formulas, self.params)):
            if self.var_diff and j == len(self.formulas) - 1:
                sub = want[nfix:]
                gs = f(*[env[p] for p in ps]) if any(sub) else [None] * n_var
                out.extend(g if w else None for g, w in zip(gs, sub))
            else:
                out.append(f(*[env[p] for p in ps]) if want[j] else None)
        return out

    def vjp(self, spec, nones, links=None):
        """A pure function (grad arrays that are not None..., saved arrays...) -> list of
        gradient arrays (None where no edge): the formulas run on tensors over the
        arrays, then each result is summed to its input's shape and cast to its dtype.

        NOTE [aliased gradients]: torch hands a gradient on as the very same tensor when
        a formula returns `grad` itself (add, sub's self, clone, ...) and validation need
        not sum or cast it; the engine stores that object in the input buffer of every
        node it flows to, so an in-place edit of it in one tensor hook is seen by the
        others. Here a result that is unchanged stays the same array object (as `_fit`
        keeps it), which the callers read off at trace time: `links`, a list, gets (once
        per trace) a tuple per result, None (a new gradient), k >= 0 (incoming gradient
        k, by position in `nones`) or -1 - j (the same as result j), or None when no
        result is linked (_OpNode.apply); the fused backward compares the traced values
        of a whole segment (engine/fused.py). A zero materialized for a None gradient
        is never handed on as such (torch has no tensor there)."""
        attrs, metas, out_meta, layout, n_var = spec
        env0 = dict(zip(self.attr_names, attrs))
        want = tuple(m is not None for m in metas)
        n_grads = nones.count(False)

        def fn(*arrays):
            it = iter(arrays[:n_grads])
            grads = [_make(jnp.zeros(m[0], m[1].np)) if n else _make(next(it))
                     for n, m in zip(nones, out_meta)]
            ins = [g._value for g in grads]
            env = dict(env0)
            pos = n_grads
            for k, n in layout:
                if n is None:
                    env[k] = _make(arrays[pos])
                    pos += 1
                else:
                    env[k] = [_make(a) for a in arrays[pos:pos + n]]
                    pos += n
            env["grads"] = grads
            env["grad"] = grads[0]
            res = self.evaluate(env, want, n_var)
            outs = [None if g is None else _fit(g._value, m[0], m[1].np)
                    for g, m in zip(res, metas)]
            if n_grads < len(nones) or links is not None:
                outs = _trace_links(outs, ins, nones, links)
            return outs
        return fn

    def save_plan(self, req, n_vt):
        """For a pattern of which differentiable inputs need a gradient: the inputs to
        save (name, index), the outputs to save (name, output index), and the layout of
        the saved arrays (name, list length or None) in that order."""
        wanted = set()
        last = len(self.saves_for) - 1
        for j, names in enumerate(self.saves_for):
            if any(req[j:]) if self.var_diff and j == last else req[j]:
                wanted |= names
        ins = tuple((k, self.input_names.index(k)) for k in sorted(wanted)
                    if k in self.input_names)
        outs = tuple((k, 0 if k == "result" else self.outputs.index(k))
                     for k in sorted(wanted) if k == "result" or k in self.outputs)
        nfix = len(self.input_names) - self.variadic
        layout = tuple((k, n_vt if i == nfix else None) for k, i in ins) + \
            tuple((k, None) for k, _ in outs)
        return SavePlan(ins, outs, layout)

    def fwd(self, attrs):
        """The shape-agnostic jitted kernel for `attrs`: a view chain's replay function
        (its identity is part of the chain) and the forward-mode kernels' base. For an
        op with dynamic attributes, `functools.partial(kernel, **their values)`: the
        kernel is the chain's static structure, the values are what writes through the
        chain pass as traced arguments (_storage.split_chain)."""
        f = self._fwd.get(attrs)
        if f is None:
            static = self.static_of(attrs) if self.dynamic else attrs
            f = self._jit.get(static)
            if f is None:
                f = put_bounded(self._jit, static, EXECUTABLES.track(self._jitted(static)), 256)
                if self.replay_in:
                    REPLAYED_IN.add(f)
            traced = self.traced_of(static) if self.dynamic else ()
            if traced:
                f = functools.partial(f, **{k: attrs[i] for k, i in traced})
            put_bounded(self._fwd, attrs, f, 256)
        return f

    def scalar_as_vector(self):
        """torch's rule for a dim-taking op on a 0-d tensor: dim 0 (or -1) names the one
        element, as on a tensor of shape (1,), and the results stay 0-d. The kernel sees
        0-d inputs as (1,) and gives (1,) results back as 0-d (eagergrad/ops/__init__.py
        lists the ops)."""
        kernel = self.kernel

        def k(*arrays, **attrs):
            if not arrays or arrays[0].ndim:
                return kernel(*arrays, **attrs)
            outs = kernel(*[a.reshape(1) if a.ndim == 0 else a for a in arrays], **attrs)
            return jax.tree.map(lambda o: o.reshape(()) if o.shape == (1,) else o, outs)
        self.kernel = k

    def static_attrs(self, attrs):
        """attrs with the dynamic ones (traced scalars) as None: the kernel's key. An op
        whose dynamic attributes also fix a static quantity derives the key itself,
        assigning its own `static_of` (slice keys its length, end - start, in end's
        place; add bakes in alpha == 1)."""
        return tuple(None if i in self.dynamic else a for i, a in enumerate(attrs))

    def traced_of(self, static):
        """(name, index) of the dynamic attributes the kernel of static attrs `static`
        takes as traced arguments: all but those static_of baked in (`Baked`)."""
        return tuple((self.attr_names[i], i) for i in sorted(self.dynamic)
                     if static[i].__class__ is not Baked)

    def executable(self, key, static):
        """call_op's miss: a jitted kernel of its own for `key` (static attrs, input
        shapes and dtypes, maybe "donate"), so that evicting the entry frees its
        executable. A dynamic op's kernel takes its dynamic attributes as keywords."""
        # the entry: [kernel, stamp, the outputs' metadata, _record's static part per
        # pattern of inputs needing a gradient, (name, index) of the traced attributes]
        if key[0] == "views":  # (_call_views: some inputs are views read inside)
            f = self._jitted(static, chains=tuple(p[2] if len(p) > 2 else None
                                                  for p in key[2:]))
        else:
            f = self._jitted(static, key[0] == "donate")
        return EXECUTABLES.put_entry(self._exe, key, [
            f, 0, None, None, self.traced_of(static) if self.dynamic else ()])

    def _jitted(self, attrs, donate=False, chains=None):
        k = functools.partial(self.kernel, **{
            k: a if a.__class__ is not Baked else a.value
            for i, (k, a) in enumerate(zip(self.attr_names, attrs))
            if i not in self.dynamic or a.__class__ is Baked})
        if chains is not None:  # input i is view chains[i] of the array passed
            kernel = k

            def k(*arrays, **dynamic):
                return kernel(*[a if ch is None else view_of(a, ch)
                                for a, ch in zip(arrays, chains)], **dynamic)
        return jax.jit(k, donate_argnums=0 if donate else ())

    def __repr__(self):
        return f"<op {self.name} -> {self.Node.__name__}>"


def _no_complex(kernel, error):
    """The kernel, raising torch's error for a complex input or `dtype` attribute. The
    check runs while jax traces the kernel (once per input dtype), not on every call."""
    exc, message = error

    def k(*arrays, **attrs):
        dt = attrs.get("dtype")  # the computation's dtype, when the op has one
        dts = [dt.np] if isinstance(dt, D.dtype) else [a.dtype for a in arrays]
        for d in dts:
            if jnp.issubdtype(d, jnp.complexfloating):
                raise exc(message.format(FROM_NP[np.dtype(d)].scalar_name))
        return kernel(*arrays, **attrs)
    return k


def defop(name, kernel, inputs=("self",), attrs=(), node=None, outputs=("result",),
          view=None, nondiff=(), saved_meta=None, complex_error=None, dynamic=(), fuse=True,
          replay_in=False, **formulas):
    """Declare an op: `defop("exp", jnp.exp, self=lambda grad, result: grad * result.conj())`.

    node defaults to CamelCase(name) + "Backward0"; formulas are keyword arguments
    named after the differentiable inputs. saved_meta: (names, fn(tensors, needs_grad))
    for plain values torch's node keeps besides tensors (`_saved_self_sym_sizes`).
    complex_error: (exception type, message with "{}" for the dtype's scalar name) that
    torch raises for complex inputs. dynamic: names of integer attributes the kernel
    takes as traced scalars (one compiled kernel for all their values). fuse=False: the
    node's backward runs as its own kernel, never inside a fused segment (engine/fused.py),
    for kernels XLA compiles worse inside a larger computation. replay_in=True: a view op
    (a transpose: a layout XLA folds into a matmul for free) whose views the ops consuming
    them replay inside their own kernel (call_op's _call_views).
    """
    if node is None:
        node = "".join(p.capitalize() for p in name.split("_")) + "Backward0"
    op = OpDef(name, node, kernel, tuple(inputs), tuple(attrs), formulas, tuple(outputs),
               view, frozenset(nondiff),
               saved_meta and (frozenset(saved_meta[0]), saved_meta[1]), complex_error,
               tuple(dynamic), fuse, replay_in)
    OPS[name] = op
    return op


def derive(op, name, node):
    """A new entry `name` with op's kernel, inputs, attributes (traced ones too), outputs
    and formulas, and the node `node`: an op torch records under another node name (a
    view op's *_copy, _native_batch_norm_legit's)."""
    new = defop(name, op.kernel, op.inputs, op.attr_names, node=node, outputs=op.outputs,
                nondiff=tuple(op.nondiff),
                saved_meta=op.saved_meta and (op.meta_names, op.saved_meta),
                dynamic=tuple(op.attr_names[i] for i in sorted(op.dynamic)), fuse=op.fuse,
                **dict(zip(op.diff_inputs, op.formulas)))
    if op.static_of != op.static_attrs:  # (a key of its own: fill's value types)
        new.static_of = op.static_of
    return new


PROFILING = False  # a profiler records: call_op goes through PROFILE (NOTE [profiler events])
PROFILE = None     # set with PROFILING by eagergrad/autograd/_profiler_backend.py


def call_op(op, tensors, attrs=(), _profiled=False):
    """Run `op` on tensors eagerly; record a node when grad mode is on and an input
    requires grad. Returns a Tensor, or a tuple for multi-output ops."""
    if PROFILING and not _profiled:
        return PROFILE(op, tensors, attrs)
    # one executable per (attrs, input shapes and dtypes): NOTE [executable cache]
    static = attrs if not op.dynamic else op.static_of(attrs)
    n = len(tensors)
    if n == 2:
        a, b = tensors
        if a._vchain is not None or b._vchain is not None:
            return _call_views(op, tensors, attrs, static)
        key = (static, a._shape, a.dtype, b._shape, b.dtype)
    elif n == 1:
        a = tensors[0]
        if a._vchain is not None:
            return _call_views(op, tensors, attrs, static)
        key = (static, a._shape, a.dtype)
    else:
        key = [static]
        for t in tensors:
            if t._vchain is not None:
                return _call_views(op, tensors, attrs, static)
            key.append((t._shape, t.dtype))
        key = tuple(key)
    if DONATING.n and tensors and tensors[0]._storage is DONATING.tl.storage and op.simple:
        DONATING.tl.storage = None  # the in-place op's own kernel, once
        key = ("donate", key)
    e = op._exe.get(key)
    if e is None:
        e = op.executable(key, static)
    else:
        e[1] = EXECUTABLES.now
    f = e[0]
    if op.view is not None and not CAPTURING.n and \
            tensors[0]._storage.array.__class__ is _ArrayImpl:
        if e[2] is None:
            _view_meta(e, [t._storage.array for t in tensors], attrs)
        return _outputs(op, tensors, attrs, e, None)  # a lazy view (see _call_views)
    if e[4]:  # (traced scalars: one executable serves every value)
        f = functools.partial(f, **{k: attrs[i] for k, i in e[4]})
    # base tensors: the array is the storage's
    if n == 2:
        out = f(a._storage.array, b._storage.array)
    elif n == 1:
        out = f(a._storage.array)
    else:
        out = f(*[t._storage.array for t in tensors])
    if op.simple:  # one output, not a view, no variadic input: the hot path (_outputs')
        meta = e[2]  # the output's (shape, dtype): the key decides them
        if meta is None:
            meta = e[2] = (out.shape, FROM_NP[out.dtype])
        t = _make_as(out, meta)
        if FWD.active:  # (before _record: a saved result keeps its tangent)
            _forward_tangents(op, tensors, attrs, (t,))
        if STATE.grad:
            for i in op.diff_index:
                if tensors[i]._requires_grad:
                    _record(op, tensors, attrs, (t,), e)
                    break
        return t
    return _outputs(op, tensors, attrs, e, out)


class DTChain(tuple):
    """The view chain of a DTensor (torch.distributed.tensor): empty, but not None, so
    call_op hands an op with a DTensor input to _call_views, which dispatches it."""


DT_CHAIN = DTChain()
DTENSOR_DISPATCH = [None]  # set by eagergrad.distributed.tensor when imported


def _call_views(op, tensors, attrs, static):
    """call_op with a view among the inputs. A view made by replay_in ops only (a
    transpose: x @ w.t() is one dot) is replayed inside the op's kernel, from its
    storage's array: one dispatch, where reading the view first costs one more. Other
    views are read first: replaying them would make a kernel per (op, view) pair where
    the op's kernel is shared by all views of a shape (a GRU's three gate chunks), more
    compiles for a program's first run. Nor when a func transform is
    capturing (NOTE [captured tensors] matches the arrays a kernel lifts to its input
    tensors' values). A view op whose output's shape is known (its executable ran once)
    and whose source is concrete makes its output without running: a lazy view, read
    (concretely: Tensor._value) when needed. A DTensor (its chain is a DTChain) goes
    to torch.distributed.tensor's dispatch."""
    for t in tensors:
        if t._vchain.__class__ is DTChain:
            return DTENSOR_DISPATCH[0](op, tensors, attrs)
    parts, arrays, replayed = [], [], False
    for t in tensors:
        ch = t._vchain
        if ch is None:
            parts.append((t._shape, t.dtype))
            arrays.append(t._storage.array)
            continue
        for fn, _ in ch:
            if fn not in REPLAYED_IN or CAPTURING.n:
                parts.append((t._shape, t.dtype))
                arrays.append(t._value)
                break
        else:
            a = t._storage.array
            parts.append((t._shape, t.dtype, ch, a.shape, a.dtype))
            arrays.append(a)
            replayed = True
    if DONATING.n and tensors[0]._storage is DONATING.tl.storage:
        DONATING.tl.storage = None  # (never a view's array: it is still read)
    if replayed:
        VIEW_COUNTS["fused"] += 1
        key = ("views", static, *parts)
    elif len(parts) == 2:  # (call_op's keys: one kernel whether or not inputs are views)
        key = (static, *parts[0], *parts[1])
    elif len(parts) == 1:
        key = (static, *parts[0])
    else:
        key = (static, *parts)
    e = op._exe.get(key)
    if e is None:
        e = op.executable(key, static)
    else:
        e[1] = EXECUTABLES.now
    if op.view is not None and not CAPTURING.n and arrays[0].__class__ is _ArrayImpl:
        if e[2] is None:
            _view_meta(e, arrays, attrs)
        return _outputs(op, tensors, attrs, e, None)
    f = e[0]
    if e[4]:
        f = functools.partial(f, **{k: attrs[i] for k, i in e[4]})
    return _outputs(op, tensors, attrs, e, f(*arrays))


def _view_meta(e, arrays, attrs):
    """A view op's output metadata, traced abstractly (jax.eval_shape): its first call
    makes a lazy view too, without compiling a kernel only to learn its output's shape
    (x[:, i] on a batch of a new sequence length)."""
    f = e[0]
    if e[4]:
        f = functools.partial(f, **{k: attrs[i] for k, i in e[4]})
    out = jax.eval_shape(f, *arrays)
    multi = isinstance(out, tuple)
    e[2] = (multi, tuple((a.shape, FROM_NP[a.dtype]) for a in (out if multi else (out,))))


def _outputs(op, tensors, attrs, e, out):
    """call_op's tail: tensors over the kernel's output (lazy views when `out` is None),
    their tangents, their node."""
    if out is None:
        VIEW_COUNTS["lazy"] += 1
    if op.simple:
        meta = e[2]
        if meta is None:
            meta = e[2] = (out.shape, FROM_NP[out.dtype])
        result = _make_as(out, meta)
        outs = (result,)
    else:
        if e[2] is None:
            multi = isinstance(out, tuple)
            e[2] = (multi, tuple((a.shape, FROM_NP[a.dtype]) for a in (out if multi else (out,))))
        result = _wrap_outputs(op, tensors, attrs, out, *e[2])
        outs = result if isinstance(result, tuple) else (result,)
    if FWD.active:  # (before _record: a saved result keeps its tangent)
        _forward_tangents(op, tensors, attrs, outs)
    if STATE.grad and op.diff_inputs:
        nfix = op.nfix
        for i in op.diff_index:
            if i < nfix and tensors[i]._requires_grad:
                _record(op, tensors, attrs, outs, e)
                return result
        if op.var_diff and any(t._requires_grad for t in tensors[nfix:]):
            _record(op, tensors, attrs, outs, e)
    return result


# ---- forward mode (autograd/forward_ad.py) ---------------------------------------------
_JVP = {}  # (op, attrs, inputs with a tangent) -> jitted (primals, tangents) -> tangents


def _jvp_kernel(op, attrs, which):
    f = op.fwd(attrs)

    def run(primals, tangents):
        def g(*dual):
            args = list(primals)
            for i, a in zip(which, dual):
                args[i] = a
            return f(*args)
        return jax.jvp(g, tuple(primals[i] for i in which), tuple(tangents))[1]
    return EXECUTABLES.track(jax.jit(run))


def _forward_tangents(op, tensors, attrs, outs):
    """Give an op's outputs their tangents when an input has one: a view op's output
    gets the same view of its input's tangent; any other op's, jax.jvp of its kernel
    (pushforwards need no conj convention). Integer and non-differentiable outputs get
    none."""
    tans = [_tangent(t) for t in tensors]
    if not any(x is not None for x in tans):
        return
    if op.view is not None and tans[0] is not None:
        FWD.active = False
        try:
            tv = call_op(op, (tans[0],) + tuple(tensors[1:]), attrs)
        finally:
            FWD.active = True
        for o, v in zip(outs, tv if isinstance(tv, tuple) else (tv,)):
            o._fw = (FWD.gen, v)
        return
    which = tuple(i for i, (t, x) in enumerate(zip(tensors, tans))
                  if x is not None and t.dtype.is_differentiable)
    if not which:
        return
    key = (op, attrs, which)
    fn = _JVP.get(key)
    if fn is None:
        fn = put_bounded(_JVP, key, _jvp_kernel(op, attrs, which), 1024)
    tangents = []
    for i in which:
        x, np_dt = tans[i]._value, tensors[i].dtype.np
        if x.dtype != np_dt:
            x = (jnp.real(x) if jnp.iscomplexobj(x) and not jnp.iscomplexobj(
                np.zeros((), np_dt)) else x).astype(np_dt)
        tangents.append(x)
    try:
        res = fn(tuple(t._value for t in tensors), tuple(tangents))
    except (NotImplementedError, TypeError) as e:  # jax has no jvp rule for the kernel
        if "jvp" not in str(e) and "Differentiation rule" not in str(e):
            raise
        if op.Node.__name__ == "NotImplemented":  # torch: no derivative at all
            raise NotImplementedError(
                f"Trying to use forward AD with aten::{op.name} that does not support it."
            ) from None
        raise NotImplementedError(
            f"Trying to use forward AD with {op.name} that does not support it because it has "
            "not been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
            "pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
            "its implementation or submit a PR adding the implementation to derivatives.yaml"
            ) from None
    for j, (o, a) in enumerate(zip(outs, res if isinstance(res, tuple) else (res,))):
        if j not in op.nondiff and o.dtype.is_differentiable and a.dtype != jax.dtypes.float0:
            o._fw = (FWD.gen, _make(a))


def _record(op, tensors, attrs, outs, entry=None, keep_outputs=False):
    """Make the node for outputs `outs`: edges to the differentiable inputs, saved
    tensors for the formulas whose input needs a gradient, outputs wired to it.
    `keep_outputs`: a saved output is kept as the tensor object (a DTensor's), not as
    its array.
    (The hot path of every recorded op: one pass over the inputs, no generators.)
    `entry`, call_op's executable entry, keeps the node's static part (save plan, spec,
    signature, output metadata) per pattern of inputs needing a gradient: the entry's
    key (attrs, input shapes and dtypes) decides all of it, with the dynamic attrs'
    values (they are in the spec)."""
    if CAPTURING.n and FUNC.capture is not None:
        FUNC.capture.reads(tensors)
    nfix = op.nfix
    if op.variadic:
        diff = [tensors[i] for i in op.diff_index if i < nfix]
        if op.var_diff:
            diff.extend(tensors[nfix:])
    elif op.diff_all:
        diff = tensors
    else:
        diff = [tensors[i] for i in op.diff_index]
    edges = []
    mask = 0  # bit j: differentiable input j needs a gradient
    bit = 1
    for t in diff:
        if t._requires_grad:
            if t._base is not None:
                edges.append(t._edge())
            elif t._grad_fn is not None:
                edges.append((t._grad_fn, t._out_nr))
            else:  # a leaf: its accumulator while the graph holds it, else a new one
                acc = t._accumulator_ref
                acc = acc() if acc is not None else None
                edges.append((acc, 0) if acc is not None else t._edge())
            mask |= bit
        else:
            edges.append(None)
        bit <<= 1
    node = _new(op.Node)
    init_node(node, tuple(edges), ())
    if ANOMALY.enabled:
        anomaly_record(node)
    node._attrs = attrs
    n_vt = len(tensors) - nfix  # how many tensors the variadic input got (0 if none)
    n_var = node._n_var = n_vt if op.var_diff else 0
    static = None
    if entry is not None:
        # (a dynamic attr's value is in the node's spec: part of the key, -0.0 and NaN kept)
        rkey = mask if not op.dynamic else (mask, *[keyed(attrs[i]) for i in op.dynamic])
        recs = entry[3]
        if recs is None:
            recs = entry[3] = {}
        else:
            static = recs.get(rkey)
    if static is None:
        static = _record_static(op, diff, mask, n_vt, n_var, attrs, outs)
        if entry is not None:
            recs[rkey] = static
    plan, spec, sig, meta = static
    saved = {}
    for k, i in plan.inputs:
        saved[k] = ([SavedTensor(t, False) for t in tensors[nfix:]] if i == nfix
                    else SavedTensor(tensors[i], False))
    node._saved = saved
    if op.saved_meta is not None:
        node._extra = op.saved_meta(tensors, [bool(mask >> j & 1) for j in range(len(diff))])
    if len(outs) == 1:
        t = outs[0]
        if t.dtype.is_differentiable and 0 not in op.nondiff:
            t._requires_grad = True
            t._grad_fn = node
            t._out_nr = 0
    else:
        for j, t in enumerate(outs):
            if t.dtype.is_differentiable and j not in op.nondiff:
                t._requires_grad = True
                t._grad_fn = node
                t._out_nr = j
    node._meta_in = meta
    for k, j in plan.outputs:
        saved[k] = SavedTensor(outs[j], not keep_outputs)
    node._spec = spec
    node._sig = sig


def _record_static(op, diff, mask, n_vt, n_var, attrs, outs):
    """_record's static part: (save plan, NodeSpec, signature, output metadata)."""
    pkey = (mask, n_vt, len(diff)) if op.variadic else mask
    plan = op._save_plans.get(pkey)
    if plan is None:
        plan = op._save_plans[pkey] = op.save_plan(
            tuple(bool(mask >> j & 1) for j in range(len(diff))), n_vt)
    meta = tuple((t._shape, t.dtype) for t in outs)
    # the gradient metadata each edge expects is that of the input it leads to
    metas = tuple((t._shape, t.dtype) if mask >> j & 1 else None for j, t in enumerate(diff))
    spec = _new_spec(NodeSpec, (attrs, metas, meta, plan.layout, n_var))
    # (no _sig: the engine runs the node on its own, a point between fused segments)
    return plan, spec, intern_sig((op, spec)) if op.fuse else None, meta
