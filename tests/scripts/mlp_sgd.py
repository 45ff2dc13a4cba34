"""An ordinary PyTorch training loop (Module, Parameter, functional, DataLoader, SGD);
prints its loss per epoch. Run under real torch and under `python -m eagergrad run`."""
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.backends.cudnn.deterministic = True
device = "cuda" if torch.cuda.is_available() else "cpu"


class MLP(nn.Module):
    def __init__(self, w1, w2):
        super().__init__()
        self.w1 = nn.Parameter(torch.tensor(w1))
        self.w2 = nn.Parameter(torch.tensor(w2))

    def forward(self, x):
        return F.log_softmax(torch.tanh(x @ self.w1) @ self.w2, dim=1)


rs = np.random.RandomState(0)
x = rs.randn(64, 5).astype(np.float32)
y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
model = MLP(rs.randn(5, 16).astype(np.float32) * 0.5, rs.randn(16, 2).astype(np.float32) * 0.5)
opt = torch.optim.SGD(model.parameters(), lr=float(sys.argv[1]), momentum=0.9)
loader = DataLoader(TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=16)
for epoch in range(5):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        logp = model(xb.to(device))
        loss = -logp[torch.arange(len(yb)), yb].mean()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(loader):.6f}")
