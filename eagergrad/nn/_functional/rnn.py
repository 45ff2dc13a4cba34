"""The recurrent computations behind nn.RNN/LSTM/GRU and the cells, recorded as ATen
records them on CPU (torch.nn.functional has no public RNN function).

- LSTM, float32, no projection, not packed: ATen's mkldnn_rnn, one mkldnn_rnn_layer
  (MkldnnRnnLayerBackward0, one lax.scan) per layer and direction; layer outputs joined
  by cat, h_n / c_n stacked.
- Everything else (GRU, RNN tanh/relu, LSTM in float64 / with proj_size / packed): ATen's
  `_rnn_impl`, per time step of ordinary ops (linear, unsafe_chunk, sigmoid, tanh, add,
  mul, stack, cat), so the graph matches torch's node by node.

The public torch.lstm / gru / rnn_tanh / rnn_relu (padded and packed overloads) and the
cells torch.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell (eagergrad/__init__.py
exports them) parse torch's arguments, run ATen's checks and call the same entry points.
"""
from ..._shapes import wrap_dim
from ...ops.rnn import _transpose_inplace_result, mkldnn_rnn_layer
from ...ops.shape import cat, stack
from ...tensor import Tensor
from .dropout import dropout
from .linear import linear


# ---- one step: ATen's cells (pre: the input part already computed for the whole layer) ---
class _Params:
    """ATen's CellParams: w_ih, w_hh, b_ih, b_hh (None when no bias), w_hr (None)."""

    __slots__ = ("b_hh", "b_ih", "w_hh", "w_hr", "w_ih")

    def __init__(self, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
        self.w_ih, self.w_hh, self.b_ih, self.b_hh, self.w_hr = w_ih, w_hh, b_ih, b_hh, w_hr

    def linear_ih(self, x):
        return linear(x, self.w_ih, self.b_ih)

    def linear_hh(self, h):
        return linear(h, self.w_hh, self.b_hh)


def _simple_cell(nonlinearity):
    def cell(x, h, p, pre):
        return nonlinearity(p.linear_hh(h) + (x if pre else p.linear_ih(x)))
    return cell


def _lstm_cell(x, hidden, p, pre):
    hx, cx = hidden
    gates = p.linear_hh(hx) + (x if pre else p.linear_ih(x))
    i, f, g, o = gates.unsafe_chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    hy = o * cy.tanh()
    if p.w_hr is not None:
        hy = hy.matmul(p.w_hr.t())
    return hy, cy


def _chunk3(t):
    """t.unsafe_chunk(3, 1), with ATen's errors for a step of fewer than 2 dims (the
    steps of a 2-D input to torch.gru)."""
    if t.ndim < 2:
        if t.ndim == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        wrap_dim(1, t.ndim)
    return t.unsafe_chunk(3, 1)


def _gru_cell(x, h, p, pre):
    ig = _chunk3(x if pre else p.linear_ih(x))
    hg = _chunk3(p.linear_hh(h))
    r = (hg[0] + ig[0]).sigmoid()
    z = (hg[1] + ig[1]).sigmoid()
    n = (ig[2] + hg[2] * r).tanh()
    return (h - n) * z + n


_CELLS = {"RNN_TANH": _simple_cell(lambda t: t.tanh()),
          "RNN_RELU": _simple_cell(lambda t: t.relu()),
          "LSTM": _lstm_cell, "GRU": _gru_cell}


def _out(hidden):
    return hidden[0] if isinstance(hidden, tuple) else hidden


def _hslice(hidden, start, end):
    if isinstance(hidden, tuple):
        return tuple(t.narrow(0, start, end - start) for t in hidden)
    return hidden.narrow(0, start, end - start)


def _hcat(hiddens):
    if isinstance(hiddens[0], tuple):
        return tuple(cat([h[k] for h in hiddens], 0) for k in range(len(hiddens[0])))
    return cat(hiddens, 0)


# ---- layers: ATen's FullLayer / PackedLayer / ReversedPackedLayer ----------------------
def _full_layer(cell, steps, hidden, p):
    outs = []
    for x in steps:
        hidden = cell(x, hidden, p, True)
        outs.append(_out(hidden))
    return outs, hidden


def _full(cell, x, hidden, p):
    outs, hidden = _full_layer(cell, p.linear_ih(x).unbind(0), hidden, p)
    if not outs:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    return stack(outs, 0), hidden


def _full_bidir(cell, x, hidden, ps):
    fw, fh = _full_layer(cell, ps[0].linear_ih(x).unbind(0), hidden[0], ps[0])
    if not fw:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    fw = stack(fw, 0)
    rv, rh = _full_layer(cell, ps[1].linear_ih(x).unbind(0)[::-1], hidden[1], ps[1])
    rv = stack(rv[::-1], 0)
    return cat([fw, rv], fw.ndim - 1), (fh, rh)


def _packed(cell, data, batch_sizes, hidden, p):
    xw = p.linear_ih(data)
    outs, hiddens = [], []
    offset, last = 0, batch_sizes[0]
    for bs in batch_sizes:
        x = xw.narrow(0, offset, bs)
        offset += bs
        dec = last - bs
        if dec > 0:
            hiddens.append(_hslice(hidden, last - dec, last))
            hidden = _hslice(hidden, 0, last - dec)
        last = bs
        hidden = cell(x, hidden, p, True)
        outs.append(_out(hidden))
    hiddens.append(hidden)
    return cat(outs, 0), _hcat(hiddens[::-1])


def _packed_reversed(cell, data, batch_sizes, input_hidden, p):
    xw = p.linear_ih(data)
    outs = []
    offset = data.shape[0]
    last = batch_sizes[-1]
    hidden = _hslice(input_hidden, 0, last)
    for bs in batch_sizes[::-1]:
        if bs - last > 0:
            hidden = _hcat([hidden, _hslice(input_hidden, last, bs)])
        x = xw.narrow(0, offset - bs, bs)
        offset -= bs
        last = bs
        hidden = cell(x, hidden, p, True)
        outs.append(_out(hidden))
    return cat(outs[::-1], 0), hidden


def _rnn_impl(mode, input, hiddens, params, num_layers, dropout_p, train, bidirectional,
              batch_sizes=None):
    """ATen's _rnn_impl / apply_layer_stack: (output, final hidden per layer[-direction])."""
    cell = _CELLS[mode]
    nd = 2 if bidirectional else 1
    finals = []
    x = input
    for layer in range(num_layers):
        ps = params[layer * nd:(layer + 1) * nd]
        hs = hiddens[layer * nd:(layer + 1) * nd]
        if batch_sizes is not None:
            out, h = _packed(cell, x, batch_sizes, hs[0], ps[0])
            if bidirectional:
                rv, rh = _packed_reversed(cell, x, batch_sizes, hs[1], ps[1])
                out, h = cat([out, rv], -1), (h, rh)
        elif bidirectional:
            out, h = _full_bidir(cell, x, hs, ps)
        else:
            out, h = _full(cell, x, hs[0], ps[0])
        finals.extend(h if bidirectional else (h,))
        x = out
        if dropout_p != 0 and train and layer < num_layers - 1:
            x = dropout(x, dropout_p, True)
    return x, finals


def _gather_params(weights, has_biases, has_proj=False):
    per = 2 + 2 * has_biases + has_proj
    out = []
    for k in range(0, len(weights), per):
        w = weights[k:k + per]
        b = (w[2], w[3]) if has_biases else (None, None)
        out.append(_Params(w[0], w[1], *b, w[-1] if has_proj else None))
    return out


# ---- the _VF entry points --------------------------------------------------------------
def _use_mkldnn(input, hx, cx, batch_sizes):
    return batch_sizes is None and input.dtype.name == "float32" and \
        hx.shape[-1] == cx.shape[-1] and input.numel() != 0


def _mkldnn_lstm(input, hx, cx, weights, has_biases, num_layers, dropout_p, train,
                 bidirectional, batch_first):
    """ATen's mkldnn_rnn: one mkldnn_rnn_layer per layer and direction."""
    x = input.transpose(0, 1).contiguous() if batch_first else input.contiguous()
    nd = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    hidden_size = hx.shape[2]
    hys, cys = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(nd):
            idx = layer * nd + d
            w = weights[idx * per:(idx + 1) * per]
            b0 = w[2] if has_biases else w[0].new_zeros(w[0].shape)
            b1 = w[3] if has_biases else w[1].new_zeros(w[1].shape)
            o, h, c, _ = mkldnn_rnn_layer(x, w[0], w[1], b0, b1, hx[idx], cx[idx], d > 0, (),
                                          2, hidden_size, num_layers, has_biases,
                                          bidirectional, False, train)
            outs.append(o)
            hys.append(h)
            cys.append(c)
        x = outs[0] if nd == 1 else cat(outs, -1)
        if dropout_p != 0 and train and layer < num_layers - 1:
            x = dropout(x, dropout_p, True)
    out = x.transpose(0, 1) if batch_first else x
    return out, stack(hys, 0), stack(cys, 0)


def _lstm(input, hx, weights, has_biases, num_layers, dropout_p, train, bidirectional,
          batch_first, batch_sizes=None):
    """_VF.lstm: (output, h_n, c_n); output is the packed data when batch_sizes."""
    h0, c0 = hx
    if _use_mkldnn(input, h0, c0, batch_sizes):
        return _mkldnn_lstm(input, h0, c0, weights, has_biases, num_layers, dropout_p, train,
                            bidirectional, batch_first)
    has_proj = h0.shape[-1] != c0.shape[-1]
    params = _gather_params(weights, has_biases, has_proj)
    x = input.transpose(0, 1) if batch_first and batch_sizes is None else input
    hiddens = list(zip(h0.unbind(0), c0.unbind(0)))
    out, finals = _rnn_impl("LSTM", x, hiddens, params, num_layers, dropout_p, train,
                            bidirectional, batch_sizes)
    if batch_first and batch_sizes is None:
        out = out.transpose(0, 1)
    return out, stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0)


def _rnn(mode, input, hx, weights, has_biases, num_layers, dropout_p, train, bidirectional,
         batch_first, batch_sizes=None):
    """_VF.gru / rnn_tanh / rnn_relu: (output, h_n)."""
    params = _gather_params(weights, has_biases)
    x = input.transpose(0, 1) if batch_first and batch_sizes is None else input
    out, finals = _rnn_impl(mode, x, list(hx.unbind(0)), params, num_layers, dropout_p,
                            train, bidirectional, batch_sizes)
    if batch_first and batch_sizes is None:
        out = _transpose_inplace_result(out, 0, 1)  # ATen: output.transpose_(0, 1)
    return out, stack(finals, 0)


# ---- cells --------------------------------------------------------------------------
def _check_cell_input(input, input_size):
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                           f"expected {input_size}")


def _check_cell_hidden(input, hx, hidden_size, label):
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} "
                           f"batch size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, "
                           f"expected {hidden_size}")


def _cell(mode, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """_VF.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell on batched input."""
    _check_cell_input(input, w_ih.shape[1])
    hs = w_hh.shape[1]
    for k, h in enumerate(hx if mode == "LSTM" else (hx,)):
        _check_cell_hidden(input, h, hs, k)
    return _CELLS[mode](input, tuple(hx) if mode == "LSTM" else hx,
                        _Params(w_ih, w_hh, b_ih, b_hh), False)


# ---- the public torch.lstm / gru / rnn_tanh / rnn_relu and the cells ------------------------
_RNN_ARGS = {
    "data": ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout",
             "train", "bidirectional"),
    "input": ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
              "bidirectional", "batch_first"),
}
_RNN_TYPES = {"data": "Tensor", "batch_sizes": "Tensor", "input": "Tensor",
              "params": "tuple of Tensors", "has_biases": "bool", "num_layers": "int",
              "dropout": "float", "train": "bool", "bidirectional": "bool",
              "batch_first": "bool"}


def _type_name(v):
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _rnn_arg_error(name, lstm, args, kwargs):
    got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    hx = "tuple of Tensors" if lstm else "Tensor"
    sigs = "".join(" * (" + ", ".join(f"{hx if n == 'hx' else _RNN_TYPES[n]} {n}"
                                       for n in _RNN_ARGS[k]) + ")\n"
                   for k in ("data", "input"))
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected one of:\n{sigs}")


def _is_tensors(v):
    return isinstance(v, (tuple, list)) and all(isinstance(t, Tensor) for t in v)


_ARG_OK = {"Tensor": lambda v: isinstance(v, Tensor), "tuple of Tensors": _is_tensors,
           "bool": lambda v: isinstance(v, bool),
           "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
           "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)}


def _bind_rnn(name, lstm, args, kwargs):
    """torch's overload resolution of torch.lstm / gru / rnn_tanh / rnn_relu: (packed,
    the arguments by name)."""
    packed = "data" in kwargs or "batch_sizes" in kwargs or (
        len(args) > 1 and isinstance(args[1], Tensor) and
        (lstm or (len(args) > 2 and isinstance(args[2], Tensor))))
    names = _RNN_ARGS["data" if packed else "input"]
    bound = dict(zip(names, args))
    if len(args) > len(names) or set(kwargs) - set(names) or set(bound) & set(kwargs):
        raise _rnn_arg_error(name, lstm, args, kwargs)
    bound.update(kwargs)
    for n in names:
        kind = ("tuple of Tensors" if lstm else "Tensor") if n == "hx" else _RNN_TYPES[n]
        if n not in bound or not _ARG_OK[kind](bound[n]):
            raise _rnn_arg_error(name, lstm, args, kwargs)
    return packed, bound


def _batch_sizes(batch_sizes):
    """PackedLayer's reading of batch_sizes (int64, size(0) steps, as data_ptr reads them)."""
    if batch_sizes.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {batch_sizes.dtype.scalar_name}")
    steps = batch_sizes.size(0)
    return [int(b) for b in batch_sizes.reshape(-1).tolist()[:steps]]


def _check_stack(n_hiddens, n_params, per, num_layers, bidirectional):
    """ATen's gather_params, pair_vec and apply_layer_stack checks (the composite path)."""
    if n_params % per:
        raise RuntimeError("got an incorrect number of RNN parameters")
    n_params //= per
    if bidirectional:
        if n_hiddens % 2 or n_params % 2:
            raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
        n_hiddens, n_params = n_hiddens // 2, n_params // 2
    if num_layers != n_hiddens:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if num_layers != n_params:
        raise RuntimeError("Expected more weights in stacked_rnn")


def _check_mkldnn(params, hx, cx, has_biases, num_layers, bidirectional):
    """ATen's mkldnn_rnn checks: MatrixRef of the weights, a row and hx[i], cx[i] per layer
    and direction (extra weights or hidden states are ignored, as there)."""
    per = 4 if has_biases else 2
    if len(params) % per:
        raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by "
                           f"stride {per}")
    for idx in range(num_layers * (2 if bidirectional else 1)):
        if (idx + 1) * per > len(params):
            raise RuntimeError(f"ArrayRef: invalid slice, N = {idx * per}; M = {per}; "
                               f"size = {len(params)}")
        hx.select(0, idx)
        cx.select(0, idx)


def _rnn_args(a, packed):
    x = a["data"] if packed else a["input"]
    batch_sizes = _batch_sizes(a["batch_sizes"]) if packed else None
    return (x, list(a["params"]), bool(a["has_biases"]), int(a["num_layers"]),
            float(a["dropout"]), bool(a["train"]), bool(a["bidirectional"]),
            False if packed else bool(a["batch_first"]), batch_sizes)


def lstm(*args, **kwargs):
    """torch.lstm (ATen's _VF.lstm): `(input, hx, params, has_biases, num_layers, dropout,
    train, bidirectional, batch_first)`, or packed `(data, batch_sizes, hx, params, ...,
    bidirectional)`; hx is (h_0, c_0), params the flat weights per layer and direction
    (w_ih, w_hh[, b_ih, b_hh][, w_hr]). Returns (output, h_n, c_n), as nn.LSTM records it.

    >>> import eagergrad as torch
    >>> h = torch.zeros(1, 1, 2)
    >>> ws = [torch.ones(8, 3), torch.ones(8, 2)]
    >>> out, hn, cn = torch.lstm(torch.zeros(4, 1, 3), (h, h), ws, False, 1, 0.0, False,
    ...                          False, False)
    >>> tuple(out.shape), tuple(cn.shape)
    ((4, 1, 2), (1, 1, 2))
    """
    packed, a = _bind_rnn("lstm", True, args, kwargs)
    hx = tuple(a["hx"])
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    x, params, bias, layers, p, train, bidir, batch_first, bs = _rnn_args(a, packed)
    has_proj = hx[0].size(2) != hx[1].size(2)
    if _use_mkldnn(x, hx[0], hx[1], bs):
        _check_mkldnn(params, hx[0], hx[1], bias, layers, bidir)
    else:
        _check_stack(hx[0].size(0), len(params), 2 + 2 * bias + has_proj, layers, bidir)
    return _lstm(x, hx, params, bias, layers, p, train, bidir, batch_first, bs)


def _one_hidden(name, mode):
    def f(*args, **kwargs):
        packed, a = _bind_rnn(name, False, args, kwargs)
        x, params, bias, layers, p, train, bidir, batch_first, bs = _rnn_args(a, packed)
        _check_stack(a["hx"].size(0), len(params), 2 + 2 * bias, layers, bidir)
        return _rnn(mode, x, a["hx"], params, bias, layers, p, train, bidir, batch_first, bs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""torch.{name} (ATen's _VF.{name}): `(input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)`, or packed `(data, batch_sizes,
    hx, params, ..., bidirectional)`; params the flat weights per layer and direction
    (w_ih, w_hh[, b_ih, b_hh]). Returns (output, h_n), as nn.{_MODULES[mode]} records it.

    >>> import eagergrad as torch
    >>> ws = [torch.ones({_GATES[mode] * 2}, 3), torch.ones({_GATES[mode] * 2}, 2)]
    >>> out, hn = torch.{name}(torch.zeros(4, 1, 3), torch.zeros(1, 1, 2), ws, False, 1,
    ...                  {" " * len(name)}0.0, False, False, False)
    >>> tuple(out.shape), tuple(hn.shape)
    ((4, 1, 2), (1, 1, 2))
    """
    return f


_MODULES = {"GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN(nonlinearity='relu')"}
_GATES = {"GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
gru = _one_hidden("gru", "GRU")
rnn_tanh = _one_hidden("rnn_tanh", "RNN_TANH")
rnn_relu = _one_hidden("rnn_relu", "RNN_RELU")


def _check_tensor_args(name, **named):
    for k, (pos, v, optional) in named.items():
        if not isinstance(v, Tensor) and not (optional and v is None):
            raise TypeError(f"{name}(): argument '{k}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")


def _check_cell_weights(gates, w_ih, w_hh, hidden_size):
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.size(0) != gates * hidden_size:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden_size}, but got {w.size(0)}")


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell: one LSTM step on batched input, (h_1, c_1) from hx = (h_0, c_0),
    recorded as nn.LSTMCell records it.

    >>> import eagergrad as torch
    >>> h, c = torch.lstm_cell(torch.zeros(5, 3), (torch.zeros(5, 2), torch.ones(5, 2)),
    ...                        torch.zeros(8, 3), torch.zeros(8, 2))
    >>> c[0]
    tensor([0.5000, 0.5000])
    """
    _check_tensor_args("lstm_cell", input=(1, input, False), w_ih=(3, w_ih, False),
                       w_hh=(4, w_hh, False), b_ih=(5, b_ih, True), b_hh=(6, b_hh, True))
    if not _is_tensors(hx):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                        f"not {type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    hidden_size = w_hh.size(1)
    _check_cell_input(input, w_ih.size(1))
    _check_cell_weights(4, w_ih, w_hh, hidden_size)
    for k, h in enumerate(hx):
        _check_cell_hidden(input, h, hidden_size, k)
    return _cell("LSTM", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


def _one_hidden_cell(name, mode):
    gates = _GATES[mode]

    def f(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        _check_tensor_args(name, input=(1, input, False), hx=(2, hx, False),
                           w_ih=(3, w_ih, False), w_hh=(4, w_hh, False),
                           b_ih=(5, b_ih, True), b_hh=(6, b_hh, True))
        hidden_size = w_hh.size(1)
        if mode == "GRU":  # (ATen's gru_cell checks the weights last)
            _check_cell_input(input, w_ih.size(1))
            _check_cell_hidden(input, hx, hidden_size, 0)
            _check_cell_weights(gates, w_ih, w_hh, hidden_size)
        else:
            _check_cell_weights(gates, w_ih, w_hh, hidden_size)
            _check_cell_input(input, w_ih.size(1))
            _check_cell_hidden(input, hx, hidden_size, 0)
        return _cell(mode, input, hx, w_ih, w_hh, b_ih, b_hh)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""torch.{name}: one {_MODULES[mode]} step on batched input (the new
    hidden state), recorded as nn.{_MODULES[mode].split("(")[0]}Cell records it.

    >>> import eagergrad as torch
    >>> torch.{name}(torch.zeros(1, 3), torch.zeros(1, 2), torch.zeros({gates * 2}, 3),
    ...              {" " * len(name)}torch.zeros({gates * 2}, 2)).shape
    torch.Size([1, 2])
    """
    return f


gru_cell = _one_hidden_cell("gru_cell", "GRU")
rnn_tanh_cell = _one_hidden_cell("rnn_tanh_cell", "RNN_TANH")
rnn_relu_cell = _one_hidden_cell("rnn_relu_cell", "RNN_RELU")
