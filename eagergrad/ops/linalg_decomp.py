"""torch.linalg's decompositions, one node each with torch's formulas
(FunctionsManual.cpp): svd/svdvals (and torch.svd), eigh/eigvalsh, eig/eigvals,
cholesky(_ex) (and torch.cholesky), inv(_ex), det, slogdet (and torch.logdet). The LU family
(lu_factor, lu_solve, solve) and the error checks on LAPACK's info are in decomp.py; the
solvers built on decompositions (lstsq, pinv, lu, triangular_solve, cholesky_solve, ...) in
linalg_solvers.py; the functions ATen composes (matrix_norm, cond, matrix_power, ...) in
linalg_compose.py.

NOTE [gauge checks]: torch's svd, eig and eigh backwards raise when a complex loss depends
on the arbitrary phase of the singular vectors / eigenvectors (a check on values: an
allclose). Here it runs on the host, in the node's `apply`, on the concrete gradients and
saved outputs (the nodes never run inside a fused segment, fuse=False), before the
formula; it is skipped when the values are jax tracers (torch skips it for functorch's
wrapped tensors too) and when a saved tensor has unpack hooks (reading it would call them
once more). The same `apply` tells the formula which output gradients torch would have as
undefined (a formula sees zeros there): svd_backward and linalg_eig_backward take other
branches then (svdvals, eigvals), which stay finite at repeated singular values.
"""
import functools
import math
import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ..engine.grad_mode import STATE
from .._mode import FWD
from ..tensor import _make
from . import shape as SH
from ._autocast import autocast_op
from ._table import call_op, defop
from .decomp import (_check_errors, _eye_like, _float_check, _lapack_check, _lapack_layout,
                     _lu_factor_k, _lu_solve_k, _mH, _return_type,
                     _square_check, linalg_lu_solve, linalg_solve, solve_triangular, tril)
from .linalg import matmul
from .pointwise import where
from .reduce import prod

# ---- helpers -------------------------------------------------------------------------------
def _diagonal(x):
    return SH.diagonal(x, 0, -2, -1)


def _diag_embed(v):
    n = v._shape[-1]
    return SH.unsqueeze(v, -1) * _make(jnp.eye(n, dtype=v.dtype.to_real().np))


def _set_diagonal(x, v):
    """x with its diagonal replaced by v (torch's x.diagonal().copy_(v))."""
    n = x._shape[-1]
    return x * _make(1.0 - jnp.eye(n, dtype=x.dtype.to_real().np)) + _diag_embed(v)


def _fill_diagonal_one(E):
    """E (with a zero diagonal) with ones on it: torch's E.diagonal().fill_(1)."""
    return E + _make(jnp.eye(E._shape[-1], dtype=E.dtype.to_real().np))


def _low_precision_check(A, name):
    _float_check(A, name)
    if A.dtype.itemsize < 4 and not A.dtype.is_complex or A.dtype.name == "complex32":
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{A.dtype.scalar_name}")


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"eagergrad does not implement {name}(out=...) yet")


def _needs_grad(A):
    """torch's _may_require_fw_or_bw_grad."""
    return (STATE.grad and A._requires_grad) or FWD.active


_WARNED = set()


def _warn_once(key, message):
    """TORCH_WARN_ONCE: a UserWarning, the first time only."""
    from .._settings import warn_once
    if warn_once(_WARNED, key):
        warnings.warn(message, UserWarning, stacklevel=3)


# ---- NOTE [gauge checks]: the nodes' apply --------------------------------------------------
_DEFINED = threading.local()


def _defined(n):
    """Which of the node's n output gradients torch would have defined (all, unknown)."""
    d = getattr(_DEFINED, "value", None)
    return d if d is not None and len(d) == n else (True,) * n


def _saved_value(node, name):
    """A saved output's array, or None when reading it would do more than read (unpack
    hooks) or fail (freed, modified: the formula raises then)."""
    s = node._saved.get(name)
    if s is None or s._freed or s._unpack is not None or \
            s._version_counter.version != s._version:
        return None
    return s._out_array() if s._is_output else s._t._value


def _concrete(*arrays):
    return all(a is not None and not isinstance(a, jax.core.Tracer) for a in arrays)


def _checked_apply(op, check):
    base = op.Node.apply

    def apply(self, grads):
        if any(g is not None for g in grads):
            check(self, grads)
        prev = getattr(_DEFINED, "value", None)
        _DEFINED.value = tuple(g is not None for g in grads)
        try:
            return base(self, grads)
        finally:
            _DEFINED.value = prev
    op.Node.apply = apply


def _imag_diag(a):
    return np.imag(np.diagonal(a, axis1=-2, axis2=-1))


def _mh(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _svd_gauge(node, grads):
    gU, _, gVh = grads
    U, Vh = _saved_value(node, "U"), _saved_value(node, "Vh")
    if (gU is None and gVh is None) or U is None or Vh is None or \
            not np.iscomplexobj(U) or \
            not _concrete(U, Vh, *(g._value for g in (gU, gVh) if g is not None)):
        return
    k = min(U.shape[-2], Vh.shape[-1])
    U, Vh = np.asarray(U)[..., :k], np.asarray(Vh)[..., :k, :]
    zero = np.zeros(U.shape[:-2] + (k,))
    a = zero
    if gU is not None:
        x = _mh(U) @ np.asarray(gU._value)[..., :k]
        a = _imag_diag(x - _mh(x))
    b = zero
    if gVh is not None:
        x = Vh @ _mh(np.asarray(gVh._value)[..., :k, :])
        b = _imag_diag(x - _mh(x))
    if not np.allclose(a, -b, rtol=1e-2, atol=1e-2):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this phase term, making it ill-defined.")


def _eig_gauge(name):
    def check(node, grads):
        gV = grads[1]
        V = _saved_value(node, "eigenvectors")
        if gV is None or V is None or not np.iscomplexobj(V) or not _concrete(V, gV._value):
            return
        d = _imag_diag(_mh(np.asarray(V)) @ np.asarray(gV._value))
        if not np.allclose(d, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(f"{name}: The eigenvectors in the complex case are specified "
                               "up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this quantity, so it is ill-defined.")
    return check


# ---- linalg.svd / svdvals ------------------------------------------------------------------
def _svd_k(A, full_matrices, compute_uv):
    if not compute_uv:
        empty = jnp.zeros((0,), A.dtype)
        return empty, jnp.linalg.svd(A, compute_uv=False), empty
    return _svd_uv(A, full_matrices and A.shape[-1] != A.shape[-2])


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _svd_uv(A, full):
    """U, S, Vh with torch's tangents (jax has no jvp for the full SVD of a non-square A, and
    gives a complex U the whole phase of each singular pair where torch splits it between
    U and V): those of the reduced SVD at the first min(m, n) columns of U (rows of Vh),
    zeros for the rest (any basis of the complement is as good)."""
    return tuple(jnp.linalg.svd(A, full_matrices=full))


@_svd_uv.defjvp
def _svd_uv_jvp(full, primals, tangents):
    (A,), (dA,) = primals, tangents
    U, S, Vh = _svd_uv(A, full)
    m, n = A.shape[-2:]
    k = S.shape[-1]

    def mH(x):
        return jnp.conj(jnp.swapaxes(x, -1, -2))
    U_k, Vh_k = U[..., :, :k], Vh[..., :k, :]
    V_k = mH(Vh_k)
    dP = mH(U_k) @ dA @ V_k  # the tangent in the singular bases
    dS = jnp.real(jnp.diagonal(dP, axis1=-2, axis2=-1))
    s_row = S[..., None, :].astype(A.dtype)
    eye = jnp.eye(k, dtype=bool)
    diff = S[..., None, :] ** 2 - S[..., :, None] ** 2  # s_j^2 - s_i^2
    F = jnp.where(eye, 0, 1 / jnp.where(eye, 1, diff)).astype(A.dtype)
    s_inv = jnp.where(S == 0, 0, 1 / jnp.where(S == 0, 1, S))
    # i Im(dP_ii) / (2 s_i): half of the phase to U, the other half to V
    phase = 0.25 * (dP - mH(dP)) * jnp.where(eye, s_inv[..., None, :], 0).astype(A.dtype)
    dU = U_k @ (F * (dP * s_row + mH(dP * s_row)) + phase)
    dV = V_k @ (F * (mH(s_row) * dP + mH(mH(s_row) * dP)) - phase)
    if m > k:
        dAV = dA @ V_k
        dU = dU + (dAV - U_k @ (mH(U_k) @ dAV)) / s_row
    if n > k:
        dAhU = mH(dA) @ U_k
        dV = dV + (dAhU - V_k @ (Vh_k @ dAhU)) / s_row
    dVh = mH(dV)
    if full and m > k:
        dU = jnp.concatenate([dU, jnp.zeros(dU.shape[:-1] + (m - k,), dU.dtype)], -1)
    if full and n > k:
        dVh = jnp.concatenate([dVh, jnp.zeros(dVh.shape[:-2] + (n - k, n), dVh.dtype)], -2)
    return (U, S, Vh), (dU, dS, dVh)


def _svd_backward(gU, gS, gVh, U, Sv, Vh):
    """torch's svd_backward (None: an undefined gradient)."""
    if gU is None and gS is None and gVh is None:
        return None
    m, n = U._shape[-2], Vh._shape[-1]
    if gU is None and gVh is None:  # svdvals: U diag(gS) Vh
        return matmul(U, SH.unsqueeze(gS, -1) * Vh) if m >= n else \
            matmul(U * SH.unsqueeze(gS, -2), Vh)
    is_complex = U.dtype.is_complex
    UhgU = VhgV = None
    if gU is not None:
        x = matmul(_mH(U), gU)
        UhgU = x - _mH(x)
    if gVh is not None:
        x = matmul(Vh, _mH(gVh))
        VhgV = x - _mH(x)
    S2 = Sv * Sv
    E = _fill_diagonal_one(SH.unsqueeze(S2, -2) - SH.unsqueeze(S2, -1))
    if gU is not None:
        ret = (UhgU * SH.unsqueeze(Sv, -2) + SH.unsqueeze(Sv, -1) * VhgV) / E \
            if gVh is not None else (UhgU / E) * SH.unsqueeze(Sv, -2)
    else:
        ret = SH.unsqueeze(Sv, -1) * (VhgV / E)
    if gS is not None:
        ret = ret + _diag_embed(gS)
    if is_complex and gU is not None and gVh is not None:
        ret = ret + _diag_embed(_diagonal(UhgU) / (2.0 * Sv))
    if m > n and gU is not None:
        gA = matmul(U, ret)
        gUSinv = gU / SH.unsqueeze(Sv, -2)
        gA = gA + gUSinv - matmul(U, matmul(_mH(U), gUSinv))
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = matmul(ret, Vh)
        SinvgVh = gVh / SH.unsqueeze(Sv, -1)
        gA = gA + SinvgVh - matmul(matmul(SinvgVh, _mH(Vh)), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(ret, Vh)) if m >= n else matmul(matmul(U, ret), Vh)


def _svd_A(grads, U, S, Vh, full_matrices):
    dU, dS, dVh = _defined(3)
    gU, gS, gVh = grads
    if full_matrices:  # the first k columns of U (rows of Vh) only, as derivatives.yaml
        k = S._shape[-1]
        gU, U = SH.narrow(gU, -1, 0, k), SH.narrow(U, -1, 0, k)
        gVh, Vh = SH.narrow(gVh, -2, 0, k), SH.narrow(Vh, -2, 0, k)
    return _svd_backward(gU if dU else None, gS if dS else None, gVh if dVh else None,
                         U, S, Vh)


LINALG_SVD = defop(
    "_linalg_svd", _svd_k, inputs=("A",), attrs=("full_matrices", "compute_uv"),
    outputs=("U", "S", "Vh"), fuse=False, A=_svd_A,
    saved_meta=(("S_sym_argsize_minus_1",),
                lambda ts, needs: {"S_sym_argsize_minus_1": min(ts[0]._shape[-2:])}))
_checked_apply(LINALG_SVD, _svd_gauge)

_LinalgSvd = _return_type("linalg_svd", ("U", "S", "Vh"))
_Svd = _return_type("svd", ("U", "S", "V"))


def _svd_checks(A):
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _float_check(A, "linalg.svd")
    _lapack_check(A, "linalg_svd_cpu")


@autocast_op("linalg_svd")
def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """torch.linalg.svd: A = U diag(S) Vh (U, Vh column-major as LAPACK returns them,
    S descending); one LinalgSvdBackward0 node. A complex loss depending on the phase of
    the singular vectors raises in backward as in torch (NOTE [gauge checks]).

    >>> import eagergrad as torch
    >>> torch.linalg.svd(torch.tensor([[3.0, 0.0], [0.0, -4.0]])).S
    tensor([4., 3.])
    """
    _no_out(out, "torch.linalg.svd")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    _svd_checks(A)
    U, S, Vh = call_op(LINALG_SVD, (A,), (bool(full_matrices), True))
    return _LinalgSvd((_lapack_layout(U), S, _lapack_layout(Vh)))


@autocast_op("linalg_svdvals")
def linalg_svdvals(A, *, driver=None, out=None):
    """torch.linalg.svdvals: the singular values, descending (U and Vh are computed only
    when A needs a gradient, as in torch: the node is LinalgSvdBackward0).

    >>> import eagergrad as torch
    >>> torch.linalg.svdvals(torch.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor([4., 3.])
    """
    _no_out(out, "torch.linalg.svdvals")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    _svd_checks(A)
    return call_op(LINALG_SVD, (A,), (False, _needs_grad(A)))[1]


@autocast_op("svd")
def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd (Tensor.svd): (U, S, V) with V = Vh^H, a view (reduced when some); with
    compute_uv=False U and V are zeros of the complete shapes, as in torch.

    >>> import eagergrad as torch
    >>> torch.svd(torch.tensor([[3.0, 0.0], [0.0, -4.0]])).S
    tensor([4., 3.])
    """
    from ..creation import zeros
    _no_out(out, "torch.svd")
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead")
    if compute_uv:
        U, S, Vh = linalg_svd(input, full_matrices=not some)
    else:
        S = linalg_svdvals(input)
        m, n = input._shape[-2:]
        batch = input._shape[:-2]
        U = zeros(batch + (m, m), dtype=input.dtype)
        Vh = zeros(batch + (n, n), dtype=input.dtype)
    return _Svd((U, S, SH.adjoint(Vh)))


# ---- linalg.eigh / eigvalsh / eig / eigvals ---------------------------------------------------
def _eig_backward(gL, gV, L, V, hermitian):
    """torch's linalg_eig_backward (None: an undefined gradient)."""
    if gL is None and gV is None:
        return None
    if gV is None:  # eigvals(h): V^{-H} diag(gL) V^H
        if hermitian:
            return matmul(V * SH.unsqueeze(gL, -2), _mH(V))
        return linalg_solve(_mH(V), SH.unsqueeze(gL, -1) * _mH(V))
    VhgV = matmul(_mH(V), gV)
    if hermitian:
        VhgV = 0.5 * (VhgV - _mH(VhgV))
    else:
        VhgV = VhgV - matmul(_mH(V), V * SH.unsqueeze(SH.real(_diagonal(VhgV)), -2))
    Lc = SH.conj(L)
    ret = VhgV / _fill_diagonal_one(SH.unsqueeze(Lc, -2) - SH.unsqueeze(Lc, -1))
    if gL is not None:
        ret = _set_diagonal(ret, gL)
    if hermitian:
        return matmul(V, matmul(ret, _mH(V)))
    return linalg_solve(_mH(V), matmul(ret, _mH(V)))


def _eig_A(grads, eigenvalues, eigenvectors, hermitian):
    dL, dV = _defined(2)
    return _eig_backward(grads[0] if dL else None, grads[1] if dV else None, eigenvalues,
                         eigenvectors, hermitian)


def _eigh_k(A, UPLO, compute_v):
    v, w = jax.lax.linalg.eigh(A, lower=UPLO == "L", symmetrize_input=False)
    return (w, v) if compute_v else (w, jnp.zeros((0,), A.dtype))


LINALG_EIGH = defop(
    "_linalg_eigh", _eigh_k, inputs=("A",), attrs=("UPLO", "compute_v"),
    outputs=("eigenvalues", "eigenvectors"), fuse=False,
    A=lambda grads, eigenvalues, eigenvectors: _eig_A(grads, eigenvalues, eigenvectors, True))
_checked_apply(LINALG_EIGH, _eig_gauge("linalg_eigh_backward"))


def _eig_k(self):
    w, v = jax.lax.linalg.eig(self, compute_left_eigenvectors=False,
                              enable_eigvec_derivs=True)
    return w, v


LINALG_EIG = defop(
    "linalg_eig", _eig_k, outputs=("eigenvalues", "eigenvectors"), fuse=False,
    self=lambda grads, eigenvalues, eigenvectors:
    _eig_A(grads, eigenvalues, eigenvectors, False))
_checked_apply(LINALG_EIG, _eig_gauge("linalg_eig_backward"))

_LinalgEigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
_LinalgEig = _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))


def _eigh_checks(A, UPLO):
    _square_check(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if not A.dtype.is_differentiable:
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{A.dtype.scalar_name}'")
    _lapack_check(A, "linalg_eigh_cpu")


@autocast_op("linalg_eigh")
def linalg_eigh(A, UPLO="L", *, out=None):
    """torch.linalg.eigh: eigenvalues (ascending) and eigenvectors of a Hermitian matrix,
    from its lower (UPLO="L") or upper triangle; one LinalgEighBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.eigh(torch.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    tensor([1., 3.])
    """
    _no_out(out, "torch.linalg.eigh")
    _eigh_checks(A, UPLO)
    w, v = call_op(LINALG_EIGH, (A,), (UPLO, True))
    return _LinalgEigh((w, _lapack_layout(v)))


@autocast_op("linalg_eigvalsh")
def linalg_eigvalsh(A, UPLO="L", *, out=None):
    """torch.linalg.eigvalsh: the eigenvalues of a Hermitian matrix, ascending.

    >>> import eagergrad as torch
    >>> torch.linalg.eigvalsh(torch.tensor([[2.0, 1.0], [1.0, 2.0]]))
    tensor([1., 3.])
    """
    _no_out(out, "torch.linalg.eigvalsh")
    _eigh_checks(A, UPLO)
    return call_op(LINALG_EIGH, (A,), (UPLO, _needs_grad(A)))[0]


def _eig_checks(A):
    _square_check(A, "linalg.eig")
    if not A.dtype.is_differentiable:
        raise RuntimeError(f"Unknown Complex ScalarType for {A.dtype.scalar_name}")
    _lapack_check(A, "linalg_eig_out_cpu")


@autocast_op("linalg_eig")
def linalg_eig(A, *, out=None):
    """torch.linalg.eig: complex eigenvalues and unit-norm eigenvectors (LAPACK's geev);
    one LinalgEigBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.eig(torch.tensor([[2.0, 0.0], [0.0, 3.0]])).eigenvalues
    tensor([2.+0.j, 3.+0.j])
    """
    _no_out(out, "torch.linalg.eig")
    _eig_checks(A)
    w, v = call_op(LINALG_EIG, (A,))
    return _LinalgEig((w, _lapack_layout(v)))


@autocast_op("linalg_eigvals")
def linalg_eigvals(A, *, out=None):
    """torch.linalg.eigvals: the complex eigenvalues (LinalgEigBackward0).

    >>> import eagergrad as torch
    >>> torch.linalg.eigvals(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor([2.+0.j, 3.+0.j])
    """
    _no_out(out, "torch.linalg.eigvals")
    _eig_checks(A)
    return call_op(LINALG_EIG, (A,))[0]


# ---- linalg.cholesky(_ex), torch.cholesky ----------------------------------------------------
def _potf2(a):
    """LAPACK's unblocked potf2 (lower), stopping at the first non-positive pivot: the
    partial factor it leaves and info (1-based order of the failing minor, 0 if none)."""
    n = a.shape[-1]
    idx = jnp.arange(n)

    def body(j, carry):
        L, info = carry
        ok = info == 0
        row = jnp.where(idx < j, L[..., j, :], 0)
        prev = jnp.where(idx < j, L, 0)
        ajj = jnp.real(L[..., j, j]) - jnp.sum(jnp.real(row * jnp.conj(row)), -1)
        bad = ok & ~(ajj > 0)
        d = jnp.sqrt(jnp.where(bad, 1, ajj))
        col = L[..., :, j] - jnp.einsum("...ik,...k->...i", prev, jnp.conj(row))
        col = jnp.where(idx > j, col / d[..., None].astype(L.dtype), L[..., :, j])
        col = jnp.where(idx == j, jnp.where(bad, ajj, d)[..., None].astype(L.dtype), col)
        keep = jnp.where((bad[..., None] & (idx == j)), col, L[..., :, j])
        L = L.at[..., :, j].set(jnp.where((ok & ~bad)[..., None], col, keep))
        return L, jnp.where(bad, j + 1, info).astype(jnp.int32)
    return jax.lax.fori_loop(0, n, body, (jnp.tril(a), jnp.zeros(a.shape[:-2], jnp.int32)))


def _cholesky_k(A, upper):
    """(factor, info) as LAPACK's potrf: where the matrix is not positive-definite, the
    partial factor potf2 leaves and the order of the failing minor."""
    a = jnp.conj(jnp.swapaxes(A, -1, -2)) if upper else A
    if a.shape[-1] == 0:  # (empty matrices: nothing to factor)
        return a, jnp.zeros(a.shape[:-2], jnp.int32)
    L = jax.lax.linalg.cholesky(a, symmetrize_input=False)
    good = jnp.all(jnp.isfinite(L))
    L, info = jax.lax.cond(good, lambda: (L, jnp.zeros(a.shape[:-2], jnp.int32)),
                           lambda: _potf2(a))
    return (jnp.conj(jnp.swapaxes(L, -1, -2)) if upper else L), info


def _cholesky_back(grad, L, upper):
    """torch's cholesky_backward."""
    L_ = _mH(L) if upper else L
    gL = _mH(grad) if upper else grad
    gA = tril(matmul(_mH(L_), gL))
    gA = 0.5 * (gA + _mH(tril(gA, -1)))
    gA = solve_triangular(_mH(L_), gA, upper=True, left=True)
    return solve_triangular(L_, gA, upper=False, left=False)


LINALG_CHOLESKY_EX = defop(
    "linalg_cholesky_ex", lambda self, upper, check_errors: _cholesky_k(self, upper),
    attrs=("upper", "check_errors"), outputs=("L", "info"), nondiff=(1,),
    self=lambda grad, L, upper: _cholesky_back(grad, L, upper))
CHOLESKY = defop("cholesky", _cholesky_k, attrs=("upper",), outputs=("result", "info"),
                 nondiff=(1,), self=lambda grad, result, upper:
                 _cholesky_back(grad, result, upper))

_LinalgCholeskyEx = _return_type("linalg_cholesky_ex", ("L", "info"))


@autocast_op("linalg_cholesky_ex")
def linalg_cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """torch.linalg.cholesky_ex: (L, info), info > 0 the order of the leading minor that
    is not positive-definite (L then holds LAPACK's partial factor).

    >>> import eagergrad as torch
    >>> torch.linalg.cholesky_ex(torch.tensor([[1.0, 2.0], [2.0, 1.0]])).info
    tensor(2, dtype=torch.int32)
    """
    _no_out(out, "torch.linalg.cholesky_ex")
    _square_check(A, "linalg.cholesky")
    _float_check(A, "linalg.cholesky")
    _lapack_check(A, "cholesky_cpu")
    L, info = call_op(LINALG_CHOLESKY_EX, (A,), (bool(upper), bool(check_errors)))
    if check_errors:
        _check_errors(info, "linalg.cholesky_ex", A.ndim == 2)
    return _LinalgCholeskyEx((_lapack_layout(L), info))


@autocast_op("linalg_cholesky")
def linalg_cholesky(A, *, upper=False, out=None):
    """torch.linalg.cholesky: L with A = L L^H (U with A = U^H U if upper), from A's lower
    (upper) triangle; not positive-definite raises LinAlgError (see cholesky_ex).

    >>> import eagergrad as torch
    >>> torch.linalg.cholesky(torch.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    _no_out(out, "torch.linalg.cholesky")
    L, info = linalg_cholesky_ex(A, upper=upper)
    _check_errors(info, "linalg.cholesky", A.ndim == 2)
    return L


@autocast_op("cholesky")
def cholesky(input, upper=False, *, out=None):
    """torch.cholesky (deprecated in torch for linalg.cholesky): one CholeskyBackward0
    node.

    >>> import eagergrad as torch
    >>> torch.cholesky(torch.tensor([[4.0, 2.0], [2.0, 2.0]]), upper=True)
    tensor([[2., 1.],
            [0., 1.]])
    """
    _no_out(out, "torch.cholesky")
    _warn_once("cholesky", (
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
        "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
        "equivalent results for all valid (symmetric positive definite) inputs."))
    _square_check(input, "cholesky")
    if not input.dtype.is_differentiable:
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    _lapack_check(input, "cholesky_cpu")
    L, info = call_op(CHOLESKY, (input,), (bool(upper),))
    _check_errors(info, "cholesky", input.ndim == 2)
    return _lapack_layout(L)


# ---- linalg.inv(_ex) -------------------------------------------------------------------------
def _inv_k(A, use_A_T):
    # as ATen: solve_ex(A, I), through the LU of A^T when A is real and contiguous
    lu, pivots, info = _lu_factor_k(jnp.swapaxes(A, -1, -2) if use_A_T else A)
    eye = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    return _lu_solve_k(lu, pivots, eye, True, use_A_T), info


LINALG_INV_EX = defop(
    "linalg_inv_ex", _inv_k, inputs=("A",), attrs=("use_A_T",), outputs=("inverse", "info"),
    nondiff=(1,), A=lambda grad, inverse: -matmul(_mH(inverse), matmul(grad, _mH(inverse))))

_LinalgInvEx = _return_type("linalg_inv_ex", ("inverse", "info"))


def _inv_ex(A):
    _square_check(A, "linalg.inv")
    _low_precision_check(A, "linalg.inv")
    inv, info = call_op(LINALG_INV_EX, (A,), (A.is_contiguous() and not A.dtype.is_complex,))
    return _lapack_layout(inv), info


@autocast_op("linalg_inv_ex")
def linalg_inv_ex(A, *, check_errors=False, out=None):
    """torch.linalg.inv_ex: (inverse, info), info > 0 where A is singular (the index of
    the zero pivot; the inverse then holds inf/nan).

    >>> import eagergrad as torch
    >>> torch.linalg.inv_ex(torch.ones(2, 2)).info
    tensor(2, dtype=torch.int32)
    """
    _no_out(out, "torch.linalg.inv_ex")
    inv, info = _inv_ex(A)
    if check_errors:
        _check_errors(info, "linalg.inv_ex", A.ndim == 2)
    return _LinalgInvEx((inv, info))


@autocast_op("linalg_inv")
def linalg_inv(A, *, out=None):
    """torch.linalg.inv (torch.inverse): the inverse, one LinalgInvExBackward0 node; a
    singular A raises LinAlgError (checked on the host, see inv_ex).

    >>> import eagergrad as torch
    >>> torch.linalg.inv(torch.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _no_out(out, "torch.linalg.inv")
    inv, info = _inv_ex(A)
    _check_errors(info, "linalg.inv", A.ndim == 2)
    return inv


@autocast_op("inverse")
def inverse(input, *, out=None):
    """torch.inverse: linalg.inv.

    >>> import eagergrad as torch
    >>> torch.inverse(torch.tensor([[2.0]]))
    tensor([[0.5000]])
    """
    return linalg_inv(input, out=out)


# ---- linalg.det / slogdet, torch.logdet ------------------------------------------------------
def _det_P(pivots):
    """det of the permutation: +1 for an even number of row swaps, -1 for odd."""
    n = pivots.shape[-1]
    swaps = jnp.sum(pivots != jnp.arange(1, n + 1, dtype=pivots.dtype), -1)
    return 1 - 2 * (swaps % 2)


def _lu_of(A, use_A_T):
    return _lu_factor_k(jnp.swapaxes(A, -1, -2) if use_A_T else A)


def _det_k(A, use_A_T):
    lu, pivots, _ = _lu_of(A, use_A_T)
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
    return _det_P(pivots).astype(A.dtype) * jnp.prod(d, -1), lu, pivots


def _eps(t):
    return float(jnp.finfo(t.dtype.to_real().np).eps)


def _det_singular(A, d, grad):
    """The gradient of det at singular A (torch's: from the SVD, an adjugate)."""
    U, Sv, Vh = linalg_svd(A)
    alpha = SH.conj(linalg_det(U) * linalg_det(Vh)) * grad
    n = Sv._shape[-1]
    excl = prod(where(_make(jnp.eye(n, dtype=bool)), 1.0, SH.unsqueeze(Sv, -2)), -1)
    D_ = SH.unsqueeze(alpha, -1) * SH.conj(excl)  # torch's prod_safe_zeros_backward
    return matmul(U * SH.unsqueeze(D_, -2), Vh)


def _det_back(grad, result, A, LU, pivots, use_A_T):
    """torch's linalg_det_backward."""
    if A.numel() == 0:  # (torch's gradient is empty, not undefined)
        return _make(jnp.zeros(A._shape, A.dtype.np))
    d = _diag_embed(SH.expand(SH.unsqueeze(grad * SH.conj(result), -1), pivots._shape))
    eps = _eps(A)
    if not STATE.grad:  # a non-singular perturbation of the LU factors
        shift = jnp.where(jnp.diagonal(LU._value, axis1=-2, axis2=-1) == 0, eps, 0)
        LU_ = LU + _make((shift[..., None] * jnp.eye(shift.shape[-1])).astype(LU.dtype.np))
        return linalg_lu_solve(LU_, pivots, d, left=True, adjoint=not use_A_T)
    # recomputed, so that it is differentiable again: torch's masked_fmap of the
    # singular and the non-singular formulas, as a select of both computed on safe inputs
    sing = SH.unsqueeze(SH.unsqueeze(result.abs() < 100.0 * eps, -1), -1)
    n = A._shape[-1]
    eye = _eye_like(A, n)
    distinct = _make(jnp.diag(jnp.arange(1, n + 1)).astype(A.dtype.np))
    regular = linalg_solve(_mH(where(sing, eye, A)), d)
    singular = _det_singular(where(sing, A, distinct), d, grad)
    return where(sing, singular, regular)


LINALG_DET = defop(
    "_linalg_det", _det_k, inputs=("A",), attrs=("use_A_T",),
    outputs=("result", "LU", "pivots"), nondiff=(1, 2), node="LinalgDetBackward0",
    A=_det_back)


def linalg_det(A, *, out=None):
    """torch.linalg.det (torch.det, Tensor.det): from A's LU factors; one
    LinalgDetBackward0 node, whose gradient is torch's also at singular matrices.

    >>> import eagergrad as torch
    >>> torch.linalg.det(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(-2.)
    """
    _no_out(out, "torch.linalg.det")
    _square_check(A, "linalg.det")
    _float_check(A, "linalg.det")
    _lapack_check(A, "lu_cpu")
    return call_op(LINALG_DET, (A,), (A.is_contiguous() and not A.dtype.is_complex,))[0]


def det(input):
    """torch.det: linalg.det.

    >>> import eagergrad as torch
    >>> torch.det(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(6.)
    """
    return linalg_det(input)


def _slogdet_k(A, use_A_T):
    lu, pivots, _ = _lu_of(A, use_A_T)
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
    if jnp.iscomplexobj(d):  # sgn as d / |d| (jax gives sign no derivative)
        nz = d != 0
        unit = jnp.where(nz, d / jnp.where(nz, jnp.abs(d), 1), 0)
    else:
        unit = jnp.sign(d)
    sign = jnp.prod(unit, -1) * _det_P(pivots).astype(A.dtype)
    return sign, jnp.sum(jnp.log(jnp.abs(d)), -1), lu, pivots


def _slogdet_back(grads, A, sign, LU, pivots, use_A_T):
    """torch's slogdet_backward."""
    g_sign, g = grads[0], grads[1]
    if A.dtype.is_complex:
        g = g - 1j * SH.imag(SH.conj(g_sign) * sign)
    d = _diag_embed(SH.expand(SH.unsqueeze(g, -1), pivots._shape))
    if not STATE.grad:
        return linalg_lu_solve(LU, pivots, d, left=True, adjoint=not use_A_T)
    return linalg_solve(_mH(A), d)


LINALG_SLOGDET = defop(
    "_linalg_slogdet", _slogdet_k, inputs=("A",), attrs=("use_A_T",),
    outputs=("sign", "logabsdet", "LU", "pivots"), nondiff=(2, 3),
    node="LinalgSlogdetBackward0", A=_slogdet_back)

_LinalgSlogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
_Slogdet = _return_type("slogdet", ("sign", "logabsdet"))


def _slogdet(A, name):
    _square_check(A, name)
    _low_precision_check(A, name)
    sign, logabsdet, _, _ = call_op(LINALG_SLOGDET, (A,), (
        A.is_contiguous() and not A.dtype.is_complex,))
    return sign, logabsdet


def linalg_slogdet(A, *, out=None):
    """torch.linalg.slogdet: (sign, log|det|), one LinalgSlogdetBackward0 node.

    >>> import eagergrad as torch
    >>> torch.linalg.slogdet(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sign
    tensor(-1.)
    """
    _no_out(out, "torch.linalg.slogdet")
    return _LinalgSlogdet(_slogdet(A, "linalg.slogdet"))


def slogdet(input, *, out=None):
    """torch.slogdet (Tensor.slogdet): linalg.slogdet, as torch.return_types.slogdet.

    >>> import eagergrad as torch
    >>> torch.slogdet(torch.tensor([[2.0, 0.0], [0.0, 3.0]])).sign
    tensor(1.)
    """
    _no_out(out, "torch.slogdet")
    return _Slogdet(_slogdet(input, "linalg.slogdet"))


def logdet(input):
    """torch.logdet: log det A from slogdet, as ATen: sign.log() + logabsdet (complex),
    else nan where the sign is -1.

    >>> import eagergrad as torch
    >>> torch.logdet(torch.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor(0.)
    """
    sign, logabsdet = _slogdet(input, "logdet")
    if input.dtype.is_complex:
        return sign.log() + logabsdet
    return where(sign == -1.0, math.nan, logabsdet)
