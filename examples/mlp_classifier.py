"""An MLP classifier on synthetic 3-class data, the ordinary PyTorch way: nn.Sequential,
CrossEntropyLoss, SGD with momentum, a DataLoader over a TensorDataset.

Weights and data come from numpy (seeded), so the script prints the same losses under
real torch and under `python -m eagergrad run examples/mlp_classifier.py`. With --compile
the training step runs under torch.compile."""
import argparse

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def numpy_init(model, seed):
    """Every parameter uniform in +-1/sqrt(fan_in), drawn with numpy."""
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for p in model.parameters():
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            p.copy_(torch.from_numpy(rs.uniform(-1, 1, tuple(p.shape)) / np.sqrt(fan_in)))


def make_data(n=384, seed=0):
    rs = np.random.RandomState(seed)
    centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    y = rs.randint(0, 3, n)
    x = centers[y] + rs.randn(n, 2) * 0.9
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y)


def train_step(model, criterion, optimizer, xb, yb):
    optimizer.zero_grad()
    loss = criterion(model(xb), yb)
    loss.backward()
    optimizer.step()
    return loss


def main(epochs=4, compile=False):
    train = torch.compile(train_step) if compile else train_step
    x, y = make_data()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=False)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                          nn.Linear(32, 3))
    numpy_init(model, 1)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            loss = train(model, criterion, optimizer, xb, yb)
            total += loss.item() * len(yb)
        model.eval()
        with torch.no_grad():
            acc = (model(x).argmax(dim=1) == y).float().mean().item()
        print(f"epoch {epoch} loss {total / len(y):.6f} accuracy {acc:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile", action="store_true", help="torch.compile the training step")
    main(compile=parser.parse_args().compile)
