"""SOAP mean-response formulas for M/G/1 with predictions (SPJF, PSPJF, SPRPT, TRAIL).

The tagged job has size ``x`` and prediction ``r``; other jobs are ``(X, Y = X Z)`` with
``X ~ sizes`` and ``Z ~ predictions`` (see :mod:`kvopt.queueing.predictions`).  With
``rho_le(r) = lam E[X; Y <= r]`` and ``rho_lt(r) = lam E[X; Y < r]`` the policies are

=============  ================================================  ===============================
policy         waiting ``W(r)``                                  residence ``R(x, r)``
=============  ================================================  ===============================
fcfs           ``lam E[X^2] / (2 (1 - rho))``                      ``x``
spjf           ``lam E[X^2] / (2 (1-rho_le)(1-rho_lt))``           ``x``
pspjf          ``lam E[X^2; Y<=r] / (2 (1-rho_le)(1-rho_lt))``     ``x / (1 - rho_lt(r))``
sprpt          ``lam (E[X^2; Y<=r] + E[(X-(Y-r))+^2; Y>r]) / ..``  ``int_0^x da/(1-rho_lt((r-a)+))``
trail (C)      ``lam (E[X^2; Y<=r] + E[(X-m_r(Y))+^2; Y>r]) / ..`` see :meth:`SoapModel.residence`
trail-printed  the paper's Lemma 1 as printed (for the errata table)
=============  ================================================  ===============================

with ``m_r(y) = min(y - r, C y)`` the age at which an old job of prediction ``y > r`` is
recycled (corrected Lemma 1).  With perfect predictions these are SJF, PSJF and SRPT.

Examples
--------
>>> from kvopt.queueing.distributions import Exponential
>>> from kvopt.queueing.predictions import Perfect
>>> m = SoapModel(Exponential(1.0), Perfect(), lam=0.5)
>>> round(m.mean_response("fcfs"), 10)
2.0
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from kvopt.core.deprecation import renamed_names
from kvopt.core.errors import UsageError
from kvopt.queueing._quad import PiecewiseLegendre, panel_nodes
from kvopt.queueing.distributions import SizeDistribution
from kvopt.queueing.predictions import PredictionModel

__all__ = ["SOAP_POLICIES", "SoapModel", "check_policy"]

#: Policies of the SOAP formulas (:class:`SoapModel`; ``kvopt queueing POLICY``).
SOAP_POLICIES = ("fcfs", "spjf", "pspjf", "sprpt", "trail", "trail-printed")
_FORM = {"sprpt": "sprpt", "trail-printed": "printed"}
_WHAT = {"spjf": ("le", "lt"), "pspjf": ("le", "lt", "m2"), "sprpt": ("le", "lt", "m2", "rec"),
         "trail": ("le", "lt", "m2", "rec"), "trail-printed": ("le", "lt", "m2", "rec")}
_ALIASES = {"sjf": "spjf", "psjf": "pspjf", "srpt": "sprpt", "fifo": "fcfs"}


def check_policy(policy: str, C: float | None) -> tuple[str, float]:
    """Normalize a policy name and its ``C``; raise
    :class:`~kvopt.core.errors.UsageError` naming the bad field.

    Examples
    --------
    >>> check_policy("SRPT", None)
    ('sprpt', 1.0)
    """
    p = _ALIASES.get(policy.lower(), policy.lower())
    if p not in SOAP_POLICIES:
        raise UsageError("policy", f"unknown policy {policy!r}; choose from "
                         f"{', '.join(SOAP_POLICIES + tuple(_ALIASES))}")
    if p in ("trail", "trail-printed"):
        if C is None:
            raise UsageError("C", f"policy {p!r} needs --C (e.g. 0.8)")
        if not (np.isfinite(C) and C > 0):
            raise UsageError("C", "must be a finite number > 0 (use spjf for C -> 0+)")
        return p, float(C)
    return p, 1.0


def _pos(v: np.ndarray) -> np.ndarray:
    return np.maximum(v, 0.0)


@dataclass
class SoapModel:
    """M/G/1 queue with Poisson(``lam``) arrivals, sizes ``X`` and predictions ``Y = X Z``.

    Parameters
    ----------
    sizes : SizeDistribution
    predictions : PredictionModel
    lam : float
        Arrival rate; the load is ``rho = lam E[X] < 1``.
    n : int
        Gauss-Legendre nodes per panel.  The default 8 gives ~1e-9 relative accuracy on
        smooth cases and <= 3e-7 on the kinked ones tested (see
        ``benchmarks/queueing_trail_speed.py``); raise it for more.

    Examples
    --------
    >>> from kvopt.queueing.distributions import Exponential
    >>> from kvopt.queueing.predictions import ExpPredictions
    >>> m = SoapModel(Exponential(1.0), ExpPredictions(), lam=0.5)
    >>> round(float(m.response_given(0.3, 1.0, "trail", C=0.5)[0]), 6)
    0.873863
    """

    sizes: SizeDistribution
    predictions: PredictionModel
    lam: float
    n: int = 8
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not (np.isfinite(self.lam) and self.lam > 0):
            raise UsageError("load", "arrival rate must be positive")
        rho = self.lam * self.sizes.mean
        if rho >= 1:
            raise UsageError("load", f"rho = {rho:g} >= 1, the queue is unstable")
        self.rho = rho

    # ---------------------------------------------------------------- break points
    @property
    def _zspecial(self) -> np.ndarray:
        zp = self.predictions
        if zp.is_atom:
            return np.array([1.0])
        if zp.spec.startswith("unifnoise"):
            return zp.panel_points[[0, -1]]
        return np.empty(0)

    def _xkinks(self, r: np.ndarray, C: float) -> np.ndarray:
        """Per-row points in ``x`` where integrands of ``W(r)`` kink (shape (m, k))."""
        r = np.asarray(r, dtype=float)[:, None]
        cols = [r * C]
        if C < 1:
            cols.append(r * C / (1 - C))
        for zb in self._zspecial:
            cols += [r / zb, r * (1 + C) / zb]
            if C < 1:
                cols.append(r / (zb * (1 - C)))
            if zb > 1:
                cols.append(r / (zb - 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.concatenate(np.broadcast_arrays(*cols), axis=1)

    def _ukinks(self, C: float) -> np.ndarray:
        """Points in ``r`` where ``rho(r)``, ``W(r)`` may kink."""
        if self.predictions.is_atom:
            b = self.sizes.breakpoints
        else:  # smooth noise: only atoms and the ends of the support (density jumps) matter
            pts = self.sizes.panel_points
            ends = [] if pts is None else [pts[0], pts[-1]]
            b = np.unique(np.concatenate([self.sizes.atoms[0], ends]))
        if b.size > 64:  # long empirical traces: rely on the geometric grid
            b = np.quantile(b, np.linspace(0, 1, 65))
        parts = [b, b / C, b / (1 + C) * 1.0]
        if C < 1:
            parts += [b * (1 - C) / C, b * (1 - C)]
        for zb in self._zspecial:
            parts += [b * zb, b * zb / (1 + C), b * zb * max(1 - C, 0.0)]
            if zb > 1:
                parts.append(b * (zb - 1))
        u = np.concatenate(parts)
        return np.unique(u[np.isfinite(u) & (u >= 0)])

    def _upanels(self, C: float) -> np.ndarray:
        zp = self.predictions.panel_points
        scale = self.sizes.mean
        top = self.sizes.upper * max(zp.max(), 1.0)
        geo = np.geomspace(scale * 1e-9, top, int(np.ceil(np.log2(top / (scale * 1e-9)))) + 1)
        u = np.concatenate([[0.0], geo, self._ukinks(C)])
        return np.unique(u[u <= top])

    # ---------------------------------------------------------------- building blocks
    def _moments(self, r: ArrayLike, C: float, what: tuple[str, ...],
                 form: str = "corrected") -> dict[str, np.ndarray]:
        """One quadrature pass over ``X`` for several functions of the threshold ``r``.

        ``what`` items: ``"le"`` (``lam E[X; Y<=r]``), ``"lt"`` (``Y<r``), ``"m2"``
        (``lam E[X^2; Y<=r]``), ``"rec"`` (``lam E[(X_1^old[r])^2]``, see :meth:`recycled`),
        ``"nu1"`` (density of ``E[X; Y in dr]``) and ``"pi"`` (``P(Y - d <= r <= Y)`` with ``d``
        the preemptible service, the weight of ``phi(r)`` in the mean residence).
        """
        rv = np.atleast_1d(np.asarray(r, dtype=float))
        R = rv[:, None]
        zp = self.predictions
        rows = rv.size
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        pts = self.sizes.panel_points
        if pts is not None:
            x, w = panel_nodes(pts, self._xkinks(rv, C), self.n)
            parts.append((x, w * self.sizes.pdf(x)))
        av, ap = self.sizes.atoms
        if av.size:
            shape = (rows, av.size)
            parts.append((np.broadcast_to(av, shape), np.broadcast_to(ap, shape)))
        out = {k: np.zeros(rows) for k in what}
        for x, w in parts:
            with np.errstate(divide="ignore", invalid="ignore"):
                xs = np.where(x > 0, x, np.nan)
                ratio = np.where(x > 0, R / xs, np.inf)
                if "le" in what or "m2" in what:
                    cle = zp.cdf(ratio, True)
                    if "le" in what:
                        out["le"] += (w * x * cle).sum(axis=1)
                    if "m2" in what:
                        out["m2"] += (w * x * x * cle).sum(axis=1)
                if "lt" in what:
                    clt = zp.cdf(ratio, False) if zp.is_atom or "le" not in what else cle
                    out["lt"] += (w * x * clt).sum(axis=1)
                if "rec" in what:
                    out["rec"] += (w * np.nan_to_num(self._rec_integrand(x, xs, R, C, form))).sum(
                        axis=1)
                if "nu1" in what:  # density of E[X; Y in du] (continuous Z only)
                    out["nu1"] += (w * zp.pdf(ratio)).sum(axis=1)
                if "pi" in what:
                    out["pi"] += (w * np.nan_to_num(self._pi_integrand(xs, R, C, form))).sum(
                        axis=1)
        lam = self.lam
        return {k: (lam * v if k in ("le", "lt", "m2", "rec") else v) for k, v in out.items()}

    def _pi_integrand(self, xs: np.ndarray, R: np.ndarray, C: float, form: str,
                      ) -> np.ndarray:
        """``P(u <= Y, Y - d(X, Y) <= u | X = x)`` with ``d`` the preemptible part of service."""
        lo = R / xs
        if form == "printed":
            hi = R / (xs * (1 - C)) if C < 1 else np.full_like(lo, np.inf)
        elif form == "sprpt" or C >= 1:
            hi = lo + 1
        else:
            hi = np.minimum(lo + 1, R / (xs * (1 - C)))
        zp = self.predictions
        if zp.is_atom:
            return ((lo <= 1.0) & (hi >= 1.0)).astype(float)
        return zp.cdf(hi) - zp.cdf(lo)

    def _rec_integrand(self, x: np.ndarray, xs: np.ndarray, R: np.ndarray, C: float,
                       form: str) -> np.ndarray:
        P = self.predictions.partials

        def poly(c: np.ndarray | float, lo: np.ndarray, hi: np.ndarray, scale: np.ndarray,
                 ) -> np.ndarray:
            # E[(scale (c - Z))^2 ; lo < Z <= hi]
            m0, m1, m2 = P(lo, hi)
            return scale * scale * (c * c * m0 - 2 * c * m1 + m2)

        lo = R / xs
        c1 = 1 + R / xs
        if form == "sprpt" or (form == "corrected" and C >= 1):
            return poly(c1, lo, c1, x)
        if form == "printed":
            return poly(c1, (1 + C) * R / xs, c1, x)
        b1 = R / (xs * (1 - C))
        out = poly(c1, lo, np.minimum(b1, c1), x)
        return out + poly(1.0 / C, np.maximum(lo, b1), np.full_like(lo, 1 / C), C * x)

    def rho_r(self, r: ArrayLike, inclusive: bool = True) -> np.ndarray:
        """``lam E[X; Y <= r]`` (``Y < r`` if not ``inclusive``), vectorized over ``r``."""
        k = "le" if inclusive else "lt"
        return self._moments(r, 1.0, (k,))[k]

    def m2_r(self, r: ArrayLike) -> np.ndarray:
        """``lam E[X^2; Y <= r]`` vectorized over ``r``."""
        return self._moments(r, 1.0, ("m2",))["m2"]

    def recycled(self, r: ArrayLike, C: float, form: str = "corrected") -> np.ndarray:
        """``lam E[(X_1^old[r])^2]``: the recycled-work second moment.

        ``form="corrected"``: recycle age ``min(Y - r, C Y)`` (old job's own threshold);
        ``"sprpt"``: recycle age ``Y - r`` (Mitzenmacher's SPRPT);
        ``"printed"``: the paper's term, ``Y`` restricted to ``Y > r (1 + C)``, age ``Y - r``.
        """
        return self._moments(r, C, ("rec",), form)["rec"]

    # ---------------------------------------------------------------- waiting / residence
    def waiting(self, r: ArrayLike, policy: str = "trail", C: float | None = None,
                ) -> np.ndarray:
        """Waiting term ``W(r)`` (mean time before first service) of a job predicted ``r``.

        Examples
        --------
        >>> from kvopt.queueing.distributions import Exponential
        >>> from kvopt.queueing.predictions import ExpPredictions
        >>> m = SoapModel(Exponential(1.0), ExpPredictions(), lam=0.5)
        >>> round(float(m.waiting(1.0, "trail", C=0.5)[0]), 6)
        0.487454
        """
        p, C = check_policy(policy, C)
        r = np.atleast_1d(np.asarray(r, dtype=float))
        lam, es2 = self.lam, self.sizes.moment(2)
        if p == "fcfs":
            return np.full(r.shape, lam * es2 / (2 * (1 - self.rho)))
        form = _FORM.get(p, "corrected")
        mo = self._moments(r, C, _WHAT[p], form)
        return self._w_from(mo, p)

    def _w_from(self, mo: dict, p: str) -> np.ndarray:
        lam, es2 = self.lam, self.sizes.moment(2)
        le, lt = mo["le"], mo["lt"]
        if p == "trail-printed":
            return (mo["m2"] + mo["rec"]) / (2 * (1 - le) ** 2)
        den = 2 * (1 - le) * (1 - lt)
        if p == "spjf":
            return lam * es2 / den
        if p == "pspjf":
            return mo["m2"] / den
        return (mo["m2"] + mo["rec"]) / den

    def _phi_direct(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``int_lo^hi ds / (1 - rho_lt(s))`` for ``0 <= lo <= hi`` (direct quadrature)."""
        lo, hi = np.atleast_1d(lo).astype(float), np.atleast_1d(hi).astype(float)
        pts = self._ukinks(1.0)
        out = np.zeros(lo.shape)
        for i, (a, b) in enumerate(zip(lo, hi, strict=True)):
            if b <= a:
                continue
            inner = pts[(pts > a) & (pts < b)]
            s, w = panel_nodes(np.concatenate([[a], inner, [b]]), None, self.n)
            out[i] = (w[0] / (1 - self.rho_r(s[0], inclusive=False))).sum()
        return out

    def _residence(self, x: np.ndarray, r: np.ndarray, p: str, C: float,
                   phi: Callable[[np.ndarray, np.ndarray], np.ndarray],
                   rho_lt: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Residence given ``phi(hi, lo) = int_lo^hi ds / (1 - rho_lt(s))`` and ``rho_lt``."""
        x, r = np.broadcast_arrays(np.asarray(x, float), np.asarray(r, float))
        if p in ("fcfs", "spjf"):
            return x.astype(float)
        if p == "pspjf":
            return x / (1 - rho_lt(r))
        if p == "sprpt":
            return phi(r, _pos(r - x)) + _pos(x - r)
        if p == "trail":
            d = np.minimum(x, C * r)
            return phi(r, _pos(r - d)) + _pos(d - r) + _pos(x - C * r)
        # printed: int_0^{a0} da / (1 - rho'((r - a)+)) + (x - a0), even when x < a0
        a0 = C * r
        return phi(r, _pos(r - a0)) + _pos(a0 - r) + (x - a0)

    def residence(self, x: ArrayLike, r: ArrayLike, policy: str = "trail",
                  C: float | None = None) -> np.ndarray:
        """Residence term (first service to completion) of a job of size ``x``, prediction ``r``.

        For TRAIL (corrected):
        ``int_0^{min(x, C r)} da / (1 - rho_lt((r - a)+)) + (x - C r)+``.
        """
        p, C = check_policy(policy, C)
        x, r = np.broadcast_arrays(np.atleast_1d(np.asarray(x, float)),
                                   np.atleast_1d(np.asarray(r, float)))
        def phi(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
            return self._phi_direct(np.ravel(lo), np.ravel(hi)).reshape(np.shape(hi))

        def rho_lt(s: np.ndarray) -> np.ndarray:
            return self.rho_r(np.ravel(s), inclusive=False).reshape(np.shape(s))

        return self._residence(x, r, p, C, phi, rho_lt)

    def response_given(self, x: ArrayLike, r: ArrayLike, policy: str = "trail",
                       C: float | None = None) -> np.ndarray:
        """Mean response time ``E[T(x, r)]`` (direct quadrature, no interpolation).

        Examples
        --------
        >>> from kvopt.queueing.distributions import Exponential
        >>> from kvopt.queueing.predictions import Perfect
        >>> m = SoapModel(Exponential(1.0), Perfect(), lam=0.5)
        >>> t = m.response_given(1.0, 1.0, "srpt")
        """
        x, r = np.broadcast_arrays(np.atleast_1d(np.asarray(x, float)),
                                   np.atleast_1d(np.asarray(r, float)))
        return self.waiting(r.ravel(), policy, C).reshape(r.shape) + self.residence(
            x, r, policy, C)

    # ---------------------------------------------------------------- tabulated versions
    def _tables(self, p: str, C: float,
                ) -> tuple[tuple[PiecewiseLegendre, PiecewiseLegendre], PiecewiseLegendre]:
        key = (p, C)
        if key not in self._cache:
            u = self._upanels(C)
            if "phi" not in self._cache:
                lt = PiecewiseLegendre(u, lambda s: self.rho_r(s, inclusive=False), self.n)
                g = PiecewiseLegendre(u, None, self.n, values=1.0 / (1.0 - lt.values))
                self._cache["phi"] = (lt, g)
            W = PiecewiseLegendre(u, lambda s: self.waiting(s, p, C), self.n)
            self._cache[key] = W
        return self._cache["phi"], self._cache[key]

    def _T_tab(self, x: np.ndarray, r: np.ndarray, p: str, C: float) -> np.ndarray:
        (lt, g), W = self._tables(p, C)
        x, r = np.broadcast_arrays(np.asarray(x, float), np.asarray(r, float))
        av = self.sizes.atoms[0]
        at = np.isin(r, av) if (self.predictions.is_atom and av.size) else np.zeros(r.shape, bool)
        wr = W(r)
        if at.any():
            # W and rho_lt jump at an atom of Y: evaluate exactly there, not by interpolation
            ua, inv = np.unique(r[at], return_inverse=True)
            wr[at] = self.waiting(ua, p, C)[inv]
            lt_at = dict(zip(ua.tolist(), self.rho_r(ua, inclusive=False).tolist(), strict=True))

            def lt_fn(s: np.ndarray) -> np.ndarray:
                s = np.asarray(s, float)
                out = lt(s)
                m = np.isin(s, ua)
                out[m] = [lt_at[v] for v in s[m].tolist()]
                return out
        else:
            lt_fn = lt

        def phi(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
            return g.integral(hi) - g.integral(lo)

        return wr + self._residence(x, r, p, C, phi, lt_fn)

    def _z_nodes(self, x: np.ndarray, C: float, kinks: bool = True,
                 ) -> tuple[np.ndarray, np.ndarray]:
        zp = self.predictions
        if zp.is_atom:
            return np.ones((x.size, 1)), np.ones((x.size, 1))
        if not kinks and self.sizes.atoms[0].size == 0:
            z, w = panel_nodes(zp.panel_points, None, self.n)
            return z, w * zp.pdf(z)
        uk = self._ukinks(C)
        with np.errstate(divide="ignore"):
            extra = np.concatenate(
                [np.broadcast_to([1.0 / C, 1.0], (x.size, 2)), uk[None, :] / x[:, None]], axis=1)
        z, w = panel_nodes(zp.panel_points, extra, self.n)
        return z, w * zp.pdf(z)

    def response_given_size(self, x: ArrayLike, policy: str = "trail",
                            C: float | None = None) -> np.ndarray:
        """Per-size mean ``E[T(x)] = E[T(x, x Z)]`` (averaging over the prediction noise).

        Examples
        --------
        >>> from kvopt.queueing.distributions import Exponential
        >>> from kvopt.queueing.predictions import Perfect
        >>> m = SoapModel(Exponential(1.0), Perfect(), lam=0.5)
        >>> [round(float(v), 6) for v in m.response_given_size([0.5, 1, 2], "trail", C=0.5)]
        [0.657564, 1.291042, 2.909098]
        """
        p, C = check_policy(policy, C)
        x = np.atleast_1d(np.asarray(x, dtype=float))
        z, w = self._z_nodes(x, C)
        X = np.broadcast_to(x[:, None], z.shape)
        return (w * self._T_tab(X, X * z, p, C)).sum(axis=1)

    def size_nodes(self, C: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """Quadrature nodes and weights for the size distribution (atoms included)."""
        xs, ws = [], []
        pts = self.sizes.panel_points
        if pts is not None:
            uk = self._ukinks(C)
            uk = uk[(uk > pts[0]) & (uk < pts[-1])]
            x, w = panel_nodes(np.unique(np.concatenate([pts, uk])), None, self.n)
            xs.append(x[0])
            ws.append(w[0] * self.sizes.pdf(x[0]))
        av, ap = self.sizes.atoms
        xs.append(av)
        ws.append(ap)
        x, w = np.concatenate(xs), np.concatenate(ws)
        keep = w > 0
        return x[keep], w[keep]

    def mean_response(self, policy: str = "trail", C: float | None = None) -> float:
        """Overall mean response time ``E[T] = E[T(X, Y)]``.

        Examples
        --------
        >>> from kvopt.queueing.distributions import Exponential
        >>> from kvopt.queueing.predictions import ExpPredictions
        >>> m = SoapModel(Exponential(1.0), ExpPredictions(), lam=0.5)
        >>> round(m.mean_response("sprpt"), 4)
        1.6583
        """
        p, C = check_policy(policy, C)
        ex = self.sizes.mean
        if p == "fcfs":
            return float(ex + self.lam * self.sizes.moment(2) / (2 * (1 - self.rho)))
        form = _FORM.get(p, "corrected")
        u, wu = panel_nodes(self._upanels(C), None, self.n)
        u, wu = u[0], wu[0]
        extra = () if p == "spjf" else ("nu1",) if p == "pspjf" else ("pi",)
        if self.predictions.is_atom:
            # E[W(Y)] and E[X phi(Y)] at the size nodes (exact at atoms), the rest on the u grid
            x, wx = self.size_nodes(C)
            mo = self._moments(x, C, _WHAT[p], form)
            ew = float((wx * self._w_from(mo, p)).sum())
            if p == "spjf":
                return ew + ex
            if p == "pspjf":
                lt = mo["lt"]
                return ew + ex + float((wx * x * lt / (1 - lt)).sum())
            mu = self._moments(u, C, ("lt", "pi"), form)
        else:
            # W tabulated on the u grid, averaged over (X, Z) by product quadrature; the
            # density of Y (log-singular at 0 for exp predictions) is never formed
            mu = self._moments(u, C, _WHAT[p] + extra, form)
            W = PiecewiseLegendre(self._upanels(C), None, self.n,
                                  values=self._w_from(mu, p).reshape(-1, self.n))
            x, wx = self.size_nodes(C)
            z, wz = self._z_nodes(x, C, kinks=False)
            ew = float((wx[:, None] * wz * W(x[:, None] * z)).sum())
            if p == "spjf":
                return ew + ex
        phi = mu["lt"] / (1 - mu["lt"])
        dens = mu["nu1"] if p == "pspjf" else mu["pi"]
        return ew + ex + float((wu * phi * dens).sum())


#: Deprecated (one release): ``POLICIES``, a name that clashed with :data:`kvopt.sim.POLICIES`.
__getattr__ = renamed_names(__name__, {"POLICIES": "SOAP_POLICIES"})
