"""Engine-only tests: graphs made of hand-written custom autograd.Functions (no op
nodes in the graph), built identically in eagergrad and in real torch.

Each Function logs its name when its backward runs, so the tests can check which
nodes ran and in which order (torch runs the ready node with the highest sequence
number first). Gradients are small-integer linear maps, so values are exact.
"""
import gc
import random
import sys
import time

import numpy as np
import pytest
import torch

import eagergrad as eg

LIBS = (torch, eg)


class Kit:
    """The custom Functions of one library, logging into `self.log`."""

    def __init__(self, L):
        self.L = L
        self.log = []
        log = self.log

        class Lin(L.autograd.Function):
            """outputs[j] = sum_i c[j][i] * xs[i]; one or more inputs and outputs."""

            @staticmethod
            def forward(ctx, name, coeffs, *xs):
                ctx.name, ctx.coeffs = name, coeffs
                outs = []
                for row in coeffs:
                    acc = xs[0] * row[0]
                    for c, x in zip(row[1:], xs[1:]):
                        acc = acc + x * c
                    outs.append(acc)
                return outs[0] if len(outs) == 1 else tuple(outs)

            @staticmethod
            def backward(ctx, *gs):
                log.append(ctx.name)
                n_in = len(ctx.coeffs[0])
                grads = []
                for i in range(n_in):
                    acc = gs[0] * ctx.coeffs[0][i]
                    for j in range(1, len(gs)):
                        acc = acc + gs[j] * ctx.coeffs[j][i]
                    grads.append(acc)
                return (None, None, *grads)

        class Saving(L.autograd.Function):
            """x * x, saving x: its backward needs a saved tensor."""

            @staticmethod
            def forward(ctx, name, x):
                ctx.name = name
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                log.append(ctx.name)
                (x,) = ctx.saved_tensors
                return None, 2 * x * g

        self.Lin, self.Saving = Lin, Saving

    def scale(self, x, k, name):
        return self.Lin.apply(name, ((k,),), x)

    def fork(self, x, name, ka=1, kb=2):
        return self.Lin.apply(name, ((ka,), (kb,)), x)

    def join(self, a, b, name, ka=1, kb=3):
        return self.Lin.apply(name, ((ka, kb),), a, b)

    def leaf(self, values):
        return self.L.tensor(values, requires_grad=True)


def both(build):
    """Run build(kit) for torch and eagergrad; return {lib name: (kit, result)}."""
    out = {}
    for L in LIBS:
        kit = Kit(L)
        out[L.__name__] = (kit, build(kit))
    return out


def _np(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=np.float64)


def assert_same_grads(a, b):
    assert (a is None) == (b is None), (a, b)
    if a is not None:
        np.testing.assert_array_equal(_np(a), _np(b))
        assert str(a.dtype) == str(b.dtype)


# ---------------------------------------------------------------------------------------
# small hand-made graphs with independently derived gradients
# ---------------------------------------------------------------------------------------

def test_chain_of_scales():
    def build(k):
        x = k.leaf([1.0, -2.0])
        y = k.scale(k.scale(k.scale(x, 2, "a"), 3, "b"), -1, "c")
        y.backward(k.L.tensor([1.0, 10.0]))
        return x
    r = both(build)
    for _name, (kit, x) in r.items():
        assert x.grad.tolist() == [-6.0, -60.0]
        assert kit.log == ["c", "b", "a"]
    assert_same_grads(r["torch"][1].grad, r["eagergrad"][1].grad)


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
def test_fan_out_gradients_are_summed():
    def build(k):
        x = k.leaf([1.0, 2.0, 3.0])
        a = k.scale(x, 2, "a")
        b = k.scale(x, 5, "b")
        out = k.join(a, b, "j", 1, 1)
        out.backward(k.L.ones(3))
        return x, a
    r = both(build)
    for _name, (kit, (x, a)) in r.items():
        assert x.grad.tolist() == [7.0, 7.0, 7.0]   # 2 + 5
        assert sorted(kit.log) == ["a", "b", "j"] and kit.log[0] == "j"
        assert a.grad is None                        # non-leaf: not retained
    assert r["torch"][0].log == r["eagergrad"][0].log


def test_same_tensor_twice_into_one_node():
    def build(k):
        x = k.leaf([1.0, 2.0])
        y = k.join(x, x, "j", 2, 3)  # two edges to the same AccumulateGrad
        y.backward(k.L.ones(2))
        return x
    r = both(build)
    for _, (_, x) in r.items():
        assert x.grad.tolist() == [5.0, 5.0]


def test_diamond():
    def build(k):
        x = k.leaf([1.0, -1.0])
        top = k.scale(x, 3, "top")
        left, right = k.fork(top, "fork", 2, -1)
        left2 = k.scale(left, 5, "left")
        right2 = k.scale(right, 7, "right")
        out = k.join(left2, right2, "bottom", 1, 1)
        out.backward(k.L.tensor([1.0, 2.0]))
        return x
    r = both(build)
    # d out / d x = 3 * (2 * 5 + (-1) * 7) = 9
    for _, (kit, x) in r.items():
        assert x.grad.tolist() == [9.0, 18.0]
        assert kit.log[0] == "bottom" and kit.log[-2:] == ["fork", "top"]
    assert r["torch"][0].log == r["eagergrad"][0].log


def test_fork_with_one_output_unused_gets_zeros():
    def build(k):
        x = k.leaf([1.0, 2.0])
        a, b = k.fork(x, "fork", 4, 100)
        k.scale(a, 1, "s").backward(k.L.ones(2))  # b is never used: materialized zeros
        return x
    r = both(build)
    for _, (_, x) in r.items():
        assert x.grad.tolist() == [4.0, 4.0]


def test_set_materialize_grads_false_passes_none():
    def build(k):
        L = k.L
        seen = []

        class Two(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 1, x * 2

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append((ga is None, gb is None))
                g = ga if ga is not None else gb * 0
                return g if gb is None else g + 2 * gb

        x = k.leaf([1.0, 2.0])
        a, b = Two.apply(x)
        a.sum().backward()
        return x, seen
    r = both(build)
    assert r["torch"][1][1] == r["eagergrad"][1][1] == [(False, True)]
    assert_same_grads(r["torch"][1][0].grad, r["eagergrad"][1][0].grad)


def test_several_roots():
    def build(k):
        L = k.L
        x = k.leaf([1.0, 2.0])
        y = k.leaf([3.0, 4.0])
        a = k.scale(x, 2, "a")
        b = k.join(x, y, "b", 5, 7)
        c = k.scale(y, -1, "c")  # not a root: never runs
        L.autograd.backward([a, b], [L.tensor([1.0, 10.0]), L.tensor([100.0, 1000.0])])
        return x, y, c
    r = both(build)
    for _, (kit, (x, y, _c)) in r.items():
        assert x.grad.tolist() == [2.0 + 500.0, 20.0 + 5000.0]
        assert y.grad.tolist() == [700.0, 7000.0]
        assert "c" not in kit.log and sorted(kit.log) == ["a", "b"]
    assert r["torch"][0].log == r["eagergrad"][0].log


def test_several_roots_sharing_a_subgraph():
    def build(k):
        L = k.L
        x = k.leaf([1.0])
        s = k.scale(x, 3, "shared")
        a = k.scale(s, 2, "a")
        b = k.scale(s, 5, "b")
        L.autograd.backward([b, a], [L.ones(1), L.ones(1)])
        return x
    r = both(build)
    for _, (kit, x) in r.items():
        assert x.grad.tolist() == [21.0]
        assert kit.log.count("shared") == 1 and kit.log[-1] == "shared"
    assert r["torch"][0].log == r["eagergrad"][0].log


def test_gradient_accumulates_across_backward_calls():
    def build(k):
        x = k.leaf([1.0, 2.0])
        y = k.scale(x, 3, "a")
        y.backward(k.L.ones(2))
        g = x.grad
        y.backward(k.L.ones(2))  # no saved tensors: the graph can run again
        return x, g
    r = both(build)
    for _, (kit, (x, g)) in r.items():
        assert x.grad.tolist() == [6.0, 6.0]
        assert g is x.grad  # accumulated in place
        assert kit.log == ["a", "a"]


def test_second_backward_through_saved_tensors_raises():
    for L in LIBS:
        k = Kit(L)
        x = k.leaf([1.0, 2.0])
        y = k.Saving.apply("sq", x)
        y.backward(L.ones(2))
        assert x.grad.tolist() == [2.0, 4.0]
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
            y.backward(L.ones(2))
        # with retain_graph the saved tensors survive
        x2 = k.leaf([3.0])
        y2 = k.Saving.apply("sq2", x2)
        y2.backward(L.ones(1), retain_graph=True)
        y2.backward(L.ones(1))
        assert x2.grad.tolist() == [12.0]


# ---------------------------------------------------------------------------------------
# pruning: backward(inputs=...) and autograd.grad
# ---------------------------------------------------------------------------------------

def _pruning_graph(k):
    """x -> a -> b -> out <- c <- y, plus z -> d -> out; returns leaves and tensors."""
    x, y, z = k.leaf([1.0, 2.0]), k.leaf([3.0, 4.0]), k.leaf([5.0, 6.0])
    a = k.scale(x, 2, "a")
    b = k.scale(a, 3, "b")
    c = k.scale(y, 5, "c")
    d = k.scale(z, 7, "d")
    bc = k.join(b, c, "bc", 1, 1)
    out = k.join(bc, d, "out", 1, 1)
    return x, y, z, a, b, c, d, out


def test_backward_inputs_prunes_and_only_fills_listed_leaves():
    def build(k):
        x, y, z, a, b, c, d, out = _pruning_graph(k)
        out.backward(k.L.ones(2), inputs=[y])
        return x, y, z
    r = both(build)
    for _, (kit, (x, y, z)) in r.items():
        assert x.grad is None and z.grad is None
        assert y.grad.tolist() == [5.0, 5.0]
        # only the nodes on a path from the root to y ran
        assert set(kit.log) == {"out", "bc", "c"}
    assert r["torch"][0].log == r["eagergrad"][0].log


def test_backward_inputs_nonleaf_gets_grad():
    def build(k):
        x, y, z, a, b, c, d, out = _pruning_graph(k)
        out.backward(k.L.ones(2), inputs=[a, z])
        return x, a, z
    r = both(build)
    for _, (kit, (x, a, z)) in r.items():
        assert x.grad is None
        assert a.grad.tolist() == [3.0, 3.0] and a.retains_grad
        assert z.grad.tolist() == [7.0, 7.0]
        # torch marks the input's own grad_fn as needed (exec_info): "a" runs, while the
        # AccumulateGrad of x below it does not
        assert set(kit.log) == {"out", "bc", "b", "a", "d"}
    assert r["torch"][0].log == r["eagergrad"][0].log


def test_autograd_grad_prunes():
    def build(k):
        x, y, z, a, b, c, d, out = _pruning_graph(k)
        ga, gy = k.L.autograd.grad(out, [a, y], k.L.ones(2))
        return (x, y, z), ga, gy
    r = both(build)
    for _, (kit, ((x, y, z), ga, gy)) in r.items():
        assert ga.tolist() == [3.0, 3.0] and gy.tolist() == [5.0, 5.0]
        assert x.grad is None and y.grad is None and z.grad is None  # nothing accumulated
        assert set(kit.log) == {"out", "bc", "b", "c"}
    assert r["torch"][0].log == r["eagergrad"][0].log


def test_autograd_grad_wrt_intermediate_does_not_run_its_producer():
    def build(k):
        x = k.leaf([1.0])
        a = k.scale(x, 2, "a")
        b = k.scale(a, 3, "b")
        c = k.scale(b, 4, "c")
        (gb,) = k.L.autograd.grad(c, b, k.L.ones(1))
        return gb
    r = both(build)
    for _, (kit, gb) in r.items():
        assert gb.tolist() == [4.0] and kit.log == ["c"]


# ---------------------------------------------------------------------------------------
# execution order: highest sequence number first, as torch
# ---------------------------------------------------------------------------------------

def test_sequence_numbers_increase_in_creation_order():
    for L in LIBS:
        k = Kit(L)
        x = k.leaf([1.0])
        nodes = [k.scale(x, 1, str(i)).grad_fn for i in range(5)]
        seqs = [n._sequence_nr() for n in nodes]
        assert seqs == sorted(seqs) and len(set(seqs)) == 5


def test_ready_nodes_run_highest_sequence_first():
    def build(k):
        x = k.leaf([1.0])
        a = k.scale(x, 1, "a")
        b = k.scale(x, 1, "b")
        c = k.scale(x, 1, "c")
        a2 = k.scale(a, 1, "a2")       # newest: runs right after the root
        ca = k.join(c, a2, "ca", 1, 1)
        out = k.join(ca, b, "root", 1, 1)  # b enters last, still runs by its seq
        out.backward(k.L.ones(1))
        return x
    r = both(build)
    # root readies ca and b; ca (newer) runs, readying c and a2; a2 is the newest of
    # {b, c, a2}, then a joins the queue behind c and b.
    expected = ["root", "ca", "a2", "c", "b", "a"]
    for _, (kit, x) in r.items():
        assert kit.log == expected
        assert x.grad.tolist() == [3.0]


def _random_program(k, seed, n_nodes=30, n_leaves=4):
    """A random DAG of Lin nodes. Returns (leaves, tensors, out, meta) where meta[name]
    is (input tensor keys, output tensor keys) and anc[key] the set of keys it depends on."""
    rnd = random.Random(seed)
    leaves = [k.leaf([float(rnd.randint(-3, 3)), float(rnd.randint(-3, 3))])
              for _ in range(n_leaves)]
    pool = [(f"l{i}", t) for i, t in enumerate(leaves)]
    anc = {key: {key} for key, _ in pool}
    meta = {}
    used = set()
    for n in range(n_nodes):
        n_in = rnd.randint(1, 3)
        ins = [rnd.choice(pool[-8:]) if rnd.random() < 0.7 else rnd.choice(pool)
               for _ in range(n_in)]
        n_out = rnd.choice((1, 1, 2))
        coeffs = tuple(tuple(rnd.choice((-2, -1, 1, 2)) for _ in range(n_in))
                       for _ in range(n_out))
        name = f"n{n}"
        outs = k.Lin.apply(name, coeffs, *[t for _, t in ins])
        outs = outs if isinstance(outs, tuple) else (outs,)
        keys = [f"{name}.{j}" for j in range(n_out)]
        dep = set().union(*[anc[key] for key, _ in ins])
        for key in keys:
            anc[key] = dep | {key}
        meta[name] = ([key for key, _ in ins], keys)
        used.update(key for key, _ in ins)
        pool.extend(zip(keys, outs))
    # the root joins every tensor nobody consumed that is not a leaf
    loose = [(key, t) for key, t in pool if key not in used and not key.startswith("l")]
    coeffs = (tuple(1 for _ in loose),)
    out = k.Lin.apply("root", coeffs, *[t for _, t in loose])
    meta["root"] = ([key for key, _ in loose], ["root.0"])
    anc["root.0"] = set().union(*[anc[key] for key, _ in loose]) | {"root.0"}
    return leaves, dict(pool), out, meta, anc


@pytest.mark.parametrize("seed", range(6))
def test_random_dag_order_and_grads_match_torch(seed):
    def build(k):
        leaves, tensors, out, meta, anc = _random_program(k, seed)
        out.backward(k.L.tensor([1.0, -2.0]))
        return leaves
    r = both(build)
    kt, lt = r["torch"]
    ke, le = r["eagergrad"]
    assert ke.log == kt.log
    assert len(kt.log) == len(set(kt.log))  # every node ran once
    for a, b in zip(lt, le):
        assert_same_grads(a.grad, b.grad)


@pytest.mark.parametrize("seed", range(6, 10))
def test_random_dag_pruning_matches_torch_and_paths(seed):
    def build(k):
        leaves, tensors, out, meta, anc = _random_program(k, seed)
        # backward(inputs=) w.r.t. one leaf and one intermediate tensor
        rnd = random.Random(seed)
        inter = rnd.choice([key for key in tensors if key.startswith("n")
                            and key in anc["root.0"]])
        targets = {"l1", inter}
        out.backward(k.L.tensor([1.0, 3.0]), inputs=[leaves[1], tensors[inter]],
                     retain_graph=True)
        ran_backward = list(k.log)
        del k.log[:]
        (g_inter,) = k.L.autograd.grad(out, [tensors[inter]], k.L.tensor([1.0, 3.0]))
        ran_grad = list(k.log)
        return leaves, tensors[inter], g_inter, ran_backward, ran_grad, meta, anc, targets, inter
    r = both(build)
    (kt, (lt, it, gt, bt, grt, meta, anc, targets, inter)) = r["torch"]
    (ke, (le, ie, ge, be, gre, _, _, _, _)) = r["eagergrad"]
    assert be == bt and gre == grt
    for i, (a, b) in enumerate(zip(lt, le)):
        assert_same_grads(a.grad, b.grad)
        if i != 1:
            assert b.grad is None
    assert_same_grads(it.grad, ie.grad)
    assert_same_grads(gt, ge)

    # independently, at node level as torch's exec_info: a node runs iff it is reachable
    # from the root and it has an input whose history contains a target node (the
    # AccumulateGrad of a leaf, or the node that produced a non-leaf: even through another
    # of its outputs); backward(inputs=) also runs the target nodes themselves, while
    # autograd.grad only captures at them.
    def producer(key):
        return key.split(".")[0]

    def should_run(target_nodes, targets_run):
        need = set()
        for name, (ins, outs) in meta.items():
            reachable = any(o in anc["root.0"] for o in outs)
            feeds = any(target_nodes & {producer(a) for a in anc[i]} for i in ins)
            if reachable and (feeds or (targets_run and name in target_nodes)):
                need.add(name)
        return need
    assert set(be) == should_run({producer(t) for t in targets}, True)
    assert set(gre) == should_run({producer(inter)}, False)


# ---------------------------------------------------------------------------------------
# validation of what a custom backward returns
# ---------------------------------------------------------------------------------------

def _bad_function(L, ret):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return ret(L, g)
    return Bad


def test_backward_returning_wrong_number_of_grads():
    for L in LIBS:
        Bad = _bad_function(L, lambda L, g: g)
        x, y = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients "
                                               r"\(expected 2, got 1\)"):
            Bad.apply(x, y).sum().backward()


def test_backward_returning_wrong_shape():
    for L in LIBS:
        Bad = _bad_function(L, lambda L, g: (L.ones(3), g))
        x, y = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            Bad.apply(x, y).sum().backward()
        assert "returned an invalid gradient at index 0 - got [3] but expected shape " \
               "compatible with [2]" in str(info.value)


def test_backward_returning_broadcast_grad_is_summed_and_cast():
    def build(k):
        L = k.L
        Bad = _bad_function(L, lambda L, g: (g.expand(3, 2) * 1.0,
                                             (g * 2).to(L.float64)))
        x, y = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        Bad.apply(x, y).backward(L.tensor([1.0, 2.0]))
        return x.grad, y.grad
    r = both(build)
    (gxt, gyt), (gxe, gye) = r["torch"][1], r["eagergrad"][1]
    assert gxt.tolist() == [3.0, 6.0] and str(gyt.dtype) == "torch.float32"
    assert_same_grads(gxt, gxe)
    assert_same_grads(gyt, gye)


def test_error_in_backward_propagates_and_stops():
    def build(k):
        L = k.L

        class Boom(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                k.log.append("boom")
                raise ValueError("custom failure 123")

        x = k.leaf([1.0])
        a = k.scale(x, 2, "below")
        b = Boom.apply(a)
        c = k.scale(b, 3, "above")
        with pytest.raises(ValueError, match="custom failure 123"):
            c.backward(L.ones(1))
        return x
    r = both(build)
    for _, (kit, x) in r.items():
        assert kit.log == ["above", "boom"] and x.grad is None


def test_reentrant_backward():
    def build(k):
        L = k.L

        class Inner(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                with L.enable_grad():
                    xi = x.detach().requires_grad_()
                    inner = k.scale(k.scale(xi, 5, "inner1"), 2, "inner2")
                    (gi,) = L.autograd.grad(inner, xi, g)
                k.log.append("outer")
                return gi

        x = k.leaf([1.0, 2.0])
        y = k.scale(Inner.apply(k.scale(x, 3, "pre")), 7, "post")
        y.backward(L.ones(2))
        return x
    r = both(build)
    for _, (_kit, x) in r.items():
        assert x.grad.tolist() == [210.0, 210.0]
    assert r["torch"][0].log == r["eagergrad"][0].log == \
        ["post", "inner2", "inner1", "outer", "pre"]


# ---------------------------------------------------------------------------------------
# deep graphs: iterative, never recursive
# ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_100k_custom_function_chain():
    L = eg
    k = Kit(L)

    class Id(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.detach()

        @staticmethod
        def backward(ctx, g):
            return g

    limit = sys.getrecursionlimit()
    x = k.leaf([1.0, 2.0])
    y = k.scale(x, 3, "first")
    for _ in range(100_000):
        y = Id.apply(y)
    y = k.scale(y, 2, "last")
    t0 = time.perf_counter()
    y.backward(L.ones(2))
    assert time.perf_counter() - t0 < 30
    assert x.grad.tolist() == [6.0, 6.0]
    assert k.log == ["last", "first"]
    assert sys.getrecursionlimit() == limit
    (g,) = L.autograd.grad(k.scale(y, 1, "again"), x, L.ones(2))  # grad() path too
    assert g.tolist() == [6.0, 6.0]
    del y
    gc.collect()  # freeing the chain must not recurse either


@pytest.mark.slow
def test_100k_real_op_chain():
    x = eg.tensor([1.0, -2.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    del y
    gc.collect()
