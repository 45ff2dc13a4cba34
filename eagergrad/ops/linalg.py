"""Matrix products. matmul is composed from mm/bmm/mv/dot and views exactly as ATen's
at::matmul does, so its graph (MmBackward0, UnsafeViewBackward0, ...) is torch's."""
import jax
import jax.numpy as jnp

from ._table import defop, call_op
from . import shape as S

# float32 matmuls in full precision, as torch: XLA's CPU default already is; on GPU/TPU
# the default would use TF32/bfloat16 passes, so ask for "highest" there
_HI = None if jax.default_backend() == "cpu" else "highest"


def _mm_k(self, mat2):
    return jnp.matmul(self, mat2, precision=_HI)


def _mm_meta(tensors, needs):
    # torch's mm_mat{1,2}_backward take each input's sizes (always kept) and its strides
    # (kept when that input needs a gradient; else left empty)
    a, b = tensors
    return {"self_sym_sizes": a._shape, "self_sym_strides": a.stride() if needs[0] else (),
            "mat2_sym_sizes": b._shape, "mat2_sym_strides": b.stride() if needs[1] else ()}


MM = defop("mm", _mm_k, inputs=("self", "mat2"),
           saved_meta=(("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes",
                        "mat2_sym_strides"), _mm_meta),
           self=lambda grad, mat2: grad.mm(mat2.t().conj()),
           mat2=lambda grad, self: self.t().conj().mm(grad))
BMM = defop("bmm", _mm_k, inputs=("self", "mat2"),
            self=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2).conj()),
            mat2=lambda grad, self: self.transpose(1, 2).conj().bmm(grad))
MV = defop("mv", _mm_k, inputs=("self", "vec"),
           self=lambda grad, vec: outer(grad, vec.conj()),
           vec=lambda grad, self: self.conj().t().mv(grad))
DOT = defop("dot", lambda self, tensor: jnp.dot(self, tensor, precision=_HI),
            inputs=("self", "tensor"),
            self=lambda grad, tensor: grad * tensor.conj(),
            tensor=lambda grad, self: grad * self.conj())


def _check_dtypes(a, b, name):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.cpp_name} != {b.dtype.cpp_name}" if name == "mm" else
                           f"{name}: Expected self and other to have the same dtype, but got "
                           f"{a.dtype.name} != {b.dtype.name}")


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    if input._shape[1] != mat2._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input._shape[0]}x"
                           f"{input._shape[1]} and {mat2._shape[0]}x{mat2._shape[1]})")
    _check_dtypes(input, mat2, "mm")
    return call_op(MM, (input, mat2))


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if input.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if input._shape[0] != mat2._shape[0] or input._shape[2] != mat2._shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input._shape[0]}, {input._shape[2]}] but got: "
                           f"[{mat2._shape[0]}, {mat2._shape[1]}].")
    _check_dtypes(input, mat2, "bmm")
    return call_op(BMM, (input, mat2))


def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1 or input._shape[1] != vec._shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._shape[0] if input.ndim else ''}),"
                           f" mat ({'x'.join(map(str, input._shape))}), vec "
                           f"({vec._shape[0] if vec.ndim else ''})")
    _check_dtypes(input, vec, "mv")
    return call_op(MV, (input, vec))


def dot(input, tensor):
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    if input._shape != tensor._shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._shape[0]}] and "
                           f"src [{tensor._shape[0]}] to have the same number of elements, but "
                           "got {} and {} elements respectively".format(input._shape[0],
                                                                         tensor._shape[0]))
    _check_dtypes(input, tensor, "dot")
    return call_op(DOT, (input, tensor))


def outer(input, vec2):
    """torch.outer: input.reshape(n, 1) * vec2, as ATen writes it."""
    return S.reshape(input, (input._shape[0], 1)) * vec2


ger = outer


def _should_fold(t1, t2):
    """ATen's should_fold: fold the batch of the larger operand into mm/mv rows."""
    larger = t1.ndim >= t2.ndim
    big, small = (t1, t2) if larger else (t2, t1)
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small._requires_grad:  # folding keeps the smaller operand's gradient a plain mm
        return True
    if t1.ndim == 2:
        return False
    shape, st = list(big._shape), list(big.stride())
    if not larger:  # the folded tensor is t2.mT
        shape[-2:], st[-2:] = shape[:-3:-1], st[:-3:-1]
    if big.numel() == 0:
        return True
    return all(st[i] == st[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def matmul(input, other):
    """torch.matmul with ATen's dispatch on dimensions (and so ATen's graph)."""
    d1, d2 = input.ndim, other.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(input, other)
    if d1 == 2 and d2 == 1:
        return mv(input, other)
    if d1 == 1 and d2 == 2:
        out = mm(S.unsqueeze(input, 0), other)  # ATen: .squeeze_(0) -> SqueezeBackward4
        return call_op(S.SQUEEZE4, (out,), ((0,), out._shape))
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    if _should_fold(input, other):
        transpose = d2 > d1
        t1 = S.transpose(other, -2, -1) if transpose else input
        t2 = (S.t(input) if d1 == 2 else input) if transpose else other
        shape = t1._shape[:-1]
        folded = S.reshape(t1, (_prod(shape), t1._shape[-1]))
        if t2.ndim == 2:
            out = mm(folded, t2)
            out = call_op(S.UNSAFE_VIEW, (out,), (shape + (t2._shape[1],), out._shape))
            return S.contiguous(S.transpose(out, -2, -1)) if transpose else out
        out = mv(folded, t2)
        return call_op(S.UNSAFE_VIEW, (out,), (shape, out._shape))
    if d1 == 3 and d2 == 3 and input._shape[0] != other._shape[0]:
        if input._shape[0] == 1 and input._requires_grad:
            return matmul(S.squeeze(input, 0), other)
        if other._shape[0] == 1 and other._requires_grad:
            return matmul(input, S.squeeze(other, 0))
    # batched: broadcast batch dims, expand, reshape to 3-D, bmm, view back
    n = input._shape[-2] if d1 > 1 else 1
    m1 = input._shape[-1]
    m2 = other._shape[-2] if d2 > 1 else other._shape[0]
    p = other._shape[-1] if d2 > 1 else 1
    batch = _broadcast_batch(input._shape[:max(d1 - 2, 0)], other._shape[:max(d2 - 2, 0)])
    nb = _prod(batch)
    a3 = S.reshape(S.expand(input, batch + (n, m1)), (nb, n, m1))
    vector_rhs = d2 == 1
    b = S.expand(other, batch + ((m2,) if vector_rhs else (m2, p)))
    b3 = S.unsqueeze(S.reshape(b, (nb, m2)), 2) if vector_rhs else S.reshape(b, (nb, m2, p))
    shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    out = bmm(a3, b3)
    if vector_rhs:
        out = S.squeeze(out, -1)
    return call_op(S.UNSAFE_VIEW, (out,), (shape, out._shape))


def _broadcast_batch(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b "
                               f"({b[i]}) at non-singleton dimension {i}")
    return tuple(x if x != 1 else y for x, y in zip(a, b))


def _prod(s):
    n = 1
    for x in s:
        n *= x
    return n
