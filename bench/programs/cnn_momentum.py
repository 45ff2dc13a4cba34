"""A small CNN (Conv2d/ReLU/MaxPool2d twice, then Linear) on random 28x28 "digits":
CrossEntropyLoss, SGD with momentum, 50 steps of batch 32, the last batch partial (16).
Weights and data come from numpy (seeded) so torch and eagergrad see the same numbers."""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
rs = np.random.RandomState(0)
with torch.no_grad():
    for p in model.parameters():
        fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else p.shape[0]
        p.copy_(torch.from_numpy(
            rs.uniform(-1, 1, tuple(p.shape)).astype(np.float32) / np.sqrt(fan_in)))

n, batch = 49 * 32 + 16, 32
images = torch.from_numpy(rs.rand(n, 1, 28, 28).astype(np.float32))
labels = torch.from_numpy((images[:, 0, :14].mean((1, 2)) * 40).long().numpy() % 10)

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
model.train()
for step, start in enumerate(range(0, n, batch)):
    xb, yb = images[start:start + batch], labels[start:start + batch]
    optimizer.zero_grad()
    loss = criterion(model(xb), yb)
    loss.backward()
    optimizer.step()
    if step % 10 == 9:
        print(f"step {step + 1} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    logits = model(images[:200])
    correct = (logits.argmax(1) == labels[:200]).sum()
    checksum = sum(p.abs().sum() for p in model.parameters())
print("result", loss.item(), correct.item(), checksum.item(), len(xb))
