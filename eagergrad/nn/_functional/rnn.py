"""The recurrent computations behind nn.RNN/LSTM/GRU and the cells, recorded as ATen
records them on CPU (torch.nn.functional has no public RNN function).

- LSTM, float32, no projection, not packed: ATen's mkldnn_rnn, one mkldnn_rnn_layer
  (MkldnnRnnLayerBackward0, one lax.scan) per layer and direction; layer outputs joined
  by cat, h_n / c_n stacked.
- Everything else (GRU, RNN tanh/relu, LSTM in float64 / with proj_size / packed): ATen's
  `_rnn_impl`, per time step of ordinary ops (linear, unsafe_chunk, sigmoid, tanh, add,
  mul, stack, cat), so the graph matches torch's node by node.
"""
from ...ops.rnn import _transpose_inplace_result, mkldnn_rnn_layer
from ...ops.shape import cat, stack
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


def _gru_cell(x, h, p, pre):
    ig = (x if pre else p.linear_ih(x)).unsafe_chunk(3, 1)
    hg = p.linear_hh(h).unsafe_chunk(3, 1)
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
        hx.shape[-1] == cx.shape[-1]


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
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                           f"expected {input_size}")


def _check_cell_hidden(input, hx, hidden_size, label):
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} "
                           f"batch size {hx.shape[0]}")
    if hx.shape[1] != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, "
                           f"expected {hidden_size}")


def _cell(mode, input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """_VF.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell on batched input."""
    _check_cell_input(input, w_ih.shape[1])
    hs = w_hh.shape[1]
    for k, h in enumerate(hx if mode == "LSTM" else (hx,)):
        _check_cell_hidden(input, h, hs, k)
    return _CELLS[mode](input, tuple(hx) if mode == "LSTM" else hx,
                        _Params(w_ih, w_hh, b_ih, b_hh), False)
