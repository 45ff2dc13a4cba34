"""torch.stft / torch.istft (also Tensor methods), as torch's torch.functional.stft and
ATen's SpectralOps compose them: frames by as_strided, the window padded to n_fft in the
middle, _fft_r2c / _fft_c2c per frame (FftR2CBackward0, ...), transposed to (freq, frame);
the inverse by overlap-add (fold) divided by the window's squared envelope.

>>> import eagergrad as torch
>>> torch.stft(torch.ones(8), 4, window=torch.ones(4), return_complex=True).shape
torch.Size([3, 9])
"""
import warnings

from . import fft as _fft
from .creation import arange, ones, zeros
from .nn import functional as F
from .ops.shape import view_as_real

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known "
              "to cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
              "device=<device>)`.")
_NO_WINDOW_INVERSE = ("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.")


_WARNED = set()


def _warn_once(message):
    """torch's TORCH_WARN_ONCE: the first time in the process only."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def _desc(t):
    return "None" if t is None else f"{t.type()}{{[{', '.join(map(str, t.shape))}]}}"


def _opt(v):
    return "None" if v is None else str(int(v))


def _full_window(window, n_fft, win_length, like):
    """The window zero-padded to n_fft, centred (a rectangle of win_length if None)."""
    if window is None and win_length == n_fft:
        return None
    left = (n_fft - win_length) // 2
    if window is None:
        window = ones(win_length, dtype=like.dtype)
    if win_length == n_fft:
        return window
    return F.pad(window, [left, n_fft - win_length - left])


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform: (freq, frame) per signal, batched over a leading dim.

    >>> import eagergrad as torch
    >>> torch.stft(torch.arange(8.), 4, hop_length=4, center=False, return_complex=True)[0]
    tensor([ 6.+0.j, 22.+0.j])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        d = input.dim()
        pad = int(n_fft // 2)
        padded = F.pad(input.view([1] * (3 - d) + list(input.shape)), [pad, pad], pad_mode)
        input = padded.view(padded.shape[-d:])
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_out = input.is_complex() or (window is not None and window.is_complex())
    ret_complex = complex_out if return_complex is None else return_complex
    if not ret_complex:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        _warn_once("stft with return_complex=False is deprecated. In a future pytorch "
                   "release, stft will return complex tensors for all inputs, and "
                   "return_complex=False will raise an error.\nNote: you can still call "
                   "torch.view_as_real on the complex output to recover the old return format.")
    if window is None:
        _warn_once(_NO_WINDOW)
    head = (f"stft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_desc(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={int(ret_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : ")
    if input.dim() not in (1, 2):
        raise RuntimeError(head + "expected a 1D or 2D tensor")
    length = input.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(head + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(head + f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(head + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(head + f"expected a 1D window tensor of size equal to win_length={win}"
                           f", but got window with size {list(window.shape)}")
    one = input.dim() == 1
    x = input.unsqueeze(0) if one else input
    if align_to_window and win < n_fft:  # frames start at the window's first sample
        left = (n_fft - win) // 2
        x = F.pad(x, [left, left])
        length = x.shape[-1]
    frames = 1 + (length - n_fft) // hop
    x = x.as_strided((x.shape[0], frames, n_fft), (x.stride(0), hop * x.stride(1), x.stride(1)),
                     x.storage_offset())
    w = _full_window(window, n_fft, win, input)
    if w is not None:
        x = x.mul(w)
    complex_fft = x.is_complex()
    sided = (not complex_fft) if onesided is None else onesided
    if complex_fft and sided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    out = _fft.rfft(x, norm=norm) if (sided and not complex_fft) else _fft.fft(x, norm=norm)
    out = out.transpose_(1, 2)
    if one:
        out = out.squeeze_(0)
    return out if ret_complex else view_as_real(out)


def _overlap_add(frames, total, hop):
    """(C, n_frames, n_fft) frames summed into (C, total) at hop spacing (ATen's
    unfold_backward, the transpose of framing)."""
    c, n, k = frames.shape
    idx = (arange(n).view(n, 1) * hop + arange(k).view(1, k)).reshape(-1)
    return zeros(c, total, dtype=frames.dtype).index_add(1, idx, frames.reshape(c, n * k))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse short-time Fourier transform: overlap-add of the inverse FFT of each frame,
    divided by the squared window's envelope.

    >>> import eagergrad as torch
    >>> x = torch.arange(16.)
    >>> w = torch.hann_window(8)
    >>> y = torch.istft(torch.stft(x, 8, window=w, return_complex=True), 8, window=w)
    >>> bool((y - x).abs().max() < 1e-5)
    True
    """
    if window is None:
        _warn_once(_NO_WINDOW_INVERSE)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    dim = input.dim()
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    sided = (fft_size != n_fft) if onesided is None else onesided
    kind = input.type().split(".")[-1][:-len("Tensor")]
    head = (f"istft(CPU{kind}Type{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_desc(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"length={_opt(length)}, return_complex={int(return_complex)}) : ")
    if input.numel() == 0:
        raise RuntimeError(head + "istft input tensor cannot be empty.")
    if dim not in (2, 3):
        raise RuntimeError(head + f"expected a tensor with 3 or 4 dimensions of complex, but "
                           f"got {dim + 1}")
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(head + "expected the frequency dimension (3rd to the last) of the "
                           "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not sided and n_fft != fft_size:
        raise RuntimeError(head + "expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(head + "expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(head + "expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(head + "Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    w = window if window is not None else ones(win, dtype=input.real.dtype)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = F.pad(w, [left, n_fft - win - left])
    x = (input.unsqueeze(0) if dim == 2 else input).transpose(1, 2)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _fft.ifft(x, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            x = x[..., :n_fft // 2 + 1]
        x = _fft.irfft(x, n=n_fft, norm=norm)
    y = _overlap_add(x * w.view(1, 1, n_fft), total, hop)
    envelope = _overlap_add(w.pow(2).expand(1, n_frames, n_fft), total, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else total)
    y, envelope = y[:, start:end], envelope[:, start:end]
    if bool(envelope.abs().min() < 1e-11):
        raise RuntimeError(head[:-3] + " window overlap add min: 1")
    y = y / envelope
    if dim == 2:
        y = y.squeeze(0)
    if end > total:
        _warn_once("The length of signal is shorter than the length parameter. Result is being "
                   "padded with zeros in the tail. Please check your center and hop_length "
                   "settings.")
        y = F.pad(y, [0, end - total])
    return y
