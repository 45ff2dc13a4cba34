"""eagergrad.nn infrastructure, differentially against torch: the same module tree is
built in both libraries (weights from the same numpy values), and names, shapes, state
dicts, reprs, errors, hook calls, modes, dtypes and gradients must agree."""
import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from conftest import same

import eagergrad as eg

RNG = np.random.default_rng(0)
W1 = RNG.standard_normal((4, 3)).astype(np.float32)
B1 = RNG.standard_normal(4).astype(np.float32)
W2 = RNG.standard_normal((2, 4)).astype(np.float32)
X = RNG.standard_normal((5, 3)).astype(np.float32)

_CLASSES = {}


def lib_classes(L):
    """The test's own module classes, defined once per library."""
    if L in _CLASSES:
        return _CLASSES[L]
    nn = L.nn

    class Affine(nn.Module):
        def __init__(self, w, b=None):
            super().__init__()
            self.weight = nn.Parameter(L.tensor(w))
            if b is None:
                self.register_parameter("bias", None)
            else:
                self.bias = nn.Parameter(L.tensor(b))

        def forward(self, x):
            y = x @ self.weight.t()
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}"

    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running", L.zeros(4))
            self.register_buffer("scratch", L.ones(2), persistent=False)
            self.register_buffer("count", L.tensor(0))
            self.scale = nn.Parameter(L.ones(4))

        def forward(self, x):
            return x * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(Affine(W1, B1), nn.Tanh(), Norm())
            self.head = Affine(W2)
            self.act = nn.ReLU()

        def forward(self, x, scale=1.0):
            return self.act(self.head(self.body(x))) * scale

    _CLASSES[L] = ns = {"Affine": Affine, "Norm": Norm, "Net": Net}
    return ns


def net(L):
    return lib_classes(L)["Net"]()


def rep(obj):
    """repr with torch's names in place of eagergrad's."""
    return repr(obj).replace("eagergrad.", "torch.")


# ---- Parameter and Buffer --------------------------------------------------------------
def test_parameter_basics():
    def f(L, log):
        t = L.tensor([1.0, 2.0])
        p = L.nn.Parameter(t)
        log.append((rep(p), str(p), isinstance(p, L.nn.Parameter), isinstance(p, L.Tensor)))
        log.append((p.is_leaf, p.requires_grad, p.grad_fn is None, p._version))
        t.add_(1)  # shares storage and version counter with p
        log.append((p, p._version))
        log.append([type(x).__name__ for x in (p * 2, p.detach(), p.data, p + p)])
        (p * p).sum().backward()
        log.append(p.grad)
        p.data = L.zeros(3)
        log.append((type(p).__name__, p, p.grad))
        log.append(rep(L.nn.Parameter()))
        log.append(rep(L.nn.Parameter(L.tensor([1, 2]), requires_grad=False)))
        q = L.nn.Parameter(L.tensor([1.0], requires_grad=True) * 2)
        log.append((q.is_leaf, q.requires_grad))
        c = copy.deepcopy(p)
        log.append((type(c).__name__, c is p, c, c.requires_grad))
        r = pickle.loads(pickle.dumps(L.nn.Parameter(L.ones(2), requires_grad=False)))
        log.append((type(r).__name__, r))
        L.nn.Parameter(L.tensor([1, 2]))
    same(f)


def test_parameter_in_ops_and_graph():
    def f(L, log):
        p = L.nn.Parameter(L.tensor([[1.0, -2.0], [3.0, 0.5]]))
        y = (p.exp() * p).sum(0)[1] + p.t().matmul(p).sum()
        log.append((y, y.grad_fn.name(), [type(n).__name__ if n else None
                                          for n, _ in y.grad_fn.next_functions]))
        y.backward()
        log.append(p.grad)
        with L.no_grad():
            p.mul_(2)
        log.append((p, p._version, p.is_leaf))
    same(f)


def test_buffer_class():
    def f(L, log):
        m = L.nn.Module()
        m.a = L.nn.Buffer(L.ones(2))
        m.b = L.nn.Buffer(L.zeros(1), persistent=False)
        log.append((isinstance(m.a, L.nn.Buffer), m.a.persistent, m.b.persistent))
        log.append((list(m.state_dict()), [n for n, _ in m.named_buffers()]))
        m.a = L.full((2,), 3.0)  # plain tensor to a buffer name: stays a buffer
        log.append(list(m.state_dict().items()))
    same(f)


# ---- registration and lookup ---------------------------------------------------------
def test_named_members():
    def f(L):
        n = net(L)
        shared = L.nn.Tanh()
        n.extra = L.nn.ModuleList([shared, shared])
        n.tied = n.head.weight
        return {
            "params": [(k, tuple(v.shape)) for k, v in n.named_parameters()],
            "params_dup": [k for k, _ in n.named_parameters(remove_duplicate=False)],
            "params_local": [k for k, _ in n.named_parameters(prefix="m", recurse=False)],
            "buffers": [(k, v) for k, v in n.named_buffers(prefix="p")],
            "buffers_norec": [k for k, _ in n.body[2].named_buffers(recurse=False)],
            "modules": [(k, type(m).__name__) for k, m in n.named_modules()],
            "modules_dup": [k for k, _ in n.named_modules(remove_duplicate=False)],
            "modules_prefix": [k for k, _ in n.named_modules(prefix="root")],
            "children": [k for k, _ in n.named_children()],
            "extra_children": [type(m).__name__ for m in n.extra.children()],
            "n_params": len(list(n.parameters())), "n_buffers": len(list(n.buffers())),
            "n_modules": len(list(n.modules()))}
    same(f)


def test_getattr_setattr_delattr():
    def f(L, log):
        n = net(L)
        attempt = _attempt(log)
        attempt("missing", lambda: n.nope)
        attempt("missing_child", lambda: n.body.nope)
        n.plain = 3
        log.append(("plain", n.plain, "plain" in n.__dict__))
        attempt("param_from_tensor", lambda: setattr(n.head, "weight", L.ones(2, 4)))
        n.head.weight = None
        log.append(("weight_none", n.head.weight, [k for k, _ in n.named_parameters()]))
        attempt("module_from_int", lambda: setattr(n, "head", 3))
        n.head = None
        log.append(("head_none", list(n.state_dict())))
        attempt("buffer_from_int", lambda: setattr(n.body[2], "running", 1))
        del n.body[2].running
        del n.act
        del n.plain
        log.append(("deleted", list(n.state_dict()), [k for k, _ in n.named_children()]))
        attempt("del_missing", lambda: delattr(n, "nope"))
        n.body[2].scale = None  # a parameter's name set to None
        log.append(("scale_none", list(n.state_dict())))
        m = L.nn.Module()
        m.x = L.nn.Tanh()
        m.x = L.nn.Parameter(L.ones(1))  # a parameter replaces the module
        log.append(("replaced", [k for k, _ in m.named_children()],
                    [k for k, _ in m.named_parameters()]))
        names = dir(n.body[2])
        log.append(("dir", [k for k in ("running", "scale", "count", "forward", "training")
                            if k in names]))
    same(f)


def _attempt(log):
    def attempt(tag, fn):
        try:
            log.append((tag, fn()))
        except Exception as e:  # noqa: BLE001 - compared with torch's
            log.append((tag, type(e).__name__, str(e).replace("eagergrad.", "torch.")))
    return attempt


def test_register_errors():
    def f(L, log):
        attempt = _attempt(log)
        m = L.nn.Module()
        m.w = L.nn.Parameter(L.ones(1))
        m.attr = 1
        P = L.nn.Parameter
        attempt("p_dot", lambda: m.register_parameter("a.b", P(L.ones(1))))
        attempt("p_empty", lambda: m.register_parameter("", P(L.ones(1))))
        attempt("p_exists", lambda: m.register_parameter("attr", P(L.ones(1))))
        attempt("p_name_type", lambda: m.register_parameter(1, P(L.ones(1))))
        attempt("p_tensor", lambda: m.register_parameter("t", L.ones(1)))
        attempt("b_dot", lambda: m.register_buffer("a.b", L.ones(1)))
        attempt("b_empty", lambda: m.register_buffer("", L.ones(1)))
        attempt("b_exists", lambda: m.register_buffer("w", L.ones(1)))
        attempt("b_type", lambda: m.register_buffer("b", [1.0]))
        attempt("m_type", lambda: m.add_module("c", 3))
        attempt("m_dot", lambda: m.add_module("a.b", L.nn.Tanh()))
        attempt("m_empty", lambda: m.add_module("", L.nn.Tanh()))
        attempt("m_exists", lambda: m.add_module("w", L.nn.Tanh()))
        m.register_module("c", L.nn.ReLU())
        log.append(("ok", rep(m)))

        class Early(L.nn.Module):
            def __init__(self):
                self.w = L.nn.Parameter(L.ones(1))

        attempt("early_param", Early)

        class EarlyModule(L.nn.Module):
            def __init__(self):
                self.m = L.nn.Tanh()

        attempt("early_module", EarlyModule)
        attempt("early_buffer", lambda: L.nn.Module.__new__(L.nn.Module).register_buffer(
            "x", None))
        attempt("init_args", lambda: L.nn.Module(1))
        attempt("init_kwargs", lambda: L.nn.Module(a=1))
        attempt("no_forward", lambda: L.nn.Module()(1))
    same(f)


def test_get_submodule_parameter_buffer():
    def f(L, log):
        attempt = _attempt(log)
        n = net(L)
        log.append(rep(n.get_submodule("body.0")))
        log.append(n.get_submodule("") is n)
        log.append(n.get_parameter("body.0.weight"))
        log.append(n.get_buffer("body.2.running"))
        attempt("no_sub", lambda: n.get_submodule("body.9"))
        attempt("not_module", lambda: n.get_submodule("head.weight"))
        attempt("no_param", lambda: n.get_parameter("head.nope"))
        attempt("not_param", lambda: n.get_parameter("body.2.running"))
        attempt("not_buffer", lambda: n.get_buffer("head.weight"))
        n.set_submodule("body.1", L.nn.Sigmoid())
        log.append(rep(n.body))
        attempt("set_strict", lambda: n.set_submodule("body.zz", L.nn.ReLU(), strict=True))
        attempt("set_empty", lambda: n.set_submodule("", L.nn.ReLU()))
    same(f)


# ---- state dicts -------------------------------------------------------------------------
def test_state_dict():
    def f(L, log):
        n = net(L)
        sd = n.state_dict()
        log.append((type(sd).__name__, list(sd.items())))
        log.append(dict(sd._metadata))
        log.append([(k, v.requires_grad, v.is_leaf) for k, v in sd.items()])
        kv = n.state_dict(keep_vars=True)
        log.append([(k, type(v).__name__, v is n.get_parameter(k) if k.endswith(
            ("weight", "bias", "scale")) else None) for k, v in kv.items()])
        dest = {}
        log.append(list(n.body.state_dict(destination=dest, prefix="pre.")) == list(dest))
        log.append(list(dest))
        # the state dict shares storage with the parameters
        with L.no_grad():
            n.head.weight.add_(1)
        log.append(sd["head.weight"])
    same(f)


def test_load_state_dict_roundtrip_and_keys():
    def f(L, log):
        src, dst = net(L), net(L)
        with L.no_grad():
            for p in src.parameters():
                p.mul_(-3)
            src.body[2].running.fill_(2)
            src.body[2].count.fill_(7)
        before = dst.head.weight
        r = dst.load_state_dict(src.state_dict())
        log.append((repr(r), str(r), r.missing_keys, r.unexpected_keys, type(r).__name__))
        log.append(list(dst.state_dict().items()))
        log.append((dst.head.weight is before, dst.head.weight._version,
                    dst.head.weight.requires_grad))
        sd = src.state_dict()
        del sd["head.weight"]
        sd["body.0.extra"] = L.ones(1)
        sd["zzz.w"] = L.ones(1)
        sd["body.2.scratch"] = L.ones(2)
        r = dst.load_state_dict(sd, strict=False)
        log.append((repr(r), r.missing_keys, r.unexpected_keys))
        # assign=True keeps the state dict's tensors, wrapped as Parameters
        new = OrderedDict((k, v.clone()) for k, v in src.state_dict().items())
        dst.load_state_dict(new, assign=True)
        log.append([(k, type(v).__name__, v.requires_grad)
                    for k, v in dst.state_dict(keep_vars=True).items()])
        log.append(type(dst.head.weight).__name__)
        # a 0-dim entry accepts a 1-element 1-dim value
        m = L.nn.Module()
        m.register_buffer("s", L.tensor(1.0))
        m.load_state_dict({"s": L.tensor([5.0])})
        log.append(m.s)
    same(f)


def test_load_state_dict_errors():
    def f(L, log):
        attempt = _attempt(log)
        n = net(L)
        sd = n.state_dict()
        miss = dict(sd)
        del miss["head.weight"], miss["body.2.running"]
        attempt("missing", lambda: n.load_state_dict(miss))
        extra = dict(sd, **{"body.0.extra": L.ones(1), "nope.x": L.ones(1)})
        attempt("unexpected", lambda: n.load_state_dict(extra))
        both = dict(miss, **{"nope.x": L.ones(1)})
        attempt("both", lambda: n.load_state_dict(both))
        bad = dict(sd, **{"head.weight": L.ones(3, 4), "body.0.bias": L.ones(2)})
        attempt("size", lambda: n.load_state_dict(bad))
        attempt("size_nonstrict", lambda: n.load_state_dict(bad, strict=False))
        attempt("not_tensor", lambda: n.load_state_dict(dict(sd, **{"head.weight": 1.0})))
        attempt("not_mapping", lambda: n.load_state_dict([1, 2]))
    same(f)


def test_load_state_dict_error_loads_nothing():
    """eagergrad checks every entry before copying any: a failing load_state_dict leaves
    the module as it was (torch copies the entries that fit, then raises)."""
    n = net(eg)
    before = {k: v.clone() for k, v in n.state_dict().items()}
    sd = {k: v + 1 for k, v in n.state_dict().items()}
    sd["head.weight"] = eg.ones(3, 4)
    with pytest.raises(RuntimeError, match="size mismatch for head.weight"):
        n.load_state_dict(sd)
    del sd["head.weight"]
    with pytest.raises(RuntimeError, match="Missing key"):
        n.load_state_dict(sd)
    for k, v in n.state_dict().items():
        assert np.array_equal(v.numpy(), before[k].numpy()), k
        assert v._version == before[k]._version or k == "body.2.count"
    # and torch does half-load, so the difference is real
    tn = net(torch)
    tsd = {k: v + 1 for k, v in tn.state_dict().items()}
    tsd["head.weight"] = torch.ones(3, 4)
    with pytest.raises(RuntimeError):
        tn.load_state_dict(tsd)
    assert torch.equal(tn.body[0].bias, torch.tensor(B1) + 1)


def test_state_dict_and_load_hooks():
    def f(L, log):
        n = net(L)
        n.body.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars: log.append(("pre", type(m).__name__, prefix,
                                                     keep_vars)))
        n.head.register_state_dict_post_hook(
            lambda m, sd, prefix, meta: log.append(("post", prefix, list(sd), meta)))
        sd = n.state_dict()
        n.head.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, mk, uk, em: log.append(
                ("lpre", type(m).__name__, prefix, sorted(sd), meta, strict)))
        h = n.register_load_state_dict_post_hook(
            lambda m, keys: log.append(("lpost", type(m).__name__, list(keys.missing_keys))))
        n.body.register_load_state_dict_post_hook(
            lambda m, keys: keys.missing_keys.clear())  # clears the error
        del sd["body.0.bias"]
        log.append(repr(n.load_state_dict(sd)))
        h.remove()
        del sd["head.weight"]
        try:
            n.load_state_dict(sd)
        except RuntimeError as e:
            log.append(str(e))
    same(f)


# ---- repr --------------------------------------------------------------------------------
def test_reprs():
    def f(L):
        nn = L.nn
        n = net(L)
        n.lst = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.ReLU(inplace=True), nn.Tanh(),
                               nn.Sequential(nn.Flatten(0), nn.Identity())])
        n.dct = nn.ModuleDict({"b": nn.Softmax(dim=1), "a": nn.LogSoftmax(dim=-1)})
        n.empty = nn.ModuleList()
        n.plist = nn.ParameterList([L.ones(2, 3), nn.Parameter(L.zeros(1)), "s"])
        n.pdict = nn.ParameterDict({"z": L.ones(2), "a": L.zeros(1, 2, dtype=L.float64)})
        n.unflat = nn.Unflatten(1, (2, 2))
        return [rep(n), rep(nn.Module()), rep(nn.Sequential()), rep(nn.Softmax()),
                rep(nn.Sigmoid()), rep(n.lst[4])]
    same(f)


# ---- calling, hooks ------------------------------------------------------------------------
def test_forward_and_backward_through_sequential():
    def f(L, log):
        n = net(L)
        x = L.tensor(X, requires_grad=True)
        y = n(x, scale=2.0)
        log.append((y, y.grad_fn.name()))
        y.sum().backward()
        log.append(x.grad)
        log.append([(k, p.grad) for k, p in n.named_parameters()])
        seq = L.nn.Sequential(L.nn.Flatten(0), L.nn.Sigmoid(), L.nn.Unflatten(0, (3, 5)),
                              L.nn.Softmax(dim=0), L.nn.LogSoftmax(1), L.nn.Identity())
        z = seq(x.t())
        log.append((z, z.grad_fn.name()))
        z.pow(2).sum().backward()
        log.append(x.grad)
    same(f)


def test_forward_hooks_order_and_arguments():
    def f(L, log):
        n = net(L)
        x = L.tensor(X)

        def pre(tag, ret=None):
            def hook(m, args):
                log.append((tag, type(m).__name__, args))
                return ret(args) if ret else None
            return hook

        def post(tag, ret=None):
            def hook(m, args, out):
                log.append((tag, type(m).__name__, args, out))
                return ret(out) if ret else None
            return hook

        h1 = n.register_forward_pre_hook(pre("pre1"))
        n.register_forward_pre_hook(pre("pre0"), prepend=True)
        n.head.register_forward_pre_hook(pre("head_pre", lambda a: a[0] * 2))  # non-tuple
        n.head.register_forward_hook(post("head_post", lambda out: out + 1))
        n.register_forward_hook(post("post1"))
        h2 = n.register_forward_hook(post("post0"), prepend=True)
        n.register_forward_pre_hook(
            lambda m, args, kwargs: log.append(("kw_pre", args, kwargs)) or
            (args, {"scale": 3.0}), with_kwargs=True)
        n.register_forward_hook(
            lambda m, args, kwargs, out: log.append(("kw_post", kwargs, out)),
            with_kwargs=True)
        log.append(("out", n(x, scale=0.5)))
        h1.remove()
        h2.remove()
        h2.remove()
        log.append(("out2", n(x)))
        with n.body.register_forward_hook(post("ctx")):
            n.body(x)
        n.body(x)
    same(f)


def test_forward_hook_always_call_and_errors():
    def f(L, log):
        attempt = _attempt(log)

        class Boom(L.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        b = Boom()
        b.register_forward_hook(lambda m, a, out: log.append(("never", out)))
        b.register_forward_hook(lambda m, a, out: log.append(("always", a, out)),
                                always_call=True)
        attempt("boom", lambda: b(L.ones(1)))
        t = L.nn.Tanh()
        t.register_forward_pre_hook(lambda m, a, k: 5, with_kwargs=True)
        attempt("bad_pre", lambda: t(L.ones(1)))
    same(f)


def test_backward_hook_handles_and_prepend():
    """Registration only (the backward runs are in test_nn_hooks.py): handles, prepend, the
    full/non-full exclusivity flag."""
    def f(L, log):
        m = L.nn.ReLU()
        a = m.register_full_backward_hook(lambda *x: None)
        b = m.register_full_backward_hook(lambda *x: None, prepend=True)
        c = m.register_full_backward_pre_hook(lambda *x: None, prepend=True)
        log.append(([k for k in m._backward_hooks] == [b.id, a.id],
                     list(m._backward_pre_hooks) == [c.id], m._is_full_backward_hook))
        a.remove()
        b.remove()
        log.append((len(m._backward_hooks), m._is_full_backward_hook))
    same(f)


# ---- modes, grads, conversion ---------------------------------------------------------------
def test_train_eval_apply_requires_grad():
    def f(L, log):
        attempt = _attempt(log)
        n = net(L)
        flags = lambda: [(k, m.training) for k, m in n.named_modules()]
        log.append(flags())
        log.append(n.eval() is n)
        log.append(flags())
        n.body.train()
        log.append(flags())
        attempt("mode", lambda: n.train("yes"))
        seen = []
        log.append(n.apply(lambda m: seen.append(type(m).__name__)) is n)
        log.append(seen)
        n.body.requires_grad_(False)
        log.append([(k, p.requires_grad) for k, p in n.named_parameters()])
        n.requires_grad_()
        log.append([p.requires_grad for p in n.parameters()])
    same(f)


def test_zero_grad():
    def f(L, log):
        n = net(L)
        n(L.tensor(X)).sum().backward()
        grads = [p.grad for p in n.parameters()]
        n.zero_grad(set_to_none=False)
        log.append([(p.grad, p.grad is g) for p, g in zip(n.parameters(), grads)])
        n(L.tensor(X)).sum().backward()
        log.append([p.grad for p in n.parameters()])
        n.zero_grad()
        log.append([p.grad for p in n.parameters()])
    same(f)


def test_to_and_dtype_conversions():
    def f(L, log):
        attempt = _attempt(log)
        n = net(L)
        n(L.tensor(X)).sum().backward()
        w = n.head.weight
        log.append(n.double() is n)
        log.append((n.head.weight is w, type(w).__name__, w.dtype, w.grad.dtype,
                    w.requires_grad, w.is_leaf))
        log.append([(k, v.dtype) for k, v in n.state_dict().items()])
        log.append(n.float().to(L.float64) is n)
        log.append([(k, v.dtype) for k, v in n.state_dict().items()])
        n.to(dtype=L.float32)
        n.half()
        log.append([(k, v.dtype) for k, v in n.state_dict().items()])
        n.to("cpu", L.float32)
        n.to(L.device("cpu"))
        n.to(L.zeros(1, dtype=L.float64))
        n.cpu()
        log.append([(k, v.dtype, v) for k, v in n.state_dict().items()])
        attempt("int", lambda: n.to(L.int64))
        y = n(L.tensor(X, dtype=L.float64))
        y.sum().backward()
        log.append([(k, p.grad) for k, p in n.named_parameters()])
    same(f)


# ---- containers ---------------------------------------------------------------------------
def test_sequential():
    def f(L, log):
        attempt = _attempt(log)
        nn = L.nn
        s = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity())
        names = lambda m: [type(c).__name__ for c in m]
        log.append((len(s), type(s[0]).__name__, type(s[-1]).__name__, s[-4] is s[0]))
        log.append((type(s[1:3]).__name__, names(s[1:3]), rep(s[::-2]),
                    list(s[1:3]._modules)))
        attempt("oob", lambda: s[4])
        attempt("oob_neg", lambda: s[-5])
        s.append(nn.Flatten())
        s.insert(1, nn.Softmax(0))
        s.insert(-1, nn.LogSoftmax(0))
        attempt("insert_oob", lambda: s.insert(10, nn.ReLU()))
        attempt("insert_type", lambda: s.insert(0, 3))
        s.extend([nn.Identity(), nn.Tanh()])
        log.append((names(s), list(s._modules)))
        log.append(type(s.pop(0)).__name__)
        del s[1:3]
        s[0] = nn.ReLU(inplace=True)
        log.append((names(s), list(s._modules), rep(s)))
        t = s + nn.Sequential(nn.Sigmoid())
        log.append((names(t), list(t._modules), t[0] is s[0]))
        attempt("add_list", lambda: s + [nn.ReLU()])
        s += nn.Sequential(nn.ReLU())
        log.append(names(s))
        m = nn.Sequential(nn.Tanh(), nn.ReLU()) * 2
        log.append((names(m), rep(m)))
        attempt("mul0", lambda: nn.Sequential() * 0)
        od = nn.Sequential(OrderedDict([("first", nn.Tanh()), ("second", nn.ReLU())]))
        log.append((rep(od), rep(od[1:]), type(od.first).__name__))
        x = L.tensor([[-1.0, 0.5], [2.0, -3.0]], requires_grad=True)
        y = nn.Sequential(nn.Tanh(), nn.ReLU(), nn.Softmax(dim=1))(x)
        log.append((y, y.grad_fn.name()))
    same(f)


def test_module_list_and_dict():
    def f(L, log):
        attempt = _attempt(log)
        nn = L.nn
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.append(nn.Sigmoid())
        ml.extend([nn.Identity()])
        ml.insert(1, nn.Flatten())
        names = lambda m: [type(c).__name__ for c in m]
        log.append((len(ml), names(ml), type(ml[-1]).__name__, names(ml[1:4]),
                    type(ml[1:4]).__name__))
        attempt("oob", lambda: ml[9])
        attempt("extend_bad", lambda: ml.extend(3))
        ml[0] = nn.Softmax(1)
        del ml[1]
        log.append((names(ml), list(ml._modules), type(ml.pop(-1)).__name__))
        ml += [nn.ReLU()]
        log.append((names(ml + nn.ModuleList([nn.Tanh()])), rep(ml)))
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
        md["c"] = nn.Sigmoid()
        md.update([("d", nn.Identity())])
        log.append((list(md), list(md.keys()), [type(v).__name__ for v in md.values()],
                    "a" in md, len(md)))
        log.append((type(md.pop("a")).__name__, next(iter(md.items()))[0]))
        del md["b"]
        attempt("update_bad", lambda: md.update(3))
        attempt("update_pair", lambda: md.update([("x",)]))
        log.append(rep(md))
        md.clear()
        log.append((len(md), rep(md)))
    same(f)


def test_parameter_list_and_dict():
    def f(L, log):
        attempt = _attempt(log)
        nn = L.nn
        pl = nn.ParameterList([L.ones(2), nn.Parameter(L.zeros(3), requires_grad=False)])
        pl.append(L.full((1,), 2.0))
        pl.extend([L.ones(1, 2)])
        log.append((len(pl), [type(p).__name__ for p in pl],
                    [(k, v.requires_grad) for k, v in pl.named_parameters()]))
        log.append((rep(pl), rep(pl[1:3]), pl[-1]))
        attempt("oob", lambda: pl[7])
        attempt("extend_tensor", lambda: pl.extend(L.ones(2)))
        attempt("call", lambda: pl(1))
        pd = nn.ParameterDict({"w": L.ones(2), "b": L.zeros(1)})  # plain dict: sorted
        pd["c"] = nn.Parameter(L.ones(1))
        pd.update(OrderedDict([("z", L.ones(1)), ("y", L.ones(1))]))
        log.append((list(pd), list(pd.keys()), [k for k, _ in pd.named_parameters()],
                    "w" in pd, len(pd), pd.get("nope", 5)))
        log.append((pd.pop("w"), pd.popitem()[0], list(reversed(pd)), pd.setdefault("q")))
        log.append((rep(pd), list(pd.copy()), list(pd | nn.ParameterDict({"k": L.ones(1)}))))
        attempt("key_type", lambda: pd[1])
        attempt("call", lambda: pd(1))
        del pd["b"]
        pd.clear()
        log.append((len(pd), rep(pd)))
    same(f)


# ---- layers and functional ------------------------------------------------------------------
def test_functional_and_layers():
    def f(L, log):
        F = L.nn.functional
        x = L.tensor([[-1.0, 0.5, 2.0], [0.0, -3.0, 1.0]], requires_grad=True)
        outs = [F.relu(x), F.softmax(x, dim=1), F.log_softmax(x, 0), F.tanh(x),
                F.sigmoid(x), F.softmax(x, 1, dtype=L.float64),
                L.nn.Flatten(0)(x), L.nn.Unflatten(1, [3, 1])(x), L.nn.Identity(3)(x)]
        log.append([(o, o.grad_fn.name()) for o in outs])
        sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
        log.append(x.grad)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = F.softmax(x)
            z = L.nn.LogSoftmax()(x.detach()[0])
        log.append((y, z, [str(m.message) for m in w]))
        v = x.detach().clone()
        r = F.relu(v, inplace=True)
        log.append((r is v, v, v._version))
        attempt = _attempt(log)
        attempt("unflatten_type", lambda: L.nn.Unflatten(1, 3))
        attempt("unflatten_elem", lambda: L.nn.Unflatten(1, (2, 1.5)))
    same(f)


def test_missing_names_raise_not_implemented():
    for mod, tmod, name in [(eg.nn, torch.nn, "SyncBatchNorm"),
                            (eg.nn.functional, torch.nn.functional, "grouped_mm"),
                            (eg.nn.utils, torch.nn.utils, "fuse_conv_bn_eval")]:
        assert hasattr(tmod, name)
        with pytest.raises(NotImplementedError, match=f"{tmod.__name__}.{name}"):
            getattr(mod, name)
        assert not hasattr(mod, name)
    with pytest.raises(AttributeError) as e:
        eg.nn.NoSuchThing
    assert not isinstance(e.value, NotImplementedError)
    import eagergrad.nn.functional as F
    from eagergrad import nn
    from eagergrad.nn import init
    assert nn is eg.nn and F is nn.functional and init is nn.init


# ---- init --------------------------------------------------------------------------------
def test_init_gains_and_fans():
    def f(L, log):
        attempt = _attempt(log)
        init = L.nn.init
        for nl in ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                   "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                   "leaky_relu", "selu"]:
            log.append((nl, init.calculate_gain(nl)))
        log.append([init.calculate_gain("leaky_relu", a) for a in (0, 0.2, 3, 5 ** 0.5)])
        attempt("bad_nl", lambda: init.calculate_gain("gelu"))
        attempt("bad_param", lambda: init.calculate_gain("leaky_relu", True))
        for shape in [(3, 5), (4, 2, 3), (6, 3, 2, 5), (2, 2, 1, 1, 3)]:
            log.append((shape, init._calculate_fan_in_and_fan_out(L.empty(shape))))
        attempt("fan_1d", lambda: init._calculate_fan_in_and_fan_out(L.empty(3)))
        attempt("fan_mode", lambda: init.kaiming_uniform_(L.empty(3, 4), mode="fan"))
        attempt("eye_3d", lambda: init.eye_(L.empty(2, 2, 2)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            z = init.kaiming_normal_(L.empty(0, 3))
        log.append((z.shape, [str(m.message) for m in w]))
    same(f)


def test_init_deterministic_fills():
    def f(L, log):
        init = L.nn.init
        p = L.nn.Parameter(L.empty(3, 4))
        for fill in (lambda t: init.constant_(t, 0.25), init.ones_, init.zeros_,
                     init.eye_):
            r = fill(p)
            log.append((r is p, p, p.requires_grad, p.is_leaf, p.grad_fn))
        log.append(init.eye_(L.empty(4, 2, dtype=L.float64)))
    same(f)


@pytest.mark.parametrize("name,kwargs,shape", [
    ("uniform_", {"a": -0.5, "b": 2.0}, (200, 100)),
    ("normal_", {"mean": 1.0, "std": 0.5}, (200, 100)),
    ("trunc_normal_", {"mean": 0.1, "std": 1.0, "a": -1.0, "b": 0.5}, (200, 100)),
    ("trunc_normal_", {"std": 0.02}, (200, 100)),
    ("xavier_uniform_", {"gain": 2.0}, (300, 60)),
    ("xavier_normal_", {}, (300, 60)),
    ("kaiming_uniform_", {"a": 5 ** 0.5}, (100, 50, 3)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}, (100, 50, 3)),
])
def test_init_random_distributions(name, kwargs, shape):
    """Random initialisers: same support and moments as torch's (20 000+ samples)."""
    torch.manual_seed(0)
    eg.manual_seed(0)
    t = getattr(torch.nn.init, name)(torch.nn.Parameter(torch.empty(shape)), **kwargs)
    p = eg.nn.Parameter(eg.empty(shape))
    e = getattr(eg.nn.init, name)(p, **kwargs)
    assert e is p and p.requires_grad and p.is_leaf and p.grad_fn is None
    a, b = t.detach().numpy().ravel(), e.detach().numpy().ravel()
    spread = a.std()
    assert abs(a.mean() - b.mean()) < 0.05 * spread + 1e-7
    assert abs(a.std() - b.std()) < 0.03 * spread
    assert b.min() >= a.min() - 0.1 * spread and b.max() <= a.max() + 0.1 * spread
    if name in ("uniform_", "trunc_normal_", "xavier_uniform_", "kaiming_uniform_"):
        lo, hi = (kwargs.get("a", -2.0), kwargs.get("b", 2.0)) if name != "kaiming_uniform_" \
            else (None, None)
        if name == "uniform_" or name == "trunc_normal_":
            assert lo <= b.min() and b.max() <= hi
        else:  # the bound torch's own samples reach
            bound = np.abs(a).max()
            assert np.abs(b).max() <= bound * 1.001 and np.abs(b).max() > bound * 0.99
