"""einsum, composed from diagonal, permute, sum, mul, bmm and views exactly as ATen
composes it (at::einsum with its sumproduct_pair), so its graph is torch's."""
import string


from ..tensor import Tensor
from . import shape as S
from .._mode import AUTOCAST
from ._autocast import autocast_inputs
from ._table import call_op
from .pointwise import mul
from .reduce import sum as _sum
from .linalg import BMM


try:  # a dependency of jax; torch takes einsum's contraction order from it when present
    import opt_einsum as _opt_einsum
except ImportError:  # pragma: no cover
    _opt_einsum = None


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
    if AUTOCAST.n:  # (torch's einsum is composite: its bmm is autocast)
        left, right = autocast_inputs("bmm", left, right)
    if left.dtype is not right.dtype:  # bmm's CPU kernel's message
        raise RuntimeError(f"expected scalar type {left.dtype.scalar_name} but found "
                           f"{right.dtype.scalar_name}")
    return S.permute(S.view(call_op(BMM, (left, right)), out_size), operm)
