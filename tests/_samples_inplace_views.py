"""Samples for the in-place view ops (eagergrad/ops/inplace_views.py: squeeze_,
unsqueeze_, transpose_, t_, as_strided_) and conj_physical_ (ops/unary.py), merged into
_samples.SAMPLES; same format as _samples.py. Each runs on a copy of its input (`x * 1`,
or a view of one), whose node is then the op's own (UnsqueezeBackward1, ...). All are
linear: SMOOTH says so. fill_diagonal_ and baddbmm_ make no node of their own (CopySlices
over fill_'s, BaddbmmBackward0): tests/test_tensor_methods_more.py covers them.
"""
from _samples import C, F, S

SAMPLES = {
    "unsqueeze_": [
        S(lambda m, x: (x * 1).unsqueeze_(0), F(3, 4)),
        S(lambda m, x: (x * 1).unsqueeze_(-1), C(3), name="complex, last"),
        S(lambda m, x: (x * 1)[1].unsqueeze_(1), F(3, 4), name="on a view"),
        S(lambda m, x: (x * 1).unsqueeze_(0), F(), name="0-dim"),
    ],
    "squeeze_": [
        S(lambda m, x: (x * 1).squeeze_(), F(3, 1, 4)),
        S(lambda m, x: (x * 1)[:, :1].squeeze_(), C(2, 3), name="complex, on a view"),
    ],
    "squeeze_dim_": [
        S(lambda m, x: (x * 1).squeeze_(1), F(3, 1, 4)),
        S(lambda m, x: (x * 1).squeeze_(0), F(3, 4), name="not size 1"),
        S(lambda m, x: (x * 1).squeeze_(-1), C(2, 1), name="complex"),
    ],
    "squeeze_dims_": [
        S(lambda m, x: (x * 1).squeeze_((0, 2)), F(1, 3, 1, 4)),
        S(lambda m, x: (x * 1).squeeze_((-1, 0)), C(1, 2, 1), name="complex"),
    ],
    "transpose_": [
        S(lambda m, x: (x * 1).transpose_(0, 1), F(3, 4)),
        S(lambda m, x: (x * 1).swapaxes_(-1, 0), F(2, 3, 4), name="swapaxes_"),
        S(lambda m, x: (x * 1)[1].swapdims_(0, 1), C(2, 3, 4), name="swapdims_, complex view"),
    ],
    "t_": [
        S(lambda m, x: (x * 1).t_(), F(3, 4)),
        S(lambda m, x: (x * 1).t_(), C(3), name="complex 1-d"),
        S(lambda m, x: (x * 1)[:, 1:].t_(), F(3, 4), name="on a view"),
    ],
    "as_strided_": [
        S(lambda m, x: (x * 1).as_strided_((3, 2), (1, 3)), F(2, 3)),
        S(lambda m, x: (x * 1).as_strided_((2, 2), (1, 2), 1), F(6), name="offset"),
        S(lambda m, x: (x * 1).as_strided_((2, 3), (1, 1)), F(2, 3), name="overlapping"),
        S(lambda m, x: (x * 1).as_strided_((2,), (3,)), C(3, 3), name="complex"),
    ],
    "conj_physical_": [
        S(lambda m, x: (x * 1).conj_physical_(), C(3, 2)),
        S(lambda m, x: (x * 1).conj_physical_(), F(3), name="real"),
        S(lambda m, x: m.conj_physical_((x * 1)[1:]), C(4), name="torch.conj_physical_ view"),
    ],
}

SMOOTH = dict.fromkeys(SAMPLES, "linear: the same gradient at every point")
