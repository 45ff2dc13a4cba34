"""The tutorial MLP: a synthetic 3-class dataset in a TensorDataset, a DataLoader of batch
64 (the last batch partial), Adam for a few epochs, then evaluation under no_grad with a
loader of batch 256. Weights and data come from numpy (seeded) so torch and eagergrad see
the same numbers (the loader does not shuffle: the data is drawn in random order)."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

rs = np.random.RandomState(0)
n, features, classes = 1000, 20, 3
x = rs.randn(n, features).astype(np.float32)
w_true = rs.randn(features, classes)
y = (x @ w_true + 0.5 * rs.randn(n, classes)).argmax(1)
train = TensorDataset(torch.from_numpy(x[:800]), torch.from_numpy(y[:800]))
test = TensorDataset(torch.from_numpy(x[800:]), torch.from_numpy(y[800:]))
train_loader = DataLoader(train, batch_size=64)
test_loader = DataLoader(test, batch_size=256)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
            nn.Linear(64, classes))

    def forward(self, x):
        return self.linear_relu_stack(x)


model = NeuralNetwork()
with torch.no_grad():
    for p in model.parameters():
        fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
        p.copy_(torch.from_numpy(
            rs.uniform(-1, 1, tuple(p.shape)).astype(np.float32) / np.sqrt(fan_in)))

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def train_loop():
    model.train()
    for X, yb in train_loader:
        loss = loss_fn(model(X), yb)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return loss.item()


def test_loop(loader):
    model.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for X, yb in loader:
            pred = model(X)
            total += loss_fn(pred, yb).item() * len(X)
            correct += (pred.argmax(1) == yb).type(torch.float).sum().item()
    return total / len(loader.dataset), correct


for epoch in range(5):
    last = train_loop()
    test_loss, correct = test_loop(test_loader)
    print(f"epoch {epoch + 1}: train loss {last:.4f}, test loss {test_loss:.4f}, "
          f"accuracy {correct / len(test):.3f}")
print("result", last, test_loss, correct)
