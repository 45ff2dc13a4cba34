"""Matrix products, distances, triangles, solves, decompositions and matrix functions.
matmul and einsum are composed from mm/bmm/mv/dot, mul, sum and views exactly as ATen
composes them (at::matmul; at::einsum with its sumproduct_pair), so their graphs
(MmBackward0, BmmBackward0, UnsafeViewBackward0, ...) are torch's; dist is one node,
DistBackward0, as in torch. tril/triu, linalg.solve(_triangular), linalg.qr, geqrf,
householder_product and matrix_exp are one node each with torch's derivative formulas
(FunctionsManual.cpp), their results in LAPACK's column-major layout as torch's.
(Longer than ~800 lines: the op table's module list names this one module for all of
linear algebra; a split would touch that shared list.)"""
import string

import jax
import jax.numpy as jnp

from .._storage import contiguous_strides
from ..engine.grad_mode import STATE
from ..tensor import Tensor, _make
from . import shape as S
from ._args import promote
from ._table import call_op, defop
from .inplace import inplace
from .pointwise import mul
from .reduce import _vnorm_back, _vnorm_k
from .reduce import sum as _sum

try:  # LAPACK's geqrf (not re-exported by jax.lax.linalg)
    from jax._src.lax.linalg import geqrf as _jax_geqrf
except ImportError:  # pragma: no cover
    _jax_geqrf = None

try:  # a dependency of jax; torch takes einsum's contraction order from it when present
    import opt_einsum as _opt_einsum
except ImportError:  # pragma: no cover
    _opt_einsum = None

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


# ---- einsum -----------------------------------------------------------------------------
_ELLIPSIS = 52  # subscripts 0..51 are the labels A-Z then a-z, as ATen numbers them


def _subscript(label):
    return ord(label) - 65 if label <= "Z" else ord(label) - 97 + 26


def _label(s):
    return chr(s + 65) if s < 26 else chr(s - 26 + 97)


def _sublist(n):
    if n is Ellipsis:
        return "..."
    if 0 <= n < 52:
        return _label(n)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                     "[0, 52)")


def einsum(*args):
    """torch.einsum(equation, *operands): Einstein summation, decomposed as ATen does
    (diagonal, permute, unsqueeze, sum, mul, bmm, views) so the graph is torch's. Also
    the list form einsum(eq, [a, b]) and the sublist form einsum(a, [0, 1], b, [1, 2]).
    With three or more operands the contraction order is opt_einsum's, as torch's.

    >>> import eagergrad as torch
    >>> a, b = torch.ones(2, 3), torch.ones(3, 4)
    >>> torch.einsum("ij,jk->ik", a, b).shape
    torch.Size([2, 4])
    """
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_sublist(s) for s in sub) for sub in args[1::2])
        if len(args) % 2:
            equation += "->" + "".join(_sublist(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    for _i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' (position 2) must be tuple of "
                            f"Tensors, not {type(t).__name__}")
    path = None
    if len(operands) > 2 and _opt_einsum is not None:
        pairs = _opt_einsum.contract_path(equation, *[t._shape for t in operands],
                                          shapes=True, optimize="auto")[0]
        path = [i for pair in pairs for i in pair]
    return _einsum(equation, operands, path)


def _parse_operands(lhs, n):
    """The subscripts of each operand (_ELLIPSIS for "...")."""
    labels = [[] for _ in range(n)]
    ell = False
    cur = 0
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ell:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an "
                                   "ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part "
                                   "of any ellipsis")
            i += 2
            labels[cur].append(_ELLIPSIS)
            ell = True
        elif c == ",":
            cur += 1
            if cur >= n:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            ell = False
        elif c != " ":
            if c not in string.ascii_letters:
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            labels[cur].append(_subscript(c))
        i += 1
    if cur != n - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return labels


def _einsum(equation, operands, path):
    """ATen's einsum: align every operand to (output dims, contraction dims), then
    contract pairs (left to right, or in `path`'s order) with _sumproduct_pair."""
    n = len(operands)
    if n == 0:
        raise RuntimeError("einsum(): must provide at least one operand")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_operands(lhs, n)

    count = [0] * 52
    ell_ndim = 0  # the most dimensions any ellipsis covers
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        nl = len(labels)
        has_ell = _ELLIPSIS in labels
        if has_ell:
            nl -= 1
            ell_ndim = max(ell_ndim, t.ndim - nl)
        for s in labels:
            if s != _ELLIPSIS:
                count[s] += 1
        if (nl > t.ndim) if has_ell else (nl != t.ndim):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nl}) "
                + ("is more than" if has_ell else "does not match") + " the number of "
                f"dimensions ({t.ndim}) for operand {i}"
                + ("" if has_ell else " and no ellipsis was given"))

    # each label's index in the aligned shape: output dims first, then contraction dims
    index = [-1] * 52
    pos = ell_at = 0
    ell_out = False
    if arrow < 0:  # implicit output: the ellipsis, then the labels seen once, sorted
        pos, ell_out = ell_ndim, True
        for s in range(52):
            if count[s] == 1:
                index[s] = pos
                pos += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_out:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) "
                                       "was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of "
                                       "any ellipsis (...)")
                i += 2
                ell_at, pos, ell_out = pos, pos + ell_ndim, True
            elif c != " ":
                if c not in string.ascii_letters:
                    raise RuntimeError(f"einsum(): invalid subscript given at index "
                                       f"{len(lhs) + 2 + i} in the equation string, "
                                       "subscripts must be in [a-zA-Z]")
                s = _subscript(c)
                if count[s] == 0 or index[s] != -1:
                    raise RuntimeError(
                        f"einsum(): output subscript {c}" +
                        (" appears more than once in the output" if index[s] != -1 else
                         " does not appear in the equation for any input operand"))
                index[s] = pos
                pos += 1
            i += 1
    out_ndim = pos
    if not ell_out:
        ell_at, pos = pos, pos + ell_ndim
    for s in range(52):
        if count[s] and index[s] == -1:
            index[s] = pos
            pos += 1

    # diagonals for repeated labels, unsqueezes for missing ones, then one permute each;
    # dim_counts: how many operands have a size != 1 at each aligned dim
    label_size = [1] * 52
    ell_sizes = [1] * ell_ndim
    dim_counts = [0] * pos
    ops = []
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        op = t
        perm = [-1] * pos
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                covered = t.ndim - (len(labels) - 1)
                for j in range(ell_ndim - covered, ell_ndim):
                    size = op._shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand "
                                f"{i}has size {size} which does not broadcast with previously "
                                f"seen ellipsis with size {ell_sizes[j]} for the respective "
                                "dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_at + j] += 1
                    perm[ell_at + j] = dim
                    dim += 1
            elif perm[index[s]] == -1:
                size = op._shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size "
                            f"{label_size[s]}")
                    label_size[s] = size
                    dim_counts[index[s]] += 1
                perm[index[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, where the label first appeared
                prev = perm[index[s]]
                if op._shape[dim] != op._shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op._shape[dim]} != {op._shape[prev]}")
                op = S.movedim(S.diagonal(op, 0, prev, dim), -1, prev)
        for k in range(pos):
            if perm[k] == -1:
                op = S.unsqueeze(op, dim)
                perm[k] = dim
                dim += 1
        ops.append(S.permute(op, perm))

    steps = iter(path or ())
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = next(steps), next(steps)
            if j < i:
                i, j = j, i
            if i == j or i < 0 or j >= len(ops):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j})" + (
                    ") cannot contract an operand with itself" if i == j else
                    ") operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        # contraction dims no other operand has: summed now, in the pair or alone
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_ndim, pos):
            if a._shape[d] != 1 and b._shape[d] != 1:
                if a._shape[d] != b._shape[d]:
                    raise RuntimeError("non-broadcast dimensions must match")
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a._shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b._shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = _sum(a, a_sum, True)
        if b_sum:
            b = _sum(b, b_sum, True)
        r = _sumproduct_pair(a, b, sum_dims)
        if path is not None:
            ops.append(r)
        else:
            ops.insert(0, r)

    if pos > out_ndim:
        if n > 1:  # the contraction dims are all 1 now
            return S.view(ops[0], ops[0]._shape[:out_ndim])
        return _sum(ops[0], tuple(range(out_ndim, pos)))
    return ops[0]


def _sumproduct_pair(left, right, sum_dims):
    """ATen's sumproduct_pair with keepdim: (left * right).sum(sum_dims, keepdim=True)
    for operands of equal rank, as a permute -> reshape -> bmm -> view -> permute."""
    if not sum_dims:
        return mul(left, right)
    nd = left.ndim
    lro, lo, ro = [], [], []  # output dims in left and right, left only, right only
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(nd):
        sl, sr = left._shape[i] != 1, right._shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left._shape[i] != right._shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left._shape[i]
            elif sl:
                left = _sum(left, i, True)
            elif sr:
                right = _sum(right, i, True)
        elif sl and sr:
            if left._shape[i] != right._shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left._shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._shape[i]
        else:
            ro.append(i)
            ro_size *= right._shape[i]
    if lo and ro and ro[-1] < lo[0]:  # bmm then writes the result in output order
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = tuple(left._shape[d] for d in lro + lo) + (1,) * len(sum_dims) + \
        tuple(right._shape[d] for d in ro)
    order = lro + lo + list(sum_dims) + ro
    operm = [0] * nd
    for k, d in enumerate(order):
        operm[d] = k
    left = S.reshape(S.permute(left, order), (lro_size, lo_size, sum_size))
    right = S.reshape(S.permute(right, lro + list(sum_dims) + ro + lo),
                      (lro_size, sum_size, ro_size))
    if left.dtype is not right.dtype:  # bmm's CPU kernel's message
        raise RuntimeError(f"expected scalar type {left.dtype.scalar_name} but found "
                           f"{right.dtype.scalar_name}")
    return S.permute(S.view(call_op(BMM, (left, right)), out_size), operm)


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


def _conj_scalar(s):
    return s.conjugate() if isinstance(s, complex) else s


def _addmm_k(self, mat1, mat2, beta, alpha, **sizes_and_strides):
    out = jnp.matmul(mat1, mat2, precision=_HI)
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
                      precision=_HI)


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


# ---- tril / triu ---------------------------------------------------------------------------
TRIL = defop("tril", lambda self, diagonal: jnp.tril(self, diagonal), attrs=("diagonal",),
             self=lambda grad, diagonal: tril(grad, diagonal))
TRIU = defop("triu", lambda self, diagonal: jnp.triu(self, diagonal), attrs=("diagonal",),
             self=lambda grad, diagonal: triu(grad, diagonal))


def tril(input, diagonal=0):
    """torch.tril: the lower triangle (on and below `diagonal`) of the last two dims.

    >>> import eagergrad as torch
    >>> torch.tril(torch.ones(2, 2))
    tensor([[1., 0.],
            [1., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return call_op(TRIL, (input,), (int(diagonal),))


def triu(input, diagonal=0):
    """torch.triu: the upper triangle (on and above `diagonal`) of the last two dims.

    >>> import eagergrad as torch
    >>> torch.triu(torch.ones(2, 2))
    tensor([[1., 1.],
            [0., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return call_op(TRIU, (input,), (int(diagonal),))


# ---- decompositions: helpers ---------------------------------------------------------------
def _mH(x):
    return S.conj(S.transpose(x, -2, -1))


def _square_check(A, name):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")


def _float_check(A, name):
    if not A.dtype.is_differentiable:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.scalar_name}")


def _lapack_layout(t):
    """t with LAPACK's layout, as torch's results have it: each matrix column-major
    (strides only; the array stays as it is)."""
    if t.ndim >= 2:
        m, n = t._shape[-2:]
        batch = contiguous_strides(t._shape[:-2] + (m * n,))[:-1]
        t._stride = batch + (1, m)
    return t


def _half_diagonal(x):
    """x with its diagonal (last two dims) halved: torch's real(diag).mul_(0.5) on a
    hermitian x, imag(diag).mul_(0.5) on a skew-hermitian one."""
    n = x._shape[-1]
    return x * _make(1.0 - 0.5 * jnp.eye(n, dtype=x.dtype.to_real().np))


# ---- linalg.solve_triangular ---------------------------------------------------------------
def _solve_tri_k(self, B, upper, left, unitriangular):
    batch = jnp.broadcast_shapes(self.shape[:-2], B.shape[:-2])
    a = jnp.broadcast_to(self, batch + self.shape[-2:])
    b = jnp.broadcast_to(B, batch + B.shape[-2:])
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=not upper,
                                           unit_diagonal=unitriangular)


def _solve_tri_back(grad, A, upper, left, unitriangular):
    """torch's linalg_solve_triangular_backward, gB = A^{-H} gX."""
    return solve_triangular(_mH(A), grad, upper=not upper, left=left,
                            unitriangular=unitriangular)


def _solve_tri_A(grad, self, result, upper, left, unitriangular):
    gB = _solve_tri_back(grad, self, upper, left, unitriangular)
    xh = _mH(result)
    gA = -matmul(gB, xh) if left else -matmul(xh, gB)
    return triu(gA, int(unitriangular)) if upper else tril(gA, -int(unitriangular))


LINALG_SOLVE_TRIANGULAR = defop(
    "linalg_solve_triangular", _solve_tri_k, inputs=("self", "B"),
    attrs=("upper", "left", "unitriangular"), self=_solve_tri_A,
    B=lambda grad, self, upper, left, unitriangular:
    _solve_tri_back(grad, self, upper, left, unitriangular))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """torch.linalg.solve_triangular: X with AX = B (XA = B if not left), A triangular;
    batch dims broadcast. One LinalgSolveTriangularBackward0 node.

    >>> import eagergrad as torch
    >>> A = torch.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> torch.linalg.solve_triangular(A, torch.tensor([[3.0], [4.0]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.solve_triangular(out=...) yet")
    _square_check(A, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    n = A._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({A._shape[-2]}x{n} and {B._shape[-2]}x"
                           f"{B._shape[-1]})")
    _broadcast_batch(A._shape[:-2], B._shape[:-2])
    dt = promote(A, B)
    if A.dtype is not dt:
        A = S.to(A, dt)
    if B.dtype is not dt:
        B = S.to(B, dt)
    return _lapack_layout(call_op(LINALG_SOLVE_TRIANGULAR, (A, B), (
        bool(upper), bool(left), bool(unitriangular))))


# ---- linalg.solve ----------------------------------------------------------------------------
def _solve_k(A, B, vector):
    if vector:
        B = B[..., None]
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    x = jnp.linalg.solve(jnp.broadcast_to(A, batch + A.shape[-2:]),
                         jnp.broadcast_to(B, batch + B.shape[-2:]))
    return x[..., 0] if vector else x


def _solve_B(grad, A, vector):
    return solve(_mH(A), grad)


def _solve_A(grad, A, result, vector):
    gB = solve(_mH(A), grad)
    if vector:
        return -matmul(S.unsqueeze(gB, -1), S.unsqueeze(S.conj(result), -2))
    return -matmul(gB, _mH(result))


# torch records linalg_solve_ex (its LU factors are saved; here A is: the values match)
LINALG_SOLVE = defop("linalg_solve", _solve_k, inputs=("A", "B"), attrs=("vector",),
                     node="LinalgSolveExBackward0", A=_solve_A, B=_solve_B)


def solve(A, B, *, left=True, out=None):
    """torch.linalg.solve: X with AX = B (B a batch of vectors or of matrices, batch
    dims broadcast). Singular A gives inf/nan here (torch raises LinAlgError: that
    check needs the values, which tracer-safe code cannot read).

    >>> import eagergrad as torch
    >>> torch.linalg.solve(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), torch.tensor([2.0, 2.0]))
    tensor([1.0000, 0.5000])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.linalg.solve(out=...) "
                                  "yet")
    if not left:
        return _mH(solve(_mH(A), _mH(B)))
    _square_check(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    _float_check(A, "linalg.solve")
    n = A._shape[-1]
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
    rows = B._shape[-1] if vector else B._shape[-2]
    if rows != n:
        cols = 1 if vector else B._shape[-1]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({n}x{n} and {rows}x{cols})")
    _broadcast_batch(A._shape[:-2], B._shape[:-1 if vector else -2])
    return _lapack_layout(call_op(LINALG_SOLVE, (A, B), (vector,)))


# ---- linalg.matrix_exp -----------------------------------------------------------------------
def _expm_k(self):
    return jax.scipy.linalg.expm(self)


def _matrix_exp_differential(self, grad):
    """torch's differential_analytic_matrix_function, adjoint: the top-right block of
    exp([[A^H, G], [0, A^H]])."""
    a = _mH(self)
    n = a._shape[-1]
    z = mul(a, 0)
    meta = S.cat([S.cat([a, grad], -1), S.cat([z, a], -1)], -2)
    return S.narrow(S.narrow(matrix_exp(meta), -2, 0, n), -1, n, n)


LINALG_MATRIX_EXP = defop("linalg_matrix_exp", _expm_k, self=_matrix_exp_differential)


def matrix_exp(A):
    """torch.linalg.matrix_exp (also torch.matrix_exp, Tensor.matrix_exp): the matrix
    exponential of each square matrix of A; one LinalgMatrixExpBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.matrix_exp(torch.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _square_check(A, "linalg.matrix_exp")
    _float_check(A, "linalg.matrix_exp")
    return call_op(LINALG_MATRIX_EXP, (A,))


# ---- linalg.qr -------------------------------------------------------------------------------
def _qr_k(A, mode):
    if mode == "r":
        return jnp.zeros((0,), A.dtype), jnp.linalg.qr(A, mode="r")
    return jnp.linalg.qr(A, mode=mode)


def _qr_back(grads, Q, R, mode):
    """torch's linalg_qr_backward."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    m, n = Q._shape[-2], R._shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    gQ, gR = grads
    gA = matmul(gR, _mH(R)) - matmul(_mH(Q), gQ)
    if m >= n:
        x = triu(gA)
        gA = matmul(Q, _half_diagonal(x + _mH(x))) + gQ  # Q syminvadj(triu(gA)) + gQ
        return solve_triangular(_mH(R), gA, upper=False, left=False)
    x = -gA
    gA = matmul(Q, _half_diagonal(tril(x - _mH(x))))  # Q trilImInvAdjSkew(-gA)
    gA = solve_triangular(_mH(S.narrow(R, -1, 0, m)), gA, upper=False, left=False)
    zeros = mul(S.narrow(R, -1, m, n - m), 0)
    return S.cat([gA, zeros], -1) + matmul(Q, gR)


LINALG_QR = defop("linalg_qr", _qr_k, inputs=("A",), attrs=("mode",), outputs=("Q", "R"),
                  A=_qr_back)


def _return_type(name, fields):
    class R(tuple):
        __slots__ = ()

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"eagergrad.return_types.{name}(\n{body})"
    for i, f in enumerate(fields):
        setattr(R, f, property(lambda self, i=i: self[i]))
    R.__name__ = R.__qualname__ = name
    R.__module__ = "eagergrad.return_types"
    return R


_LinalgQr = _return_type("linalg_qr", ("Q", "R"))
_Qr = _return_type("qr", ("Q", "R"))
_Geqrf = _return_type("geqrf", ("a", "tau"))


def _linalg_qr(A, mode="reduced"):
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _float_check(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    Q, R = call_op(LINALG_QR, (A,), (mode,))
    return _lapack_layout(Q), _lapack_layout(R)


def qr(input, some=True, *, out=None):
    """torch.qr (deprecated in torch for torch.linalg.qr) and Tensor.qr: the reduced
    (some=True) or complete QR decomposition, torch.return_types.qr(Q, R).

    >>> import eagergrad as torch
    >>> torch.qr(torch.tensor([[3.0], [4.0]])).R
    tensor([[-5.]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.qr(out=...) yet")
    return _Qr(_linalg_qr(input, "reduced" if some else "complete"))


# ---- geqrf / householder_product -------------------------------------------------------------
def _geqrf_no_derivative(grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


GEQRF = defop("geqrf", lambda self: _jax_geqrf(self), outputs=("a", "tau"),
              self=_geqrf_no_derivative)


def geqrf(input, *, out=None):
    """torch.geqrf: LAPACK's geqrf, the QR decomposition as Householder reflectors below
    the diagonal of `a` (R on and above it) and their scalars `tau`. Not differentiable
    (as in torch, backward raises NotImplementedError).

    >>> import eagergrad as torch
    >>> torch.geqrf(torch.tensor([[3.0], [4.0]])).a
    tensor([[-5.0000],
            [ 0.5000]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.geqrf(out=...) yet")
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _float_check(input, "torch.geqrf")
    a, tau = call_op(GEQRF, (input,))
    return _Geqrf((_lapack_layout(a), tau))


def _hh_transform(u, v, t, K, left):
    """(I - t u v^H) K if left else K (I - t u v^H); u, v: (..., m, 1), t: (..., 1)."""
    t = S.unsqueeze(t, -1)
    if left:
        return K - mul(t * u, matmul(_mH(v), K))
    return K - mul(matmul(K, t * u), _mH(v))


def _householder_back(grad, result, input, tau):
    """torch's householder_product_backward (its out-of-place form): (input_grad,
    tau_grad)."""
    n = input._shape[-1]
    k = tau._shape[-1]
    if k == 0 or input.numel() == 0:  # torch: undefined gradients
        return None, None
    ones = _make(jnp.eye(input._shape[-2], n, dtype=input.dtype.to_real().np))
    v = tril(input, -1) + ones  # the reflectors, with their implicit 1 on the diagonal
    vk = S.narrow(v, -1, 0, k)
    sigma = tau / (tau * _sum(vk * S.conj(vk), -2) - 1.0)
    K = matmul(result, _mH(grad))
    col = [S.narrow(v, -1, i, 1) for i in range(k)]
    t = [S.narrow(tau, -1, i, 1) for i in range(k)]
    K = _hh_transform(col[0], col[0], S.narrow(sigma, -1, 0, 1), K, True)
    v_grads, tau_grads = [], []
    for i in range(k):
        vi, ti = col[i], t[i]
        vHK = matmul(_mH(vi), K)
        Kv = matmul(K, vi)
        tu = S.unsqueeze(ti, -1)
        v_grads.append(S.unsqueeze(S.squeeze(S.conj(-tu * vHK), -2) -
                                   S.squeeze(tu * Kv, -1), -1))
        tau_grads.append(S.squeeze(S.conj(-matmul(vHK, vi)), -1))
        if i != k - 1:
            K = _hh_transform(col[i + 1], col[i + 1], S.narrow(sigma, -1, i + 1, 1), K, True)
            K = _hh_transform(vi, vi, ti, K, False)
    if k < n:
        v_grads.append(mul(S.narrow(input, -1, k, n - k), 0))
    return tril(S.cat(v_grads, -1), -1), S.cat(tau_grads, -1)


def _householder_k(input, tau):
    """H_1 ... H_k applied to the first n columns of the identity, H_i = I - tau_i v_i
    v_i^H, as a scan (LAPACK's orgqr, jax.lax.linalg.householder_product, has no jax
    derivative; this composition has, for the function transforms)."""
    m, n = input.shape[-2:]
    k = tau.shape[-1]
    v = jnp.tril(input, -1) + jnp.eye(m, n, dtype=input.dtype)
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=input.dtype), input.shape)

    def step(q, vt):
        vi, ti = vt
        w = jnp.einsum("...m,...mn->...n", jnp.conj(vi), q, precision=_HI)
        return q - (ti[..., None] * vi)[..., :, None] * w[..., None, :], None
    xs = (jnp.moveaxis(v[..., :k], -1, 0)[::-1], jnp.moveaxis(tau, -1, 0)[::-1])
    return jax.lax.scan(step, q, xs)[0]


LINALG_HOUSEHOLDER_PRODUCT = defop(
    "linalg_householder_product", _householder_k, inputs=("input", "tau"),
    input=lambda grad, result, input, tau: _householder_back(grad, result, input, tau)[0],
    tau=lambda grad, result, input, tau: _householder_back(grad, result, input, tau)[1])


def householder_product(input, tau, *, out=None):
    """torch.linalg.householder_product (torch.orgqr): the first n columns of the product
    of the Householder reflectors I - tau_i v_i v_i^H stored below the diagonal of input.

    >>> import eagergrad as torch
    >>> a = torch.geqrf(torch.tensor([[3.0], [4.0]]))
    >>> torch.linalg.householder_product(a.a, a.tau)
    tensor([[-0.6000],
            [-0.8000]])
    """
    if out is not None:
        raise NotImplementedError("eagergrad does not implement "
                                  "torch.linalg.householder_product(out=...) yet")
    name = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input._shape[-2] < input._shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim and input._shape[-1] < tau._shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if tau._shape[:-1] != input._shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._shape[:-1])}")
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype.scalar_name} does not match input "
                           f"dtype {input.dtype.scalar_name}")
    _float_check(input, name)
    return _lapack_layout(call_op(LINALG_HOUSEHOLDER_PRODUCT, (input, tau)))


orgqr = householder_product
