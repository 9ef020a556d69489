"""Amin's competitive ratio as a generalized Rayleigh quotient (seed 000 Lemma 2, Corollary 1).

Lemma 2 gives, for a length distribution ``x`` on ``{l, ..., u}`` and prompt size ``s``,
``CR(Amin; x) = N(x) / D(x)`` (fluid limit ``n, M -> oo``), with ``N(x) = x^T A x`` and
``D(x) = x^T B x`` for the matrices (``m = min(i, j)``, ``delta(l) = s + l``, else 1)::

    G_ij = i / (s + j) * sum_{k=l}^{m} delta(k) (delta(k) + 2 (j - k)),   A = (G + G^T) / 2
    B_ij = m (s + m)

and ``CR(Amin) = sup_{x >= 0} N(x)/D(x)``, the largest generalized eigenvalue of ``(A, B)``
when the top eigenvector is positive (checked, see :func:`lambda_max`). With ``s = 0, l = 1``
these are Corollary 1's ``A_u, B_u``.

Two solvers:

* :func:`lambda_max_dense` builds both matrices (``O(u^2)`` memory, ``O(u^3)`` time) and
  calls :func:`scipy.linalg.eigh`; it is the test oracle for small ``u``;
* :func:`lambda_max` never forms a matrix. ``B = L L^T`` with ``L = J diag(sqrt(c))``
  (``J`` lower-triangular ones, ``c_k = f(k) - f(k-1)``, ``f(m) = m (s + m)``), so the
  spectrum of ``B^-1 A`` is that of the symmetric ``L^-1 A L^-T``; ``L^-1`` is a scaled
  first difference and ``A v`` is a handful of prefix/suffix sums because ``G`` is
  separable on each side of the diagonal. One product costs ``O(u)``; Lanczos
  (full reorthogonalisation) needs about ten, because lambda_2 / lambda_1 ~ 0.15.

Examples
--------
>>> round(lambda_max(10), 6)
1.724924
>>> round(lambda_max(2), 6)            # alpha = 1/2
1.25
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
import scipy.linalg
import scipy.optimize
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError, UsageTypeError

__all__ = [
    "PAPER_FIT",
    "EigenResult",
    "FitResult",
    "amin_ratio_lemma2",
    "b_inverse_tridiagonal",
    "fit_log_curve",
    "harmonic",
    "lambda_max",
    "lambda_max_dense",
    "lemma2_terms",
    "matrices",
    "paper_fit",
    "rayleigh_quotient",
    "structured_matvec",
    "trace_binv_a",
    "worst_distribution",
]

#: Figure 1 of seed 000: CR(Amin) ~ 0.2555 ln(u + 0.2793) + 1.1587 (s = 0, l = 1).
PAPER_FIT = (0.2555, 0.2793, 1.1587)


def _check(l: int, u: int, s: float) -> None:
    if not (isinstance(l, (int, np.integer)) and isinstance(u, (int, np.integer))):
        raise UsageTypeError("l, u", f"must be integers, got {l!r}, {u!r}")
    if l < 1 or u < l:
        raise UsageError("l, u", f"need 1 <= l <= u, got l={l}, u={u}")
    if s < 0:
        raise UsageError("s", f"need s >= 0, got s={s}")


def _delta(l: int, u: int, s: float) -> NDArray[np.float64]:
    d = np.ones(u - l + 1)
    d[0] = s + l
    return d


# ---------------------------------------------------------------------------- Lemma 2 direct
def lemma2_terms(x: ArrayLike, *, l: int = 1, s: float = 0.0) -> tuple[float, float]:
    """Numerator ``N(x)`` and denominator ``D(x)`` of Lemma 2, in ``O(u)`` via suffix sums.

    Parameters
    ----------
    x
        Nonnegative weights of lengths ``l, l+1, ..., l + len(x) - 1`` (need not sum to 1).
    l, s
        Smallest length and prompt size.

    Returns
    -------
    (N, D)
        ``E[TEL(Amin)]`` and ``TEL(H-SF)`` up to the common factor ``n^2 / (2M)``.

    Examples
    --------
    >>> N, D = lemma2_terms([0.5, 0.5])  # o in {1, 2}, half each
    >>> round(N / D, 6)
    1.214286
    """
    xv = np.asarray(x, dtype=np.float64)
    u = l + xv.shape[0] - 1
    _check(l, u, s)
    k = np.arange(l, u + 1, dtype=np.float64)
    d = _delta(l, u, s)

    def suffix(v: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.cumsum(v[::-1])[::-1]

    S1 = suffix(k * xv)                       # sum_{i>=k} i x_i
    P = suffix(xv / (s + k))                  # sum_{i>=k} x_i/(s+i)
    Q = suffix(k * xv / (s + k))              # sum_{i>=k} i x_i/(s+i)
    P_gt = np.append(P[1:], 0.0)
    Q_gt = np.append(Q[1:], 0.0)
    N = float(np.sum(d * S1 * (d * P + 2.0 * (Q_gt - k * P_gt))))
    X_gt = np.append(suffix(xv)[1:], 0.0)
    D = float(np.sum(k * (s + k) * xv * (xv + 2.0 * X_gt)))
    return N, D


def amin_ratio_lemma2(x: ArrayLike, *, l: int = 1, s: float = 0.0) -> float:
    """``CR(Amin; x) = N(x) / D(x)`` of Lemma 2 for one length distribution.

    Examples
    --------
    >>> alpha = 0.25  # two-point {1, 4} at its worst mix N_l / N_u = 1/alpha
    >>> x = np.zeros(4); x[0], x[3] = 4.0, 1.0
    >>> round(amin_ratio_lemma2(x), 6)   # (3 - alpha)/2
    1.375
    """
    N, D = lemma2_terms(x, l=l, s=s)
    return N / D


# ---------------------------------------------------------------------------- dense matrices
def matrices(u: int, *, l: int = 1, s: float = 0.0) -> tuple[NDArray[np.float64],
                                                            NDArray[np.float64]]:
    """Dense ``(A, B)`` on the lengths ``l..u`` (the test oracle; ``O(u^2)`` memory).

    Examples
    --------
    >>> A, B = matrices(3)
    >>> A.tolist()[0], B.tolist()[2]
    ([1.0, 1.75, 2.333333333333333], [1.0, 4.0, 9.0])
    """
    _check(l, u, s)
    k = np.arange(l, u + 1, dtype=np.float64)
    d = _delta(l, u, s)
    P1, P2, Q1 = np.cumsum(d), np.cumsum(d * d), np.cumsum(d * k)
    I, J = np.meshgrid(np.arange(k.size), np.arange(k.size), indexing="ij")
    m = np.minimum(I, J)
    H = P2[m] + 2.0 * k[J] * P1[m] - 2.0 * Q1[m]
    G = k[I] / (s + k[J]) * H
    A = 0.5 * (G + G.T)
    km = k[m]
    B = km * (s + km)
    return A, B


def rayleigh_quotient(x: ArrayLike, u: int | None = None, *, l: int = 1, s: float = 0.0) -> float:
    """``x^T A x / x^T B x`` with the dense matrices (equals Lemma 2's ``N/D``).

    Examples
    --------
    >>> round(rayleigh_quotient([1.0, 1.0]), 6)
    1.214286
    """
    xv = np.asarray(x, dtype=np.float64)
    u = l + xv.size - 1 if u is None else u
    A, B = matrices(u, l=l, s=s)
    return float(xv @ A @ xv / (xv @ B @ xv))


def lambda_max_dense(u: int, *, l: int = 1, s: float = 0.0) -> float:
    """Largest generalized eigenvalue of ``(A, B)`` by :func:`scipy.linalg.eigh` (``O(u^3)``).

    Examples
    --------
    >>> round(lambda_max_dense(3), 6)
    1.379286
    """
    A, B = matrices(u, l=l, s=s)
    n = A.shape[0]
    w = scipy.linalg.eigh(A, B, eigvals_only=True, subset_by_index=[n - 1, n - 1])
    return float(w[-1])


def b_inverse_tridiagonal(u: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Diagonal and off-diagonal of ``B_u^-1`` (``s = 0, l = 1``) as printed in seed 000 §3.3.

    ``(B^-1)_ii = 4i/(4i^2 - 1)`` for ``i < u``, ``(B^-1)_uu = 1/(2u - 1)``,
    ``(B^-1)_{i,i+1} = -1/(2i + 1)``.

    Examples
    --------
    >>> diag, off = b_inverse_tridiagonal(2)
    >>> diag.tolist(), off.tolist()
    ([1.3333333333333333, 0.3333333333333333], [-0.3333333333333333])
    """
    i = np.arange(1, u + 1, dtype=np.float64)
    diag = 4.0 * i / (4.0 * i * i - 1.0)
    diag[-1] = 1.0 / (2.0 * u - 1.0)
    off = -1.0 / (2.0 * i[:-1] + 1.0)
    return diag, off


def harmonic(u: int) -> float:
    """``H_u = 1 + 1/2 + ... + 1/u`` (the trace bound; ``<= 1 + ln u``).

    Examples
    --------
    >>> harmonic(3)
    1.8333333333333333
    """
    return float(np.sum(1.0 / np.arange(1, u + 1, dtype=np.float64)[::-1]))


def trace_binv_a(u: int) -> float:
    """``tr(B_u^-1 A_u)`` from the tridiagonal inverse and two diagonals of ``A`` (``O(u)``).

    Seed 000 shows this equals ``H_u``; it bounds ``lambda_max`` since all eigenvalues are
    positive (Lemma 3).

    Examples
    --------
    >>> round(trace_binv_a(10), 6)
    2.928968
    """
    diag, off = b_inverse_tridiagonal(u)
    i = np.arange(1, u + 1, dtype=np.float64)
    a_diag = i * i
    j = i[1:]
    ii = i[:-1]
    a_off = ii * ii - ii**3 / (2.0 * j) + ii * j / 2.0  # a_{i,i+1}
    return float(np.sum(diag * a_diag) + 2.0 * np.sum(off * a_off))


# ---------------------------------------------------------------------------- structured solver
@dataclass(frozen=True)
class _Structure:
    k: NDArray[np.float64]
    s: float
    sqrt_c: NDArray[np.float64]
    h0: NDArray[np.float64]     # P2(m) - 2 Q1(m)
    p1: NDArray[np.float64]     # P1(m)
    hdiag: NDArray[np.float64]  # H(j, j) = P2(j) + 2 j P1(j) - 2 Q1(j)


def _structure(u: int, l: int, s: float) -> _Structure:
    _check(l, u, s)
    k = np.arange(l, u + 1, dtype=np.float64)
    d = _delta(l, u, s)
    P1, P2, Q1 = np.cumsum(d), np.cumsum(d * d), np.cumsum(d * k)
    f = k * (s + k)
    c = np.diff(f, prepend=0.0)
    if not (c > 0).all():  # pragma: no cover - f is increasing for s >= 0
        raise ValueError("B is not positive definite")
    h0 = P2 - 2.0 * Q1
    return _Structure(k=k, s=float(s), sqrt_c=np.sqrt(c), h0=h0, p1=P1, hdiag=h0 + 2.0 * k * P1)


def _suffix(v: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.cumsum(v[::-1])[::-1]


def _a_matvec(st: _Structure, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``A x`` in ``O(u)``: ``G x`` and ``G^T x`` through prefix/suffix sums."""
    k, s = st.k, st.s
    y = x / (s + k)
    # (G x)_i = i [ h0(i) Suf(y)(i) + 2 P1(i) Suf(j y)(i) + Pre_excl(H(j,j) y_j)(i) ]
    pre_excl = np.cumsum(st.hdiag * y) - st.hdiag * y
    gx = k * (st.h0 * _suffix(y) + 2.0 * st.p1 * _suffix(k * y) + pre_excl)
    # (G^T x)_j = 1/(s+j) [ Pre(i x_i h0(i))(j) + 2 j Pre(i x_i P1(i))(j)
    #                       + H(j,j) Suf_excl(i x_i)(j) ]
    kx = k * x
    suf_excl = _suffix(kx) - kx
    gtx = (np.cumsum(kx * st.h0) + 2.0 * k * np.cumsum(kx * st.p1) + st.hdiag * suf_excl) / (s + k)
    return 0.5 * (gx + gtx)


class _Cor1Matvec:
    """``A_u x`` for Corollary 1 (``s = 0, l = 1``) with preallocated buffers (15 passes).

    For ``i <= j``: ``a_ij = i^2 (1 - i/(2j)) + i j / 2``, so
    ``(A x)_i = i^2 Suf(x)_i - (i^3/2) Suf(x/j)_i + (i/2) sum_j j x_j
    + Pre(j^2 x)_{i-1} - Pre(j^3 x)_{i-1} / (2i)``.
    """

    def __init__(self, k: NDArray[np.float64]) -> None:
        self.k = k
        self.k2 = k * k
        self.k3h = 0.5 * self.k2 * k
        self.inv_k = 1.0 / k
        self.inv_2k = 0.5 / k
        self.b1 = np.empty_like(k)
        self.b2 = np.empty_like(k)

    def __call__(self, x: NDArray[np.float64], out: NDArray[np.float64]) -> NDArray[np.float64]:
        b1, b2 = self.b1, self.b2
        np.multiply(x, self.inv_k, out=b1)
        np.cumsum(b1[::-1], out=b2[::-1])          # Suf(x/j)
        np.multiply(b2, self.k3h, out=out)
        np.negative(out, out=out)
        np.cumsum(x[::-1], out=b2[::-1])           # Suf(x)
        b2 *= self.k2
        out += b2
        np.multiply(self.k, 0.5 * float(self.k @ x), out=b2)
        out += b2
        np.multiply(self.k2, x, out=b1)
        np.cumsum(b1, out=b2)                      # Pre(j^2 x)
        out[1:] += b2[:-1]
        b1 *= self.k
        np.cumsum(b1, out=b2)                      # Pre(j^3 x)
        b2[:-1] *= self.inv_2k[1:]
        out[1:] -= b2[:-1]
        return out


def structured_matvec(x: ArrayLike, *, l: int = 1, s: float = 0.0) -> NDArray[np.float64]:
    """``A x`` without forming ``A`` (lengths ``l .. l + len(x) - 1``), ``O(u)``.

    Examples
    --------
    >>> A, _ = matrices(4)
    >>> x = np.arange(1.0, 5.0)
    >>> bool(np.allclose(structured_matvec(x), A @ x))
    True
    """
    xv = np.asarray(x, dtype=np.float64)
    return _a_matvec(_structure(l + xv.size - 1, l, s), xv)


@dataclass(frozen=True)
class EigenResult:
    """Top generalized eigenpair of ``(A, B)``.

    Attributes
    ----------
    value
        ``lambda_max`` (= ``CR(Amin)`` for these ``l, u, s``, fluid limit).
    vector
        Top generalized eigenvector ``x`` (normalised to sum 1; index ``k - l``).
    positive
        Whether ``x > 0`` entrywise, i.e. whether the unconstrained maximum is attained on the
        nonnegative orthant (the supremum over distributions).
    matvecs
        Number of structured products used (0 for the dense solver).

    Examples
    --------
    >>> r = lambda_max(200, return_vector=True)
    >>> round(r.value, 6), r.positive, r.vector.size, round(float(r.vector.sum()), 12)
    (2.512132, True, 200, 1.0)
    >>> lambda_max(5, return_vector=True).matvecs      # small u: the dense solver
    0
    """

    value: float
    vector: NDArray[np.float64]
    positive: bool
    matvecs: int


def _lanczos_top(op: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                 v0: NDArray[np.float64], *, tol: float, max_steps: int = 200,
                 ) -> tuple[float, NDArray[np.float64]]:
    """Largest eigenpair of a symmetric operator by Lanczos with full reorthogonalisation.

    With Ritz pair ``(theta, y)``, residual ``r = beta_k |y_k|`` and gap ``g`` to the next
    Ritz value, the eigenvalue error is at most about ``r^2 / g``; iteration stops when that
    is below ``tol * theta`` (and the residual itself below ``sqrt(tol) * theta``).
    ``op`` is the only access to the matrix.
    """
    n = v0.shape[0]
    steps = min(max_steps, n)
    cap = min(steps, 16) + 1
    Q = np.empty((cap, n))
    Q[0] = v0 / np.linalg.norm(v0)
    alphas: list[float] = []
    betas: list[float] = []
    theta, y = 0.0, np.ones(1)
    for j in range(steps):
        w = op(Q[j])
        a = float(Q[j] @ w)
        alphas.append(a)
        basis = Q[: j + 1]
        w -= (basis @ w) @ basis  # full reorthogonalisation (two BLAS passes over few vectors)
        b = float(np.linalg.norm(w))
        if j == 0:
            theta, y = a, np.ones(1)
            gap = abs(a)
        else:
            T_w, T_v = scipy.linalg.eigh_tridiagonal(np.array(alphas), np.array(betas))
            theta, y = float(T_w[-1]), T_v[:, -1]
            gap = max(theta - float(T_w[-2]), 1e-300)
        r = b * abs(float(y[-1]))
        if b == 0.0 or j + 1 == steps or (
                r * r / gap <= tol * abs(theta) and r <= math.sqrt(tol) * abs(theta)):
            break
        betas.append(b)
        if j + 1 >= Q.shape[0]:
            Q = np.concatenate([Q, np.empty((min(steps, 2 * Q.shape[0]) + 1 - Q.shape[0], n))])
        np.multiply(w, 1.0 / b, out=Q[j + 1])
    return theta, y @ Q[: len(alphas)]


@overload
def lambda_max(u: int, *, l: int = 1, s: float = 0.0, tol: float = 1e-14,
               return_vector: Literal[False] = False) -> float: ...


@overload
def lambda_max(u: int, *, l: int = 1, s: float = 0.0, tol: float = 1e-14,
               return_vector: Literal[True]) -> EigenResult: ...


def lambda_max(u: int, *, l: int = 1, s: float = 0.0, tol: float = 1e-14,
               return_vector: bool = False) -> float | EigenResult:
    """``lambda_max(A, B)`` = ``CR(Amin)`` for lengths in ``[l, u]``, prompt ``s``; ``O(u)`` memory.

    Uses the structured operator ``L^-1 A L^-T`` (see the module docstring) with Lanczos
    (:func:`_lanczos_top`) from a deterministic positive start vector; for ``u - l < 8`` it
    falls back to the dense solver.

    Parameters
    ----------
    u, l, s
        Length range and prompt size (Corollary 1: ``l = 1, s = 0``, ``alpha = 1/u``).
    tol
        Target relative error of the eigenvalue (Lanczos stopping rule).
    return_vector
        Return an :class:`EigenResult` (with the worst-case distribution) instead of a float.

    Examples
    --------
    >>> round(lambda_max(1000), 6)
    2.923922
    >>> r = lambda_max(10, return_vector=True)
    >>> r.positive, round(float(r.vector[0]), 3)
    (True, 0.624)
    """
    n = u - l + 1
    if n < 8:
        A, B = matrices(u, l=l, s=s)
        w, V = scipy.linalg.eigh(A, B)
        vec = V[:, -1]
        vec = vec / vec.sum()
        res = EigenResult(float(w[-1]), vec, bool((vec > 0).all()), 0)
        return res if return_vector else res.value
    st = _structure(u, l, s)
    count = [0]
    cor1 = _Cor1Matvec(st.k) if (l == 1 and s == 0) else None
    inv_sqrt_c = 1.0 / st.sqrt_c
    z = np.empty(n)
    buf = np.empty(n)

    def op(w: NDArray[np.float64]) -> NDArray[np.float64]:
        count[0] += 1
        np.multiply(w, inv_sqrt_c, out=z)
        z[:-1] -= z[1:]                           # L^-T w = J^-T diag(1/sqrt c) w (in order)
        av = cor1(z, buf) if cor1 is not None else _a_matvec(st, z)
        res = np.empty(n)
        res[0] = av[0]
        np.subtract(av[1:], av[:-1], out=res[1:])  # L^-1 (A v) = diag(1/sqrt c) J^-1 (A v)
        res *= inv_sqrt_c
        return res

    value, wvec = _lanczos_top(op, np.sqrt(st.sqrt_c), tol=tol)
    if not return_vector:
        return value
    z = wvec / st.sqrt_c
    x = z - np.append(z[1:], 0.0)
    x = x / x.sum()
    return EigenResult(value, x, bool((x > 0).all()), count[0])


def worst_distribution(u: int, *, l: int = 1, s: float = 0.0) -> NDArray[np.float64]:
    """The top generalized eigenvector as a probability vector on ``l..u`` (Rayleigh-worst mix).

    Raises
    ------
    ValueError
        If the eigenvector has a nonpositive entry (then the supremum over ``x >= 0`` is not
        ``lambda_max``; never observed, see NOTES.md).

    Examples
    --------
    >>> x = worst_distribution(10)
    >>> round(float(x.sum()), 12), round(float(x[-1]), 3)
    (1.0, 0.046)
    """
    r = lambda_max(u, l=l, s=s, return_vector=True)
    assert isinstance(r, EigenResult)
    if not r.positive:
        raise ValueError(f"top eigenvector for (l={l}, u={u}, s={s}) is not positive")
    return r.vector


# ---------------------------------------------------------------------------- Figure 1 fit
def paper_fit(u: ArrayLike) -> NDArray[np.float64]:
    """Seed 000's Figure 1 fit ``0.2555 ln(u + 0.2793) + 1.1587`` (natural log).

    Examples
    --------
    >>> round(float(paper_fit(1000)), 4)
    2.9237
    """
    a, b, c = PAPER_FIT
    return a * np.log(np.asarray(u, dtype=np.float64) + b) + c


@dataclass(frozen=True)
class FitResult:
    """Least-squares fit ``a ln(u + b) + c`` to ``lambda_max`` and the paper fit's residuals.

    Examples
    --------
    >>> r = fit_log_curve([50, 100, 200, 500, 1000])
    >>> [round(float(v), 4) for v in r.lam]                 # lambda_max(u)
    [2.1532, 2.3333, 2.5121, 2.747, 2.9239]
    >>> round(r.paper_max_abs_residual, 4), round(r.paper_r2, 4)
    (0.0065, 0.9999)
    >>> r.refit_max_abs_residual < r.paper_max_abs_residual
    True
    """

    u: NDArray[np.int64]
    lam: NDArray[np.float64]
    params: tuple[float, float, float]
    paper_max_abs_residual: float
    paper_rms_residual: float
    refit_max_abs_residual: float
    paper_r2: float

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "u": self.u.tolist(), "lambda_max": self.lam.tolist(),
            "refit_params": list(self.params),
            "paper_params": list(PAPER_FIT),
            "paper_max_abs_residual": self.paper_max_abs_residual,
            "paper_rms_residual": self.paper_rms_residual,
            "refit_max_abs_residual": self.refit_max_abs_residual,
            "paper_r2": self.paper_r2,
        }


def fit_log_curve(u_values: ArrayLike | None = None) -> FitResult:
    """Fit ``a ln(u + b) + c`` to ``lambda_max(u)`` and measure the paper fit's residuals.

    Parameters
    ----------
    u_values
        Integer ``u`` grid (default: 40 log-spaced values in ``[50, 10^4]``, the paper's
        ``u >= 50`` regime; the paper does not state its range).

    Examples
    --------
    >>> r = fit_log_curve([50, 100, 200, 500, 1000])
    >>> r.paper_max_abs_residual < 0.01
    True
    """
    if u_values is None:
        u_values = np.unique(np.round(np.geomspace(50, 10_000, 40)).astype(np.int64))
    uu = np.asarray(u_values, dtype=np.int64)
    lam = np.array([float(lambda_max(int(v))) for v in uu])  # type: ignore[arg-type]

    def model(x: NDArray[np.float64], a: float, b: float, c: float) -> NDArray[np.float64]:
        return a * np.log(x + b) + c

    uf = uu.astype(np.float64)
    popt, _ = scipy.optimize.curve_fit(model, uf, lam, p0=PAPER_FIT,
                                       bounds=([0.0, -float(uf.min()) + 1e-6, -10.0],
                                               [10.0, 1e6, 10.0]))
    res_paper = lam - paper_fit(uf)
    res_refit = lam - model(uf, *popt)
    ss_tot = float(np.sum((lam - lam.mean()) ** 2))
    return FitResult(
        u=uu, lam=lam, params=(float(popt[0]), float(popt[1]), float(popt[2])),
        paper_max_abs_residual=float(np.max(np.abs(res_paper))),
        paper_rms_residual=float(math.sqrt(np.mean(res_paper**2))),
        refit_max_abs_residual=float(np.max(np.abs(res_refit))),
        paper_r2=1.0 - float(np.sum(res_paper**2)) / ss_tot if ss_tot > 0 else 1.0,
    )
