"""Samples for the spatial ops (merged into _samples.SAMPLES: lists under an existing op
name are appended to it), same format as _samples.py; SPECIAL: samples at their special
points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH)."""
from _samples import C, F, I, S, V


def _f(m):
    return m.nn.functional


def _pad(mode, p):
    return lambda m, x: _f(m).pad(x, p, mode=mode)


_LINEAR = "a linear map (a fixed gather/scatter of the input): the same at every point"

SAMPLES = {
    "reflection_pad1d": [
        S(_pad("reflect", (2, 1)), F(2, 2, 4), name="reflect 1-d"),
        S(_pad("reflect", (-1, 3)), C(3, 5), name="reflect 1-d unbatched, negative, complex"),
    ],
    "reflection_pad2d": [S(_pad("reflect", (2, 1, 0, 2)), F(1, 2, 3, 4), name="reflect 2-d")],
    "reflection_pad3d": [S(_pad("reflect", (1, 0, 1, 1, 0, 1)), F(2, 2, 3, 2),
                           name="reflect 3-d unbatched")],
    "replication_pad1d": [
        S(_pad("replicate", (3, 1)), F(2, 2, 3), name="replicate 1-d"),
        S(_pad("replicate", (-1, 2)), C(2, 4), name="replicate unbatched, negative, complex"),
    ],
    "replication_pad2d": [S(_pad("replicate", (1, 2, 2, 0)), F(1, 2, 3, 3),
                            name="replicate 2-d")],
    "replication_pad3d": [S(_pad("replicate", (1, 1, 0, 1, 2, 0)), F(1, 1, 2, 2, 3),
                            name="replicate 3-d")],
    "copy": [
        S(_pad("circular", (2, 1)), F(2, 3, 4), name="circular pad 1-d"),
        S(_pad("circular", (1, -1, 2, 1)), F(1, 3, 4), name="circular pad 2-d unbatched"),
    ],
}
for _kind, _mode in (("reflection", "reflect"), ("replication", "replicate")):
    for _nd, _shape in ((1, (2, 2, 4)), (2, (1, 2, 3, 4)), (3, (1, 1, 3, 3, 3))):
        SAMPLES[f"{_kind}_pad{_nd}d_backward"] = [
            S(_pad(_mode, (1, 2) * _nd), F(*_shape), name=f"{_mode} {_nd}-d (double backward)")]


def _up(mode, **kw):
    return lambda m, x: _f(m).interpolate(x, mode=mode, **kw)


_UPSAMPLE = {  # op: (mode, input shape, kwargs) ...
    "upsample_nearest1d": [("nearest", (2, 2, 3), {"scale_factor": 2.5}),
                           ("nearest", (1, 2, 5), {"size": 3})],
    "upsample_nearest2d": [("nearest", (1, 2, 2, 3), {"scale_factor": (2, 1.5)})],
    "upsample_nearest3d": [("nearest", (1, 1, 2, 2, 3), {"size": (3, 2, 4)})],
    "_upsample_nearest_exact1d": [("nearest-exact", (1, 2, 3), {"scale_factor": 1.7})],
    "_upsample_nearest_exact2d": [("nearest-exact", (1, 2, 3, 2), {"size": (2, 5)})],
    "_upsample_nearest_exact3d": [("nearest-exact", (1, 1, 2, 3, 2),
                                   {"scale_factor": 1.5, "recompute_scale_factor": True})],
    "upsample_linear1d": [("linear", (2, 2, 3), {"scale_factor": 2.5}),
                          ("linear", (1, 2, 4), {"size": 3, "align_corners": True})],
    "upsample_bilinear2d": [("bilinear", (1, 2, 3, 3), {"size": (5, 2)}),
                            ("bilinear", (2, 1, 2, 3), {"scale_factor": (1.3, 2.0),
                                                            "align_corners": True})],
    "upsample_trilinear3d": [("trilinear", (1, 1, 2, 2, 3), {"size": (3, 3, 2)})],
    "upsample_bicubic2d": [("bicubic", (1, 2, 3, 3), {"scale_factor": 1.5}),
                           ("bicubic", (1, 1, 3, 4), {"size": (2, 5), "align_corners": True})],
}
for _op, _cases in _UPSAMPLE.items():
    SAMPLES[_op] = [S(_up(mode, **kw), F(*shape), name=f"{mode} {kw}")
                    for mode, shape, kw in _cases]
    _mode, _shape, _kw = _cases[0]
    SAMPLES[_op + "_backward"] = [S(_up(_mode, **_kw), F(*_shape),
                                    name=f"{_mode} {_kw} (double backward)")]

SAMPLES["adaptive_max_pool2d"] = [
    S(lambda m, x: _f(m).adaptive_max_pool2d(x, (2, 3), return_indices=True), F(1, 2, 5, 4),
      name="overlapping windows, indices"),
    S(lambda m, x: _f(m).adaptive_max_pool1d(x, 2), F(2, 3), name="adaptive_max_pool1d unbatched"),
]
SAMPLES["adaptive_max_pool2d_backward"] = [
    S(lambda m, x: _f(m).adaptive_max_pool2d(x, 2), F(1, 1, 3, 4),
      name="adaptive_max_pool2d (double backward)")]


def _bag(mode, offsets=(0, 2, 2), **kw):
    return lambda m, i, w, *p: _f(m).embedding_bag(
        i, w, m.tensor(list(offsets)), mode=mode,
        per_sample_weights=p[0] if p else None, **kw)


_BAG_IDX = [1, 2, 4, 5, 4, 3]
SAMPLES["embedding_bag"] = [
    # torch has no double backward for embedding_bag (its backward's node raises)
    S(_bag("sum"), I(_BAG_IDX), F(6, 3), double_backward=False, name="sum, an empty bag"),
    S(_bag("mean", padding_idx=4), I(_BAG_IDX), F(6, 3), double_backward=False,
      jax=False, fd=False, name="mean, padding_idx (torch's gradient skips the row)"),
    S(_bag("max", (0, 3, 6), include_last_offset=True), I(_BAG_IDX), F(6, 3),
      double_backward=False, name="max, include_last_offset"),
    S(_bag("sum"), I(_BAG_IDX), F(6, 3), F(6), double_backward=False,
      name="per_sample_weights"),
]
SAMPLES["_embedding_bag_backward"] = [
    S(lambda m, i, w: _f(m).embedding_bag(i, w, mode="mean").sum(), I([[0, 2], [2, 1]]),
      F(3, 2), double_backward=False, name="2-d input, mean (first order)")]
SAMPLES["_embedding_bag_per_sample_weights_backward"] = [
    S(_bag("sum", padding_idx=2), I(_BAG_IDX), F(6, 3), F(6), double_backward=False,
      name="per_sample_weights, padding_idx (first order)")]

SAMPLES["im2col"] = [
    S(lambda m, x: _f(m).unfold(x, (2, 3), padding=1, stride=(1, 2)), F(1, 2, 4, 5),
      name="unfold padding, stride"),
    S(lambda m, x: _f(m).unfold(x, 2, dilation=(2, 1)), C(2, 4, 3),
      name="unfold unbatched, dilation, complex"),
]
SAMPLES["col2im"] = [
    S(lambda m, x: _f(m).fold(x, (4, 5), (2, 3), padding=1, stride=(1, 2)), F(1, 12, 15),
      name="fold padding, stride"),
    S(lambda m, x: _f(m).fold(x, (3, 3), 2), F(4, 4), name="fold unbatched, overlapping"),
]
SAMPLES["pixel_shuffle"] = [
    S(lambda m, x: _f(m).pixel_shuffle(x, 2), F(1, 8, 2, 3), name="pixel_shuffle"),
    S(lambda m, x: m.pixel_shuffle(x, 3), C(9, 1, 2), name="unbatched, complex"),
]
SAMPLES["pixel_unshuffle"] = [
    S(lambda m, x: _f(m).pixel_unshuffle(x, 2), F(2, 1, 2, 4, 6), name="pixel_unshuffle 5-d"),
]

_GRID = [[[[-0.9, -0.3], [0.2, 0.7]], [[1.3, 0.1], [0.4, -1.2]], [[0.05, 0.55], [-0.6, 0.35]]]]


def _gs(mode, pm, ac):
    return lambda m, x, g: _f(m).grid_sample(x, g, mode=mode, padding_mode=pm,
                                             align_corners=ac)


SAMPLES["grid_sampler_2d"] = [
    S(_gs("bilinear", "zeros", False), F(1, 2, 3, 4), V(_GRID), name="bilinear zeros"),
    S(_gs("bilinear", "reflection", True), F(1, 1, 3, 3), V(_GRID),
      name="bilinear reflection align_corners"),
    S(_gs("nearest", "border", False), F(1, 2, 3, 4), V(_GRID), name="nearest border"),
]
SAMPLES["grid_sampler_2d_backward"] = [
    S(_gs("bilinear", "border", False), F(1, 1, 3, 4), V(_GRID),
      name="bilinear border (double backward)")]
SAMPLES["_grid_sampler_2d_double_backward"] = [
    S(_gs("bilinear", "zeros", True), F(1, 1, 3, 3), V(_GRID),
      name="bilinear zeros (double backward)")]
# (no coordinate on the lattice or half way between its points, for sizes 2-4: no kinks)
_GRID3 = [[[[[-0.83, -0.27, 0.41], [0.19, 0.73, -0.47]],
            [[1.31, 0.11, 0.29], [0.43, -1.17, 0.79]]],
           [[[0.07, 0.53, -0.71], [-0.61, 0.37, 1.13]],
            [[0.23, -0.13, 0.03], [0.63, 0.89, -0.93]]]]]
SAMPLES["grid_sampler_3d"] = [
    S(_gs("bilinear", "zeros", False), F(1, 2, 2, 3, 4), V(_GRID3), name="5-d bilinear zeros"),
    S(_gs("bilinear", "reflection", True), F(1, 1, 3, 2, 3), V(_GRID3),
      name="5-d bilinear reflection align_corners"),
    S(lambda m, x, g: m.grid_sampler_3d(x, g, 1, 1, False), F(1, 2, 2, 3, 3), V(_GRID3),
      name="nearest border"),
]
SAMPLES["grid_sampler_3d_backward"] = [
    S(_gs("bilinear", "border", False), F(1, 1, 2, 3, 2), V(_GRID3),
      name="5-d bilinear border (double backward)")]
SAMPLES["_grid_sampler_3d_double_backward"] = [
    S(_gs("bilinear", "zeros", True), F(1, 1, 3, 2, 2), V(_GRID3),
      name="5-d bilinear zeros (double backward)")]
SAMPLES["affine_grid_generator"] = [
    S(lambda m, t: _f(m).affine_grid(t, (2, 1, 3, 4), align_corners=False), F(2, 2, 3),
      name="affine_grid"),
    S(lambda m, t: _f(m).affine_grid(t, (1, 2, 2, 3), align_corners=True), F(1, 2, 3),
      name="affine_grid align_corners"),
]

SPECIAL = {
    "grid_sampler_2d": [
        # sample points on pixel centres and on the border (the bilinear kinks)
        S(_gs("bilinear", "zeros", True), F(1, 1, 3, 3),
          V([[[[0.0, 0.0], [1.0, -1.0]], [[-1.0, 0.5], [0.5, 1.0]]]]),
          jax=False, fd=False, name="grid points on the pixel lattice"),
    ],
    "grid_sampler_3d": [
        S(_gs("bilinear", "zeros", True), F(1, 1, 3, 3, 3),
          V([[[[[0.0, 0.0, 0.0], [1.0, -1.0, 0.5]], [[-1.0, 0.5, 1.0], [0.5, 1.0, -0.5]]]]]),
          jax=False, fd=False, name="grid points on the voxel lattice"),
        S(_gs("bilinear", "border", False), F(1, 1, 2, 3, 2),
          V([[[[[-0.5, 0.0, 0.25], [1.5, -1.0, 0.75]], [[0.25, 1.0, -0.75], [0.0, 0.5, 2.0]]]]]),
          jax=False, fd=False, name="border padding: points on the border and past it"),
    ],
    "embedding_bag": [
        S(_bag("max"), I([1, 2, 2, 0]), V([[1.0, 2.0], [1.0, 2.0], [1.0, -1.0]]),
          double_backward=False, name="max: tied rows, the first wins"),
    ],
    "adaptive_max_pool2d": [
        S(lambda m, x: _f(m).adaptive_max_pool2d(x, (1, 2)),
          V([[[1.0, 1.0, 0.5], [-1.0, 1.0, 1.0]]]), name="ties: the first max in scan order"),
    ],
}

SMOOTH = {f"{k}_pad{nd}d{b}": _LINEAR for k in ("reflection", "replication")
          for nd in (1, 2, 3) for b in ("", "_backward")}
SMOOTH["_embedding_bag_backward"] = "linear in grad; torch has no derivative for it"
SMOOTH["_embedding_bag_per_sample_weights_backward"] = "bilinear; torch has no derivative for it"
SMOOTH.update(dict.fromkeys(("im2col", "col2im", "pixel_shuffle", "pixel_unshuffle"),
                            _LINEAR))
SMOOTH["affine_grid_generator"] = _LINEAR
SMOOTH["grid_sampler_2d_backward"] = "its kinks are grid_sampler_2d's (SPECIAL there)"
SMOOTH["_grid_sampler_2d_double_backward"] = "its kinks are grid_sampler_2d's (SPECIAL there)"
SMOOTH["grid_sampler_3d_backward"] = "its kinks are grid_sampler_3d's (SPECIAL there)"
SMOOTH["_grid_sampler_3d_double_backward"] = "its kinks are grid_sampler_3d's (SPECIAL there)"
SMOOTH["adaptive_max_pool2d_backward"] = "linear in grad_output (a gather at the indices)"
SMOOTH.update({f"{k}{b}": _LINEAR for k in _UPSAMPLE for b in ("", "_backward")})


# ---- 3-d pooling, fractional max pooling, unpooling, channel_shuffle, conv_tbc ----------------
def _fmp(nd, kernel, samples, **kw):
    """fractional_max_pool{nd}d with fixed `_random_samples` (the global generator's draws
    differ between torch and eagergrad)."""
    def call(m, x):
        rs = m.tensor(samples, dtype=x.dtype)
        return getattr(_f(m), f"fractional_max_pool{nd}d")(x, kernel, _random_samples=rs, **kw)
    return call


def _unpool_indices(lead, sizes, kernel):
    """max_pool-shaped flat indices: one position per window of `kernel` in each plane,
    unique, as nested lists for I()."""
    import numpy as np
    rng = np.random.default_rng(len(sizes))
    outs = [n // k for n, k in zip(sizes, kernel)]
    grids = np.meshgrid(*[np.arange(o) * k for o, k in zip(outs, kernel)], indexing="ij")
    idx = np.zeros(tuple(lead) + tuple(outs), np.int64)
    for g, n, k in zip(grids, sizes, kernel):
        idx = idx * n + g + rng.integers(0, k, idx.shape)
    return idx.tolist()


_FMP2 = [[[0.3, 0.8], [0.55, 0.1]], [[0.9, 0.25], [0.05, 0.6]]]
_FMP3 = [[[0.3, 0.8, 0.45], [0.55, 0.1, 0.7]]]

SAMPLES.update({
    "max_pool3d_with_indices": [
        S(lambda m, x: _f(m).max_pool3d(x, 2), F(2, 2, 4, 4, 5), name="max_pool3d"),
        S(lambda m, x: _f(m).max_pool3d(x, (3, 2, 3), stride=(2, 1, 2), padding=1,
                                        dilation=(1, 2, 1), ceil_mode=True,
                                        return_indices=True), F(1, 2, 5, 6, 5),
          name="padding, dilation, ceil_mode, indices"),
        S(lambda m, x: _f(m).max_pool3d(x, 2, stride=1), F(2, 3, 3, 4), name="unbatched"),
        S(lambda m, x: _f(m).lp_pool3d(x, float("inf"), 2), F(1, 2, 4, 4, 4),
          name="lp_pool3d, p = inf"),
    ],
    "max_pool3d_with_indices_backward": [
        S(lambda m, x: _f(m).max_pool3d(x, 2, padding=1), F(1, 2, 3, 4, 4),
          name="max_pool3d (double backward)")],
    "avg_pool3d": [
        S(lambda m, x: _f(m).avg_pool3d(x, 2), F(2, 2, 4, 4, 4), name="avg_pool3d"),
        S(lambda m, x: _f(m).avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True,
                                        count_include_pad=False), F(1, 2, 5, 6, 5),
          name="padding not counted, ceil_mode"),
        S(lambda m, x: _f(m).avg_pool3d(x, (1, 2, 3), stride=1, padding=(0, 1, 1),
                                        divisor_override=4), F(2, 3, 4, 5),
          name="divisor_override, unbatched"),
        S(lambda m, x: _f(m).local_response_norm(x, 3), F(2, 5, 3, 3),
          name="local_response_norm 4-d"),
        S(lambda m, x: _f(m).lp_pool3d(x, 2.0, (2, 2, 1)), F(1, 2, 4, 4, 3, lo=0.5),
          name="lp_pool3d"),
    ],
    "avg_pool3d_backward": [
        S(lambda m, x: _f(m).avg_pool3d(x, 2, padding=1), F(1, 2, 3, 3, 3),
          name="avg_pool3d (double backward)")],
    "_adaptive_avg_pool3d": [
        S(lambda m, x: _f(m).adaptive_avg_pool3d(x, (2, 3, 2)), F(2, 2, 4, 5, 3),
          name="adaptive_avg_pool3d"),
        S(lambda m, x: _f(m).adaptive_avg_pool3d(x, (None, 2, 3)), F(2, 3, 4, 5),
          name="None, unbatched, overlapping windows"),
    ],
    "_adaptive_avg_pool3d_backward": [
        S(lambda m, x: _f(m).adaptive_avg_pool3d(x, 2), F(1, 2, 3, 3, 3),
          name="adaptive_avg_pool3d (double backward)")],
    "adaptive_max_pool3d": [
        S(lambda m, x: _f(m).adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
          F(1, 2, 4, 5, 3), name="overlapping windows, indices"),
        S(lambda m, x: _f(m).adaptive_max_pool3d(x, 3), F(2, 4, 4, 4), name="unbatched"),
    ],
    "adaptive_max_pool3d_backward": [
        S(lambda m, x: _f(m).adaptive_max_pool3d(x, 2), F(1, 1, 3, 3, 4),
          name="adaptive_max_pool3d (double backward)")],
    "fractional_max_pool2d": [
        S(_fmp(2, 2, _FMP2, output_size=(4, 3), return_indices=True), F(2, 2, 7, 6),
          name="output_size, indices"),
        S(_fmp(2, (2, 3), _FMP2[:1], output_ratio=(0.5, 0.5)), F(2, 5, 9),
          name="output_ratio, unbatched"),
    ],
    "fractional_max_pool2d_backward": [
        S(_fmp(2, 2, _FMP2, output_size=3), F(2, 2, 5, 5),
          name="fractional_max_pool2d (double backward)")],
    "fractional_max_pool3d": [
        S(_fmp(3, (2, 3, 2), _FMP3, output_size=(3, 3, 4), return_indices=True),
          F(1, 2, 5, 6, 7), name="output_size, indices"),
        S(_fmp(3, 2, _FMP3, output_ratio=0.5), F(2, 5, 5, 5), name="output_ratio, unbatched"),
    ],
    "fractional_max_pool3d_backward": [
        S(_fmp(3, 2, _FMP3, output_size=2), F(1, 2, 4, 4, 4),
          name="fractional_max_pool3d (double backward)")],
    "max_unpool2d": [
        S(lambda m, x, i: _f(m).max_unpool2d(x, i, 2), F(2, 2, 2, 3),
          I(_unpool_indices((2, 2), (4, 6), (2, 2))), name="max_unpool2d"),
        S(lambda m, x, i: _f(m).max_unpool2d(x, i, 2, output_size=(5, 7)), F(2, 2, 3),
          I(_unpool_indices((2,), (4, 6), (2, 2))), name="unbatched, output_size"),
        S(lambda m, x, i: _f(m).max_unpool1d(x, i, 3, stride=2), F(2, 2, 3),
          I(_unpool_indices((2, 2), (7,), (2,))), name="max_unpool1d"),
    ],
    "max_unpool3d": [
        S(lambda m, x, i: _f(m).max_unpool3d(x, i, 2), F(1, 2, 2, 2, 3),
          I(_unpool_indices((1, 2), (4, 4, 6), (2, 2, 2))), name="max_unpool3d"),
        S(lambda m, x, i: _f(m).max_unpool3d(x, i, (1, 2, 2), padding=(0, 1, 0)),
          F(2, 3, 2, 2), I(_unpool_indices((2,), (3, 2, 4), (1, 1, 2))),
          name="unbatched, padding"),
    ],
    "channel_shuffle": [
        S(lambda m, x: _f(m).channel_shuffle(x, 3), F(2, 6, 3, 2), name="channel_shuffle"),
        S(lambda m, x: m.channel_shuffle(x, 2), C(2, 4, 3), name="3-d, complex"),
    ],
    "native_channel_shuffle": [
        S(lambda m, x: _f(m).native_channel_shuffle(x, 2), F(1, 4, 2, 2),
          backward_error="derivative for aten::native_channel_shuffle is not implemented"),
    ],
    "conv_tbc": [
        S(lambda m, x, w, b: m.conv_tbc(x, w, b, 1), F(5, 2, 3), F(3, 3, 4), F(4),
          name="conv_tbc pad 1"),
        S(lambda m, x, w, b: _f(m).conv_tbc(x, w, b), F(4, 1, 2), F(2, 2, 3), F(3, rg=False),
          name="no padding, bias constant"),
    ],
})

_NAN = float("nan")
SPECIAL.update({
    "max_pool3d_with_indices": [
        S(lambda m, x: _f(m).max_pool3d(x, (1, 2, 2), return_indices=True),
          V([[[[[1.0, 2.0, 2.0, 0.0], [2.0, 1.0, 2.0, 2.0]]]]]),
          name="ties: the first max in scan order"),
        S(lambda m, x: _f(m).max_pool3d(x, (1, 1, 4), return_indices=True),
          V([[[[[_NAN, 1.0, _NAN, 2.0]]]]]), jax=False, fd=False,
          name="nan: the last nan in scan order"),
    ],
    "adaptive_max_pool3d": [
        S(lambda m, x: _f(m).adaptive_max_pool3d(x, (1, 1, 2), return_indices=True),
          V([[[[1.0, 1.0, 0.5], [-1.0, 1.0, 1.0]]]]), name="ties: the first max in scan order"),
    ],
    "fractional_max_pool2d": [
        S(_fmp(2, 2, [[[0.3, 0.8]]], output_size=2, return_indices=True),
          V([[[[1.0, 1.0, 0.5], [1.0, 1.0, 1.0], [0.5, 1.0, 1.0]]]]),
          name="ties: the first max in scan order"),
    ],
    "fractional_max_pool3d": [
        S(_fmp(3, 2, [[[0.3, 0.8, 0.45]]], output_size=1, return_indices=True),
          V([[[[[1.0, 0.0, 1.0], [0.0, 0.5, 1.0], [1.0, 1.0, 1.0]]] * 3]]),
          name="ties: the first max in scan order"),
    ],
})

SMOOTH.update(dict.fromkeys((
    "avg_pool3d", "avg_pool3d_backward", "_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward",
    "max_unpool2d", "max_unpool3d", "channel_shuffle", "native_channel_shuffle"), _LINEAR))
SMOOTH.update(dict.fromkeys((
    "max_pool3d_with_indices_backward", "adaptive_max_pool3d_backward",
    "fractional_max_pool2d_backward", "fractional_max_pool3d_backward"),
    "linear in grad_output (a scatter at the indices); the kinks are the forward's"))
SMOOTH["conv_tbc"] = "bilinear in (input, weight), linear in bias: the same formula everywhere"
