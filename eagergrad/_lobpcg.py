"""torch.lobpcg (torch/_lobpcg.py): Locally Optimal Block Preconditioned Conjugate Gradient
for the k largest (or smallest) eigenpairs of A X = B X E, composed from eagergrad ops. It
iterates eagerly, reading convergence numbers as torch's does. A that requires grad goes
through `LOBPCGAutogradFunction`, whose backward is torch's symeig backward (B = I only).
The random start (no X given) comes from eagergrad's generator, so only what does not
depend on it (converged eigenpairs) is torch's.

>>> import eagergrad as torch
>>> A = torch.diag(torch.arange(1., 10., dtype=torch.float64))
>>> E, X = torch.lobpcg(A, k=1, X=torch.ones(9, 1, dtype=torch.float64))
>>> round(float(E), 6)
9.0
"""
import math

from . import _dtypes as D
from . import linalg
from ._lowrank import basis, dense, get_floating_dtype, matmul, qform, symeig
from .creation import Generator, empty, eye, randn, zeros
from .engine.function import Function
from .overrides import handle_torch_function, has_torch_function
from .tensor import Tensor

__all__ = ["lobpcg"]


def _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U):
    # F_ij = (d_j - d_i)^{-1} for i != j, F_ii = 0
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F.diagonal(dim1=-2, dim2=-1).fill_(float("inf"))
    F.pow_(-1)
    # A.grad = U (D.grad + (U^T U.grad * F)) U^T
    Ut = U.mT.contiguous()
    return U.matmul(
        (D_grad.diag_embed() + Ut.matmul(U_grad) * F).matmul(Ut))


def _polynomial_coefficients_given_roots(roots):
    """(a_0, ..., a_n = 1) with x^n + ... + a_0 = (x - r_1) ... (x - r_n), by Horner steps
    on copies (so each step is a node of the graph)."""
    poly_order = roots.shape[-1]
    poly_coeffs_shape = list(roots.shape)
    poly_coeffs_shape[-1] += 2  # (one extra coefficient on each side, for vectorization)
    poly_coeffs = roots.new_zeros(poly_coeffs_shape)
    poly_coeffs[..., 0] = 1
    poly_coeffs[..., -1] = 1
    for i in range(1, poly_order + 1):
        poly_coeffs_new = poly_coeffs.clone() if roots.requires_grad else poly_coeffs
        out = poly_coeffs_new.narrow(-1, poly_order - i, i + 1)
        out -= roots.narrow(-1, i - 1, 1) * poly_coeffs.narrow(-1, poly_order - i + 1, i + 1)
        poly_coeffs = poly_coeffs_new
    return poly_coeffs.narrow(-1, 1, poly_order + 1)


def _polynomial_value(poly, x, zero_power, transition):
    """poly(x) by Horner's rule; `transition(val, x, c)` is one step x * val + c * x^0."""
    res = zero_power.clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = transition(res, x, poly[..., k])
    return res


def _matrix_polynomial_value(poly, x, zero_power=None):
    def transition(curr_poly_val, x, poly_coeff):
        res = x.matmul(curr_poly_val)
        res.diagonal(dim1=-2, dim2=-1).add_(poly_coeff.unsqueeze(-1))
        return res

    if zero_power is None:
        zero_power = eye(x.size(-1), x.size(-1), dtype=x.dtype, device=x.device).view(
            *([1] * len(list(x.shape[:-2]))), x.size(-1), x.size(-1))
    return _polynomial_value(poly, x, zero_power, transition)


def _vector_polynomial_value(poly, x, zero_power=None):
    def transition(curr_poly_val, x, poly_coeff):
        return poly_coeff.unsqueeze(-1).addcmul(x, curr_poly_val)

    if zero_power is None:
        zero_power = x.new_ones(1).expand(x.shape)
    return _polynomial_value(poly, x, zero_power, transition)


def _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest):
    # the projection (I - U U^T) onto span(U)'s orthogonal complement
    Ut = U.mT.contiguous()
    proj_U_ortho = -U.matmul(Ut)
    proj_U_ortho.diagonal(dim1=-2, dim2=-1).add_(1)
    # a basis of that complement: the projection of a random matrix (a fixed generator,
    # for determinism; the gradient does not depend on the basis drawn)
    gen = Generator(A.device)
    U_ortho = proj_U_ortho.matmul(randn((*A.shape[:-1], A.size(-1) - D.size(-1)),
                                        dtype=A.dtype, device=A.device, generator=gen))
    U_ortho_t = U_ortho.mT.contiguous()
    # D's characteristic polynomial: its roots are D's entries
    chr_poly_D = _polynomial_coefficients_given_roots(D)
    # the Sylvester equation U_ortho^T A U_ortho dX - dX D = -U_ortho^T A U solved by its
    # polynomial solution (Hu and Cheng, 2006), as torch's comments there derive
    U_grad_projected = U_grad
    series_acc = U_grad_projected.new_zeros(U_grad_projected.shape)
    for k in range(1, chr_poly_D.size(-1)):
        poly_D = _vector_polynomial_value(chr_poly_D[..., k:], D)
        series_acc += U_grad_projected * poly_D.unsqueeze(-2)
        U_grad_projected = A.matmul(U_grad_projected)
    chr_poly_D_at_A = _matrix_polynomial_value(chr_poly_D, A)
    chr_poly_D_at_A_to_U_ortho = U_ortho_t.matmul(chr_poly_D_at_A.matmul(U_ortho))
    # positive-definite when not largest or k even (distinct eigenvalues), else negative
    chr_poly_D_at_A_to_U_ortho_sign = -1 if (largest and (k % 2 == 1)) else +1
    chr_poly_D_at_A_to_U_ortho_L = linalg.cholesky(
        chr_poly_D_at_A_to_U_ortho_sign * chr_poly_D_at_A_to_U_ortho)
    res = _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)
    res -= U_ortho.matmul(
        chr_poly_D_at_A_to_U_ortho_sign
        * U_ortho_t.matmul(series_acc).cholesky_solve(chr_poly_D_at_A_to_U_ortho_L)
    ).matmul(Ut)
    return res


def _symeig_backward(D_grad, U_grad, A, D, U, largest):
    if U.size(-1) == U.size(-2):  # (U's columns are the whole eigenspace)
        return _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)
    return _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest)


class LOBPCGAutogradFunction(Function):
    """lobpcg with A's gradient (torch's symeig backward); B's is refused."""

    @staticmethod
    def forward(ctx, A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None,
                largest=None, method=None, tracker=None, ortho_iparams=None,
                ortho_fparams=None, ortho_bparams=None):
        A = A.contiguous() if (not A.is_sparse) else A
        if B is not None:
            B = B.contiguous() if (not B.is_sparse) else B
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker,
                       ortho_iparams, ortho_fparams, ortho_bparams)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A_grad = B_grad = None
        grads = [None] * 14
        A, B, D, U = ctx.saved_tensors
        largest = ctx.largest
        if A.is_sparse or (B is not None and B.is_sparse and ctx.needs_input_grad[2]):
            raise ValueError("lobpcg.backward does not support sparse input yet. "
                             "Note that lobpcg.forward does though.")
        if A.dtype.is_complex or B is not None and B.dtype.is_complex:
            raise ValueError("lobpcg.backward does not support complex input yet. "
                             "Note that lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        if largest is None:
            largest = True
        if B is None:
            A_grad = _symeig_backward(D_grad, U_grad, A, D, U, largest)
        grads[0] = A_grad
        grads[2] = B_grad
        return tuple(grads)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The k largest (or smallest) eigenpairs (E, X) of the symmetric positive definite
    generalized problem A X = B X diag(E), by LOBPCG: method "ortho" (default) or "basic";
    see torch.lobpcg for every argument. A that requires grad is symmetrized, (A + A^T) / 2,
    so its gradient is symmetric; backward supports B = None only.

    >>> import eagergrad as torch
    >>> A = torch.diag(torch.arange(1., 10., dtype=torch.float64))
    >>> E, X = torch.lobpcg(A, k=1, X=torch.ones(9, 1, dtype=torch.float64), largest=False)
    >>> round(float(E), 6)
    1.0
    """
    tensor_ops = (A, B, X, iK)
    if not set(map(type, tensor_ops)).issubset((Tensor, type(None))) and \
            has_torch_function(tensor_ops):
        return handle_torch_function(
            lobpcg, tensor_ops, A, k=k, B=B, X=X, n=n, iK=iK, niter=niter, tol=tol,
            largest=largest, method=method, tracker=tracker, ortho_iparams=ortho_iparams,
            ortho_fparams=ortho_fparams, ortho_bparams=ortho_bparams)
    for t in tensor_ops:
        dense(t, "lobpcg")
    if A.requires_grad or (B is not None and B.requires_grad):
        # A is meant to be symmetric, its gradient may not be: symmetrizing here makes it
        # so, and keeps A - t * A.grad symmetric in first-order optimizers (same for B)
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if (B is not None) else None
        return LOBPCGAutogradFunction.apply(
            A_sym, k, B_sym, X, n, iK, niter, tol, largest, method, tracker,
            ortho_iparams, ortho_fparams, ortho_bparams)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                   ortho_fparams, ortho_bparams)


def _lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
            method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
            ortho_bparams=None):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None:
        if A.shape != B.shape:
            raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")

    dtype = get_floating_dtype(A)
    device = A.device
    if tol is None:
        feps = {D.float32: 1.2e-07, D.float64: 2.23e-16}[dtype]
        tol = feps**0.5

    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]

    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
            f" is smaller than 3 x the number of requested eigenpairs (={n})")

    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}

    if method == "ortho":
        if ortho_iparams is not None:
            iparams.update(ortho_iparams)
        if ortho_fparams is not None:
            fparams.update(ortho_fparams)
        if ortho_bparams is not None:
            bparams.update(ortho_bparams)
        iparams["ortho_i_max"] = iparams.get("ortho_i_max", 3)
        iparams["ortho_j_max"] = iparams.get("ortho_j_max", 3)
        fparams["ortho_tol"] = fparams.get("ortho_tol", tol)
        fparams["ortho_tol_drop"] = fparams.get("ortho_tol_drop", tol)
        fparams["ortho_tol_replace"] = fparams.get("ortho_tol_replace", tol)
        bparams["ortho_use_drop"] = bparams.get("ortho_use_drop", False)

    LOBPCG.call_tracker = LOBPCG_call_tracker

    if len(A.shape) > 2:
        N = math.prod(A.shape[:-2])
        bA = A.reshape((N,) + A.shape[-2:])
        bB = B.reshape((N,) + A.shape[-2:]) if B is not None else None
        bX = X.reshape((N,) + X.shape[-2:]) if X is not None else None
        bE = empty((N, k), dtype=dtype, device=device)
        bXret = empty((N, m, k), dtype=dtype, device=device)
        for i in range(N):
            A_ = bA[i]
            B_ = bB[i] if bB is not None else None
            X_ = randn((m, n), dtype=dtype, device=device) if bX is None else bX[i]
            if not (len(X_.shape) == 2 and X_.shape == (m, n)):
                raise AssertionError(f"X_ shape mismatch: got {X_.shape}, expected {(m, n)}")
            iparams["batch_index"] = i
            worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
            worker.run()
            bE[i] = worker.E[:k]
            bXret[i] = worker.X[:, :k]
        LOBPCG.call_tracker = LOBPCG_call_tracker_orig
        return bE.reshape(A.shape[:-2] + (k,)), bXret.reshape(A.shape[:-2] + (m, k))

    X = randn((m, n), dtype=dtype, device=device) if X is None else X
    if not (len(X.shape) == 2 and X.shape == (m, n)):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    worker = LOBPCG(A, B, X, iK, iparams, fparams, bparams, method, tracker)
    worker.run()
    LOBPCG.call_tracker = LOBPCG_call_tracker_orig
    return worker.E[:k], worker.X[:, :k]


class LOBPCG:
    """Worker class of LOBPCG methods (torch's: a tracker sees the same attributes)."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A = A
        self.B = B
        self.iK = iK
        self.iparams = iparams
        self.fparams = fparams
        self.bparams = bparams
        self.method = method
        self.tracker = tracker
        m = iparams["m"]
        n = iparams["n"]
        self.X = X
        self.E = zeros((n,), dtype=X.dtype, device=X.device)
        self.R = zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars = {}
        self.ivars = {"istep": 0}
        self.fvars = {"_": 0.0}
        self.bvars = {"_": False}

    def __str__(self):
        lines = ["LOBPCG:"]
        lines += [f"  iparams={self.iparams}"]
        lines += [f"  fparams={self.fparams}"]
        lines += [f"  bparams={self.bparams}"]
        lines += [f"  ivars={self.ivars}"]
        lines += [f"  fvars={self.fvars}"]
        lines += [f"  bvars={self.bvars}"]
        lines += [f"  tvars={self.tvars}"]
        lines += [f"  A={self.A}"]
        lines += [f"  B={self.B}"]
        lines += [f"  iK={self.iK}"]
        lines += [f"  X={self.X}"]
        lines += [f"  E={self.E}"]
        return "".join(line + "\n" for line in lines)

    def update(self):
        """Set and update iteration variables."""
        if self.ivars["istep"] == 0:
            X_norm = float(self.X.norm())
            iX_norm = X_norm**-1
            A_norm = float(matmul(self.A, self.X).norm()) * iX_norm
            B_norm = float(matmul(self.B, self.X).norm()) * iX_norm
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = A_norm
            self.fvars["B_norm"] = B_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] = self.ivars["iterations_left"] - 1
        self.ivars["istep"] = self.ivars["istep"] + 1

    def update_residual(self):
        """Update residual R from A, B, X, E."""
        self.R = matmul(self.A, self.X) - matmul(self.B, self.X) * self.E

    def update_converged_count(self):
        """The number of converged eigenpairs, by the backward stable criterion of
        [DuerschEtal2018] Sec 4.3 (in order: a later pair counts only after the earlier)."""
        prev_count = self.ivars["converged_count"]
        tol = self.fparams["tol"]
        A_norm = self.fvars["A_norm"]
        B_norm = self.fvars["B_norm"]
        E, X, R = self.E, self.X, self.R
        rerr = R.norm(2, (0,)) / (X.norm(2, (0,)) * (A_norm + E[: X.shape[-1]].abs() * B_norm))
        converged = rerr < tol
        count = 0
        for b in converged.tolist():
            if not b:
                break
            count += 1
        if count < prev_count:
            raise AssertionError(f"the number of converged eigenpairs (was {prev_count}, "
                                 f"got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        """Whether to stop: forced by a tracker (bvars["force_stop"]), out of iterations,
        or k pairs converged."""
        return (self.bvars.get("force_stop", False)
                or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        """Run LOBPCG iterations."""
        self.update()
        if self.tracker is not None:
            self.call_tracker()
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.call_tracker()

    def call_tracker(self):
        """Call the tracker (swapped in by lobpcg while it runs)."""

    def _update_basic(self):
        ns = self.ivars["converged_end"]
        nc = self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            M = qform(qform(self.A, self.X), Ri)
            E, Z = symeig(M, largest)
            self.X[:] = self.X.matmul(Ri.matmul(Z))
            self.E[:] = E
            np = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            W = matmul(self.iK, self.R)
            self.ivars["converged_end"] = ns = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            M = qform(qform(self.A, S_), Ri)
            E_, Z = symeig(M, largest)
            self.X[:, nc:] = S_.matmul(Ri.matmul(Z[:, : n - nc]))
            self.E[nc:] = E_[: n - nc]
            P = S_.matmul(Ri.matmul(Z[:, n: 2 * n - nc]))
            np = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            self.S[:, n: n + np] = P
            W = matmul(self.iK, self.R[:, nc:])
            self.ivars["converged_end"] = ns = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W

    def _update_ortho(self):
        ns = self.ivars["converged_end"]
        nc = self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            M = qform(qform(self.A, self.X), Ri)
            _E, Z = symeig(M, largest)
            self.X = self.X.matmul(Ri.matmul(Z))
            self.update_residual()
            np = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
            ns = self.ivars["converged_end"] = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W
        else:
            S_ = self.S[:, nc:ns]
            # Rayleigh-Ritz
            E_, Z = symeig(qform(self.A, S_), largest)
            # update E, X, P
            self.X[:, nc:] = S_.matmul(Z[:, : n - nc])
            self.E[nc:] = E_[: n - nc]
            P = S_.matmul(Z[:, n - nc:].matmul(basis(Z[: n - nc, n - nc:].mT)))
            np = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n: n + np] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, : n + np])
            ns = self.ivars["converged_end"] = n + np + W.shape[-1]
            self.S[:, n + np: ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """Ri, upper triangular, reducing (S^T A S) C = (S^T B S) C E to the standard
        (Ri^T S^T A S Ri) Z = Z E with C = Ri Z ([DuerschEtal2018]'s procedure with the
        diagonal scalings as elementwise products, as torch's)."""
        B = self.B
        SBS = qform(B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = linalg.cholesky((SBS * d_row) * d_col, upper=True)
        return linalg.solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """B-orthonormal U (Algorithm 4 of [DuerschPhD2015]); drop: drop the columns whose
        contribution to span(U) is small."""
        if U.numel() == 0:
            return U
        UBU = qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        # drop exact zero columns first (d ** -0.5 below)
        nz = (abs(d) != 0.0).nonzero(as_tuple=True)
        if len(nz) != 1:
            raise AssertionError(f"expected nz to have length 1, got {nz}")
        if len(nz[0]) < len(d):
            U = U[:, nz[0]]
            if U.numel() == 0:
                return U
            UBU = qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
            nz = (abs(d) != 0.0).nonzero(as_tuple=True)
            if len(nz[0]) != len(d):
                raise AssertionError(f"expected nz[0] length {len(d)}, got {len(nz[0])}")
        d_col = (d**-0.5).reshape(d.shape[0], 1)
        DUBUD = (UBU * d_col) * d_col.mT
        E, Z = symeig(DUBUD)
        t = tau * abs(E).max()
        if drop:
            keep = (E > t).nonzero(as_tuple=True)
            if len(keep) != 1:
                raise AssertionError(f"expected keep to have length 1, got {keep}")
            E = E[keep[0]]
            Z = Z[:, keep[0]]
            d_col = d_col[keep[0]]
        else:
            E[(E < t).nonzero(as_tuple=True)[0]] = t
        return (U * d_col.mT).matmul(Z * E**-0.5)

    def _get_ortho(self, U, V):
        """B-orthonormal U whose columns are B-orthogonal to V (Algorithm 3 of
        [DuerschPhD2015]; Algorithm 6 with bparams["ortho_use_drop"]); empty when every
        column of U is B-collinear to V."""
        m = self.iparams["m"]
        tau_ortho = self.fparams["ortho_tol"]
        tau_drop = self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max = self.iparams["ortho_i_max"]
        j_max = self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        # clean up the previous call's variables
        for vkey in list(self.fvars.keys()):
            if vkey.startswith("ortho_") and vkey.endswith("_rerr"):
                self.fvars.pop(vkey)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)

        BV_norm = matmul(self.B, V).norm()
        BU = matmul(self.B, U)
        VBU = V.mT.matmul(BU)
        i = j = 0
        for i in range(i_max):
            U = U - V.matmul(VBU)
            drop = False
            tau_svqb = tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop = True
                    tau_svqb = tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    # all initial U columns are B-collinear to V
                    self.ivars["ortho_i"] = i
                    self.ivars["ortho_j"] = j
                    return U
                BU = matmul(self.B, U)
                UBU = U.mT.matmul(BU)
                U_norm = U.norm()
                BU_norm = BU.norm()
                R = UBU - eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype)
                R_norm = R.norm()
                rerr = float(R_norm) * float(BU_norm * U_norm) ** -1
                vkey = f"ortho_UBUmI_rerr[{i}, {j}]"
                self.fvars[vkey] = rerr
                if rerr < tau_ortho:
                    break
            VBU = V.mT.matmul(BU)
            VBU_norm = VBU.norm()
            U_norm = U.norm()
            rerr = float(VBU_norm) * float(BV_norm * U_norm) ** -1
            vkey = f"ortho_VBU_rerr[{i}]"
            self.fvars[vkey] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                B = self.B
                if B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(
                    "Overdetermined shape of U:"
                    f" #B-cols(={B.shape[-1]}) >= #U-cols(={U.shape[-1]}) + "
                    f"#V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"] = i
        self.ivars["ortho_j"] = j
        return U


# the tracker call is swapped in while lobpcg runs, as torch does (TorchScript's reasons)
LOBPCG_call_tracker_orig = LOBPCG.call_tracker


def LOBPCG_call_tracker(self):
    self.tracker(self)
