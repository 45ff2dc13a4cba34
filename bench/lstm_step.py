"""One training step of the examples' character-level LSTM (examples/char_lstm.py:
Embedding 16, a 2-layer LSTM of 64 hidden units, batch_first, Linear head), batch 16 of
32 characters, cross-entropy, SGD: eagergrad vs torch eager vs a hand-written
jax.jit(value_and_grad) with lax.scan, each in its own process (_common.measure). A
step's result: its loss and the updated parameters."""
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Candidate, measure, report

VOCAB, EMB, HIDDEN, LAYERS, BATCH, SEQ, LR = 40, 16, 64, 2, 16, 32, 0.1
STEPS = 10


def shapes():
    out = [("embed.weight", (VOCAB, EMB))]
    for k in range(LAYERS):
        size = EMB if k == 0 else HIDDEN
        out += [(f"lstm.weight_ih_l{k}", (4 * HIDDEN, size)),
                (f"lstm.weight_hh_l{k}", (4 * HIDDEN, HIDDEN)),
                (f"lstm.bias_ih_l{k}", (4 * HIDDEN,)), (f"lstm.bias_hh_l{k}", (4 * HIDDEN,))]
    return out + [("head.weight", (VOCAB, HIDDEN)), ("head.bias", (VOCAB,))]


SHAPES = shapes()


def init(seed=0):
    rs = np.random.RandomState(seed)
    params = {k: rs.uniform(-0.2, 0.2, s).astype(np.float32) for k, s in SHAPES}
    tokens = rs.randint(0, VOCAB, (BATCH, SEQ + 1)).astype(np.int64)
    return params, tokens[:, :-1], tokens[:, 1:]


def torch_like(L):
    nn = L.nn

    class CharLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, EMB)
            self.lstm = nn.LSTM(EMB, HIDDEN, num_layers=LAYERS, batch_first=True)
            self.head = nn.Linear(HIDDEN, VOCAB)

        def forward(self, x):
            h, _ = self.lstm(self.embed(x))
            return self.head(h)

    params, x, y = init()
    model = CharLSTM()
    model.load_state_dict({k: L.tensor(v) for k, v in params.items()})
    opt = L.optim.SGD(model.parameters(), lr=LR)
    x, y = L.tensor(x), L.tensor(y)

    def step():
        opt.zero_grad()
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
        return [loss, *model.parameters()]
    return step


def _lstm_layer(x, w_ih, w_hh, b_ih, b_hh):
    """x: [seq, batch, in] -> [seq, batch, hidden], torch's gate order i, f, g, o."""
    xw = x @ w_ih.T + b_ih + b_hh

    def cell(carry, xt):
        h, c = carry
        gates = xt + h @ w_hh.T
        i, f, g, o = jnp.split(gates, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    zeros = jnp.zeros((x.shape[1], HIDDEN), x.dtype)
    return jax.lax.scan(cell, (zeros, zeros), xw)[1]


def jax_loss(p, x, y):
    h = jnp.swapaxes(p["embed.weight"][x], 0, 1)
    for k in range(LAYERS):
        h = _lstm_layer(h, *(p[f"lstm.{n}_l{k}"] for n in
                             ("weight_ih", "weight_hh", "bias_ih", "bias_hh")))
    logits = jnp.swapaxes(h, 0, 1) @ p["head.weight"].T + p["head.bias"]
    logp = jax.nn.log_softmax(logits.reshape(-1, VOCAB), 1)
    return -logp[jnp.arange(y.size), y.reshape(-1)].mean()


@jax.jit
def jax_step(p, x, y):
    loss, g = jax.value_and_grad(jax_loss)(p, x, y)
    return loss, {k: v - LR * g[k] for k, v in p.items()}


def jax_jit(L):
    params, x, y = init()
    state = {"p": {k: jnp.asarray(v) for k, v in params.items()}}
    x, y = jnp.asarray(x), jnp.asarray(y)

    def step():
        loss, state["p"] = jax_step(state["p"], x, y)
        return [loss, *(state["p"][k] for k, _ in SHAPES)]
    return step


CANDIDATES = [Candidate("torch eager", "torch", torch_like),
              Candidate("eagergrad", "eagergrad", torch_like),
              Candidate("jax.jit(value_and_grad)", "jax", jax_jit)]


def main():
    best, checks = measure(CANDIDATES, STEPS, rounds=10, rtol=1e-3, atol=1e-4,
                           result="the last loss and the parameters")
    report(f"lstm_step: char-LSTM (Embedding {EMB}, {LAYERS}-layer LSTM {HIDDEN}, Linear), "
           f"batch {BATCH} x {SEQ} characters, cross-entropy, one SGD step",
           list(best.items()))
    print(checks)


if __name__ == "__main__":
    main()
