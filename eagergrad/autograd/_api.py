"""torch.autograd.backward and torch.autograd.grad (and Tensor.backward)."""
import jax

from .._mode import ANOMALY, FUNC, FWD
from ..engine.engine import execute
from ..creation import from_jax, ones_like, zeros_like
from ..ops._args import as_t
from ..ops.shape import stack
from ..size import Size
from ..tensor import Tensor, _tangent
from . import graph


def _as_tuple(x):
    # (not _shapes.as_tuple: None is no tensors, a GradientEdge one, any iterable a tuple)
    if x is None:
        return ()
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return (x,)
    return tuple(x)


def _grads_tuple(grads, n):
    """torch's _tensor_or_tensors_to_tuple: None for every output, a lone tensor as a
    1-tuple (not repeated), anything else as given (zipped with the outputs later)."""
    if grads is None:
        return [None] * n
    if isinstance(grads, Tensor):
        return [grads]
    return list(grads)


def _check_count(outputs, grads):
    if len(outputs) != len(grads):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")


def _make_grads(outputs, grads, batched=False):
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if not o._requires_grad:
                out.append(None)
                continue
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o.dtype.is_floating_point:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {o.dtype!r}")
            out.append(ones_like(o))
            continue
        g = as_t(g)
        if batched:
            if g.dim() == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in "
                                 "Python or `tensor.item<T>()` in C++ to convert a 0-dim "
                                 "tensor to a number")
            first = g[0]
            if first._shape != o._shape:
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each "
                    "grad_output as the batch dimension. The sizes of the remaining dimensions "
                    "are expected to match the shape of corresponding output, but a mismatch "
                    f"was detected: grad_output[{i}] has a shape of {Size(first._shape[1:])!r} "
                    f"and output[{i}] has a shape of {Size(o._shape)!r}. If you only want some "
                    "tensors in `grad_output` to be considered batched, consider using vmap.")
        elif g._shape != o._shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{Size(g._shape)!r} and output[{i}] has a shape of "
                               f"{Size(o._shape)!r}.")
        if g.dtype.is_complex != o.dtype.is_complex:
            raise RuntimeError("For complex Tensors, both grad_output and output are required to "
                               f"have the same dtype. Mismatch in dtype: grad_output[{i}] has a "
                               f"dtype of {g.dtype!r} and output[{i}] has a dtype of "
                               f"{o.dtype!r}.")
        out.append(g)
    return out


def _root_edges(outputs):
    edges = []
    for i, o in enumerate(outputs):
        e = o._edge() if o._requires_grad else None
        if e is None:  # (also a view made under no_grad: requires grad, but no history)
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        edges.append(e)
    return edges


def _input_edges(inputs):
    edges = []
    for t in inputs:
        if isinstance(t, graph.GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append((t.grad_fn, t._out_nr) if t.grad_fn is not None else
                     ((t._grad_accumulator(), 0) if t._grad_accumulator() else None))
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of `tensors` into the `.grad` of the graph's leaves.

    >>> import eagergrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> torch.autograd.backward([(x * 3).sum()]); x.grad
    tensor([3., 3.])
    """
    if FUNC.levels:
        raise RuntimeError("backward() called inside a functorch transform. This is not "
                           "supported, please use functorch.grad or functorch.vjp instead or "
                           "call backward() outside of functorch transforms.")
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _grads_tuple(grad_tensors, len(tensors))
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grads)
    _check_count(tensors, grads)
    roots = _root_edges(tensors)
    outs = None
    if inputs is not None:
        for t in inputs:
            if isinstance(t, Tensor):
                t.retain_grad()  # before the requires_grad check, as torch
        outs = _input_edges(inputs)
    execute(roots, grads, retain_graph, create_graph, outs, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` w.r.t. `inputs`, returned instead of accumulated.

    >>> import eagergrad as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> torch.autograd.grad((x ** 3).sum(), x)
    (tensor([12.]),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _grads_tuple(grad_outputs, len(outputs))
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grads, is_grads_batched)
    _check_count(outputs, grads)
    n = _batch_size(grads) if is_grads_batched else None  # torch's vmap checks come first
    roots = _root_edges(outputs)
    outs = _input_edges(inputs)
    if is_grads_batched:
        res = _batched_execute(roots, grads, retain_graph, create_graph, outs, n)
    else:
        res = execute(roots, grads, retain_graph, create_graph, outs, accumulate_grad=False)
    for i, r in enumerate(res):
        if r is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
            if materialize_grads:
                res[i] = zeros_like(inputs[i])
        elif not create_graph:
            res[i] = r.detach()
            if FWD.active:  # forward-over-reverse: the gradient keeps its tangent
                res[i]._fw = (FWD.gen, _tangent(r))
    return tuple(res)


def _batch_size(grads):
    for g in grads:
        if g is None:
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for an input but "
                             "the input is of type <class 'NoneType'>. We cannot vmap over "
                             "non-Tensor arguments, please use None as the respective in_dim")
        if g.dim() == 0:
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, "
                             "but that input is a Tensor of dimensionality 0 so expected in_dim "
                             "to satisfy 0 <= in_dim < 0.")
    sizes = [g._shape[0] for g in grads]
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _batched_execute(roots, grads, retain_graph, create_graph, outs, n):
    """torch's vmap of the engine over the grad_outputs' first dimension: ONE engine run
    under jax.vmap (nodes and formulas are tracer-safe; saved tensors are constants).
    create_graph=True keeps a graph, which cannot leave a jax trace: there the rows run
    one engine run each and are stacked (values as torch's, grad_fn StackBackward0)."""
    if ANOMALY.enabled and ANOMALY.check_nan:  # its NaN check reads values: torch's error
        raise RuntimeError("Batching rule not implemented for aten::item. We could not "
                           "generate a fallback.")
    if create_graph and n:
        rows = [execute(roots, [g[b] for g in grads], True if b < n - 1 else retain_graph,
                        True, outs, accumulate_grad=False) for b in range(n)]
        return [None if rows[0][i] is None else stack([row[i] for row in rows])
                for i in range(len(outs))]

    def one(values):
        res = execute(roots, [from_jax(v) for v in values], retain_graph, False, outs,
                      accumulate_grad=False)
        return [None if r is None else r._value for r in res]
    out = jax.vmap(one)([g._value for g in grads])
    return [None if v is None else from_jax(v) for v in out]


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaves) into the leaves' `.grad` (torch.Tensor.backward)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__ = "backward"  # (Tensor.backward: _tensor_methods.py binds it)
