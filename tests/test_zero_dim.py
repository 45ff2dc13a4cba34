"""A 0-d tensor's dim 0 / -1 as torch takes it (ops/__init__.py's list, OpDef.scalar_as_vector,
reduce.py's _dims): values, graphs, gradients and double backward, and torch's errors where
it refuses (narrow, unbind); and the positional `unbiased` overload of var/std."""
import pytest

from conftest import same

CASES = {
    "sum": lambda m, x: m.sum(x, 0),
    "sum keepdim": lambda m, x: m.sum(x, -1, keepdim=True),
    "sum dims": lambda m, x: x.sum((0,)),
    "mean": lambda m, x: x.mean(0),
    "amax": lambda m, x: x.amax(0),
    "amin keepdim": lambda m, x: x.amin(-1, keepdim=True),
    "max": lambda m, x: x.max(0),
    "min keepdim": lambda m, x: x.min(0, keepdim=True),
    "argmax": lambda m, x: x.argmax(0),
    "argmin keepdim": lambda m, x: x.argmin(-1, keepdim=True),
    "softmax": lambda m, x: x.softmax(0),
    "log_softmax": lambda m, x: x.log_softmax(-1),
    "index_select": lambda m, x: x.index_select(0, m.tensor([0])),
    "transpose": lambda m, x: x.transpose(0, -1),
    "t": lambda m, x: x.t(),
    "squeeze": lambda m, x: x.squeeze(0),
    "cumsum": lambda m, x: x.cumsum(0),
    "prod": lambda m, x: x.prod(0),
    "var": lambda m, x: x.var(0, correction=0),
    "logsumexp": lambda m, x: x.logsumexp(0),
    "norm": lambda m, x: x.norm(dim=0),
    "all": lambda m, x: x.all(0),
    "any": lambda m, x: x.any(-1),
    "sort": lambda m, x: x.sort(0),
    "argsort": lambda m, x: x.argsort(0),
    "topk": lambda m, x: x.topk(1, 0),
    "kthvalue": lambda m, x: x.kthvalue(1, 0),
    "median": lambda m, x: x.median(0),
    "gather": lambda m, x: x.gather(0, m.tensor(0)),
    "scatter": lambda m, x: (x * 1).scatter(0, m.tensor(0), 5.0),
    "scatter_add": lambda m, x: (x * 1).scatter_add(0, m.tensor(0), m.tensor(3.0, dtype=x.dtype)),
    "scatter_add dtypes": lambda m, x: (x * 1).scatter_add(0, m.tensor(0), m.tensor(3.0)),
    "index_fill": lambda m, x: (x * 1).index_fill(0, m.tensor([0]), 1.0),
    "index_copy": lambda m, x: (x * 1).index_copy(0, m.tensor([0]), m.tensor([1.0], dtype=x.dtype)),
    "index_copy dtypes": lambda m, x: (x * 1).index_copy(0, m.tensor([0]), m.tensor([1.0])),
    "movedim": lambda m, x: x.movedim(0, 0),
    "narrow": lambda m, x: x.narrow(0, 0, 1),
    "unbind": lambda m, x: x.unbind(0),
}


# torch's double backward of softmax runs _softmax_backward_data's own node: eagergrad's
# formula is composite (same values; compared to first order here)
_FIRST_ORDER = ("softmax", "log_softmax")


@pytest.mark.parametrize("name", list(CASES))
def test_zero_dim(name):
    f = CASES[name]
    create_graph = name not in _FIRST_ORDER

    def scenario(m, log):
        x = m.tensor(2.5, dtype=m.float64, requires_grad=True)
        out = f(m, x)
        outs = out if isinstance(out, tuple) else (out,)
        log.append(list(outs))
        diff = [o for o in outs if o.requires_grad]
        if diff:
            g, = m.autograd.grad(sum(o.sum() for o in diff), x, create_graph=create_graph)
            log.append(g)
            if g.requires_grad:
                log.append(m.autograd.grad(g, x, allow_unused=True))
    same(scenario)


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("unbiased", [True, False])
def test_positional_unbiased(fn, unbiased):
    def scenario(m):
        x = m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_()
        r = getattr(m, fn)(x, unbiased)
        return r, getattr(x, fn)(unbiased), m.autograd.grad(r, x)[0]
    same(scenario)
