"""DTensor ops, redistributions and gradients on a 4-rank mesh, printed line by line:
argv[1] is `torch` (its single-process simulation, LocalTensorMode over a fake 4-rank
group) or `eagergrad` (one process, 4 simulated CPU devices)."""
import contextlib
import importlib
import os
import sys

from _show import devices, show

if sys.argv[1] == "torch":
    import torch
    import torch.distributed as dist
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=4)
    mode = LocalTensorMode(4)

    def local(t, r):
        return t.to_local()._local_tensors[r]
else:
    os.environ["XLA_FLAGS"] = devices(4)
    import eagergrad as torch
    mode = contextlib.nullcontext()

    def local(t, r):
        return t.to_local()._locals[r]
dt = importlib.import_module(sys.argv[1] + ".distributed.tensor")
F = importlib.import_module(sys.argv[1] + ".nn.functional")
S0, S1, R = dt.Shard(0), dt.Shard(1), dt.Replicate()


def fmt(t):
    return [round(v, 6) for v in t.flatten().tolist()]


def lay(y):
    """Placements, shape, every rank's local and the full value."""
    return (y.placements, tuple(y.shape), [fmt(local(y, r)) for r in range(4)],
            fmt(y.full_tensor()))


with mode:
    mesh = dt.init_device_mesh("cpu", (4,))
    X = torch.arange(32.).reshape(8, 4).double() / 7
    W = torch.arange(12.).reshape(4, 3).double() / 5
    B = torch.arange(3.).double()

    def d(t, p):
        return dt.distribute_tensor(t, mesh, [p])
    show("placements", lambda: (S0, S1, R, dt.Partial(), str(S0), str(R), str(dt.Partial()),
                                S0 == dt.Shard(0), R == dt.Replicate(), S0 == S1))
    for px in (S0, S1, R):
        for pw in (S0, S1, R):
            show(f"mm {px} {pw}", lambda: lay(d(X, px) @ d(W, pw)))
    for px in (S0, S1, R):
        show(f"linear {px}", lambda: lay(F.linear(d(X, px), d(W.t().contiguous(), R),
                                                  d(B, R))))
        show(f"sum {px}", lambda: lay(d(X, px).sum()))
        show(f"sum0 {px}", lambda: lay(d(X, px).sum(0)))
        show(f"sum1 {px}", lambda: lay(d(X, px).sum(1)))
        show(f"mean0 {px}", lambda: lay(d(X, px).mean(0)))
        show(f"amax0 {px}", lambda: lay(d(X, px).amax(0)))
        show(f"relu {px}", lambda: lay(torch.relu(d(X, px) - 1)))
        show(f"add R {px}", lambda: lay(d(X, px) + d(X, R)))
        show(f"add S0 {px}", lambda: lay(d(X, px) + d(X, S0)))
        show(f"add bias {px}", lambda: lay(d(X, px) + d(torch.arange(4.).double(), R)))
        show(f"mul 2 {px}", lambda: lay(d(X, px) * 2))
        show(f"add 1 {px}", lambda: lay(d(X, px) + 1))
        show(f"t {px}", lambda: lay(d(X, px).t()))
    for px in (S0, S1, R):
        for py in (S0, S1, R):
            show(f"redistribute {px} {py}", lambda: lay(d(X, px).redistribute(mesh, [py])))
    U = torch.arange(18.).reshape(6, 3).double()
    show("uneven 6 rows", lambda: lay(d(U, S0)))
    show("uneven sum0", lambda: lay(d(U, S0).sum(0)))
    show("uneven mm", lambda: lay(d(U, S0) @ d(W[:3], R)))
    show("uneven S0 to S1", lambda: lay(d(U, S0).redistribute(mesh, [S1])))
    show("uneven to R", lambda: lay(d(U, S0).redistribute(mesh, [R])))
    pp = d(X, S1) @ d(W, R)
    show("partial", lambda: lay(pp))
    show("P+P", lambda: lay(pp + pp))
    show("P*2", lambda: lay(pp * 2))
    show("P*R", lambda: lay(pp * d(torch.ones(8, 3).double(), R)))
    show("-P", lambda: lay(-pp))
    show("P.sum", lambda: lay(pp.sum()))
    show("P.relu", lambda: lay(pp.relu()))
    show("P@R", lambda: lay(pp @ d(W.t().contiguous(), R)))
    show("P.t", lambda: lay(pp.t()))
    show("P to R", lambda: lay(pp.redistribute(mesh, [R])))
    show("P to S0", lambda: lay(pp.redistribute(mesh, [S0])))
    show("R to P", lambda: lay(d(X, R).redistribute(mesh, [dt.Partial()])))
    for px, pw in ((S0, R), (S1, R), (R, S1), (S1, S0), (R, R)):
        x, w, b = (d(t, p).requires_grad_() for t, p in ((X, px), (W, pw), (B, R)))
        loss = (torch.tanh(x @ w + b) * 3).sum()
        loss.backward()
        show(f"grad values {px} {pw}", lambda: (
            loss.placements, fmt(loss.full_tensor()), fmt(x.grad.full_tensor()),
            fmt(w.grad.full_tensor()), fmt(b.grad.full_tensor())))
        show(f"grad placements {px} {pw}", lambda: (
            x.grad.placements, w.grad.placements, b.grad.placements,
            [fmt(local(w.grad, r)) for r in range(4)]))
    x, w = d(X, S0).requires_grad_(), d(W, R).requires_grad_()
    y = (x @ w).redistribute(mesh, [R])
    (y * y).sum().backward()
    show("grad through redistribute", lambda: (lay(x.grad), lay(w.grad)))
    for px, pw in ((S0, R), (S1, S0), (R, S1)):
        x, w, b = (d(t, p).requires_grad_() for t, p in ((X, px), (W, pw), (B, R)))
        for _ in range(2):  # (the second backward accumulates into .grad)
            loss = torch.relu(F.linear(x, w.t(), b) - 2).mean()
            loss.backward()
        show(f"linear relu mean x2 {px} {pw}", lambda: (
            str(loss.grad_fn.name()), loss.placements, lay(x.grad), lay(w.grad), lay(b.grad)))
    t = X.clone().requires_grad_()
    y = dt.DTensor.from_local(t, mesh, [R]) @ d(W, S1)
    y.full_tensor().pow(2).sum().backward()
    show("from_local, full_tensor", lambda: (lay(y), fmt(t.grad)))
    x = d(X, S0).requires_grad_()
    seen = []
    x.register_hook(lambda g: seen.append(g.placements))
    (x.sum(1) * d(torch.arange(8.).double(), S0)).sum().backward()
    show("tensor hook", lambda: (seen, lay(x.grad), x.grad_fn, x.is_leaf))
    y = d(X, S0)
    v = y._version
    y.add_(1)
    y.mul_(d(X, S0))
    show("in place", lambda: (lay(y), y._version - v))
    mesh2 = dt.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    for pl in ((S0, S1), (S0, R), (R, S0), (S1, S0), (S0, S0), (R, R)):
        show(f"2-D {pl}", lambda: lay(dt.distribute_tensor(X, mesh2, list(pl))))
        for pw in ((R, R), (R, S1), (S0, R)):
            show(f"2-D mm {pl} {pw}", lambda: lay(dt.distribute_tensor(X, mesh2, list(pl)) @
                                                  dt.distribute_tensor(W, mesh2, list(pw))))
        show(f"2-D sum {pl}", lambda: lay(dt.distribute_tensor(X, mesh2, list(pl)).sum(0)))
        show(f"2-D to (R, S1) {pl}", lambda: lay(dt.distribute_tensor(X, mesh2, list(pl))
                                                 .redistribute(mesh2, [R, S1])))
    x = dt.distribute_tensor(X, mesh2, [S0, R]).requires_grad_()
    w = dt.distribute_tensor(W, mesh2, [R, S1]).requires_grad_()
    torch.tanh(x @ w).sum().backward()
    show("2-D grad", lambda: (lay(x.grad), lay(w.grad)))
    X3 = torch.arange(96.).reshape(8, 3, 4).double() / 50
    S2 = dt.Shard(2)
    for p in (S0, S1, S2, R):
        show(f"softmax {p}", lambda: lay(d(X3, p).softmax(-1)))
        show(f"log_softmax {p}", lambda: lay(d(X3, p).log_softmax(1)))
        show(f"layer_norm {p}", lambda: lay(F.layer_norm(
            d(X3, p), (4,), d(torch.arange(4.).double(), R), d(torch.ones(4).double(), R))))
        show(f"gelu {p}", lambda: lay(F.gelu(d(X3, p))))
        show(f"cat 0 {p}", lambda: lay(torch.cat([d(X3, p), d(X3, p)], 0)))
        show(f"cat 2 {p}", lambda: lay(torch.cat([d(X3, p), d(X3, p) * 2], 2)))
        show(f"split {p}", lambda: [lay(z) for z in d(X3, p).split(2, dim=2)])
    E = torch.arange(40.).reshape(10, 4).double()
    idx = torch.tensor([[1, 2, 3], [4, 5, 9]])
    for p in (S1, R):
        show(f"embedding {p}", lambda: lay(F.embedding(d(idx, R), d(E, p))))
    show("embedding sharded indices", lambda: lay(F.embedding(d(idx.t().contiguous(), S0),
                                                               d(E, R))))
    logits = torch.arange(24.).reshape(8, 3).double() / 7
    target = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    for p in (S0, S1, R):
        tpl = S0 if p == S0 else R
        show(f"cross_entropy {p}", lambda: lay(F.cross_entropy(d(logits, p), d(target, tpl))))
        show(f"cross_entropy sum {p}", lambda: lay(F.cross_entropy(
            d(logits, p), d(target, tpl), reduction="sum")))
    lg = d(logits, S0).requires_grad_()
    ln_w = d(torch.ones(3).double(), R).requires_grad_()
    F.cross_entropy(F.layer_norm(lg, (3,), ln_w).softmax(-1), d(target, S0)).backward()
    show("grad of cross_entropy(layer_norm)", lambda: (lay(lg.grad), lay(ln_w.grad)))
    y = d(X, S1) * 3
    show("graph", lambda: (y.grad_fn is None, y.requires_grad))
    x = d(X, S1).requires_grad_()
    y = (x * 3).sum(0)
    show("graph of an op", lambda: (y.grad_fn.name(), y.grad_fn.next_functions[0][0].name(),
                                    y.requires_grad, y.is_leaf))
