"""Modules, optimizers, schedulers and data-loading objects pickle as torch's do: every
class's `__module__` is a real import path (the layers' is eagergrad.nn.modules.<torch's
file>), so pickle, copy.deepcopy and a whole-module save / load(weights_only=False)
round-trip, compared with torch doing the same."""
import copy
import importlib
import inspect
import io
import pickle
import pkgutil

import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad.engine.graph import Node
from conftest import Options, msg, norm

_OPTS = Options(exact=True)


# ---- every __module__ is a real import path ------------------------------------------------
def _eagergrad_classes():
    """class -> the first of the package's modules found holding it, for every class."""
    out = {}
    for info in pkgutil.walk_packages(eg.__path__, "eagergrad."):
        if info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for obj in vars(mod).values():
            if inspect.isclass(obj) and (obj.__module__ or "").startswith("eagergrad") and \
                    "<locals>" not in obj.__qualname__:
                out.setdefault(obj, info.name)
    return out


def test_every_class_is_found_where_its_module_says():
    bad = []
    for cls, found in _eagergrad_classes().items():
        if issubclass(cls, Node):
            continue  # (torch's graph nodes do not pickle either: their module is builtins)
        try:
            ok = getattr(importlib.import_module(cls.__module__), cls.__qualname__, None) is cls
        except ImportError:
            ok = False
        if not ok:
            bad.append(f"{cls.__module__}.{cls.__qualname__} (found in {found})")
    assert not bad, "classes pickle cannot find:\n" + "\n".join(sorted(bad))


def test_namedtuple_results_pickle_as_torch():
    for L in (torch, eg):
        r = pickle.loads(pickle.dumps(L.arange(6.).reshape(2, 3).max(1)))
        assert type(r) is L.return_types.max and r.indices.tolist() == [2, 2]
    buf = io.BytesIO()  # a torch file's structseqs load as eagergrad's
    torch.save([torch.tensor([3.0, 1.0]).sort(), torch.ones(2, 2).svd()], buf)
    buf.seek(0)
    r, svd = eg.load(buf, weights_only=False)
    assert type(r) is eg.return_types.sort and r.indices.tolist() == [1, 0]
    assert type(svd) is eg.return_types.svd and svd.S.shape == (2,)


_FILES = sorted({c.__module__.rsplit(".", 1)[1] for c in _eagergrad_classes()
                 if c.__module__.startswith("eagergrad.nn.modules.")})


@pytest.mark.parametrize("name", _FILES)
def test_nn_modules_has_torch_files_with_torch_classes(name):
    """eagergrad.nn.modules.<file> holds the classes torch's file of that name defines that
    eagergrad has (the same objects as eagergrad.nn's), and exports what torch exports."""
    ours = importlib.import_module(f"eagergrad.nn.modules.{name}")
    theirs = importlib.import_module(f"torch.nn.modules.{name}")
    for n, obj in vars(theirs).items():
        # (torch's _functions.CrossMapLRN2d, a Function, is not nn.CrossMapLRN2d)
        if inspect.isclass(obj) and obj.__module__ == theirs.__name__ and \
                not n.startswith("_") and inspect.isclass(eg.nn.__dict__.get(n)) and \
                getattr(torch.nn, n, None) is obj:
            assert getattr(ours, n) is getattr(eg.nn, n), n
    if hasattr(ours, "__all__"):
        assert set(ours.__all__) <= set(theirs.__all__)
        assert all(getattr(ours, n) is getattr(eg.nn, n) for n in ours.__all__)
    assert set(eg.nn.modules.__all__) <= set(torch.nn.modules.__all__)


# ---- modules round trip -----------------------------------------------------------------
def _make_net(L):
    class Net(L.nn.Module):
        """Containers, a buffer, a plain attribute and a non-persistent buffer."""

        def __init__(self):
            super().__init__()
            self.body = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(),
                                        L.nn.Sequential(L.nn.Linear(4, 4), L.nn.ReLU()))
            self.heads = L.nn.ModuleList([L.nn.Linear(4, 2), L.nn.Linear(4, 2)])
            self.by_name = L.nn.ModuleDict({"norm": L.nn.LayerNorm(2)})
            self.scales = L.nn.ParameterList([L.nn.Parameter(L.ones(2)),
                                              L.nn.Parameter(L.full((2,), 0.5))])
            self.shifts = L.nn.ParameterDict({"a": L.nn.Parameter(L.zeros(2))})
            self.register_buffer("count", L.tensor(3))
            self.register_buffer("scratch", L.ones(2), persistent=False)
            self.note = "kept"

        def forward(self, x):
            h = self.body(x)
            out = sum(head(h) * s for head, s in zip(self.heads, self.scales))
            return self.by_name["norm"](out + self.shifts["a"]) * self.count + self.scratch
    return Net


TorchNet, EgNet = _make_net(torch), _make_net(eg)
TorchNet.__qualname__, EgNet.__qualname__ = "TorchNet", "EgNet"  # found by pickle

# name -> (module of library L, inputs of L)
_MODULES = {
    "linear": (lambda L: L.nn.Linear(3, 2), lambda L: (L.randn(4, 3),)),
    "bilinear": (lambda L: L.nn.Bilinear(3, 2, 2), lambda L: (L.randn(4, 3), L.randn(4, 2))),
    "conv2d": (lambda L: L.nn.Conv2d(2, 3, 3, padding=1), lambda L: (L.randn(1, 2, 5, 5),)),
    "conv_transpose1d": (lambda L: L.nn.ConvTranspose1d(2, 3, 3, stride=2),
                         lambda L: (L.randn(1, 2, 5),)),
    "batchnorm": (lambda L: L.nn.BatchNorm1d(3), lambda L: (L.randn(5, 3),)),
    "instancenorm": (lambda L: L.nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
                     lambda L: (L.randn(2, 3, 5),)),
    "group_layer_rms_norm": (lambda L: L.nn.Sequential(L.nn.GroupNorm(2, 4),
                                                       L.nn.LayerNorm(4), L.nn.RMSNorm(4)),
                             lambda L: (L.randn(3, 4),)),
    "embedding": (lambda L: L.nn.Embedding(5, 3, padding_idx=0),
                  lambda L: (L.tensor([[0, 1, 4]]),)),
    "embedding_bag": (lambda L: L.nn.EmbeddingBag(5, 3, mode="max"),
                      lambda L: (L.tensor([[0, 1], [2, 4]]),)),
    "lstm": (lambda L: L.nn.LSTM(3, 4, num_layers=2, batch_first=True),
             lambda L: (L.randn(2, 5, 3),)),
    "gru_cell": (lambda L: L.nn.GRUCell(3, 4), lambda L: (L.randn(2, 3),)),
    "multihead_attention": (lambda L: L.nn.MultiheadAttention(4, 2, batch_first=True),
                            lambda L: (L.randn(1, 3, 4),) * 3),
    "transformer_layer": (lambda L: L.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0,
                                                                 batch_first=True),
                          lambda L: (L.randn(2, 3, 4),)),
    "activations": (lambda L: L.nn.Sequential(L.nn.PReLU(), L.nn.ReLU6(), L.nn.GELU("tanh"),
                                              L.nn.Softmax(dim=1), L.nn.LogSoftmax(1),
                                              L.nn.Identity(), L.nn.Dropout(0.3)),
                    lambda L: (L.randn(2, 3),)),
    "shape_layers": (lambda L: L.nn.Sequential(
        L.nn.Unflatten(1, (4, 8)), L.nn.Upsample(scale_factor=2), L.nn.PixelShuffle(2),
        L.nn.ReflectionPad2d(1), L.nn.MaxPool2d(2), L.nn.AdaptiveAvgPool2d(3),
        L.nn.Flatten()), lambda L: (L.randn(1, 32, 2),)),
    "fold": (lambda L: L.nn.Sequential(L.nn.Unfold(2), L.nn.Fold((3, 3), 2)),
             lambda L: (L.randn(1, 2, 3, 3),)),
    "loss": (lambda L: L.nn.CrossEntropyLoss(weight=L.tensor([1.0, 2.0, 0.5]),
                                             label_smoothing=0.1),
             lambda L: (L.randn(4, 3), L.tensor([0, 2, 1, 2]))),
    "containers": (lambda L: TorchNet() if L is torch else EgNet(),
                   lambda L: (L.randn(2, 3),)),
}


def _round_trip(L, obj, how):
    if how == "pickle":
        return pickle.loads(pickle.dumps(obj))
    if how == "deepcopy":
        return copy.deepcopy(obj)
    buf = io.BytesIO()
    L.save(obj, buf)
    return L.load(io.BytesIO(buf.getvalue()), weights_only=False)


def _pair(make, inputs):
    """The module and its inputs in torch and in eagergrad, with torch's values."""
    torch.manual_seed(0)
    t = make(torch)
    e = make(eg)
    e.load_state_dict({k: eg.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = inputs(torch)
    return (t, x), (e, tuple(eg.tensor(a.numpy()) for a in x))


def _state(m, x, opts=_OPTS):
    """What a round trip must keep: classes, parameters (their type and requires_grad),
    buffers, mode, attributes, and the forward result (in eval mode, after one training
    step of the running statistics). Exact unless `opts` says otherwise."""
    params = [(n, type(p).__name__, p.requires_grad, p) for n, p in m.named_parameters()]
    training = [s.training for s in m.modules()]
    out = m.eval()(*x)
    for s, mode in zip(m.modules(), training):
        s.training = mode
    return norm(dict(classes=[type(s).__name__ for s in m.modules()], params=params,
                     buffers=dict(m.named_buffers()), training=training,
                     note=getattr(m, "note", None), out=out), opts)


@pytest.mark.fast_first
@pytest.mark.parametrize("how", ["pickle", "save", "deepcopy"])
@pytest.mark.parametrize("name", list(_MODULES))
def test_a_module_round_trips_as_in_torch(name, how):
    (t, tx), (e, ex) = _pair(*_MODULES[name])
    t(*tx), e(*ex)  # (a training step: running statistics move)
    t2, e2 = _round_trip(torch, t, how), _round_trip(eg, e, how)
    assert type(e2) is type(e) and e2 is not e
    assert repr(e2) == repr(e)
    assert _state(e2, ex) == _state(e, ex)
    assert _state(e2, ex, Options()) == _state(t2, tx, Options())
    # the copy owns its tensors: a write into it leaves the original alone, as in torch
    for m, m2 in ((t, t2), (e, e2)):
        for p, p2 in zip(m.parameters(), m2.parameters()):
            with (torch if m is t else eg).no_grad():
                p2.add_(1)
            assert not (p == p2).all()


def test_pickle_dumps_a_linear_as_in_torch():
    t, e = torch.nn.Linear(2, 2), eg.nn.Linear(2, 2)
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2).__module__ == type(t).__module__.replace("torch", "eagergrad", 1)
    assert type(e2) is eg.nn.Linear
    assert np.array_equal(e2.weight.detach().numpy(), e.weight.detach().numpy())


# ---- a trained model and its optimizer ------------------------------------------------------
_OPTIMIZERS = {
    "sgd_nesterov": lambda L, ps: L.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adam_amsgrad": lambda L, ps: L.optim.Adam(ps, lr=0.05, amsgrad=True),
    "adamw": lambda L, ps: L.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
    "rmsprop_centered": lambda L, ps: L.optim.RMSprop(ps, lr=0.01, centered=True,
                                                      momentum=0.5),
    "adagrad": lambda L, ps: L.optim.Adagrad(ps, lr=0.1),
}


def _train(L, m, opt, sched, x, y, steps):
    for _ in range(steps):
        opt.zero_grad()
        L.nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
        sched.step()


def _trained(L, name):
    torch.manual_seed(0)
    # (a BatchNorm after a Linear would leave the Linear's bias a gradient of rounding
    # noise, which Adam and Adagrad scale up to whole steps of either sign)
    tm = torch.nn.Sequential(torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 8),
                             torch.nn.ReLU(), torch.nn.Linear(8, 3))
    m = tm if L is torch else eg.nn.Sequential(eg.nn.BatchNorm1d(3), eg.nn.Linear(3, 8),
                                               eg.nn.ReLU(), eg.nn.Linear(8, 3))
    if L is eg:
        m.load_state_dict({k: eg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    opt = _OPTIMIZERS[name](L, m.parameters())
    sched = L.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    rs = np.random.RandomState(0)
    x, y = L.tensor(rs.randn(6, 3).astype(np.float32)), L.tensor(rs.randint(0, 3, 6))
    _train(L, m, opt, sched, x, y, 3)
    return m, opt, sched, x, y


_INEXACT = Options(exact=False)


def _checkpoint(m, opt, sched, opts=_INEXACT):
    return norm(dict(model=m.state_dict(), opt=opt.state_dict(), sched=sched.state_dict(),
                     shared=[p is q for p, q in zip(m.parameters(),
                                                    opt.param_groups[0]["params"])],
                     sched_opt=sched.optimizer is opt), opts)


@pytest.mark.fast_first
@pytest.mark.parametrize("how", ["save", "pickle"])
@pytest.mark.parametrize("name", list(_OPTIMIZERS))
def test_a_trained_model_and_its_optimizer_round_trip_as_in_torch(name, how):
    """save({"model", "opt", "sched"}) and load(weights_only=False): the same state, the
    optimizer still holding the model's parameters, and training goes on as in torch."""
    runs = {}
    for L in (torch, eg):
        m, opt, sched, x, y = _trained(L, name)
        before = _checkpoint(m, opt, sched, _OPTS)
        o = _round_trip(L, {"model": m, "opt": opt, "sched": sched}, how)
        m2, opt2, sched2 = o["model"], o["opt"], o["sched"]
        assert _checkpoint(m2, opt2, sched2, _OPTS) == before
        _train(L, m2, opt2, sched2, x, y, 2)
        runs[L] = (_checkpoint(m, opt, sched), _checkpoint(m2, opt2, sched2))
    assert runs[eg] == runs[torch]


def _to_eg(x):
    return tuple(eg.tensor(a.numpy()) for a in x)


@pytest.mark.parametrize("name", [n for n in _MODULES if n != "containers"])
def test_a_module_torch_saved_whole_loads_into_eagergrad(name):
    """torch's classes (torch.nn.modules.<file>.<class>) are read as eagergrad's."""
    make, inputs = _MODULES[name]
    torch.manual_seed(0)
    t, x = make(torch), inputs(torch)
    t(*x)
    buf = io.BytesIO()
    torch.save(t, buf)
    e = eg.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert type(e) is getattr(eg.nn, type(t).__name__)
    assert _state(e, _to_eg(x), Options()) == _state(t, x, Options())


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(
        strict=True, reason="torch's AdamW is torch.optim.adamw.AdamW; eagergrad has no "
        "eagergrad.optim.adamw module")) if n == "adamw" else n for n in _OPTIMIZERS])
def test_a_model_and_optimizer_torch_saved_train_on_in_eagergrad(name):
    m, opt, sched, x, y = _trained(torch, name)
    buf = io.BytesIO()
    torch.save({"model": m, "opt": opt, "sched": sched}, buf)
    o = eg.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert _checkpoint(o["model"], o["opt"], o["sched"]) == _checkpoint(m, opt, sched)
    _train(torch, m, opt, sched, x, y, 2)
    _train(eg, o["model"], o["opt"], o["sched"], *_to_eg((x, y)), 2)
    assert _checkpoint(o["model"], o["opt"], o["sched"]) == _checkpoint(m, opt, sched)


# ---- what pickles and what does not, as in torch ----------------------------------------------
class _Sym:
    @staticmethod
    def make(L):
        class Sym(L.nn.Module):
            def forward(self, w):
                return w.triu() + w.triu(1).transpose(-1, -2)
        m = L.nn.Linear(3, 3)
        L.nn.utils.parametrize.register_parametrization(m, "weight", Sym())
        return m


@pytest.mark.parametrize("how", ["pickle", "save"])
def test_parametrized_modules_are_refused_as_torch_refuses_them(how):
    outcomes = []
    for L in (torch, eg):
        try:
            _round_trip(L, _Sym.make(L), how)
            outcomes.append("ok")
        except Exception as e:  # noqa: BLE001 - compared with torch's
            outcomes.append((type(e).__name__, msg(e)))
    assert outcomes[1] == outcomes[0] != "ok"
    assert "only supported through state_dict()" in outcomes[0][1]


def test_a_parametrized_module_deepcopies_as_in_torch():
    (t, tx), (e, ex) = _pair(_Sym.make, lambda L: (L.randn(2, 3),))
    t2, e2 = copy.deepcopy(t), copy.deepcopy(e)
    assert type(e2).__name__ == type(t2).__name__ == "ParametrizedLinear"
    assert _state(e2, ex) == _state(e, ex)
    assert _state(e2, ex, Options()) == _state(t2, tx, Options())


def test_a_materialized_lazy_module_pickles_as_in_torch():
    (t, tx), (e, ex) = _pair(lambda L: L.nn.Linear(3, 2), lambda L: (L.randn(2, 3),))
    lt, le = torch.nn.LazyLinear(2), eg.nn.LazyLinear(2)
    lt(tx[0]), le(ex[0])
    lt.load_state_dict(t.state_dict())
    le.load_state_dict(e.state_dict())
    assert _state(pickle.loads(pickle.dumps(le)), ex, Options()) == _state(
        pickle.loads(pickle.dumps(lt)), tx, Options())


@pytest.mark.xfail(strict=True, reason="nn/modules/module.py wraps load_state_dict pre-hooks in a "
                   "lambda (torch: a picklable _WrappedHook), and a lazy module holds one "
                   "until it is materialized")
def test_an_unmaterialized_lazy_module_pickles_as_in_torch():
    for L in (torch, eg):
        assert type(pickle.loads(pickle.dumps(L.nn.LazyLinear(2)))).__name__ == "LazyLinear"


def _opt(cls, **kw):
    def make(L):
        return getattr(L.optim, cls)([L.nn.Parameter(L.ones(2))], **kw)
    return make


def _sched(cls, *args, **kw):
    def make(L):
        opt = L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1, momentum=0.9)
        sched = getattr(L.optim.lr_scheduler, cls)(opt, *args, **kw)
        opt.step()
        sched.step()
        return sched
    return make


def _chained(L):
    opt = L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1)
    S = L.optim.lr_scheduler
    return S.SequentialLR(opt, [S.ConstantLR(opt, 0.5, 2), S.ExponentialLR(opt, 0.9)], [2])


def _loader(L, **kw):
    ds = L.utils.data.TensorDataset(L.arange(10.).reshape(5, 2), L.arange(5))
    return L.utils.data.DataLoader(ds, batch_size=2, **kw)


_OBJECTS = {
    **{f"optim_{c}": _opt(c, lr=0.1) for c in
       ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam",
        "RMSprop", "Rprop", "LBFGS"]},
    "sched_StepLR": _sched("StepLR", 2),
    "sched_MultiStepLR": _sched("MultiStepLR", [1, 3]),
    "sched_CosineAnnealingLR": _sched("CosineAnnealingLR", 5),
    "sched_CosineAnnealingWarmRestarts": _sched("CosineAnnealingWarmRestarts", 3),
    "sched_OneCycleLR": _sched("OneCycleLR", 1.0, total_steps=10),
    "sched_CyclicLR": _sched("CyclicLR", 0.01, 0.1, step_size_up=2),
    "sched_PolynomialLR": _sched("PolynomialLR", 4),
    "sched_LinearLR": _sched("LinearLR"),
    "sched_ReduceLROnPlateau": lambda L: L.optim.lr_scheduler.ReduceLROnPlateau(
        L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1)),
    "sched_LambdaLR_local_lambda": _sched("LambdaLR", lambda e: 0.9 ** e),
    "sched_SequentialLR": _chained,
    "data_TensorDataset": lambda L: L.utils.data.TensorDataset(L.arange(4.), L.arange(4)),
    "data_Subset_Concat": lambda L: L.utils.data.ConcatDataset(
        [L.utils.data.Subset(L.utils.data.TensorDataset(L.arange(4.)), [0, 2]),
         L.utils.data.TensorDataset(L.arange(3.))]),
    "data_DataLoader": lambda L: _loader(L),
    "data_DataLoader_drop_last": lambda L: _loader(L, drop_last=True),
    "data_samplers": lambda L: [L.utils.data.SequentialSampler(range(4)),
                                L.utils.data.BatchSampler(range(5), 2, False),
                                L.utils.data.SubsetRandomSampler([1, 2]),
                                L.utils.data.WeightedRandomSampler([0.1, 0.9], 3)],
    "data_DataLoader_iterator": lambda L: iter(_loader(L)),
}


def _view(obj):
    """What a round trip must keep of an optimizer, a scheduler or a data object."""
    if hasattr(obj, "state_dict"):
        return norm(obj.state_dict(), Options())
    if hasattr(obj, "dataset"):  # a DataLoader: its batches
        return norm([list(b) for b in obj], Options())
    if isinstance(obj, list):
        return [type(s).__name__ for s in obj] + [len(s) for s in obj]
    return norm([list(obj[i]) for i in range(len(obj))], Options())


@pytest.mark.parametrize("name", list(_OBJECTS))
def test_optimizers_schedulers_and_data_objects_pickle_as_torchs_do(name):
    """pickle round trips where torch's does, keeping the state; refused where torch's is
    (a local lambda, a live DataLoader iterator)."""
    seen = []
    for L in (torch, eg):
        obj = _OBJECTS[name](L)
        try:
            back = pickle.loads(pickle.dumps(obj))
        except Exception:  # noqa: BLE001 - refused: compared with torch below
            seen.append(None)
            continue
        assert type(back) is type(obj)
        assert _view(back) == _view(obj)
        seen.append(type(back).__name__)
    assert seen[1] == seen[0]


@pytest.mark.parametrize("module,name,want", [
    ("eagergrad.nn.conv", "Conv2d", lambda: eg.nn.Conv2d),
    ("eagergrad.nn.layers", "ReLU", lambda: eg.nn.ReLU),
    ("eagergrad.nn.batchnorm", "InstanceNorm1d", lambda: eg.nn.InstanceNorm1d),
    ("eagergrad.nn.module", "Module", lambda: eg.nn.Module),
    ("eagergrad.nn._functional_activation", "gelu", lambda: eg.nn.functional.gelu),
    ("eagergrad.nn._functional_norm", "dropout", lambda: eg.nn.functional.dropout),
])
def test_whole_modules_saved_under_the_old_flat_nn_paths_load(module, name, want):
    """A whole-module pickle written before nn followed torch's file map names the old
    flat paths (eagergrad.nn.conv.Conv2d): load finds each object where it moved."""
    from eagergrad.serialization import _Unpickler
    data = b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\nq\x00."
    assert _Unpickler(io.BytesIO(data), weights_only=False).load() is want()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        _Unpickler(io.BytesIO(data)).load()
    with pytest.raises(AttributeError, match="Can't get attribute 'Nothing'"):
        _Unpickler(io.BytesIO(data.replace(name.encode(), b"Nothing")),
                   weights_only=False).load()
