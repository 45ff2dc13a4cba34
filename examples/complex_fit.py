"""A complex-valued fit: learn a complex filter w (a complex Parameter) so that the
convolution of a complex signal with w matches a target, with Adam on the complex
parameter (torch's optimizers treat a complex parameter as its real and imaginary parts,
and its gradient is torch's conjugate Wirtinger derivative dL/dw*).

All data from numpy (seeded), so the script prints the same losses under real torch and
under `python -m eagergrad run examples/complex_fit.py`."""
import numpy as np
import torch
from torch import nn


class ComplexFilter(nn.Module):
    def __init__(self, taps):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(taps, dtype=torch.complex64))
        self.gain = nn.Parameter(torch.ones(()))

    def forward(self, x):
        windows = x.unfold(0, self.w.shape[0], 1)  # [n - taps + 1, taps]
        return self.gain * (windows @ self.w)


def main(steps=40, taps=5):
    rs = np.random.RandomState(0)
    n = 64
    x = torch.tensor(rs.randn(n) + 1j * rs.randn(n), dtype=torch.complex64)
    true_w = torch.tensor(rs.randn(taps) + 1j * rs.randn(taps), dtype=torch.complex64)
    target = x.unfold(0, taps, 1) @ true_w
    model = ComplexFilter(taps)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for step in range(steps):
        optimizer.zero_grad()
        err = model(x) - target
        loss = (err.abs() ** 2).mean()
        loss.backward()
        optimizer.step()
        if step % 5 == 0 or step == steps - 1:
            print(f"step {step} loss {loss.item():.6f}")
    dist = (model.gain * model.w - true_w).abs().max().item()
    print(f"max |gain * w - true w| {dist:.6f}")


if __name__ == "__main__":
    main()
