"""Matrix products: mm, bmm, mv, dot, outer, matmul, addmm, _trilinear (the kernel of
nn.functional.bilinear) and dist. matmul is composed from mm/bmm/mv/dot and views exactly
as ATen composes it (at::matmul), so its graphs (MmBackward0, BmmBackward0,
UnsafeViewBackward0, ...) are torch's; dist is one node, DistBackward0, as in torch.
einsum is in einsum.py; triangles, solves and decompositions in decomp.py."""
import functools
import string

import jax
import jax.numpy as jnp

from .._shapes import broadcast_shape as _broadcast_batch, conj_scalar as _conj_scalar
from ..engine.grad_mode import STATE
from ..tensor import Tensor
from . import shape as S
from ._args import promote
from ._autocast import autocast_op
from ._table import call_op, defop
from .inplace import inplace
from .reduce import _vnorm_back, _vnorm_k


@functools.cache
def _hi():
    """float32 matmuls in full precision, as torch: XLA's CPU default already is; on GPU/TPU
    the default would use TF32/bfloat16 passes, so ask for "highest" there. Asked on first
    use (at trace time), as importing starts no jax backend."""
    return None if jax.default_backend() == "cpu" else "highest"


def _mm_k(self, mat2):
    return jnp.matmul(self, mat2, precision=_hi())


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
DOT = defop("dot", lambda self, tensor: jnp.dot(self, tensor, precision=_hi()),
            inputs=("self", "tensor"),
            self=lambda grad, tensor: grad * tensor.conj(),
            tensor=lambda grad, self: grad * self.conj())


def _check_dtypes(a, b, name):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.cpp_name} != {b.dtype.cpp_name}" if name == "mm" else
                           f"{name}: Expected self and other to have the same dtype, but got "
                           f"{a.dtype.name} != {b.dtype.name}")


@autocast_op("mm")
def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    if input._shape[1] != mat2._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input._shape[0]}x"
                           f"{input._shape[1]} and {mat2._shape[0]}x{mat2._shape[1]})")
    _check_dtypes(input, mat2, "mm")
    return call_op(MM, (input, mat2))


@autocast_op("bmm")
def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else
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


def _check_vectors(a, b):
    """at::dot's (and at::vdot's) checks, in their order."""
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{a.dtype.scalar_name} and {b.dtype.scalar_name}")
    if a._shape != b._shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._shape[0]}] and src "
                           f"[{b._shape[0]}] to have the same number of elements, but got "
                           f"{a._shape[0]} and {b._shape[0]} elements respectively")
    if a.dtype.name == "bool":
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")


def dot(input, tensor):
    """torch.dot: the dot product of two 1-D tensors of one dtype (complex: no conjugate).

    >>> import eagergrad as torch
    >>> torch.dot(torch.tensor([1j, 2]), torch.tensor([1j, 1]))
    tensor(1.+0.j)
    """
    _check_vectors(input, tensor)
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


@autocast_op("matmul")
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
        out = call_op(S.SQUEEZE4, (out,), ((0,), out._shape))
        out._version_counter.version += 1  # (squeeze_ is in place: the version moves)
        return out
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


def _prod(s):
    n = 1
    for x in s:
        n *= x
    return n


# ---- dist --------------------------------------------------------------------------------
def _dist_k(self, other, p, dtype):
    d = self.astype(dtype.np) - other.astype(dtype.np)
    return _vnorm_k(d, p, None, False, dtype.to_real())


def _norm_backward(grad, x, result, p):
    """torch's norm_backward for the full reduction of x = self - other."""
    return _vnorm_back(grad, x, result, p, None, False)


def _dist_other(grad, self, other, result, p):
    g = _norm_backward(grad, self - other, result, p)
    if g is None:  # torch negates the undefined gradient of p = 0 and fails
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor "
                           "in C++) for argument #0 'self'")
    return -g


DIST = defop("dist", _dist_k, inputs=("self", "other"), attrs=("p", "dtype"),
             self=lambda grad, self, other, result, p:
             _norm_backward(grad, self - other, result, p),
             other=_dist_other)


def dist(input, other, p=2):
    """torch.dist: the p-norm of input - other (broadcast), one DistBackward0 node.

    >>> import eagergrad as torch
    >>> torch.dist(torch.tensor([3.0, 0.0]), torch.tensor([0.0, 4.0]))
    tensor(5.)
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"dist(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if isinstance(p, str) or not isinstance(p, (int, float)):
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not "
                        f"{type(p).__name__}")
    dt = promote(input, other)
    if not dt.is_differentiable:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {dt.scalar_name} instead.")
    _broadcast_batch(input._shape, other._shape)
    return call_op(DIST, (input, other), (p, dt))


# ---- addmm and _trilinear (the kernels behind nn.functional.linear and bilinear) -----------
def _is_one(s):
    """torch's maybe_multiply test: a real or integral scalar equal to 1 (complex never)."""
    return not isinstance(s, complex) and s == 1


def _maybe_multiply(t, s):
    return t if _is_one(s) else t * s


def _addmm_k(self, mat1, mat2, beta, alpha, **sizes_and_strides):
    out = jnp.matmul(mat1, mat2, precision=_hi())
    if not _is_one(alpha):
        out = out * alpha
    if beta == 0:  # torch ignores self then: nan and inf in it are not propagated
        return out
    return out + (self if _is_one(beta) else self * beta)


def _column_major(sizes, strides):
    return strides[0] == 1 and strides[1] == sizes[0]


def _addmm_mat1(grad, mat2, alpha, mat1_sym_sizes, mat1_sym_strides):
    # torch's mm_mat1_backward: a column-major mat1 gets its gradient as a transpose
    if _column_major(mat1_sym_sizes, mat1_sym_strides):
        g = mat2.conj().mm(grad.t()).t()
    else:
        g = grad.mm(mat2.t().conj())
    return _maybe_multiply(g, _conj_scalar(alpha))


def _addmm_mat2(grad, mat1, alpha, mat2_sym_sizes, mat2_sym_strides):
    if _column_major(mat2_sym_sizes, mat2_sym_strides):
        g = grad.t().mm(mat1.conj()).t()
    else:
        g = mat1.t().conj().mm(grad)
    return _maybe_multiply(g, _conj_scalar(alpha))


# torch's node keeps each matrix's sizes and (when that matrix needs a gradient) its strides;
# here they are attributes, which the formulas read (the column-major branch)
ADDMM = defop("addmm", _addmm_k, inputs=("self", "mat1", "mat2"),
              attrs=("beta", "alpha", "mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes",
                     "mat2_sym_strides"),
              self=lambda grad, beta: _maybe_multiply(grad, _conj_scalar(beta)),
              mat1=_addmm_mat1, mat2=_addmm_mat2)


def _legacy_type(t):
    return f"torch.{t.dtype.scalar_name}Tensor"


def _check_expand(t, sizes):
    """expand(t, sizes)'s shape checks and messages, without expanding."""
    if len(sizes) < t.ndim:
        raise RuntimeError(f"expand({_legacy_type(t)}{{{list(t._shape)}}}, size={list(sizes)}): "
                           f"the number of sizes provided ({len(sizes)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({t.ndim})")
    lead = len(sizes) - t.ndim
    for i, cur in enumerate(t._shape):
        s = sizes[lead + i]
        if cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {lead + i}.  Target "
                               f"sizes: {list(sizes)}.  Tensor sizes: {list(t._shape)}")


def _scalar_arg(v, dt):
    """beta/alpha as torch converts the Scalar to the tensors' type."""
    if dt.is_complex:
        return v
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {dt.cpp_name} without "
                               "overflow")
        v = v.real
    if not dt.is_differentiable:  # integral tensors: the scalar truncated to an integer
        return int(v)
    return v


def _addmm_check(input, mat1, mat2):
    """torch's addmm checks (meta function order); the (n, p) shape of the result."""
    for name, t in (("self", input), ("mat1", mat1)):
        if t.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{t.dtype.scalar_name} and {mat2.dtype.scalar_name}")
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    (n, m), (m2, p) = mat1._shape, mat2._shape
    if m != m2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{m} and "
                           f"{m2}x{p})")
    if mat2.dtype.name == "bool":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    return n, p


@autocast_op("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """torch.addmm: beta * input + alpha * (mat1 @ mat2), input broadcast to the result's
    shape; one AddmmBackward0 node. With beta == 0 the input is ignored (its nan and inf
    too).

    >>> import eagergrad as torch
    >>> torch.addmm(torch.ones(2), torch.ones(3, 4), torch.ones(4, 2), beta=2)
    tensor([[6., 6.],
            [6., 6.],
            [6., 6.]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.addmm(out=...) yet")
    for name, t in (("input", input), ("mat1", mat1), ("mat2", mat2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"addmm(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    n, p = _addmm_check(input, mat1, mat2)
    _check_expand(input, (n, p))
    dt = mat2.dtype
    attrs = (beta if beta.__class__ is int and beta == 1 else _scalar_arg(beta, dt),
             alpha if alpha.__class__ is int and alpha == 1 else _scalar_arg(alpha, dt),
             mat1._shape, mat1.stride() if mat1.requires_grad else (),
             mat2._shape, mat2.stride() if mat2.requires_grad else ())
    return call_op(ADDMM, (input, mat1, mat2), attrs)


def addmm_(input, mat1, mat2, *, beta=1, alpha=1):
    """Tensor.addmm_: addmm written into input, which must have the result's shape."""
    n, p = _addmm_check(input, mat1, mat2)
    if input._shape != (n, p):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(input._shape)} and "
                           f"output tensor size {[n, p]} should match")
    return inplace(input, addmm, mat1, mat2, beta=beta, alpha=alpha)


def _trilinear_k(i1, i2, i3, expand1, expand2, expand3, sumdim):
    total = i1.ndim + len(expand1)
    letters = string.ascii_letters[:total]

    def sub(expand):
        return "".join(c for d, c in enumerate(letters) if d not in expand)
    out = "".join(c for d, c in enumerate(letters) if d not in sumdim)
    return jnp.einsum(f"{sub(expand1)},{sub(expand2)},{sub(expand3)}->{out}", i1, i2, i3,
                      precision=_hi())


TRILINEAR = defop(
    "_trilinear", _trilinear_k, inputs=("i1", "i2", "i3"),
    attrs=("expand1", "expand2", "expand3", "sumdim"),
    node="TrilinearBackward0",  # torch's _trilinear_backward (it conjugates nothing)
    i1=lambda grad, i2, i3, expand1, expand2, expand3, sumdim:
    _trilinear(grad, i2, i3, sumdim, expand2, expand3, expand1),
    i2=lambda grad, i1, i3, expand1, expand2, expand3, sumdim:
    _trilinear(i1, grad, i3, expand1, sumdim, expand3, expand2),
    i3=lambda grad, i1, i2, expand1, expand2, expand3, sumdim:
    _trilinear(i1, i2, grad, expand1, expand2, sumdim, expand3))


def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """torch._trilinear: i1, i2, i3 unsqueezed at their `expand` dims, multiplied, summed
    over `sumdim` (the kernel of nn.functional.bilinear). unroll_dim only picks torch's
    loop order: the result does not depend on it."""
    if any(t.dtype.is_complex for t in (i1, i2, i3)) and STATE.grad and any(
            t.requires_grad for t in (i1, i2, i3)):
        raise RuntimeError("_trilinear does not support automatic differentiation for "
                           "outputs with complex dtype.")
    total = i1.ndim + len(expand1)
    if i2.ndim + len(expand2) != total or i3.ndim + len(expand3) != total:
        raise RuntimeError("number of dimensions must match")
    if not 0 <= unroll_dim < total:
        raise RuntimeError(f"unroll_dim must be in [0,{total - 1}]")
    return call_op(TRILINEAR, (i1, i2, i3), (tuple(expand1), tuple(expand2), tuple(expand3),
                                             tuple(sumdim)))
