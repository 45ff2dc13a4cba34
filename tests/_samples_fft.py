"""Samples for the torch.fft ops (merged into _samples.SAMPLES), same format as
_samples.py; SMOOTH: op name -> why they need no special points (merged into
test_special_points.SMOOTH).

torch.fft's functions are compositions of three transforms (ATen's _fft_c2c, _fft_r2c,
_fft_c2r) with promotions, slices, pads and conj views; each sample is filed under the
transform its graph ends in or is built around; fftshift / ifftshift are filed under
roll.
"""
from _samples import C, F, S, T


def _fft(name, **kw):
    return lambda m, x: getattr(m.fft, name)(x, **kw)


SAMPLES = {
    "fft_c2c": [
        S(_fft("fft"), C(3, 5), name="fft complex"),
        S(_fft("ifft", n=7, dim=0, norm="ortho"), C(4, 3), name="ifft padded, dim 0, ortho"),
        S(_fft("fft", n=3, norm="forward"), C(2, 5), name="fft trimmed, forward norm"),
        S(_fft("fftn", norm="forward"), C(2, 3, 4), name="fftn all dims, forward norm"),
        S(_fft("ifftn", s=(2, 6)), C(3, 4), name="ifftn s trims and pads"),
        S(_fft("fftn", s=(4, -1), dim=(2, 0)), C(3, 2, 5), name="fftn dims out of order"),
        S(_fft("fft2"), F(3, 4), name="fft2 of real: promoted to complex"),
        S(_fft("ifft2", dim=(0, 2), norm="ortho"), F(2, 3, 4), name="ifft2 real, dims 0 and 2"),
        S(_fft("fftn", dim=()), C(2, 3), name="fftn over no dims: a copy"),
        S(_fft("hfft2"), C(3, 4), name="hfft2: c2c over the first dim"),
        S(_fft("ihfft2", norm="forward"), F(3, 4), name="ihfft2: c2c after conj_physical"),
        S(_fft("fftn"), T("int64", 2, 3), nondiff=True, name="int: default float dtype"),
    ],
    "fft_r2c": [
        S(_fft("rfft"), F(3, 6), name="rfft even"),
        S(_fft("rfft", n=8, norm="ortho"), F(5), name="rfft padded, ortho"),
        S(_fft("rfft", dim=0, norm="forward"), F(5, 3), name="rfft odd, dim 0"),
        S(_fft("fft"), F(3, 4), name="fft of real: two-sided"),
        S(_fft("ifft", dim=0), F(4, 3), name="ifft of real: a conj view"),
        S(_fft("ihfft", n=5, norm="forward"), F(2, 7), name="ihfft trimmed"),
        S(_fft("rfftn"), F(2, 3, 4), name="rfftn"),
        S(_fft("rfft2", s=(4, 4)), F(3, 5), name="rfft2 s pads and trims"),
        S(_fft("rfftn", dim=(2, 0), norm="ortho"), F(3, 4, 5), name="rfftn dims out of order"),
        S(_fft("ihfftn", dim=(1,)), F(3, 4), name="ihfftn over one dim: conj view"),
        S(_fft("rfft"), T("int32", 6), nondiff=True, name="int: default float dtype"),
    ],
    "fft_c2r": [
        S(_fft("irfft"), C(3, 4), name="irfft, n = 2 (size - 1)"),
        S(_fft("irfft", n=7, dim=0, norm="ortho"), C(4, 3), name="irfft odd n, dim 0"),
        S(_fft("irfft", n=3), C(2, 5), name="irfft n trims the input"),
        S(_fft("hfft", n=9, norm="forward"), C(5), name="hfft odd n, forward norm"),
        S(_fft("hfft"), F(2, 4), name="hfft of real: promoted, conj"),
        S(_fft("irfft"), F(3, 4), name="irfft of real: promoted"),
        S(_fft("irfftn"), C(2, 3, 4), name="irfftn"),
        S(_fft("irfft2", s=(4, 5)), C(3, 4), name="irfft2 s"),
        S(_fft("irfftn", dim=(1, 0)), C(3, 4), name="irfftn dims reversed"),
        S(_fft("hfftn", dim=(0, 2), norm="ortho"), C(2, 3, 4), name="hfftn over dims 0, 2"),
        S(_fft("hfftn", s=(3, 6)), C(2, 3), name="hfftn s"),
    ],
    "roll": [  # (torch.roll's own samples are with the op's)
        S(lambda m, x: m.fft.fftshift(x), F(3, 4), name="fftshift"),
        S(lambda m, x: m.fft.ifftshift(x, dim=0), C(5, 2), name="ifftshift dim 0, complex"),
        S(lambda m, x: m.fft.fftshift(x, dim=(0, -1)), F(2, 3, 4), name="fftshift two dims"),
        S(lambda m, x: m.fft.ifftshift(x, dim=(1, 1)), F(2, 5), name="ifftshift a dim twice"),
        S(lambda m, x: m.fft.fftshift(x), T("int64", 5), nondiff=True, name="fftshift int"),
    ],
}

_LINEAR = "linear: the same gradient at every point"
SMOOTH = dict.fromkeys(("fft_c2c", "fft_r2c", "fft_c2r"), _LINEAR)
