"""Samples for the rnn ops (merged into _samples.SAMPLES: lists under an existing op
name are appended to it), same format as _samples.py; SPECIAL: samples at their special
points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH).

The recurrent layers are called through torch's _VF functions (torch.lstm, torch.gru,
torch.rnn_tanh, torch.gru_cell, ...) and eagergrad's counterparts in
nn/_functional/rnn.py, with the weights as sample inputs. mkldnn_rnn_layer is float32
only in torch (its samples have a fixed float32 dtype)."""
from _samples import F, S, T

H = 2  # hidden size of every sample


def _eg_rnn():
    from eagergrad.nn._functional import rnn as _functional_rnn
    return _functional_rnn


def _is_torch(m):
    return m.__name__ == "torch"


def _rnn(mode, m, x, h, *ws, batch_first=False, bidirectional=False):
    """_VF.gru / rnn_tanh / rnn_relu, one layer, training, no dropout: (output, h_n)."""
    if _is_torch(m):
        f = {"GRU": m.gru, "RNN_TANH": m.rnn_tanh, "RNN_RELU": m.rnn_relu}[mode]
        return f(x, h, list(ws), True, 1, 0.0, True, bidirectional, batch_first)
    return _eg_rnn()._rnn(mode, x, h, list(ws), True, 1, 0.0, True, bidirectional, batch_first)


def _lstm(m, x, h, c, *ws):
    """_VF.lstm (float64 / composite path in float32 too, when proj: here not): outputs."""
    if _is_torch(m):
        return m.lstm(x, (h, c), list(ws), True, 1, 0.0, True, False, False)
    return _eg_rnn()._lstm(x, (h, c), list(ws), True, 1, 0.0, True, False, False)


def _packed_rnn(m, data, h, *ws, batch_sizes=(3, 2, 1)):
    if _is_torch(m):
        return m.rnn_tanh(data, m.tensor(batch_sizes), h, list(ws), True, 1, 0.0, True, False)
    return _eg_rnn()._rnn("RNN_TANH", data, h, list(ws), True, 1, 0.0, True, False, False,
                          batch_sizes=list(batch_sizes))


def _cell(mode, m, x, h, *ws):
    if _is_torch(m):
        f = {"GRU": m.gru_cell, "LSTM": m.lstm_cell, "RNN_RELU": m.rnn_relu_cell}[mode]
        return f(x, h, *ws)
    return _eg_rnn()._cell(mode, x, h, *ws)


def _mkldnn(m, x, w0, w1, b0, b1, h, c, reverse=False):
    return m.mkldnn_rnn_layer(x, w0, w1, b0, b1, h, c, reverse, [], 2, H, 1, True, False,
                              False, True)[:3]


def _f32(*shape, **kw):
    return T("float32", *shape, lo=-1.0, hi=1.0, rg=True)


def _pack(m, x, lengths, batch_first=False, enforce_sorted=True):
    return m.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                               enforce_sorted=enforce_sorted).data


def _pack_raw(m, x, lengths=(3, 2, 1), batch_first=False):
    """aten::_pack_padded_sequence with static lengths (tracer-safe, for the jax check;
    the public functions read the lengths tensor, as torch does)."""
    if _is_torch(m):
        return m._pack_padded_sequence(x, m.tensor(lengths), batch_first)[0]
    from eagergrad.ops._table import call_op
    from eagergrad.ops.rnn import PACK
    return call_op(PACK, (x,), (batch_first, tuple(lengths)))[0]


def _pack_pad(m, x, lengths, batch_first=False):
    u = m.nn.utils.rnn
    p = u.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
    return u.pad_packed_sequence(p, batch_first=batch_first, padding_value=-1.0,
                                 total_length=4)[0]


# torch's results are strided (columns of the input; a transpose_ in place): eagergrad's
# results of non-view ops are contiguous
_STRIDED = {"is_view": "torch's result is not contiguous; eagergrad's is"}

# weights of one GRU layer (input 3, hidden 2): w_ih, w_hh, b_ih, b_hh
_GRU_W = (F(3 * H, 3), F(3 * H, H), F(3 * H), F(3 * H))
_RNN_W = (F(H, 3), F(H, H), F(H), F(H))
_LSTM_W = (F(4 * H, 3), F(4 * H, H), F(4 * H), F(4 * H))

SAMPLES = {
    "unsafe_split": [
        S(lambda m, x: m.unsafe_split(x, 2, 1), F(3, 5), name="unsafe_split", xfail=_STRIDED),
        S(lambda m, x: x.unsafe_chunk(3, 0), F(6, 2), name="unsafe_chunk method"),
        S(lambda m, x, h, *ws: _lstm(m, x, h, h * 0.5, *ws), F(3, 1, 3), F(1, 1, H),
          *_LSTM_W, name="lstm (composite: chunk, sigmoid, tanh per step)"),
    ],
    "_rnn_transpose_": [
        S(lambda m, x, h, *ws: _rnn("GRU", m, x, h, *ws, batch_first=True), F(1, 3, 3),
          F(1, 1, H), *_GRU_W, name="gru batch_first (output.transpose_)"),
        S(lambda m, x, h, *ws: _rnn("RNN_TANH", m, x, h, *ws, batch_first=True,
                                    bidirectional=True), F(2, 2, 3), F(2, 2, H),
          *_RNN_W, *_RNN_W, name="bidirectional rnn_tanh batch_first", xfail=_STRIDED),
    ],
    "mkldnn_rnn_layer": [
        S(_mkldnn, _f32(3, 2, 3), _f32(4 * H, 3), _f32(4 * H, H), _f32(4 * H), _f32(4 * H),
          _f32(2, H), _f32(2, H), fd=False, name="lstm layer"),
        S(lambda m, *a: _mkldnn(m, *a, reverse=True), _f32(2, 1, 3), _f32(4 * H, 3),
          _f32(4 * H, H), _f32(4 * H), _f32(4 * H), _f32(1, H), _f32(1, H), fd=False,
          name="reverse direction"),
    ],
    "mkldnn_rnn_layer_backward": [
        S(_mkldnn, _f32(2, 1, 3), _f32(4 * H, 3), _f32(4 * H, H), _f32(4 * H), _f32(4 * H),
          _f32(1, H), _f32(1, H), fd=False, name="lstm layer backward"),
    ],
    "_pack_padded_sequence": [
        S(_pack_raw, F(3, 3, 2), name="aten op, static lengths"),
        # (the public functions read their lengths: no jax trace, as no torch trace)
        S(lambda m, x: _pack(m, x, m.tensor([1, 3]), True, False), F(2, 3, 2), jax=False,
          name="batch_first, unsorted tensor lengths"),
        S(lambda m, x: _pack_pad(m, x, [2, 3, 1], True), F(3, 3, 2), jax=False,
          name="pad_packed_sequence(pack_padded_sequence)"),
    ],
    "_pack_padded_sequence_backward": [
        S(lambda m, x: _pack_raw(m, x, (3, 1), True), F(2, 3, 2), name="double backward"),
    ],
    "add": [
        S(lambda m, x, h, *ws: _rnn("RNN_RELU", m, x, h, *ws), F(3, 2, 3), F(1, 2, H),
          *_RNN_W, name="rnn_relu layer"),
        S(lambda m, x, h, *ws: _packed_rnn(m, x, h, *ws), F(6, 3), F(1, 3, H), *_RNN_W,
          name="packed rnn_tanh (narrow/cat of hidden)"),
    ],
    "sigmoid": [
        S(lambda m, x, h, *ws: _cell("GRU", m, x, h, *ws), F(2, 3), F(2, H), *_GRU_W,
          name="gru_cell"),
        S(lambda m, x, h, c, *ws: _cell("LSTM", m, x, (h, c), *ws), F(2, 3), F(2, H),
          F(2, H), *_LSTM_W, name="lstm_cell"),
    ],
}

SPECIAL = {}

_LINEAR = "linear (a gather/transpose/split of its input): no special points"
SMOOTH = {
    "unsafe_split": _LINEAR,
    "_rnn_transpose_": _LINEAR,
    "_pack_padded_sequence": _LINEAR,
    "_pack_padded_sequence_backward": _LINEAR,
    "mkldnn_rnn_layer": "sigmoid/tanh/products: analytic everywhere",
    "mkldnn_rnn_layer_backward": "the analytic LSTM layer's gradient (no derivative)",
}
