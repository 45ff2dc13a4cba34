"""Random programs with hook side effects, differentially against torch (docs/design.md §7).

Hypothesis draws a program, a plain tuple of steps, over three float64 leaves x (2, 3),
w (3,) and v (3, 3):
  - forward ops (kind, name, operands, constant): sin, tanh, sigmoid, exp(tanh), square,
    scaling, add/sub/mul with broadcasting, matmul, sum(0), mean; operands are earlier
    results or leaves, so values fan out; the loss sums one to three results;
  - hooks registered before backward: tensor hooks (on results and leaves), node pre- and
    post-hooks (on results' grad_fn), post-accumulate-grad hooks (on leaves), retain_grad.
    A hook logs its call and then has one effect: none; mutate its gradient in place;
    return a new gradient; register another hook (any kind) or call retain_grad on a
    node that may not have run yet; remove a hook; write a leaf or a result in place
    under no_grad or through .data (a saved tensor: torch's version error, or its new
    value); make a leaf stop requiring grad; raise on its first or second call; a
    post-accumulate-grad hook may also step SGD (no_grad or .data), clear .grad, or
    return the gradient (torch's error);
  - optionally a leaf stops requiring grad after the forward;
  - one or two backward calls (`backward()`, `backward(inputs=...)`, `autograd.grad`),
    the first with retain_graph=True when there are two.
`run_program(L, log, program)` replays a program with library L, logging every hook call
(what it saw), every error (type and the message's first sentence) and, after each
backward call, the leaves (values, versions, requires_grad) and their .grad, retained
grads and autograd.grad's results. conftest.same runs it once with torch and three times
with eagergrad (node by node, then fused) and every log must equal torch's.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import msg, same

LEAVES = {"x": (2, 3), "w": (3,), "v": (3, 3)}
CONSTS = (0.5, 2.0, -1.5)
UNARY = ("sin", "tanh", "sigmoid", "exp_tanh", "square", "scale")
BINARY = ("add", "add", "sub", "mul")  # add passes its gradient on to both operands


class Boom(Exception):
    pass


# ---- the runner ----------------------------------------------------------------------------
def _key(e):
    """An exception's type and its message's first sentence (torch's names)."""
    text = msg(e)
    return type(e).__name__, text.split(". ")[0][:200]


def _forward(op, env):
    """op: (kind, name, operand names, constant)."""
    kind, name, args, c = op
    t = env[args[0]]
    if kind == "unary":
        if name == "exp_tanh":
            return t.tanh().exp()
        if name == "square":
            return t * t
        if name == "scale":
            return t * c
        return getattr(t, name)()
    if kind == "binary":
        u = env[args[1]]
        return t + u if name == "add" else t - u if name == "sub" else t * u
    if kind == "matmul":
        return t @ env[args[1]]
    if kind == "sum0":
        return (t * c).sum(0)  # (t * c): t's gradient is not an expanded tensor
    if kind == "mean":
        return t.mean()
    raise AssertionError(op)


class Runner:
    """One run of a program with library L."""

    def __init__(self, L, log, program):
        self.L, self.log, self.program = L, log, program
        rng = np.random.default_rng(program["seed"])
        self.env = {name: L.tensor(rng.uniform(-1, 1, shape), dtype=L.float64,
                                   requires_grad=True) for name, shape in LEAVES.items()}
        self.handles = {}
        self.calls = {}
        self.retained = []

    def run(self):
        L, env, p = self.L, self.env, self.program
        for k, op in enumerate(p["forward"]):
            env[f"t{k}"] = _forward(op, env)
        loss = None
        for name, c in p["loss"]:
            term = (env[name] * c).sum()
            loss = term if loss is None else loss + term
        for hid, spec in enumerate(p["hooks"]):
            self.register(hid, spec)
        for name in p["retain"]:
            env[name].retain_grad()
            self.retained.append(name)
        for name in p["stop"]:
            env[name].requires_grad_(False)
        for call, (mode, names, retain) in enumerate(p["backward"]):
            out = None
            try:
                if mode == "backward":
                    loss.backward(retain_graph=retain)
                elif mode == "inputs":
                    loss.backward(inputs=[env[n] for n in names], retain_graph=retain)
                else:
                    out = L.autograd.grad(loss, [env[n] for n in names], retain_graph=retain,
                                          allow_unused=True)
            except (Boom, RuntimeError, TypeError) as e:
                self.log.append(("raised", call) + _key(e))
            self.log.append(("after", call, out,
                             [(n, env[n], env[n]._version, env[n].requires_grad, env[n].grad)
                              for n in LEAVES],
                             [(n, env[n].grad) for n in self.retained]))

    # -- hooks
    def register(self, hid, spec):
        """spec: (kind, target, effect); kind: tensor | pre | post | acc."""
        kind, target, effect = spec
        t = self.env[target]
        if kind == "tensor":
            h = t.register_hook(lambda g: self.fire(hid, spec, g))
        elif kind == "pre":
            h = t.grad_fn.register_prehook(lambda go: self.fire(hid, spec, go))
        elif kind == "post":
            h = t.grad_fn.register_hook(lambda gi, go: self.fire(hid, spec, gi, go))
        else:
            h = t.register_post_accumulate_grad_hook(lambda p: self.fire(hid, spec, p))
        self.handles[hid] = h

    def fire(self, hid, spec, *args):
        kind, target, effect = spec
        n = self.calls[hid] = self.calls.get(hid, 0) + 1
        grads = args[0].grad if kind == "acc" else args
        self.log.append(("hook", hid, n, grads))
        name = effect[0]
        L, env = self.L, self.env
        if name == "inplace":
            g = self._first(kind, args)
            if g is not None:
                g.mul_(effect[1])
        elif name == "replace":
            c = effect[1]
            if kind == "tensor":
                return None if args[0] is None else args[0] * c
            if kind in ("pre", "post"):
                return tuple(None if g is None else g * c for g in args[0])
        elif name == "register":
            self.register(effect[1], effect[2])
        elif name == "retain":
            env[effect[1]].retain_grad()
            self.retained.append(effect[1])
        elif name == "remove":
            self.handles[effect[1]].remove()
        elif name == "write_no_grad":
            with L.no_grad():
                env[effect[1]].mul_(effect[2])
        elif name == "write_data":
            env[effect[1]].data.mul_(effect[2])
        elif name == "stop":
            env[effect[1]].requires_grad_(False)
        elif name == "raise":
            if n == effect[1]:
                raise Boom(f"hook {hid} call {n}")
        elif name == "sgd_no_grad":
            with L.no_grad():
                args[0].sub_(0.1 * args[0].grad)
        elif name == "sgd_data":
            args[0].data.sub_(0.1 * args[0].grad)
        elif name == "zero_grad":
            args[0].grad = None
        elif name == "return_grad":
            return args[0].grad
        return None

    @staticmethod
    def _first(kind, args):
        if kind == "tensor":
            return args[0]
        if kind == "acc":
            return args[0].grad
        return args[0][0] if args[0] else None


def run_program(L, log, program):
    Runner(L, log, program).run()


# ---- the generator -------------------------------------------------------------------------
def _broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _matmul(a, b):
    if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2) or a[-1] != b[0]:
        return None
    return tuple(np.matmul(np.zeros(a), np.zeros(b)).shape)


def operand(draw, k):
    """A leaf, or (more often) one of the k results so far."""
    if k and draw(st.integers(0, 2)):
        return f"t{draw(st.integers(0, k - 1))}"
    return draw(st.sampled_from(sorted(LEAVES)))


@st.composite
def forward_ops(draw):
    shapes = dict(LEAVES)
    ops = []
    for k in range(draw(st.integers(2, 6))):
        a = operand(draw, k)
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "matmul",
                                     "reduce"]))
        op = shape = None
        if kind == "binary" or kind == "matmul":
            b = operand(draw, k)
            shape = (_broadcast if kind == "binary" else _matmul)(shapes[a], shapes[b])
            if shape is not None:
                op = ("binary", draw(st.sampled_from(BINARY)), (a, b), None) \
                    if kind == "binary" else ("matmul", None, (a, b), None)
        elif kind == "reduce" and shapes[a]:
            if draw(st.booleans()):
                op, shape = ("sum0", None, (a,), draw(st.sampled_from(CONSTS))), shapes[a][1:]
            else:
                op, shape = ("mean", None, (a,), None), ()
        if op is None:
            op, shape = ("unary", draw(st.sampled_from(UNARY)), (a,),
                         draw(st.sampled_from(CONSTS))), shapes[a]
        ops.append(op)
        shapes[f"t{k}"] = shape
    return ops


def effects(draw, kind, results, nested_ids):
    """One hook effect (see the module docstring)."""
    leaves = sorted(LEAVES)
    choices = ["log", "replace", "replace", "register", "register", "retain", "remove",
               "write_no_grad", "write_no_grad", "write_data", "stop", "raise", "raise"]
    if kind != "post":  # a post-hook's grad_inputs may be expanded (SumBackward's)
        choices += ["inplace"] * 3
    if kind == "acc" and draw(st.booleans()):
        choices = ["sgd_no_grad", "sgd_no_grad", "sgd_data", "zero_grad", "return_grad"]
    name = draw(st.sampled_from(choices))
    if name in ("inplace", "replace"):
        return name, draw(st.sampled_from(CONSTS))
    if name == "register":
        hid = next(nested_ids)
        return name, hid, hook_spec(draw, results, simple=True)
    if name == "retain":
        return name, draw(st.sampled_from(results))
    if name == "remove":
        return name, None  # filled in by `programs` with an earlier hook's id
    if name in ("write_no_grad", "write_data"):
        return name, draw(st.sampled_from(leaves + results)), draw(st.sampled_from(CONSTS))
    if name == "stop":
        return name, draw(st.sampled_from(leaves))
    if name == "raise":
        return name, draw(st.integers(1, 2))
    return (name,)


def hook_spec(draw, results, simple=False, nested_ids=None):
    """A hook on a result that is used (or a leaf)."""
    kind = draw(st.sampled_from(["tensor", "tensor", "pre", "post", "acc"]))
    if kind in ("pre", "post"):
        target = draw(st.sampled_from(results))
    elif kind == "acc":
        target = draw(st.sampled_from(sorted(LEAVES)))
    else:
        target = draw(st.sampled_from(sorted(LEAVES) + results))
    if simple:
        effect = (draw(st.sampled_from(["log", "replace"] + (["inplace"] if kind != "post"
                                                             else []))),
                  draw(st.sampled_from(CONSTS)))
    else:
        effect = effects(draw, kind, results, nested_ids)
    return kind, target, effect


@st.composite
def programs(draw):
    forward = draw(forward_ops())
    loss = [(name, draw(st.sampled_from(CONSTS)))
            for name in draw(st.lists(st.sampled_from([f"t{k}" for k in range(len(forward))]),
                                      min_size=1, max_size=3, unique=True))]
    used = {a for op in forward for a in op[2]} | {n for n, _ in loss}
    results = sorted(n for n in used if n.startswith("t"))
    n_hooks = draw(st.integers(1, 4))
    nested_ids = iter(range(100, 200))  # hooks that hooks register
    hooks = []
    for hid in range(n_hooks):
        kind, target, effect = hook_spec(draw, results, nested_ids=nested_ids)
        if effect[0] == "remove":
            others = [j for j in range(n_hooks) if j != hid]
            effect = ("remove", draw(st.sampled_from(others))) if others else ("log",)
        hooks.append((kind, target, effect))
    retain = draw(st.lists(st.sampled_from(results), max_size=1))
    stop = draw(st.lists(st.sampled_from(sorted(LEAVES)), max_size=1)) \
        if draw(st.integers(0, 4)) == 0 else []
    n_calls = draw(st.integers(1, 2))
    calls = []
    for c in range(n_calls):
        mode = draw(st.sampled_from(["backward", "backward", "inputs", "grad"]))
        names = draw(st.lists(st.sampled_from(sorted(LEAVES) + results), min_size=1,
                              max_size=3, unique=True)) if mode != "backward" else []
        retain_graph = True if c < n_calls - 1 else draw(st.booleans())
        calls.append((mode, names, retain_graph))
    return dict(seed=draw(st.integers(0, 2**16)), forward=forward, loss=loss, hooks=hooks,
                retain=retain, stop=stop, backward=calls)


def _remove_targets_exist(program):
    """A `remove` effect names a hook registered before backward (ids 0..n-1)."""
    return all(e[0] != "remove" or e[1] < len(program["hooks"])
               for _, _, e in program["hooks"])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.slow
@settings(max_examples=1000, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_hook_programs_match_torch(program):
    assert _remove_targets_exist(program)
    same(lambda L, log: run_program(L, log, program), quiet=True)
