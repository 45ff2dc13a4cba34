"""A tiny GPT: token and position Embeddings, pre-norm blocks of causal self-attention
(F.scaled_dot_product_attention with is_causal=True) and a GELU MLP with LayerNorm, tied
output weights, AdamW with weight decay and a cosine learning-rate schedule.

Weights come from numpy (seeded) and dropout is 0, so the script prints the same losses
under real torch and under `python -m eagergrad run examples/tiny_gpt.py`. With --compile
the training step runs under torch.compile (the scheduler steps outside it)."""
import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

TEXT = "to be, or not to be, that is the question: whether tis nobler in the mind " * 3


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, d=32, heads=4, layers=2, block=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def numpy_init(model, seed):
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "ln" in name:
                continue
            p.copy_(torch.from_numpy(rs.normal(0, 0.02 if p.dim() > 1 else 0.01,
                                               tuple(p.shape))))


def train_step(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


def main(steps=10, batch=4, block=16, compile=False):
    train = torch.compile(train_step) if compile else train_step
    chars = sorted(set(TEXT))
    data = torch.tensor([chars.index(c) for c in TEXT])
    model = GPT(len(chars), block=block)
    numpy_init(model, 0)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=3e-3, betas=(0.9, 0.95))
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    starts = np.random.RandomState(1).randint(0, len(data) - block - 1, (steps, batch))
    for step in range(steps):
        idx = torch.tensor(starts[step])[:, None] + torch.arange(block + 1)
        x, y = data[idx[:, :-1]], data[idx[:, 1:]]
        loss = train(model, optimizer, x, y)
        schedule.step()
        print(f"step {step} loss {loss.item():.6f} lr {schedule.get_last_lr()[0]:.6f}")
    print(f"perplexity {math.exp(loss.item()):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile", action="store_true", help="torch.compile the training step")
    main(compile=parser.parse_args().compile)
