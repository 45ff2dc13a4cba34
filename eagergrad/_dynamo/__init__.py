"""torch.compile and torch._dynamo: a compiled function traces a call into one XLA program
(forward, backward with its hooks, optimizer steps) and replays it on later calls whose
guards hold, writing the new state back into the same tensors (NOTE [compiled calls] in
_step.py).

>>> import eagergrad as torch
>>> w = torch.ones(2, requires_grad=True)
>>> opt = torch.optim.SGD([w], lr=0.1)
>>> @torch.compile
... def step(x):
...     opt.zero_grad()
...     loss = (w * x).sum()
...     loss.backward()
...     opt.step()
...     return loss
>>> [round(step(torch.tensor([1.0, 2.0])).item(), 4) for _ in range(3)]
[3.0, 2.5, 2.0]
>>> w
tensor([0.7000, 0.4000], requires_grad=True)
"""
import functools

from ..nn import Module
from . import exc
from ._step import _STANCE, COUNTERS, CompiledFunction, config

__all__ = ["COUNTERS", "OptimizedModule", "compile", "config", "exc", "explain",
           "is_compiling", "mark_dynamic", "reset", "set_stance"]

_BACKENDS = ("inductor", "eager", "aot_eager", "openxla", "cudagraphs")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_COMPILED = []  # every CompiledFunction made (reset() empties their caches)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile: `model` (a function or an nn.Module) traced on its first call into
    one XLA program and replayed while its guards hold; as a decorator with or without
    arguments. `backend` and `mode` are accepted by torch's names (every one runs the same
    XLA program); `dynamic` compiles one program per size seen.

    >>> import eagergrad as torch
    >>> f = torch.compile(lambda x: (x * 2).sin())
    >>> f(torch.zeros(2))
    tensor([0., 0.])
    """
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError("eagergrad does not implement torch.compile with a "
                                  "custom backend callable: its one backend is XLA")
    if backend not in _BACKENDS:
        raise exc.TorchDynamoException(f"backend={backend!r} is not a registered backend")
    if not callable(model):
        raise RuntimeError("torch.compile: model must be callable")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph=fullgraph, dynamic=dynamic)
    c = CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic)
    _COMPILED.append(c)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return c(*args, **kwargs)
    compiled._torchdynamo_orig_callable = model
    compiled._compiled = c
    return compiled


class OptimizedModule(Module):
    """What torch.compile returns for a module: calls run the compiled module; its
    attributes are the module's (`_orig_mod`), and its state_dict's keys start with
    "_orig_mod." as torch's do."""

    def __init__(self, mod, fullgraph=False, dynamic=None):
        super().__init__()
        self._orig_mod = mod
        c = CompiledFunction(mod._call_impl, fullgraph=fullgraph, dynamic=dynamic)
        _COMPILED.append(c)
        object.__setattr__(self, "_compiled", c)
        object.__setattr__(self, "_compiled_call", _CompiledCall(c))
        self.training = mod.training

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    forward = __call__

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)

    def train(self, mode=True):
        self._orig_mod.train(mode)
        object.__setattr__(self, "training", mode)
        return self


class _CompiledCall:
    """A handle on a compiled module's CompiledFunction for explain()."""

    def __init__(self, c):
        self._compiled = c


def _compiled_of(fn):
    c = getattr(fn, "_compiled", None)
    if c is None:
        raise TypeError(f"{fn!r} is not a function torch.compile returned")
    return c


class ExplainOutput:
    """What explain() reports: graph_count (programs compiled), graph_break_count,
    break_reasons, recompile_reasons, and calls (traced, replayed, run eagerly)."""

    def __init__(self, c):
        self.graph_count = c.compiles + sum(p.compiles for _, p in c.pieces.values())
        self.graph_break_count = len(c.breaks)
        self.break_reasons = list(c.breaks)
        self.recompile_reasons = list(c.recompile_reasons)
        self.recompile_count = len(c.recompile_reasons)
        self._entries = list(c.entries.values())

    @property
    def programs(self):
        """eagergrad's own: the optimized HLO text of each compiled program (after XLA's
        SPMD partitioner: a program over a device mesh shows its collectives)."""
        return [e.run.lower(*e.specs).compile().as_text() for e in self._entries]

    def __repr__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Recompile Count: {self.recompile_count}"]
        lines += [f"Break Reason: {r}" for r in self.break_reasons]
        lines += [f"Recompile Reason: {r}" for r in self.recompile_reasons]
        return "\n".join(lines)


def explain(fn, *extra_args, **extra_kwargs):
    """What a compiled function did so far: explain(compiled) reports its graphs, graph
    breaks and recompiles; explain(fn)(*args) compiles fn, calls it once and reports
    (torch._dynamo.explain's form)."""
    if getattr(fn, "_compiled", None) is not None:
        return ExplainOutput(fn._compiled)

    def run(*args, **kwargs):
        c = compile(fn)
        c(*args, **kwargs)
        return ExplainOutput(_compiled_of(c) if not isinstance(c, OptimizedModule)
                             else c._compiled)
    if extra_args or extra_kwargs:
        return run(*extra_args, **extra_kwargs)
    return run


def reset():
    """Forget every compiled program (torch._dynamo.reset / torch.compiler.reset)."""
    for c in _COMPILED:
        c.entries.clear()
        c.broken, c.compiles, c.recent = None, 0, None
        c.pieces.clear()
        c.recompile_reasons.clear()
        c.breaks.clear()


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """torch.compiler.set_stance: "default", "force_eager" (compiled functions run
    eagerly), "eager_on_recompile" is not implemented, "fail_on_recompile" (a call that
    would compile again raises)."""
    if stance not in ("default", "force_eager", "fail_on_recompile"):
        raise NotImplementedError(f"eagergrad does not implement torch.compiler.set_stance("
                                  f"{stance!r})")
    _STANCE[0] = stance


def is_compiling():
    """True inside a compiled function's trace."""
    from .._mode import COMPILING
    return COMPILING.rec is not None


def mark_dynamic(t, index, *, min=None, max=None):
    """Accepted: eagergrad compiles one program per size a dimension takes."""
