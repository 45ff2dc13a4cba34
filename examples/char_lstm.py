"""A character-level LSTM language model: Embedding, a 2-layer LSTM (batch_first), Linear,
CrossEntropyLoss, gradient clipping and Adam, on a short built-in text.

Weights come from numpy (seeded), so the script prints the same losses under real torch
and under `python -m eagergrad run examples/char_lstm.py`. With --compile the training step
runs under torch.compile."""
import argparse

import numpy as np
import torch
from torch import nn

TEXT = ("the quick brown fox jumps over the lazy dog. "
        "pack my box with five dozen liquor jugs. "
        "how vexingly quick daft zebras jump! ") * 4


class CharLSTM(nn.Module):
    def __init__(self, vocab, emb=16, hidden=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        h, state = self.lstm(self.embed(x), state)
        return self.head(h), state


def numpy_init(model, seed):
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rs.uniform(-0.2, 0.2, tuple(p.shape))))


def train_step(model, criterion, optimizer, inputs, targets):
    optimizer.zero_grad()
    logits, _ = model(inputs)
    loss = criterion(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss, norm


def main(steps=10, batch=8, seq=24, compile=False):
    train = torch.compile(train_step) if compile else train_step
    chars = sorted(set(TEXT))
    ids = torch.tensor([chars.index(c) for c in TEXT])
    model = CharLSTM(len(chars))
    numpy_init(model, 0)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    criterion = nn.CrossEntropyLoss()
    starts = np.random.RandomState(1).randint(0, len(TEXT) - seq - 1, (steps, batch))
    for step in range(steps):
        idx = torch.tensor(starts[step])[:, None] + torch.arange(seq + 1)
        chunk = ids[idx]
        inputs, targets = chunk[:, :-1], chunk[:, 1:]
        loss, norm = train(model, criterion, optimizer, inputs, targets)
        print(f"step {step} loss {loss.item():.6f} grad_norm {norm.item():.6f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile", action="store_true", help="torch.compile the training step")
    main(compile=parser.parse_args().compile)
