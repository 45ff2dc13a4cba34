"""torch.nn.functional's vision functions (re-exported by nn.functional): pad (all modes),
interpolate / upsample*, grid_sample / affine_grid and pixel_shuffle / pixel_unshuffle
(ops/spatial.py's), with torch's argument checks and messages. Circular padding is
composed as ATen's _pad_circular composes it (an empty tensor, slices copied in: a chain
of CopySlices and SliceBackward0 nodes)."""
import math
import numbers
import warnings

from ..._mode import AUTOCAST
from ...ops._autocast import autocast_inputs
from ...ops.conv import constant_pad_nd
from ...ops.pooling import (  # noqa: F401 - re-exported by nn.functional
    channel_shuffle, native_channel_shuffle)
from ...ops.spatial import (  # noqa: F401 - pixel_(un)shuffle: re-exported by nn.functional
    _reflect_replicate_pad,
    _upsample,
    affine_grid_generator,
    grid_sampler_2d,
    grid_sampler_3d,
    pixel_shuffle,
    pixel_unshuffle,
)
from ._utils import _dims
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d


_MODES = ("constant", "reflect", "replicate", "circular")


def _int_list(v, fname, argname, pos):
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be tuple of "
                        f"ints, not {type(v).__name__}")
    for i, p in enumerate(v):
        if not isinstance(p, int) or isinstance(p, bool):
            if hasattr(p, "__index__") and not isinstance(p, bool) and \
                    getattr(p, "ndim", 0) == 0 and not getattr(p, "is_floating_point",
                                                                 lambda: False)():
                continue
            raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be tuple "
                            f"of ints, but found element of type {type(p).__name__} at pos {i}")
    return tuple(int(p) for p in v)


def _check_nonempty(input, nd):
    lo = nd + 1
    if input.ndim == lo + 1:
        dims = input.shape[1:]
    else:
        dims = input.shape
    if any(s == 0 for s in dims):
        raise RuntimeError(f"Expected {lo}D or {lo + 1}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{_dims(input.shape)}")


def _reflect_replicate(input, pad, kind):
    nd = len(pad) // 2
    _check_nonempty(input, nd)
    shape = tuple(input.shape)
    if kind == "reflection":
        for i, arg in zip(range(nd), (4, 6, 8)):
            dim = input.ndim - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            if not (lo < shape[dim] and hi < shape[dim]):
                raise RuntimeError(
                    f"Argument #{arg}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {dim} of "
                    f"input {_dims(shape)}")
    out = [shape[input.ndim - 1 - i] + pad[2 * i] + pad[2 * i + 1] for i in range(nd)]
    if nd == 1 and out[0] < 1:
        raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: "
                           f"{out[0]}")
    if any(o < 0 for o in out):
        full = list(shape[:input.ndim - nd]) + out[::-1]
        if kind == "reflection":
            raise RuntimeError("numel: integer multiplication overflow")
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {_dims(full)}")
    return _reflect_replicate_pad(input, pad, kind)


def _pad_circular(input, pad):
    """ATen's _pad_circular: the input copied into an empty tensor, then each padded
    dimension's wrapped borders copied from the tensor itself."""
    nd = len(pad) // 2
    in_shape = tuple(input.shape)
    out_shape = list(in_shape)
    for i in range(nd):
        lo, hi = pad[2 * (nd - i - 1)], pad[2 * (nd - i - 1) + 1]
        dim = input.ndim - nd + i
        size = in_shape[dim]
        out_shape[dim] = size + lo + hi
        if not (lo <= size and hi <= size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(out_shape)
    out_slice, in_slice = out, input
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        a, b = max(lo, 0), out_shape[dim] - max(hi, 0)
        out_slice = out_slice.narrow(dim, a, b - a)
        a, b = max(-lo, 0), in_shape[dim] - max(-hi, 0)
        in_slice = in_slice.narrow(dim, a, b - a)
    out_slice.copy_(in_slice)
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            a = out_shape[dim] - lo - max(hi, 0)
            out.narrow(dim, 0, lo).copy_(out.narrow(dim, a, lo))
        if hi > 0:
            out.narrow(dim, out_shape[dim] - hi, hi).copy_(out.narrow(dim, max(lo, 0), hi))
    return out


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dimensions (pairs from the last dimension backwards);
    mode 'constant' (with `value`), 'reflect', 'replicate' or 'circular'.

    >>> import eagergrad as torch
    >>> torch.nn.functional.pad(torch.tensor([[[1.0, 2.0, 3.0]]]), (2, 1), mode="reflect")
    tensor([[[3., 2., 1., 2., 3., 2.]]])
    """
    pad = _int_list(pad, "pad", "pad", 2)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > input.ndim * 2:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.ndim}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    nd = len(pad) // 2
    if not (1 <= nd <= 3 and input.ndim in (nd + 1, nd + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    return _reflect_replicate(input, pad, "reflection" if mode == "reflect" else "replication")


# ---- interpolate -----------------------------------------------------------------------------
def _is_integer(x):
    return isinstance(x, numbers.Integral) or (
        hasattr(x, "dtype") and getattr(x, "ndim", 1) == 0 and not x.is_floating_point())


def _size_str(names, sizes):
    return ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))


def _aten_upsample(input, mode, output_size, scale_factors, align_corners=None):
    """ATen's upsample_*(input, output_size, scale_factors): the output size (floor of
    size * scale for a scale factor), torch's size check, one Upsample...Backward0."""
    nd = input.ndim - 2
    in_sizes = tuple(input.shape[2:])
    if output_size is not None:
        out = tuple(int(s) for s in output_size)
        scales = (None,) * nd
    else:
        scales = tuple(float(s) for s in scale_factors)
        out = tuple(int(n * s) for n, s in zip(in_sizes, scales))
    if any(n <= 0 for n in in_sizes) or any(o <= 0 for o in out):
        names = "DHW"[3 - nd:]
        sep = " and output" if nd == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({_size_str(names, in_sizes)}){sep} ({_size_str(names, out)})")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        what = {("nearest", 2): "upsample_nearest2d_channels_last",
                ("linear", 2): "upsample_bilinear2d_channels_last",
                ("nearest_exact", 2): "upsample_nearest2d_channels_last"}.get(
            (mode, nd), {"nearest": "compute_indices_weights_nearest",
                         "nearest_exact": "compute_indices_weights_nearest",
                         "linear": "compute_indices_weights_linear",
                         "bicubic": "compute_indices_weights_cubic"}[mode])
        raise NotImplementedError(f"\"{what}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return _upsample(input, mode, out, in_sizes, align_corners, scales)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (N, C, *) to `size` or by `scale_factor`: modes nearest,
    nearest-exact, linear (3-D), bilinear / bicubic (4-D), trilinear (5-D), area.

    >>> import eagergrad as torch
    >>> torch.nn.functional.interpolate(torch.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    >>> torch.nn.functional.interpolate(torch.tensor([[[1.0, 2.0]]]), size=3, mode="linear",
    ...                                 align_corners=True)
    tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = size
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    "format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if antialias:
        raise NotImplementedError("eagergrad does not implement torch.nn.functional."
                                  "interpolate(antialias=True) yet")
    for m, ndim, kind in (("nearest", None, "nearest"), ("nearest-exact", None, "nearest_exact"),
                          ("linear", 3, "linear"), ("bilinear", 4, "linear"),
                          ("trilinear", 5, "linear"), ("bicubic", 4, "bicubic")):
        if mode == m and (input.dim() in (3, 4, 5) if ndim is None else input.dim() == ndim):
            return _aten_upsample(input, kind, output_size, scale_factors, align_corners)
    if mode == "area" and input.dim() in (3, 4, 5):
        fn = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d}.get(input.dim())
        if fn is None:
            raise NotImplementedError("eagergrad does not implement "
                                      "torch.nn.functional.adaptive_avg_pool3d yet")
        return fn(input, output_size)
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        raise ValueError("Lanczos mode requires antialias=True")
    for d, m, need in ((3, "bilinear", "4D"), (3, "trilinear", "5D"), (4, "linear", "3D"),
                       (4, "trilinear", "5D"), (5, "linear", "3D"), (5, "bilinear", "4D")):
        if input.dim() == d and mode == m:
            raise NotImplementedError(f"Got {d}D input, but {m} mode needs {need} input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | "
        f"trilinear | lanczos | area | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate (warns, as torch).

    >>> import warnings; warnings.simplefilter("ignore")
    >>> import eagergrad as torch
    >>> torch.nn.functional.upsample(torch.ones(1, 1, 1), size=2)
    tensor([[[1., 1.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. "
                  "Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='nearest') (warns, as torch).

    >>> import warnings; warnings.simplefilter("ignore")
    >>> import eagergrad as torch
    >>> torch.nn.functional.upsample_nearest(torch.ones(1, 1, 1), 2).shape
    torch.Size([1, 1, 2])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. "
                  "Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='bilinear', align_corners=True) (warns, as torch).

    >>> import warnings; warnings.simplefilter("ignore")
    >>> import eagergrad as torch
    >>> torch.nn.functional.upsample_bilinear(torch.ones(1, 1, 1, 1), 2).shape
    torch.Size([1, 1, 2, 2])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. "
                  "Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- grid_sample / affine_grid ---------------------------------------------------------------
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples (N, C, H, W) `input` at the normalized (x, y) points of `grid`
    (N, Hg, Wg, 2) (GridSampler2DBackward0), or (N, C, D, H, W) `input` at the (x, y, z)
    points of `grid` (N, Dg, Hg, Wg, 3) (GridSampler3DBackward0); modes bilinear /
    nearest, padding zeros / border / reflection.

    >>> import eagergrad as torch
    >>> x = torch.arange(4.).view(1, 1, 2, 2)
    >>> torch.nn.functional.grid_sample(x, torch.zeros(1, 1, 1, 2), align_corners=True)
    tensor([[[[1.5000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    mode_enum = ("bilinear", "nearest", "bicubic").index(mode)
    padding_enum = ("zeros", "border", "reflection").index(padding_mode)
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if AUTOCAST.n:  # (torch.grid_sampler: float32)
        input, grid = autocast_inputs("grid_sampler", input, grid)
    si, sg = _dims(input.shape), _dims(grid.shape)
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype} and grid has {grid.dtype}".replace(
                               "eagergrad.", "torch."))
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        want = f"{input.ndim}D" if input.ndim in (4, 5) else "4D or 5D"
        raise RuntimeError(f"grid_sampler(): expected {want} input and grid with same number "
                           f"of dimensions, but got input with sizes {si} and grid with sizes "
                           f"{sg}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {si} and grid with sizes {sg}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {sg}")
    if input.ndim == 5:
        return grid_sampler_3d(input, grid, mode_enum, padding_enum, align_corners)
    return grid_sampler_2d(input, grid, mode_enum, padding_enum, align_corners)


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) sampling grid of the affine maps theta (N, 2, 3), for grid_sample
    (AffineGridGeneratorBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.functional.affine_grid(torch.tensor([[[2.0, 0, 0], [0, 1, 0]]]),
    ...                                 (1, 1, 2, 2), align_corners=True)[0, 0]
    tensor([[-2., -1.],
            [ 2., -1.]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)
