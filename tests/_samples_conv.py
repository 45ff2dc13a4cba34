"""Samples for convolution and pooling (merged into _samples.SAMPLES), same format as
_samples.py; SPECIAL: max pooling at ties (merged into test_special_points.SPECIAL).
Inputs stay small (N=2, C<=4, 6x6) so the op suites stay fast."""
from _samples import C, F, S, V


def _f(m):
    return m.nn.functional


SAMPLES = {
    "convolution": [
        S(lambda m, x, w, b: _f(m).conv2d(x, w, b, padding=1), C(1, 2, 4, 4), C(3, 2, 3, 3),
          C(3), name="conv2d complex",
          xfail={"graph": "torch 2.13 splits a complex convolution into three real ones "
                 "(Gauss's trick); eagergrad records one complex ConvolutionBackward0"}),
        S(lambda m, x, w, b: _f(m).conv2d(x, w, b, stride=2, padding=1), F(2, 3, 6, 6),
          F(4, 3, 3, 3), F(4), name="conv2d stride, padding"),
        S(lambda m, x, w: _f(m).conv2d(x, w, dilation=2), F(2, 3, 6, 6), F(2, 3, 2, 2),
          name="conv2d dilation, no bias"),
        S(lambda m, x, w, b: _f(m).conv2d(x, w, b, groups=2, padding=(1, 0)), F(2, 4, 5, 6),
          F(2, 2, 3, 2), F(2), name="conv2d groups"),
        S(lambda m, x, w, b: _f(m).conv2d(x, w, b, padding="same"), F(2, 3, 5, 5),
          F(2, 3, 3, 3), F(2), name="conv2d same"),
        S(lambda m, x, w: _f(m).conv1d(x, w, stride=2), F(2, 3, 7), F(4, 3, 3), name="conv1d"),
        S(lambda m, x, w, b: _f(m).conv3d(x, w, b, padding=1), F(1, 2, 3, 3, 3),
          F(2, 2, 2, 2, 2), F(2), name="conv3d"),
        S(lambda m, x, w: _f(m).conv_transpose1d(x, w, stride=2, output_padding=1), F(2, 3, 5),
          F(3, 2, 3), name="conv_transpose1d"),
        S(lambda m, x, w, b: _f(m).conv_transpose2d(x, w, b, stride=2, padding=1,
                                                    output_padding=1), F(2, 4, 4, 4),
          F(4, 3, 3, 3), F(3), name="conv_transpose2d"),
        S(lambda m, x, w, b: _f(m).conv_transpose2d(x, w, b, stride=(2, 1), padding=(0, 1),
                                                    groups=2, dilation=2),
          F(1, 4, 4, 4), F(4, 1, 2, 3), F(2), name="conv_transpose2d groups, dilation"),
        S(lambda m, x, w, b: _f(m).conv2d(x, w, b), F(2, 3, 5, 5, rg=False), F(2, 3, 3, 3),
          F(2, rg=False), name="conv2d, weight grad only"),
    ],
    "convolution_backward": [
        S(lambda m, x, w, b: _f(m).conv2d(x, w, b, stride=2, padding=1), F(2, 2, 5, 5),
          F(3, 2, 3, 3), F(3), name="conv2d (double backward)"),
    ],
    "constant_pad_nd": [
        S(lambda m, x, w: _f(m).conv2d(x, w, padding="same"), F(2, 3, 5, 5), F(2, 3, 2, 3),
          name="conv2d same, even kernel"),
        S(lambda m, x: m.constant_pad_nd(x, (1, 2, 0, -1), 0.5), F(2, 3, 4),
          name="negative pad, value"),
    ],
    "max_pool2d_with_indices": [
        S(lambda m, x: _f(m).max_pool2d(x, 2), F(2, 3, 6, 6), name="max_pool2d"),
        S(lambda m, x: _f(m).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
          F(2, 3, 6, 7), name="padding, ceil_mode"),
        S(lambda m, x: _f(m).max_pool2d(x, (2, 3), stride=(1, 2), dilation=2,
                                        return_indices=True), F(2, 2, 6, 7),
          name="dilation, indices"),
        S(lambda m, x: _f(m).max_pool1d(x, 3, stride=2, padding=1), F(2, 3, 7),
          name="max_pool1d"),
        S(lambda m, x: _f(m).max_pool2d(x, 2), F(3, 5, 4), name="unbatched"),
    ],
    "max_pool2d_with_indices_backward": [
        S(lambda m, x: _f(m).max_pool2d(x, 2, padding=1), F(2, 2, 5, 5),
          name="max_pool2d (double backward)"),
    ],
    "avg_pool2d": [
        S(lambda m, x: _f(m).avg_pool2d(x, 2), F(2, 3, 6, 6), name="avg_pool2d"),
        S(lambda m, x: _f(m).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
          F(2, 3, 6, 7), name="padding counted, ceil_mode"),
        S(lambda m, x: _f(m).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                        count_include_pad=False), F(2, 3, 6, 7),
          name="padding not counted"),
        S(lambda m, x: _f(m).avg_pool2d(x, 2, divisor_override=3), F(3, 6, 6),
          name="divisor_override, unbatched"),
        S(lambda m, x: _f(m).avg_pool1d(x, 3, stride=2, padding=1), F(2, 3, 7),
          name="avg_pool1d"),
    ],
    "avg_pool2d_backward": [
        S(lambda m, x: _f(m).avg_pool2d(x, 2, padding=1), F(2, 2, 5, 5),
          name="avg_pool2d (double backward)"),
    ],
    "_adaptive_avg_pool2d": [
        S(lambda m, x: _f(m).adaptive_avg_pool2d(x, (4, 3)), F(2, 3, 6, 7),
          name="adaptive_avg_pool2d"),
        S(lambda m, x: _f(m).adaptive_avg_pool2d(x, (None, 4)), F(3, 5, 7),
          name="None, unbatched, overlapping windows"),
        S(lambda m, x: _f(m).adaptive_avg_pool1d(x, 3), F(2, 3, 7),
          name="adaptive_avg_pool1d"),
    ],
    "_adaptive_avg_pool2d_backward": [
        S(lambda m, x: _f(m).adaptive_avg_pool2d(x, 2), F(2, 2, 5, 5),
          name="adaptive_avg_pool2d (double backward)"),
    ],
    "mean": [
        S(lambda m, x: _f(m).adaptive_avg_pool2d(x, 1), F(2, 3, 4, 4),
          name="adaptive_avg_pool2d to 1x1"),
    ],
}

SPECIAL = {
    "max_pool2d_with_indices": [
        S(lambda m, x: _f(m).max_pool2d(x, 2, return_indices=True),
          V([[[[1.0, 2.0, 2.0, 0.0], [2.0, 1.0, 2.0, 2.0], [3.0, 3.0, 5.0, 5.0],
               [3.0, 3.0, 5.0, 5.0]]]]), name="ties: the first max in scan order"),
        S(lambda m, x: _f(m).max_pool2d(x, 3, stride=1, padding=1, return_indices=True),
          V([[[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]]]),
          name="all-equal windows, padding"),
        S(lambda m, x: _f(m).max_pool1d(x, 2, stride=1, return_indices=True),
          V([[1.0, 1.0, 1.0, 2.0, 2.0]]), name="max_pool1d overlapping ties"),
        S(lambda m, x: _f(m).max_pool2d(x, (1, 4), return_indices=True),
          V([[[[float("nan"), 1.0, float("nan"), 2.0]]]]), jax=False, fd=False,
          name="nan: the last nan in scan order"),
    ],
}
