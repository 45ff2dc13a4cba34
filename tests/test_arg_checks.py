"""torch's argument checks of ops whose op_db `error_inputs` eagergrad once let through or
answered with another error: each call runs in both libraries and must give torch's result,
or torch's exception type and message. Valid calls next to each check (0-d tensors, empty
indices, integral arange) keep the checks from refusing what torch accepts; `out=` is not
implemented (NotImplementedError) once torch's checks of the other arguments pass."""
import math

import pytest

from conftest import same

X = lambda m: m.arange(12.0, dtype=m.float64).reshape(3, 4)
I = lambda m, v: m.tensor(v)  # (an int64 index)

CASES = {
    # reflected operators: unbound, their self must be a tensor
    "radd unbound": lambda m: m.Tensor.__radd__(2, m.tensor([1, 2])),
    "rmul unbound": lambda m: m.Tensor.__rmul__(2, 3),
    "rand unbound": lambda m: m.Tensor.__rand__(2, m.tensor([1, 2])),
    "ror unbound": lambda m: m.Tensor.__ror__(2, m.tensor([1, 2])),
    "rxor unbound": lambda m: m.Tensor.__rxor__(2, m.tensor([1, 2])),
    "radd": lambda m: 2 + m.tensor([1, 2]),
    "radd alpha": lambda m: m.Tensor.__radd__(m.tensor([1.0]), 2, alpha=3),
    "rxor": lambda m: 6 ^ m.tensor([3, 5]),
    # amax / amin / aminmax
    "amax empty no dim": lambda m: m.amax(m.zeros(5, 0, 5)),
    "amin empty dim []": lambda m: m.zeros(5, 0, 5).amin([]),
    "amax empty reduced dim": lambda m: m.amax(m.zeros(5, 0, 5), 1),
    "amax empty kept dim": lambda m: m.amax(m.zeros(5, 0, 5), 0),
    "amax dim []": lambda m: X(m).amax([]),
    "amax 0-d": lambda m: m.tensor(2.0).amax(0),
    "amax out dtype": lambda m: m.amax(m.zeros(4, 4), 0, out=m.zeros(4, dtype=m.int32)),
    "aminmax out dtype": lambda m: m.aminmax(m.zeros(4, 4), dim=0, out=(
        m.zeros(4), m.zeros(4, dtype=m.float64))),
    # arange
    "arange step sign": lambda m: m.arange(0, -3, 2),
    "arange step sign neg": lambda m: m.arange(0, 3, -2),
    "arange big": lambda m: m.arange(1549556900, 1549556828, 1989724),
    "arange inf": lambda m: m.arange(0, float("inf"), 2),
    "arange -inf": lambda m: m.arange(float("-inf"), 1, 2),
    "arange nan": lambda m: m.arange(float("nan"), 1, 2),
    "arange nan step": lambda m: m.arange(0, 3, float("nan")),
    "arange zero step": lambda m: m.arange(0, 3, 0),
    "arange int64 step truncates to 0": lambda m: m.arange(0, 3, 0.5, dtype=m.int64),
    "arange int32 step truncates to 0": lambda m: m.arange(0, 3, 0.5, dtype=m.int32),
    "arange int64 truncated": lambda m: m.arange(0.5, 10.7, 1.5, dtype=m.int64),
    "arange int16 truncated": lambda m: m.arange(0.5, 10.7, 1.5, dtype=m.int16),
    "arange int8 wraps": lambda m: m.arange(0, 300, 100, dtype=m.int8),
    "arange int64 negative": lambda m: m.arange(-0.5, 3, 1, dtype=m.int64),
    "arange bool": lambda m: m.arange(0, 5, 2, dtype=m.bool),
    "arange overflow": lambda m: m.arange(0, 1e30, 1),
    "arange inf step": lambda m: m.arange(0, 3, float("inf")),
    "arange out int64": lambda m: m.arange(0, 64, 0.5, out=m.zeros(0, dtype=m.int64)),
    "arange down": lambda m: m.arange(10.0, 0, -3),
    # linspace / logspace / eye
    "linspace float steps": lambda m: m.linspace(0, 3, 1.0),
    "linspace bool steps": lambda m: m.linspace(0, 3, True),
    "linspace tensor steps": lambda m: m.linspace(0, 3, m.tensor(3)),
    "linspace negative steps": lambda m: m.linspace(0, 3, -1),
    "logspace float steps": lambda m: m.logspace(0, 3, 1.0),
    "logspace negative steps": lambda m: m.logspace(0, 3, -1),
    "logspace tensor steps": lambda m: m.logspace(0, 2, m.tensor(3), dtype=m.float64),
    "eye n": lambda m: m.eye(-1),
    "eye n m": lambda m: m.eye(-7, 42),
    "eye m": lambda m: m.eye(0, -3),
    # cat
    "cat empty list": lambda m: m.cat([], dim=1),
    "cat a tensor": lambda m: m.cat(m.ones(2, 3)),
    "cat None": lambda m: m.cat((m.ones(2), None)),
    "cat int": lambda m: m.cat([m.ones(2), 3]),
    "cat ndim": lambda m: m.cat((m.ones(4, 0), m.ones(5, 0, 19, 20)), dim=1),
    "cat ndim 2": lambda m: m.cat([m.ones(20, 1), m.ones(20, 1, 1), m.ones(20, 1, 1)]),
    "cat sizes": lambda m: m.cat((m.ones(2, 3, 4), m.ones(2, 3, 5))),
    "cat sizes 2": lambda m: m.cat((m.ones(2, 3, 4), m.ones(2, 4, 5))),
    "cat legacy empty ndim": lambda m: m.cat((m.ones(2, 3), m.ones(0), m.ones(2, 3, 3))),
    "cat out cast": lambda m: m.cat((m.ones(2, 3), m.ones(2, 3)),
                                    out=m.ones(4, 3, dtype=m.int64)),
    "cat iterator": lambda m: m.cat(iter([m.ones(2)])),
    # complex / polar out
    "complex out dtype": lambda m: m.complex(m.ones(2, dtype=m.float64), m.ones(
        2, dtype=m.float64), out=m.zeros(2, dtype=m.complex64)),
    "polar out dtype": lambda m: m.polar(m.ones(2, dtype=m.float64), m.ones(
        2, dtype=m.float64), out=m.zeros(2, dtype=m.float64)),
    # gather / scatter / scatter_add / scatter_reduce
    "gather larger index": lambda m: m.gather(m.ones(1, 1), 1, I(m, [[0, 0], [1, 0]])),
    "gather index ndim": lambda m: m.gather(m.ones(2, 2), 1, I(m, [0, 0])),
    "gather input ndim": lambda m: m.gather(m.ones(2), 0, I(m, [[0, 0], [1, 0]])),
    "gather index value": lambda m: m.gather(m.ones(2, 2), 1, I(m, [[0, 23], [1, 0]])),
    "gather negative index": lambda m: m.gather(m.ones(3), 0, I(m, [-1])),
    "gather out dtype": lambda m: m.gather(m.ones(2, 2), 1, I(m, [[0, 0], [1, 0]]),
                                           out=m.ones(2, 2, dtype=m.float64)),
    "gather float index": lambda m: m.gather(m.ones(2, 2), 1, m.zeros(1, 5)),
    "gather empty index": lambda m: m.gather(m.ones(2, 2), 1, m.zeros(0, dtype=m.int64)),
    "gather empty float index": lambda m: m.gather(m.ones(2, 2), 1, m.zeros(0, 5)),
    "gather 0-d index": lambda m: m.gather(m.arange(3.0), 0, I(m, 2)),
    "gather 0-d input": lambda m: m.gather(m.tensor(1.0), 0, I(m, [0])),
    "gather": lambda m: m.gather(X(m), 1, I(m, [[1, 0], [3, 3]])),
    "gather size 0 dim": lambda m: m.gather(m.ones(2, 0), 1, m.zeros(2, 3, dtype=m.int64)),
    "scatter self ndim": lambda m: m.scatter(m.ones(3, 5, 3), 0, I(m, [[0, 1], [1, 2]]),
                                             m.ones(2, 5)),
    "scatter src ndim": lambda m: m.scatter(m.ones(3, 5), 0, I(m, [[34, 1], [1, 2]]),
                                            m.ones(2, 5, 2)),
    "scatter index value": lambda m: m.scatter(m.ones(3, 5), 0, I(m, [[34, 1], [1, 2]]),
                                               m.ones(2, 5)),
    "scatter negative index": lambda m: m.scatter(m.ones(3, 3), 0, I(m, [[-1, 0]]), 2.0),
    "scatter value larger index": lambda m: m.scatter(m.ones(3, 3), 0, m.zeros(
        1, 4, dtype=m.int64), 2.0),
    "scatter src smaller": lambda m: m.scatter(m.ones(3, 3), 0, m.zeros(
        1, 2, dtype=m.int64), m.ones(1, 1)),
    "scatter src fewer dims": lambda m: m.scatter_add(m.ones(3, 3), 0, m.zeros(
        1, 1, dtype=m.int64), m.tensor([5.0])),
    "scatter reduce ndim": lambda m: m.scatter(m.ones(3, 3), 0, m.zeros(
        1, 2, 2, dtype=m.int64), 2.0, reduce="add"),
    "scatter reduce index value": lambda m: m.scatter(m.ones(3, 3), 0, m.zeros(
        1, 2, dtype=m.int64) + 3, 2.0, reduce="add"),
    "scatter 0-d index": lambda m: m.scatter(m.ones(3), 0, I(m, 0), m.tensor(5.0)),
    "scatter 0-d input": lambda m: m.scatter(m.tensor(1.0), 0, I(m, [0]), m.tensor([5.0])),
    "scatter 0-d value": lambda m: m.scatter(m.tensor(1.0), 0, I(m, 0), 7.0),
    "scatter_add empty index": lambda m: m.scatter_add(m.ones(3, 3), 0, m.zeros(
        0, dtype=m.int64), m.tensor([5.0])),
    "scatter_add": lambda m: m.scatter_add(m.ones(3, 3), 1, I(m, [[2, 0], [1, 1]]),
                                           m.arange(6.0).reshape(2, 3)),
    "scatter_add self ndim": lambda m: m.scatter_add(m.ones(3, 5, 3), 0, I(
        m, [[0, 1], [1, 2]]), m.ones(2, 5)),
    "scatter_reduce src shape": lambda m: m.scatter_reduce(m.ones(3, 3), 1, I(
        m, [[2, 0], [1, 1]]), m.arange(6.0).reshape(3, 2), "sum"),
    "scatter_reduce src ndim": lambda m: m.scatter_reduce(m.ones(3, 3), 1, I(
        m, [[2, 0], [1, 1]]), m.arange(6.0), "sum"),
    # index_add / index_select / index_reduce
    "index_add source shape": lambda m: m.index_add(m.ones(3, 2), 0, I(m, [0, 2]),
                                                    m.tensor([2.0, 4.0])),
    "index_add 2-d index": lambda m: m.ones(3, 2).index_add(0, m.zeros(2, 2), m.ones(2, 2)),
    "index_add float index": lambda m: m.ones(3, 2).index_add(0, m.tensor([0.0, 1]),
                                                              m.ones(2, 2)),
    "index_add index value": lambda m: m.ones(3, 2).index_add(0, I(m, [0, 5]), m.ones(2, 2)),
    "index_add negative index": lambda m: m.ones(3, 2).index_add(0, I(m, [0, -1]),
                                                                 m.ones(2, 2)),
    "index_add source dtype": lambda m: m.ones(3, 2).index_add(0, I(m, [0, 1]), m.ones(
        2, 2, dtype=m.float64)),
    "index_add source dim": lambda m: m.ones(3, 2).index_add(1, I(m, [0, 1]), m.ones(2)),
    "index_add count": lambda m: m.ones(3, 2).index_add(0, I(m, [0, 1]), m.ones(3, 2)),
    "index_add 0-d source": lambda m: m.ones(3).index_add(0, I(m, 1), m.tensor(5.0)),
    "index_add 0-d self": lambda m: m.tensor(1.0).index_add(0, I(m, [0]), m.tensor([5.0])),
    "index_add 0-d both": lambda m: m.tensor(1.0).index_add(0, I(m, [0]), m.tensor(5.0)),
    "index_add": lambda m: m.ones(3, 2).index_add(-1, m.tensor([1, 1], dtype=m.int32),
                                                  m.arange(6.0).reshape(3, 2), alpha=2),
    "index_select out dtype": lambda m: m.index_select(X(m), 0, I(m, [0, 1]), out=m.ones(
        2, 4, dtype=m.float32)),
    "index_reduce": lambda m: m.ones(3).index_reduce(0, I(m, [0, 0]), m.tensor([2.0, 3.0]),
                                                     "prod"),
    # isclose
    "isclose rtol": lambda m: m.isclose(m.tensor(1.0), m.tensor(2.0), rtol=-0.4),
    "isclose atol": lambda m: m.isclose(m.tensor(1.0), m.tensor(2.0), atol=-0.4),
    "isclose nan rtol": lambda m: m.isclose(m.ones(2), m.ones(2), rtol=float("nan")),
    "isclose int rtol": lambda m: m.isclose(m.ones(2, dtype=m.int32), m.ones(
        2, dtype=m.int32), rtol=-1),
    "isclose dtypes": lambda m: m.isclose(m.ones(2), m.ones(2, dtype=m.float64)),
    "isclose": lambda m: m.isclose(m.ones(2), m.ones(2) + 1e-6),
    # out= dtype checks
    "kthvalue k": lambda m: m.kthvalue(m.ones(3, 2), 5, out=(m.zeros(2), m.zeros(
        2, dtype=m.int32))),
    "kthvalue out values": lambda m: m.kthvalue(m.ones(3, 2), 1, out=(m.zeros(
        3, dtype=m.float64), m.zeros(3, dtype=m.int64))),
    "kthvalue out indices": lambda m: m.kthvalue(m.ones(3, 2), 1, out=(m.zeros(3), m.zeros(
        3, dtype=m.int32))),
    "take out dtype": lambda m: m.take(m.ones(3, 2), I(m, [0, 1]), out=m.zeros(
        2, dtype=m.float64)),
    "masked_select out dtype": lambda m: m.masked_select(m.ones(3, 2), m.ones(3, 2) > 0,
                                                         out=m.zeros(2, dtype=m.float64)),
    # masked_fill's value conversion
    "masked_fill complex into float": lambda m: m.ones(2).masked_fill(m.tensor(False), 1j),
    "masked_fill complex real part": lambda m: m.ones(2).masked_fill(m.tensor(True), 2 + 0j),
    "masked_fill complex tensor into long": lambda m: m.ones(2, dtype=m.int64).masked_fill(
        m.tensor(False), m.tensor(1j)),
    "masked_fill complex tensor into float": lambda m: m.ones(2).masked_fill(
        m.tensor(False), m.tensor(1j)),
    "masked_fill real complex tensor": lambda m: m.ones(2).masked_fill(
        m.tensor(True), m.tensor(2 + 0j)),
    "masked_fill double tensor overflow": lambda m: m.ones(2).masked_fill(
        m.tensor(False), m.tensor(1e300, dtype=m.float64)),
    "masked_fill float into long": lambda m: m.ones(2, dtype=m.int64).masked_fill(
        m.tensor([True, False]), 2.5),
    "masked_fill long overflow": lambda m: m.ones(2, dtype=m.int64).masked_fill(
        m.tensor(True), 1e30),
    "masked_fill int overflow": lambda m: m.ones(2, dtype=m.int32).masked_fill(
        m.tensor(True), 2 ** 40),
    "masked_fill inf into long": lambda m: m.ones(2, dtype=m.int64).masked_fill(
        m.tensor(True), float("inf")),
    "masked_fill half overflow": lambda m: m.ones(2, dtype=m.float16).masked_fill(
        m.tensor(True), 70000),
    "masked_fill float overflow": lambda m: m.ones(2).masked_fill(m.tensor(True), 1e300),
    "masked_fill inf": lambda m: m.ones(2).masked_fill(m.tensor([True, False]),
                                                       float("inf")),
    "masked_fill uint8 -1": lambda m: m.ones(2, dtype=m.uint8).masked_fill(
        m.tensor([True, False]), -1),
    "masked_fill uint8 256": lambda m: m.ones(2, dtype=m.uint8).masked_fill(
        m.tensor(True), 256),
    "masked_fill bool": lambda m: m.ones(2, dtype=m.bool).masked_fill(m.tensor(True), 2.5),
    "masked_fill complex": lambda m: m.ones(2, dtype=m.complex64).masked_fill(
        m.tensor([True, False]), 2 + 3j),
    "masked_fill complex overflow": lambda m: m.ones(2, dtype=m.complex64).masked_fill(
        m.tensor(True), 1e300j),
    # movedim
    "movedim counts": lambda m: m.ones(2, 3, 4, 5, 6).movedim((3, -3), (1, 0, -1)),
    "movedim counts 2": lambda m: m.ones(2, 3, 4, 5, 6).movedim((3, -3, 4), (1, 0)),
    "movedim counts before range": lambda m: m.ones(2, 3, 4, 5, 6).movedim((7,), (1, 2)),
    "movedim range before repeats": lambda m: m.ones(2, 3, 4, 5, 6).movedim((1, 1), (1, 7)),
    "movedim repeated source": lambda m: m.ones(2, 3, 4, 5, 6).movedim((0, 4, -5), (1, 0, 2)),
    "movedim repeated destination": lambda m: m.ones(2, 3, 4, 5, 6).movedim((1, 0, 2),
                                                                            (0, 4, -5)),
    "movedim repeated both": lambda m: m.ones(2, 3, 4, 5, 6).movedim((1, 0, -4), (0, 4, -5)),
    "movedim": lambda m: m.ones(2, 3, 4, 5, 6).movedim((1, 0, 3), (0, 4, 2)),
    # narrow / narrow_copy
    "narrow start": lambda m: m.ones(20, 10, 5).narrow(1, 11, 0),
    "narrow negative start": lambda m: m.ones(20, 10, 5).narrow(1, -11, 0),
    "narrow end": lambda m: m.ones(20, 10, 5).narrow(1, 10, 0),
    "narrow length": lambda m: m.ones(10).narrow(0, 0, -1),
    "narrow length before start": lambda m: m.ones(10).narrow(0, 11, -1),
    "narrow past": lambda m: m.ones(20, 10, 5).narrow(1, 5, 6),
    "narrow bool start": lambda m: m.ones(20, 10, 5).narrow(-3, m.tensor(True), 3),
    "narrow tensor start": lambda m: X(m).narrow(-1, m.tensor(1), 2),
    "narrow negative": lambda m: X(m).narrow(1, -3, 3),
    "narrow_copy dim": lambda m: m.narrow_copy(m.ones(10, 5, 20), 3, 0, 0),
    "narrow_copy negative dim": lambda m: m.narrow_copy(m.ones(10, 5, 20), -4, 0, 0),
    "narrow_copy start": lambda m: m.narrow_copy(m.ones(10, 5, 20), 1, -6, 0),
    "narrow_copy length": lambda m: m.narrow_copy(m.ones(10, 5, 20), 1, 0, -1),
    "narrow_copy": lambda m: m.narrow_copy(X(m), 1, -2, 2),
    # neg / roll / h- and vsplit
    "neg bool": lambda m: m.neg(m.tensor([False, True])),
    "neg bool operator": lambda m: -m.tensor([False, True]),
    "negative bool": lambda m: m.negative(m.tensor([False, True])),
    "neg int": lambda m: -m.tensor([1, 2]),
    "roll 0-d": lambda m: m.roll(m.tensor(3.0), 0, 0),
    "roll 0-d -1": lambda m: m.roll(m.tensor(3.0), 1, -1),
    "roll 0-d dims": lambda m: m.roll(m.tensor(3.0), (1, 2), (0, 1)),
    "roll 0-d flat": lambda m: m.roll(m.tensor(3.0), 1),
    "hsplit str": lambda m: m.hsplit(m.ones(5, 5, 5), "abc"),
    "vsplit str": lambda m: m.vsplit(m.ones(5, 5, 5), "abc"),
    "hsplit bool": lambda m: m.hsplit(m.ones(4, 4), True),
    "hsplit float index": lambda m: m.hsplit(m.ones(4, 4), [1, 2.0]),
    "hsplit 1-d tensor": lambda m: m.hsplit(m.ones(4, 4), m.tensor([1])),
    "hsplit 0-d tensor": lambda m: m.hsplit(X(m), m.tensor(2)),
    "dsplit str": lambda m: m.dsplit(m.ones(4, 4, 4), "abc"),
    # rms_norm
    "rms_norm empty shape": lambda m: m.nn.functional.rms_norm(m.ones(1, 2, 3), (), None,
                                                               1e-5),
    "rms_norm weight shape": lambda m: m.nn.functional.rms_norm(m.ones(1, 2, 3), (3,),
                                                                m.ones(2)),
    "rms_norm weight before input": lambda m: m.nn.functional.rms_norm(m.ones(1, 2, 3), (2,),
                                                                       m.ones(3)),
    "rms_norm input shape": lambda m: m.nn.functional.rms_norm(m.ones(1, 2, 3), (2,),
                                                               m.ones(2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_arg_checks(name):
    same(CASES[name], runs=1)


# max_pool1d: torch's checks without indices (MaxPooling.cpp) and with them (through
# max_pool2d_with_indices), each with its messages; max_pool2d / avg_pool2d: Pool.h's
POOL1D = {
    "negative padding": ((0, 1, 49), dict(kernel_size=2, stride=50, padding=-1)),
    "2-d empty batch": ((0, 10), dict(kernel_size=1)),
    "empty length": ((1, 10, 0), dict(kernel_size=1)),
    "empty channels": ((2, 0, 49), dict(kernel_size=2)),
    "stride": ((3, 3, 3), dict(kernel_size=1, stride=0)),
    "dilation": ((3, 3, 3), dict(kernel_size=1, stride=1, padding=0, dilation=0)),
    "output size": ((2, 2, 2), dict(kernel_size=5, stride=1, padding=0, dilation=1)),
    "kernel": ((0, 1, 49), dict(kernel_size=0)),
    "stride empty batch": ((0, 1, 49), dict(kernel_size=2, stride=0)),
    "padding": ((3, 3, 3), dict(kernel_size=2, padding=2)),
    "1-d": ((3,), dict(kernel_size=2)),
    "4-d": ((3, 3, 3, 3), dict(kernel_size=2)),
    "padded": ((3, 3, 3), dict(kernel_size=2, padding=1)),
    "2-d": ((3, 3), dict(kernel_size=2)),
    "empty batch": ((0, 1, 49), dict(kernel_size=2, padding=1)),
}


@pytest.mark.parametrize("indices", [False, True])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("case", list(POOL1D))
def test_max_pool1d_checks(case, requires_grad, indices):
    shape, kw = POOL1D[case]
    same(lambda m: m.nn.functional.max_pool1d(m.ones(*shape, requires_grad=requires_grad),
                                              return_indices=indices, **kw), runs=1)


POOL2D = {
    "negative padding": ((0, 1, 1, 49), dict(kernel_size=2, stride=50, padding=-1)),
    "negative padding w": ((0, 1, 1, 49), dict(kernel_size=2, stride=50, padding=(0, -1))),
    "3-d empty batch": ((0, 10, 4), dict(kernel_size=1)),
    "empty height": ((1, 10, 0, 4), dict(kernel_size=1)),
    "empty channels": ((2, 0, 4, 4), dict(kernel_size=2)),
    "stride": ((3, 3, 3), dict(kernel_size=1, stride=0)),
    "stride w": ((3, 3, 3), dict(kernel_size=1, stride=(1, 0))),
    "negative stride": ((1, 1, 8, 8), dict(kernel_size=2, stride=-1)),
    "kernel": ((3, 3, 3), dict(kernel_size=0)),
    "negative kernel": ((3, 3, 3), dict(kernel_size=(1, -1), stride=1)),
    "output size": ((2, 2, 2), dict(kernel_size=5, stride=1)),
    "padding": ((2, 4, 4), dict(kernel_size=2, padding=2)),
    "padded": ((2, 4, 4), dict(kernel_size=2, padding=1)),
}


@pytest.mark.parametrize("case", list(POOL2D))
@pytest.mark.parametrize("fn", ["max_pool2d", "avg_pool2d"])
def test_pool2d_checks(fn, case):
    shape, kw = POOL2D[case]
    same(lambda m: getattr(m.nn.functional, fn)(m.ones(*shape), **kw), runs=1)


@pytest.mark.parametrize("kw", [dict(kernel_size=2, dilation=3, padding=2),
                                dict(kernel_size=(2, 3), dilation=(3, 1), padding=(2, 1)),
                                dict(kernel_size=(-1, 3), stride=1),
                                dict(kernel_size=1, dilation=0),
                                dict(kernel_size=1, dilation=-1)])
def test_max_pool2d_dilated_checks(kw):
    same(lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 8, 8), **kw), runs=1)


# the 0-d and empty forms the gather/scatter kernels now take themselves: values,
# gradients and double backward
GRADS = {
    "gather 0-d index": lambda m, x: m.gather(x, 0, m.tensor(2)),
    "gather 0-d input": lambda m, x: m.gather(x.sum(), 0, m.tensor([0])),
    "gather empty index": lambda m, x: m.gather(x, 0, m.zeros(0, dtype=m.int64)),
    "scatter 0-d index": lambda m, x: m.scatter(x, 0, m.tensor(1), x[2] * 3),
    "scatter 0-d input": lambda m, x: m.scatter(x.sum(), 0, m.tensor([0]), x[:1] * 2),
    "scatter_add 0-d index": lambda m, x: m.scatter_add(x, 0, m.tensor(1), x[0] * 3),
    "scatter value 0-d": lambda m, x: m.scatter(x.sum(), 0, m.tensor(0), 7.0),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gather_scatter_0d(name):
    f = GRADS[name]

    def scenario(m, log):
        x = m.arange(1.0, 4.0, dtype=m.float64).requires_grad_()
        out = f(m, x)
        log.append(out)
        if out.requires_grad:
            g, = m.autograd.grad((out * out).sum(), x, create_graph=True)
            log.append(g)
            log.append(m.autograd.grad(g.sum(), x, allow_unused=True))
    same(scenario)


@pytest.mark.parametrize("shapes,dim", [([(0,), (0,)], 0), ([(0,), (5, 5)], 1),
                                        ([(0, 5), (5, 5)], 0), ([(3,), (0,), (2,)], 0),
                                        ([(2, 3), (0,), (2, 3)], 1), ([(0,)], 0)])
def test_cat_1d_empty(shapes, dim):
    """cat skips 1-d empty tensors (torch's legacy rule) and gives them zero gradients
    that do not require grad."""
    def scenario(m, log):
        xs = [m.arange(float(math.prod(s)), dtype=m.float64).reshape(s).requires_grad_()
              for s in shapes]
        y = m.cat(xs, dim)
        log.append(y)
        gs = m.autograd.grad((y * y).sum(), xs, create_graph=True)
        log.append(list(gs))
    same(scenario)


def test_take_along_dim_negative_indices():
    """take_along_dim along a dim reads negative indices from the end (gather refuses
    them), along the flattened tensor it refuses them, as torch."""
    def scenario(m, log):
        x = m.arange(25.0, dtype=m.float64).reshape(5, 5).requires_grad_()
        i = m.tensor([[-1, 2], [1, -1], [0, 0], [0, 0], [-5, 0]])
        y = m.take_along_dim(x, i, 1)
        log.append(y)
        log.append(m.autograd.grad(y.sum(), x)[0])
        log.append(m.take_along_dim(x, m.tensor([-1])))
    same(scenario)


def test_take_backward_negative_indices():
    """take's negative indices count from the end in its backward too (index_add, which
    the backward adds with, refuses them)."""
    def scenario(m):
        x = m.arange(6.0, dtype=m.float64).requires_grad_()
        y = x.take(m.tensor([[0, -1], [-2, 5]]))
        return y, m.autograd.grad(y.sum(), x)[0]
    same(scenario)
