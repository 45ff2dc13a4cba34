"""The "extending autograd" tutorial: y = a + b * P3(c + d * x) fitted to sin(x) with a
custom autograd.Function for the Legendre polynomial P3, SGD by hand; the loss of every
step written into a tensor (`losses[t] = ...`), then a table filled row by row."""
import math

import torch

torch.manual_seed(0)


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)

a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)

steps, learning_rate = 300, 5e-6
losses = torch.zeros(steps)
P3 = LegendrePolynomial3.apply
for t in range(steps):
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    losses[t] = loss.detach()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

# the fit on a coarse grid, one row at a time: x, the fit, sin(x), the error
grid = torch.linspace(-math.pi, math.pi, 64)
table = torch.empty(64, 4)
with torch.no_grad():
    for i in range(64):
        xi = grid[i]
        fi = a + b * P3(c + d * xi)
        table[i] = torch.stack([xi, fi, torch.sin(xi), fi - torch.sin(xi)])
print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
print("result", loss.item(), losses.sum().item(), a.item(), b.item(), c.item(), d.item(),
      table[:, 3].abs().max().item(), table.abs().sum().item())
