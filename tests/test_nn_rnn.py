"""nn.RNN / LSTM / GRU, the cells and nn.utils.rnn against real torch: the same weights
(copied through load_state_dict), the same inputs; outputs, h_n / c_n, the grad_fn
graph (node names, node by node), gradients of the input, hx and every parameter, a few
SGD steps, double backward, reprs, parameters and init, PackedSequence handling and
torch's errors. Dropout between layers is random: checked by structure and in eval."""
import math

import pytest
from _nn_helpers import arrays, copy_weights
from conftest import same, same_error

import eagergrad as eg


def _names(fn):
    """The graph below a node as a list of (name, [child indices]) in DFS order, shared
    nodes listed once (the recurrent graphs are DAGs with heavy sharing)."""
    index, out, todo = {}, [], [fn]
    while todo:
        n = todo.pop()
        if n is None or id(n) in index:
            continue
        index[id(n)] = len(out)
        kids = [k for k, _ in n.next_functions]
        out.append((n, kids))
        todo.extend(reversed(kids))
    return [(n.name(), [None if k is None else index[id(k)] for k in kids]) for n, kids in out]


def _build(L, cls, kw, dtype="float32", seed=0):
    m = getattr(L.nn, cls)(**kw)
    if dtype == "float64":
        m = m.double()
    return copy_weights(L, m, seed, dtype)


def _flat(out):
    res = []
    for v in out if isinstance(out, tuple) else (out,):
        if isinstance(v, tuple) and hasattr(v, "batch_sizes"):
            res.append(v.data)
        elif isinstance(v, tuple):
            res.extend(_flat(v))
        else:
            res.append(v)
    return res


def _run(L, m, x, hx=None, seed=1):
    """Outputs, graph names, the input's / hx's / parameters' gradients."""
    out = m(x) if hx is None else m(x, hx)
    outs = _flat(out)
    graph = [_names(o.grad_fn) for o in outs]
    vs = [L.tensor(a) for a in arrays(seed, *[tuple(o.shape) for o in outs],
                                       dtype=str(outs[0].dtype).split(".")[-1])]
    sum((o * v).sum() for o, v in zip(outs, vs)).backward()
    leaves = [t for t in ([x] if not isinstance(x, tuple) else []) +
              (list(hx) if isinstance(hx, tuple) else [hx] if hx is not None else [])
              if t is not None and t.is_leaf and t.requires_grad]
    return outs, graph, [t.grad for t in leaves], \
        {k: p.grad for k, p in m.named_parameters()}


MODULES = [
    ("LSTM", {"input_size": 3, "hidden_size": 4}, (3, 2, 3), "float32"),
    ("LSTM", {"input_size": 3, "hidden_size": 2, "num_layers": 2, "bidirectional": True,
                  "batch_first": True}, (2, 3, 3), "float32"),
    ("LSTM", {"input_size": 3, "hidden_size": 2, "bias": False}, (3, 3), "float32"),
    ("LSTM", {"input_size": 3, "hidden_size": 3, "proj_size": 2}, (3, 2, 3), "float32"),
    ("GRU", {"input_size": 3, "hidden_size": 2, "batch_first": True}, (2, 3, 3), "float32"),
    ("GRU", {"input_size": 3, "hidden_size": 2, "num_layers": 2, "bidirectional": True,
             "bias": False},
     (3, 2, 3), "float64"),
    ("RNN", {"input_size": 3, "hidden_size": 2, "nonlinearity": "relu"}, (3, 2, 3), "float32"),
    ("RNN", {"input_size": 3, "hidden_size": 2, "bidirectional": True}, (3, 3), "float64"),
    ("LSTMCell", {"input_size": 3, "hidden_size": 2}, (2, 3), "float32"),
    ("GRUCell", {"input_size": 3, "hidden_size": 2}, (3,), "float64"),
    ("RNNCell", {"input_size": 3, "hidden_size": 2, "nonlinearity": "relu", "bias": False}, (2, 3),
     "float32"),
]


@pytest.mark.fast_first
@pytest.mark.parametrize("cls,kw,shape,dtype", MODULES,
                         ids=[f"{c}-{i}" for i, (c, *_) in enumerate(MODULES)])
def test_forward_graph_backward(cls, kw, shape, dtype):
    def f(L):
        m = _build(L, cls, kw, dtype)
        x = L.tensor(arrays(2, shape, dtype=dtype)[0], requires_grad=True)
        return _run(L, m, x)
    same(f, fused=True)


def _hx_for(L, cls, kw, batch, dtype, seed=3):
    nd = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * nd
    h = kw.get("proj_size") or kw["hidden_size"]
    shape = (n, batch, h) if batch else (n, h)
    cshape = (n, batch, kw["hidden_size"]) if batch else (n, kw["hidden_size"])
    a, b = arrays(seed, shape, cshape, dtype=dtype)
    hx = L.tensor(a, requires_grad=True)
    return (hx, L.tensor(b, requires_grad=True)) if cls == "LSTM" else hx


@pytest.mark.fast_first
@pytest.mark.parametrize("cls,kw,shape,dtype", [
    ("LSTM", {"input_size": 3, "hidden_size": 2, "num_layers": 2}, (3, 2, 3), "float32"),
    ("GRU", {"input_size": 3, "hidden_size": 2, "bidirectional": True}, (3, 2, 3), "float32"),
    ("RNN", {"input_size": 3, "hidden_size": 2}, (2, 3), "float64"),
], ids=["lstm", "gru-bidir", "rnn-unbatched"])
def test_given_hx(cls, kw, shape, dtype):
    """hx requiring grad: SelectBackward0 (mkldnn) / UnbindBackward0 (composite) edges."""
    def f(L):
        m = _build(L, cls, kw, dtype)
        x = L.tensor(arrays(2, shape, dtype=dtype)[0], requires_grad=True)
        return _run(L, m, x, _hx_for(L, cls, kw, shape[1] if len(shape) == 3 else 0, dtype))
    same(f)


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["LSTM", "RNN"])
def test_packed_sequence(cls):
    """Unsorted lengths through a bidirectional (RNN: 2-layer) module: PackedSequence out,
    h_n permuted back, pad_packed_sequence of the output; graphs and gradients."""
    def f(L):
        u = L.nn.utils.rnn
        m = _build(L, cls, {"input_size": 3, "hidden_size": 2, "num_layers": 1 + (cls == "RNN"),
                                "bidirectional": True})
        x = L.tensor(arrays(2, (3, 3, 3))[0], requires_grad=True)
        p = u.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False)
        out, h = m(p)
        padded, lengths = u.pad_packed_sequence(out, padding_value=-2.0)
        hs = list(h) if isinstance(h, tuple) else [h]
        graph = [_names(t.grad_fn) for t in [out.data, padded] + hs]
        vs = [L.tensor(a) for a in arrays(5, *[tuple(t.shape) for t in [padded] + hs])]
        sum((t * v).sum() for t, v in zip([padded] + hs, vs)).backward()
        return (out.batch_sizes, out.sorted_indices, out.unsorted_indices, padded, lengths,
                hs, graph, x.grad, {k: p.grad for k, p in m.named_parameters()})
    same(f)


def test_sgd_training_steps():
    """Three SGD steps of LSTM -> Linear on a regression target (float32 mkldnn path)."""
    def f(L):
        m = _build(L, "LSTM", {"input_size": 3, "hidden_size": 4})
        head = _build(L, "Linear", {"in_features": 4, "out_features": 1}, seed=7)
        opt = L.optim.SGD(list(m.parameters()) + list(head.parameters()), lr=0.1)
        x, y = [L.tensor(a) for a in arrays(2, (4, 2, 3), (4, 2, 1))]
        losses = []
        for _ in range(3):
            opt.zero_grad()
            out, _ = m(x)
            loss = ((head(out) - y) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, dict(m.named_parameters()), dict(head.named_parameters())
    same(f)


@pytest.mark.slow
def test_double_backward_lstm():
    """torch differentiates MkldnnRnnLayerBackward0 with recorded ops under create_graph."""
    def f(L):
        m = _build(L, "LSTM", {"input_size": 3, "hidden_size": 2})
        x = L.tensor(arrays(2, (3, 2, 3))[0], requires_grad=True)
        out, (_h, c) = m(x)
        g, = L.autograd.grad((out * out).sum() + c.sum(), x, create_graph=True)
        g2 = L.autograd.grad((g * g).sum(), [x, m.weight_hh_l0])
        # (torch's differentiable backward ends in a cat, eagergrad's in a stack)
        return g.requires_grad, g.detach(), g2
    same(f)


def test_saved_attributes():
    def f(L):
        m = _build(L, "LSTM", {"input_size": 3, "hidden_size": 2, "bidirectional": True})
        x = L.tensor(arrays(2, (3, 1, 3))[0], requires_grad=True)
        out, _ = m(x)
        n = out.grad_fn.next_functions[1][0]  # the reverse direction's layer
        keys = [k for k in dir(n) if k.startswith("_saved_") and k != "_saved_result3"
                and not callable(getattr(n, k))]
        return n.name(), {k: getattr(n, k) for k in keys}
    same(f)


def test_dropout_between_layers():
    """Training with dropout: random masks (structure: shapes, a MulBackward0 between the
    layers, outputs differ from eval); eval: torch's values."""
    def f(L):
        m = _build(L, "GRU", {"input_size": 3, "hidden_size": 2, "num_layers": 2, "dropout": 0.5})
        x = L.tensor(arrays(2, (3, 2, 3))[0])
        m.train()
        out, h = m(x)
        m.eval()
        out2, h2 = m(x)
        return tuple(out.shape), tuple(h.shape), out2, h2, m.training
    same(f)
    m = eg.nn.LSTM(3, 2, num_layers=2, dropout=0.5)
    out, _ = m(eg.ones(3, 2, 3))
    layer2 = out.grad_fn
    assert layer2.name() == "MkldnnRnnLayerBackward0"
    assert layer2.next_functions[0][0].name() == "MulBackward0"  # the dropout


@pytest.mark.parametrize("make", [
    lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True,
                        dropout=0.25, proj_size=2),
    lambda L: L.nn.GRU(3, 4, bias=False),
    lambda L: L.nn.RNN(3, 4, 2, "relu"),
    lambda L: L.nn.RNN(3, 4, nonlinearity="tanh"),
    lambda L: L.nn.RNNCell(3, 4, nonlinearity="relu", bias=False),
    lambda L: L.nn.LSTMCell(3, 4),
    lambda L: L.nn.GRUCell(3, 4, bias=False),
], ids=["lstm", "gru", "rnn-relu", "rnn", "rnncell", "lstmcell", "grucell"])
def test_repr_parameters_init(make):
    def f(L):
        m = make(L)
        params = [(k, tuple(p.shape)) for k, p in m.named_parameters()]
        bound = 1 / math.sqrt(m.hidden_size)
        within = all(float(p.detach().abs().max()) <= bound for p in m.parameters())
        flat = [w is getattr(m, n) for w, n in zip(m._flat_weights, m._flat_weights_names)] \
            if hasattr(m, "_flat_weights") else None
        return repr(m), params, within, flat, sorted(m.state_dict())
    same(f)


def test_flat_weights_follow_assignment():
    def f(L):
        m = L.nn.GRU(2, 2)
        m.flatten_parameters()
        m.weight_hh_l0 = L.nn.Parameter(L.zeros(6, 2))
        m.double()
        return [tuple(w.shape) for w in m._flat_weights], m._flat_weights[1], \
            [str(w.dtype) for w in m.all_weights[0]]
    same(f)


ERRORS = [
    (lambda L: L.nn.LSTM(3, 2)(L.zeros(2, 2, 2, 3)), ValueError, "Expected input to be 2D"),
    (lambda L: L.nn.RNN(3, 2)(L.zeros(2)), ValueError, "Expected input to be 2D"),
    (lambda L: L.nn.GRU(3, 2)(L.zeros(2, 2, 4)), RuntimeError, "input.size(-1) must be"),
    (lambda L: L.nn.GRU(3, 2)(L.zeros(2, 2, 3), L.zeros(1, 3, 2)), RuntimeError,
     "Expected hidden size"),
    (lambda L: L.nn.GRU(3, 2)(L.zeros(2, 2, 3), L.zeros(3, 2)), RuntimeError,
     "For batched 3-D input, hx should also be 3-D"),
    (lambda L: L.nn.RNN(3, 2)(L.zeros(2, 3), L.zeros(1, 1, 2)), RuntimeError,
     "For unbatched 2-D input, hx should also be 2-D"),
    (lambda L: L.nn.LSTM(3, 2)(L.zeros(2, 2, 3), (L.zeros(1, 2, 2), L.zeros(1, 2, 3))),
     RuntimeError, "Expected hidden[1] size"),
    (lambda L: L.nn.LSTM(3, 2)(L.zeros(2, 2, 3), (L.zeros(1, 2), L.zeros(1, 2))),
     RuntimeError, "hx and cx should also be 3-D"),
    (lambda L: L.nn.LSTM(3, 2)(L.zeros(2, 2, 3, dtype=L.float64)), ValueError,
     "does not match weight dtype"),
    (lambda L: L.nn.LSTM(3, 2, proj_size=2), ValueError, "proj_size has to be smaller"),
    (lambda L: L.nn.GRU(3, 2, proj_size=1), ValueError, "proj_size argument is only"),
    (lambda L: L.nn.RNN(3, 2, nonlinearity="gelu"), ValueError, "Unknown nonlinearity"),
    (lambda L: L.nn.LSTM(3, 2, dropout=1.5), ValueError, "dropout should be a number"),
    (lambda L: L.nn.LSTM(3, 0), ValueError, "hidden_size must be greater than zero"),
    (lambda L: L.nn.GRUCell(3, 2)(L.zeros(2, 4)), RuntimeError,
     "input has inconsistent input_size"),
    (lambda L: L.nn.LSTMCell(3, 2)(L.zeros(2, 3), (L.zeros(3, 2), L.zeros(2, 2))),
     RuntimeError, "doesn't match hidden0 batch size"),
    (lambda L: L.nn.RNNCell(3, 2)(L.zeros(2, 3), L.zeros(2, 3)), RuntimeError,
     "hidden0 has inconsistent hidden_size"),
    (lambda L: L.nn.GRUCell(3, 2)(L.zeros(1, 2, 3)), ValueError,
     "GRUCell: Expected input to be 1D or 2D"),
    (lambda L: L.nn.LSTMCell(3, 2)(L.zeros(3), (L.zeros(1, 1, 2), L.zeros(2))), ValueError,
     "Expected hx[0] to be 1D or 2D"),
    (lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(3, 2), [1, 3]), RuntimeError,
     "must be sorted in decreasing order"),
    (lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(3, 2), [3, 2, 1]), RuntimeError,
     "Expected `len(lengths)` to be equal to batch_size"),
    (lambda L: L.nn.utils.rnn.pack_padded_sequence(L.zeros(3, 2), [3, 0]), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda L: L.nn.utils.rnn.pad_sequence([L.zeros(2)], padding_side="mid"), RuntimeError,
     "Expected padding_side to be one of left or right"),
    (lambda L: L.nn.utils.rnn.pad_packed_sequence(
        L.nn.utils.rnn.pack_sequence([L.zeros(3)]), total_length=2), ValueError,
     "Expected total_length to be at least"),
]


@pytest.mark.parametrize("fn,exc,phrase", ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_errors(fn, exc, phrase):
    same_error(fn, phrase, exc, quiet=True)


@pytest.mark.slow
def test_rnn_utils():
    """pad_sequence (both sides, batch_first), pack_sequence (unsorted), unpack_sequence,
    unpad_sequence, PackedSequence indexing / fields / .to, and their graphs."""
    def f(L):
        u = L.nn.utils.rnn
        a, b, c = [L.tensor(v, requires_grad=True) for v in arrays(4, (2, 2), (3, 2), (1, 2))]
        left = u.pad_sequence([a, b, c], batch_first=True, padding_value=0.5,
                              padding_side="left")
        right = u.pad_sequence([a, b, c])
        p = u.pack_sequence([a, b, c], enforce_sorted=False)
        seqs = u.unpack_sequence(p)
        unpadded = u.unpad_sequence(left.detach(), L.tensor([2, 3, 1]), batch_first=True)
        (left.sum() + (right * 2).sum() + sum((s * 3).sum() for s in seqs)).backward()
        q = p.to(L.float64)
        return (left, right, _names(right.grad_fn), p.data, p[1], p._fields, seqs,
                _names(seqs[0].grad_fn), unpadded, a.grad, b.grad, c.grad, q.data.dtype,
                type(q).__name__, p.to(L.float32) is p,
                u.invert_permutation(L.tensor([2, 0, 1])))
    same(f)


def test_unbatched_and_zero_state():
    """Unbatched LSTM (SqueezeBackward1 outputs), default zero hx; a PackedSequence built
    from the fields (data, batch_sizes)."""
    def f(L):
        m = _build(L, "LSTM", {"input_size": 3, "hidden_size": 2, "batch_first": True})
        x = L.tensor(arrays(2, (3, 3))[0])
        out, (h, c) = m(x)
        out2, (_h2, _c2) = m(x.unsqueeze(0))
        P = L.nn.utils.rnn.PackedSequence
        p = P(L.tensor([1.0, 2.0, 3.0]), L.tensor([2, 1]))
        return out, h, c, out2.squeeze(0), _names(out.grad_fn), p, p.sorted_indices
    same(f)
