"""A small CNN with BatchNorm on 32x32 RGB images (synthetic: each class a different
oriented stripe pattern plus noise): Conv2d, BatchNorm2d, ReLU, MaxPool2d, Linear, Adam.

Weights and data come from numpy (seeded), so the script prints the same losses under
real torch and under `python -m eagergrad run examples/cnn_batchnorm.py`. With --compile
the training step runs under torch.compile."""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    """(No conv bias before BatchNorm: it would cancel, and its zero gradient's rounding
    noise, normalized by Adam, would move it at random.)"""
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 8 * 8, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


def numpy_init(model, seed):
    """Weights uniform in +-1/sqrt(fan_in) from numpy; BatchNorm keeps its 1/0 init."""
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("bn"):
                continue
            fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
            p.copy_(torch.from_numpy(rs.uniform(-1, 1, tuple(p.shape)) / np.sqrt(fan_in)))


def make_data(n, seed, classes=4):
    rs = np.random.RandomState(seed)
    y = rs.randint(0, classes, n)
    i, j = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    angle = y[:, None, None] * np.pi / classes
    stripes = np.sin((i * np.cos(angle) + j * np.sin(angle)) * 0.8)
    x = stripes[:, None] * np.array([1.0, 0.5, -0.5])[None, :, None, None]
    x = x + rs.randn(n, 3, 32, 32) * 0.5
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y)


def train_step(model, optimizer, xb, yb):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    optimizer.step()
    return loss


def main(steps=8, batch=32, compile=False):
    train = torch.compile(train_step) if compile else train_step
    model = Net()
    numpy_init(model, 0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = make_data(steps * batch, 1)
    for step in range(steps):
        xb, yb = x[step * batch:(step + 1) * batch], y[step * batch:(step + 1) * batch]
        model.train()
        loss = train(model, optimizer, xb, yb)
        print(f"step {step} loss {loss.item():.6f}")
    model.eval()
    xt, yt = make_data(64, 2)
    with torch.no_grad():
        out = model(xt)
    print(f"eval loss {F.cross_entropy(out, yt).item():.6f} "
          f"running_var[0] {model.bn1.running_var[0].item():.6f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile", action="store_true", help="torch.compile the training step")
    main(compile=parser.parse_args().compile)
