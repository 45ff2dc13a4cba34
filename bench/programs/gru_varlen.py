"""A GRU and a linear head trained on variable-length sequences (5 to 20 steps, a new
length each batch) to predict a running statistic of each sequence; Adam. Weights and
data come from numpy (seeded) so torch and eagergrad see the same numbers."""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(input_size=8, hidden_size=32, batch_first=True)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        out, h = self.rnn(x)
        return self.head(out[:, -1]).squeeze(1)


model = Model()
rs = np.random.RandomState(0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rs.uniform(-0.18, 0.18, tuple(p.shape)).astype(np.float32)))

optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
loss_fn = nn.MSELoss()
lengths = rs.randint(5, 21, size=40)
for step, length in enumerate(lengths):
    xb = torch.from_numpy(rs.randn(16, int(length), 8).astype(np.float32))
    yb = xb[:, :, 0].mean(1) + 0.5 * xb[:, -1, 1]
    optimizer.zero_grad()
    loss = loss_fn(model(xb), yb)
    loss.backward()
    optimizer.step()
    if step % 10 == 9:
        print(f"step {step + 1} length {length} loss {loss.item():.5f}")

with torch.no_grad():
    xt = torch.from_numpy(rs.randn(32, 12, 8).astype(np.float32))
    yt = xt[:, :, 0].mean(1) + 0.5 * xt[:, -1, 1]
    test = loss_fn(model(xt), yt)
    checksum = sum(p.abs().sum() for p in model.parameters())
print("result", loss.item(), test.item(), checksum.item())
