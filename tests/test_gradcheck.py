"""eagergrad.autograd.gradcheck / gradgradcheck against torch's: the same verdict, and for
a wrong formula the same exception and message (the Jacobians printed in it included),
for real and complex inputs and outputs."""
import functools
import re
import warnings

import pytest

from conftest import msg, same


def outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = ("ok", fn())
        except Exception as e:  # noqa: BLE001 - compared with torch's
            r = (type(e).__name__, msg(e))
    return r, [str(w.message) for w in caught if "gradcheck" in str(w.message)
               or "double precision" in str(w.message) or "Backwards compat" in str(w.message)]


def functions(L):
    """Custom Functions with right and wrong backwards, for library L."""
    class HalfGrad(L.autograd.Function):  # d(x*x) = 2x, backward says x
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x

    class NoConj(L.autograd.Function):  # z * w: grad for z is g * conj(w), not g * w
        @staticmethod
        def forward(ctx, z, w):
            ctx.save_for_backward(z, w)
            return z * w

        @staticmethod
        def backward(ctx, g):
            z, w = ctx.saved_tensors
            return g * w, g * z.conj()

    class WrongImag(L.autograd.Function):  # R -> C: x * (1 + 2i), backward drops Im
        @staticmethod
        def forward(ctx, x):
            return x * (1 + 2j)

        @staticmethod
        def backward(ctx, g):
            return g.real

    class IgnoresZeroGrad(L.autograd.Function):  # right Jacobian, not linear in g
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3 + (g == 0).all().to(g.dtype)

    class OnesForUndefined(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            if g1 is None or g2 is None:
                return L.ones_like(g1 if g1 is not None else g2) if (g1 is not None or
                                                                     g2 is not None) \
                    else None
            return g1 * 2 + g2 * 3

    class DetachedBackward(L.autograd.Function):  # right first derivative, no second
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.detach().exp()

    return dict(HalfGrad=HalfGrad, NoConj=NoConj, WrongImag=WrongImag,
                IgnoresZeroGrad=IgnoresZeroGrad, OnesForUndefined=OnesForUndefined,
                DetachedBackward=DetachedBackward)


def R(L, *v, dtype="float64", rg=True):
    return L.tensor(list(v), dtype=getattr(L, dtype), requires_grad=rg)


def Z(L, *v):
    return L.tensor(list(v), dtype=L.complex128, requires_grad=True)


CASES = {
    "real_ok": lambda L, F: L.autograd.gradcheck(lambda t: (t.sin() * t).sum(),
                                                 (R(L, 0.5, -1.0, 2.0),)),
    "two_inputs_two_outputs": lambda L, F: L.autograd.gradcheck(
        lambda a, b: (a * b, (a / b).tanh()), (R(L, 0.5, -1.0), R(L, 2.0, 3.0))),
    "non_tensor_and_constant_inputs": lambda L, F: L.autograd.gradcheck(
        lambda a, k, c: a * k + c, (R(L, 0.5, -1.0), 3.0, R(L, 1.0, 2.0, rg=False))),
    "matrix": lambda L, F: L.autograd.gradcheck(
        lambda a, b: a @ b, (L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64,
                                      requires_grad=True),
                             L.tensor([[0.5], [-1.0]], dtype=L.float64, requires_grad=True))),
    "wrong_formula": lambda L, F: L.autograd.gradcheck(F["HalfGrad"].apply,
                                                       (R(L, 1.0, 2.0),)),
    "wrong_formula_no_raise": lambda L, F: L.autograd.gradcheck(
        F["HalfGrad"].apply, (R(L, 1.0, 2.0),), raise_exception=False),
    "wrong_formula_loose_tolerance": lambda L, F: L.autograd.gradcheck(
        F["HalfGrad"].apply, (R(L, 1.0, 2.0),), atol=10.0),
    "complex_ok": lambda L, F: L.autograd.gradcheck(lambda z: (z * z).exp(),
                                                    (Z(L, 0.5 + 1j, -1.0 - 0.5j),)),
    "complex_to_real_ok": lambda L, F: L.autograd.gradcheck(lambda z: (z * z.conj()).real,
                                                            (Z(L, 0.5 + 1j, -1.0 - 0.5j),)),
    "complex_abs": lambda L, F: L.autograd.gradcheck(lambda z: z.abs(),
                                                     (Z(L, 3.0 + 4j, -1.0 - 0.5j),)),
    "complex_missing_conj": lambda L, F: L.autograd.gradcheck(
        F["NoConj"].apply, (Z(L, 0.5 + 1j), Z(L, 2.0 - 1j))),
    "real_to_complex_wrong_imag": lambda L, F: L.autograd.gradcheck(
        F["WrongImag"].apply, (R(L, 1.0, 2.0),)),
    "real_to_complex_ok": lambda L, F: L.autograd.gradcheck(lambda x: x * (1 + 2j),
                                                            (R(L, 1.0, 2.0),)),
    "float32_warns": lambda L, F: L.autograd.gradcheck(
        lambda t: t * 2, (R(L, 1.0, 2.0, dtype="float32"),), atol=1e-2, rtol=1e-2),
    "nothing_requires_grad": lambda L, F: L.autograd.gradcheck(
        lambda t: t * 2, (R(L, 1.0, 2.0, rg=False),)),
    "no_differentiable_output": lambda L, F: L.autograd.gradcheck(
        lambda t: (t > 0).to(t.dtype) * 0, (R(L, 1.0, 2.0),)),
    "not_multiplied_by_grad_output": lambda L, F: L.autograd.gradcheck(
        F["IgnoresZeroGrad"].apply, (R(L, 1.0, 2.0),)),
    "undefined_grad": lambda L, F: L.autograd.gradcheck(
        F["OnesForUndefined"].apply, (R(L, 1.0, 2.0),)),
    "undefined_grad_unchecked": lambda L, F: L.autograd.gradcheck(
        F["OnesForUndefined"].apply, (R(L, 1.0, 2.0),), check_undefined_grad=False),
    "expanded_input": lambda L, F: L.autograd.gradcheck(
        lambda t: t * 2, (R(L, 1.0).expand(3),)),
    "gradgrad_ok": lambda L, F: L.autograd.gradgradcheck(
        lambda t: (t.exp() * t).sin(), (R(L, 0.5, -1.0),), (R(L, 0.3, -0.7),)),
    "gradgrad_two_inputs": lambda L, F: L.autograd.gradgradcheck(
        lambda a, b: a * b.tanh(), (R(L, 0.5, -1.0), R(L, 0.2, 0.4)), (R(L, 1.0, 0.5),)),
    "gradgrad_complex": lambda L, F: L.autograd.gradgradcheck(
        lambda z: z.exp() * z, (Z(L, 0.5 + 1j, -1.0 - 0.5j),), (Z(L, 0.3 - 0.2j, 1.0 + 0j),)),
    "gradgrad_wrong": lambda L, F: L.autograd.gradgradcheck(
        F["DetachedBackward"].apply, (R(L, 0.5, -1.0),), (R(L, 0.3, -0.7),)),
    "masked_dense": lambda L, F: (L.autograd.gradcheck(F["HalfGrad"].apply, (R(L, 1.0, 2.0),),
                                                      masked=True, raise_exception=False),
                                  L.autograd.gradgradcheck(lambda t: t.sin(), (R(L, 0.5),),
                                                          masked=True)),
    "gradgrad_wrong_no_raise": lambda L, F: L.autograd.gradgradcheck(
        F["DetachedBackward"].apply, (R(L, 0.5, -1.0),), (R(L, 0.3, -0.7),),
        raise_exception=False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradcheck_matches_torch(case):
    same(lambda L: outcome(lambda: CASES[case](L, functions(L))))


class _FastMode:
    """Library L with gradcheck and gradgradcheck defaulting to fast_mode=True."""

    def __init__(self, L):
        self._L = L
        self.autograd = type("autograd", (), {
            "gradcheck": staticmethod(functools.partial(L.autograd.gradcheck, fast_mode=True)),
            "gradgradcheck": staticmethod(functools.partial(L.autograd.gradgradcheck,
                                                            fast_mode=True)),
            "Function": L.autograd.Function})

    def __getattr__(self, name):
        return getattr(self._L, name)


def _without_fast_numbers(r):
    """torch draws fast mode's random vectors from its own generator: the two numbers
    v^T J u it prints first differ; the slow-mode Jacobians printed after them do not."""
    (kind, text), warns = r
    if isinstance(text, str):
        text = re.sub(r"numerical:\S+\nanalytical:\S+\n",
                      "numerical:<fast>\nanalytical:<fast>\n", text)
    return (kind, text), warns


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_mode_matches_torch(case):
    """fast_mode=True: torch's verdict, and its message up to fast mode's two numbers."""
    same(lambda L: _without_fast_numbers(outcome(
        lambda: CASES[case](_FastMode(L), functions(L)))))


@pytest.mark.parametrize("output", ["single", "several"])
def test_gradgradcheck_with_random_grad_outputs_passes(output):
    import eagergrad as eg
    x = eg.tensor([0.5, -1.0, 0.25], dtype=eg.float64, requires_grad=True)
    fn = (lambda t: t.exp() * t) if output == "single" else (lambda t: (t.sin(), t * t))
    assert eg.autograd.gradgradcheck(fn, (x,))
    assert eg.autograd.gradgradcheck(fn, (x,), gen_non_contig_grad_outputs=True)


def test_unsupported_options_name_the_api():
    import eagergrad as eg
    x = eg.tensor([0.5], dtype=eg.float64, requires_grad=True)
    for opt in ("check_batched_forward_grad", "check_batched_grad"):
        with pytest.raises(NotImplementedError, match=f"gradcheck.{opt}=True"):
            eg.autograd.gradcheck(lambda t: t * 2, (x,), check_forward_ad=True, **{opt: True})


# ---- the op table: every op with a complex sample, in complex128 -----------------------------
def _complex_samples():
    from _samples import ALL, single_precision
    return [pytest.param(s, id=s.id) for s in ALL
            if s.differentiable and not s.backward_error
            and any(a.rg and a.is_complex for a in s.args)
            and not single_precision(s, "float64")]


def _same_fast_mode_verdict(sample, fn, ins):
    """fast_mode=True passes, or fails as torch's does on the same sample (torch's fast
    mode reports an output that does not require grad, linalg.lu's P, as mismatching)."""
    import torch

    import eagergrad as eg
    from _samples import make_inputs
    t_ins = tuple(make_inputs(torch, sample, "float64"))
    try:
        want = torch.autograd.gradcheck(lambda *ts: sample.call(torch, *ts), t_ins,
                                        fast_mode=True)
    except RuntimeError as e:  # (GradcheckError)
        want = type(e).__name__, str(e).split("\n")[0]
    try:
        got = eg.autograd.gradcheck(fn, ins, fast_mode=True)
    except RuntimeError as e:
        got = type(e).__name__, str(e).split("\n")[0]
    assert got == want


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Input #")
@pytest.mark.parametrize("sample", _complex_samples())
def test_complex_ops_pass_gradcheck_and_gradgradcheck(sample):
    """Every op sample with a complex input that requires grad, in complex128: its
    backward (and, where the op has one, its double backward) against finite differences
    under torch's complex rules, with torch's default tolerances."""
    import eagergrad as eg
    from _samples import make_inputs
    ins = tuple(make_inputs(eg, sample, "float64"))

    def fn(*ts):
        return sample.call(eg, *ts)
    assert eg.autograd.gradcheck(fn, ins)
    _same_fast_mode_verdict(sample, fn, ins)
    if sample.double_backward:
        assert eg.autograd.gradgradcheck(fn, ins)
