"""A variational autoencoder on synthetic 8x8 binary images: Linear encoder to mean and
log-variance, the reparameterization trick, Linear decoder, BCE-with-logits plus the KL
term, Adam.

Weights, data and the reparameterization noise come from numpy (seeded), so the script
prints the same losses under real torch and under `python -m eagergrad run examples/vae.py`.
With --compile the training step runs under torch.compile."""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class VAE(nn.Module):
    def __init__(self, d=64, hidden=32, z=4):
        super().__init__()
        self.enc = nn.Linear(d, hidden)
        self.mu = nn.Linear(hidden, z)
        self.logvar = nn.Linear(hidden, z)
        self.dec1 = nn.Linear(z, hidden)
        self.dec2 = nn.Linear(hidden, d)

    def forward(self, x, eps):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + eps * torch.exp(0.5 * logvar)
        return self.dec2(F.relu(self.dec1(z))), mu, logvar


def numpy_init(model, seed):
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for p in model.parameters():
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            p.copy_(torch.from_numpy(rs.uniform(-1, 1, tuple(p.shape)) / np.sqrt(fan_in)))


def make_data(n, seed):
    """Images of a random horizontal or vertical bar, 8x8, flattened."""
    rs = np.random.RandomState(seed)
    x = np.zeros((n, 8, 8), np.float32)
    for k in range(n):
        i = rs.randint(8)
        if rs.rand() < 0.5:
            x[k, i, :] = 1
        else:
            x[k, :, i] = 1
    return torch.from_numpy(x.reshape(n, 64))


def loss_fn(recon, x, mu, logvar):
    bce = F.binary_cross_entropy_with_logits(recon, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kl) / x.shape[0]


def train_step(model, optimizer, xb, eps):
    optimizer.zero_grad()
    recon, mu, logvar = model(xb, eps)
    loss = loss_fn(recon, xb, mu, logvar)
    loss.backward()
    optimizer.step()
    return loss


def main(steps=12, batch=32, compile=False):
    train = torch.compile(train_step) if compile else train_step
    model = VAE()
    numpy_init(model, 0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = make_data(steps * batch, 1)
    noise = np.random.RandomState(2).randn(steps, batch, 4).astype(np.float32)
    for step in range(steps):
        xb = x[step * batch:(step + 1) * batch]
        loss = train(model, optimizer, xb, torch.from_numpy(noise[step]))
        print(f"step {step} loss {loss.item():.6f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile", action="store_true", help="torch.compile the training step")
    main(compile=parser.parse_args().compile)
