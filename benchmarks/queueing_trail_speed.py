"""Speed and accuracy of the limited-preemption (TRAIL, corrected Lemma 1) formula.

For each case it prints the time of one evaluation (fresh model, no cache; best of
``--repeat``) of

* ``E[T]``       -- the overall mean response time (``SoapModel.mean_response``), and
* ``E[T(x,r)]``  -- the per-job Lemma 1 value (``SoapModel.response_given``),

and the relative error against a high-precision run of the same engine (32 nodes per panel
instead of 8).  Independent references (no code shared with the engine) are checked too:
SPJF with exponential predictions through the Bessel closed forms (mpmath), the per-job
corrected Lemma 1 by nested ``scipy.integrate.quad``, and the perfect-predictor closed form.

Usage::

    python benchmarks/queueing_trail_speed.py [--repeat 5] [--quick]

Target (issue 6): < 50 ms per evaluation at 1e-6 relative accuracy.
"""

from __future__ import annotations

import argparse
import time

import mpmath as mp
import numpy as np
from scipy import integrate, special

from kvopt.queueing import SoapModel, parse_predictions, parse_sizes

CASES = [
    ("exp:1", "exp"),
    ("hyperexp:0.5,0.5,0.5,1.5", "exp"),
    ("uniform:0,2", "lognormal:0.5"),
    ("exp:1", "perfect"),
    ("bpareto:1.5,1,100", "exp"),
]


def _best(f, repeat):
    best, val = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        val = f()
        best = min(best, time.perf_counter() - t)
    return best, val


def engine_table(repeat: int, quick: bool) -> float:
    lams = [0.9] if quick else [0.5, 0.9]
    Cs = [0.2, 0.8] if quick else [0.2, 0.5, 0.8]
    print(f"{'sizes':<26}{'pred':<15}{'rho':>4}{'C':>5}{'E[T]':>12}{'ms':>7}{'rel.err':>9}"
          f"{'E[T(x,r)]':>11}{'ms':>6}{'rel.err':>9}")
    worst_t, worst_e = 0.0, 0.0
    for spec, pred in CASES:
        d, pm = parse_sizes(spec), parse_predictions(pred)
        x0, r0 = 0.5 * d.mean, 1.0 * d.mean
        for rho in lams:
            lam = rho / d.mean
            for C in Cs:
                def overall(d=d, pm=pm, lam=lam, C=C):
                    return SoapModel(d, pm, lam).mean_response("trail", C)

                def per_job(d=d, pm=pm, lam=lam, C=C, x0=x0, r0=r0):
                    return SoapModel(d, pm, lam).response_given(x0, r0, "trail", C)[0]

                t1, v1 = _best(overall, repeat)
                ref1 = SoapModel(d, pm, lam, n=32).mean_response("trail", C)
                t2, v2 = _best(per_job, repeat)
                ref2 = SoapModel(d, pm, lam, n=32).response_given(x0, r0, "trail", C)[0]
                e1, e2 = abs(v1 / ref1 - 1), abs(v2 / ref2 - 1)
                worst_t, worst_e = max(worst_t, t1, t2), max(worst_e, e1, e2)
                print(f"{spec:<26}{pred:<15}{rho:>4}{C:>5}{v1:>12.7f}{1e3 * t1:>7.1f}{e1:>9.1e}"
                      f"{v2:>11.6f}{1e3 * t2:>6.1f}{e2:>9.1e}")
    print(f"\nworst time {1e3 * worst_t:.1f} ms, worst relative error vs 32-node run {worst_e:.1e}")
    return worst_t


def independent_checks() -> None:
    print("\nindependent references (no shared code):")
    lam = 0.5
    # 1. SPJF with exp sizes and exponential predictions, Bessel closed forms in mpmath
    mp.mp.dps = 25
    L = mp.mpf(lam)
    rho = lambda y: L * (1 - 2 * y * mp.besselk(2, 2 * mp.sqrt(y)))  # noqa: E731
    fy = lambda y: 2 * mp.besselk(0, 2 * mp.sqrt(y))  # noqa: E731
    ref = 1 + mp.quad(lambda y: fy(y) * L * 2 / (2 * (1 - rho(y)) ** 2),
                      [0, 1e-6, 1e-3, 0.1, 1, 4, 16, 64, 256, mp.inf])
    got = SoapModel(parse_sizes("exp:1"), parse_predictions("exp"), lam).mean_response("spjf")
    print(f"  SPJF exp/exp lam=0.5: engine {got:.12f}  mpmath {float(ref):.12f}  "
          f"rel.err {abs(got / float(ref) - 1):.1e}")

    # 2. corrected Lemma 1 per job, exp predictions, by nested scipy quad
    def rho_p(s):
        s = max(s, 0.0)
        return lam * (1 - 2 * s * special.kv(2, 2 * np.sqrt(s))) if s > 0 else 0.0

    def g(x, y):
        return np.exp(-x - y / x) / x

    def lemma1(x, r, C):
        m2 = 2 - 2 * r**1.5 * special.kv(3, 2 * np.sqrt(r))
        ys = r / (1 - C) if C < 1 else np.inf
        rec = 0.0
        for lo, hi in ((r, ys), (ys, np.inf)):
            if hi <= lo:
                continue
            rec += integrate.quad(
                lambda y: integrate.quad(
                    lambda t: (t - min(y - r, C * y)) ** 2 * g(t, y),
                    min(y - r, C * y), np.inf, epsabs=1e-14, epsrel=1e-12)[0],
                lo, hi, epsabs=1e-14, epsrel=1e-11, limit=200)[0]
        w = lam * (m2 + rec) / (2 * (1 - rho_p(r)) ** 2)
        d = min(x, C * r)
        res = integrate.quad(lambda a: 1 / (1 - rho_p(r - a)), 0, d, epsrel=1e-12)[0]
        return w + res + max(x - C * r, 0.0)

    m = SoapModel(parse_sizes("exp:1"), parse_predictions("exp"), lam)
    for x, r, C in ((0.3, 1.0, 0.5), (2.0, 1.0, 0.5), (1.0, 0.5, 0.5), (0.3, 1.0, 0.2)):
        ref = lemma1(x, r, C)
        got = float(m.response_given(x, r, "trail", C)[0])
        print(f"  Lemma 1 (corrected) exp/exp lam=0.5 x={x} r={r} C={C}: engine {got:.10f}  "
              f"scipy {ref:.10f}  rel.err {abs(got / ref - 1):.1e}")

    # 3. perfect predictor, Exp(1) sizes: closed-form waiting term, scipy for the rest
    C, lam = 0.5, 0.8
    rho_s = lambda t: lam * (1 - np.exp(-t) * (1 + t))  # noqa: E731

    def t_of_x(x):
        w = (rho_s(x) + lam * (1 - C) * np.exp(-x / (1 - C)) * (x + 1 - C)) / (1 - rho_s(x)) ** 2
        return w + integrate.quad(lambda t: 1 / (1 - rho_s(t)), (1 - C) * x, x,
                                  epsrel=1e-13)[0] + (1 - C) * x

    ref = sum(integrate.quad(lambda x: np.exp(-x) * t_of_x(x), a, b, epsrel=1e-12, limit=200)[0]
              for a, b in ((0, 1), (1, 4), (4, 16), (16, 60)))
    got = SoapModel(parse_sizes("exp:1"), parse_predictions("perfect"), lam).mean_response(
        "trail", C)
    print(f"  TRAIL perfect exp lam=0.8 C=0.5: engine {got:.12f}  closed form+quad {ref:.12f}  "
          f"rel.err {abs(got / ref - 1):.1e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer cases, no independent checks")
    a = ap.parse_args()
    engine_table(a.repeat, a.quick)
    if not a.quick:
        independent_checks()


if __name__ == "__main__":
    main()
