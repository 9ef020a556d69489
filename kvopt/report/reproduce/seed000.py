"""Seed 000 (Chen, Ye, Zhou: Amax, Amin, A_l against H-SF): targets, errata, figures.

Targets: Example 1 and Example EC.1 (simulated; randomised policies averaged exactly over
all tie orders), Corollary 1's lambda_max against independent values and Figure 1's fit,
the trace bound, Theorems 6-8 (two-point, A_l, LG) and the geometric limit, Theorem 2 (its
claimed lower bound and its instance), Theorem 6 in the token-level simulator under
both readings of Algorithm 2's tie-break, and Section 6's Experiments 1-3 on a stand-in
workload. Errata: Theorem 2, Theorem 8's denominator,
Figure 1's range, Theorem 7 at alpha = 1, and text-level slips.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kvopt.report.reproduce.core import (
    Context,
    Erratum,
    Figure,
    Target,
    compare,
    num,
)

SEED = "000"
TITLE = "Adaptively Robust LLM Inference Optimization under Prediction Uncertainty"
PAPER = "Chen, Ye, Zhou; arXiv 2508.14544v2 (2025)"
INTRO = ("Amax (plans with the upper end u of a prediction interval) and Amin (the lower "
         "end, raised on eviction) against the hindsight shortest-first benchmark H-SF; "
         "ratios are fluid limits (n, M -> oo) against H-SF unless a column says OPT.")

#: Corollary 1's lambda_max, computed independently in the digest (notes/seed-000 R7).
DIGEST_LAMBDA = {1: 1.0, 2: 1.25, 3: 1.379286, 4: 1.465873, 5: 1.530893, 10: 1.724924,
                 20: 1.911797, 50: 2.153194, 100: 2.333341, 200: 2.512132, 500: 2.747029,
                 1000: 2.923922, 2000: 3.100295}


def _exact(inst: Any, policy: str) -> float:
    """Mean TEL over every tie order (``tie_order_expectation``) or the one deterministic
    run."""
    from kvopt.report.measure import policy_tel, tie_order_expectation

    if policy in ("amin", "amax"):
        return float(tie_order_expectation(inst, policy))
    return policy_tel(inst, policy, None)


def t_example1(ctx: Context) -> list[Target]:
    from kvopt.theory.adversarial import example1

    inst = example1()
    out = []
    for key, pol, paper in (("R1a", "hsf", 5), ("R1b", "amax", 9), ("R1c", "amin", 5)):
        v = _exact(inst, pol)
        out.append(Target(SEED, key, f"Example 1 (n = 5, s = 1, o = 1, [l, u] = [1, 4], "
                          f"M = 10): TEL({pol.upper().replace('HSF', 'H-SF')})", str(paper),
                          num(v), "exact", compare(paper, v, 1e-9),
                          f"kvopt simulate instances/tiny/seed000-example1.json --policy {pol}",
                          reading="mean over all 120 tie orders" if pol != "hsf" else ""))
    return out


def t_ec1(ctx: Context) -> list[Target]:
    from kvopt.report.measure import opt_tel, policy_tel
    from kvopt.theory.adversarial import example_ec1

    inst = example_ec1()
    h = policy_tel(inst, "hsf", None)
    obj, _, status = opt_tel(inst)
    ok = status == "optimal" and obj == h == 12
    return [Target(SEED, "R2", "Example EC.1 (M = 7, s = 1, o = (1, 2, 3, 4)): the schedule "
                   "I3 = ({1,2,3}, -, {4}) is optimal, TEL 12", "12 (I3 optimal)",
                   f"H-SF {num(h)} (starts job 4 at t = 2, as I3); hindsight OPT {num(obj)} "
                   f"({status})", "exact", "reproduced" if ok else "differs",
                   "kvopt solve instances/tiny/seed000-example-ec1.json",
                   reason="" if ok else "H-SF or OPT is not 12")]


def t_rayleigh(ctx: Context) -> list[Target]:
    from kvopt.theory.rayleigh import fit_log_curve, lambda_max, paper_fit, trace_binv_a
    from kvopt.theory.symbolic import trace_exact

    dev = max(abs(float(lambda_max(u)) - v) for u, v in DIGEST_LAMBDA.items())
    harm = [abs(trace_exact(u) - sum(1 / __import__("sympy").Integer(i) for i in range(1, u + 1)))
            for u in range(1, 8)]
    trace_dev = max(abs(trace_binv_a(u) - sum(1.0 / i for i in range(1, u + 1)))
                    for u in (10, 50, 200))
    fit = ctx.once("000/fit", lambda: fit_log_curve(
        [50, 100, 300, 1000, 3000, 10000] if ctx.fast else None))
    r1 = float(paper_fit(1)) - 1.0
    return [
        Target(SEED, "R7", "Corollary 1: CR(Amin) = lambda_max(A_u, B_u) (s = 0, l = 1); "
               "values for u = 1 .. 2000 (independent computation, digest R7)",
               "lambda_max(10) = 1.724924, lambda_max(1000) = 2.923922",
               f"max |difference| over 13 values: {dev:.1e}", "1e-6",
               compare(0.0, dev, 1e-6), "kvopt ratio amin --u 1000"),
        Target(SEED, "R5", "Section 3.3: tr(B_u^-1 A_u) = H_u, so lambda_max <= H_u <= 1 + ln u",
               "H_u", f"exact (sympy rationals) for u <= 7: {all(d == 0 for d in harm)}; "
               f"floats u = 10, 50, 200: max error {trace_dev:.1e}", "exact / 1e-9",
               "reproduced" if all(d == 0 for d in harm) and trace_dev < 1e-9 else "differs",
               ctx.cmd(f"{SEED}/R5"), reason="the trace is not H_u"),
        Target(SEED, "F1", "Figure 1: CR(Amin) ~ 0.2555 ln(u + 0.2793) + 1.1587 with "
               "R^2 > 0.9999", "R^2 > 0.9999",
               f"R^2 = {fit.paper_r2:.5f}, max |residual| {fit.paper_max_abs_residual:.4f} "
               f"on u in [{int(fit.u.min())}, {int(fit.u.max())}]; residual at u = 1: "
               f"{r1:+.4f}", "R^2 >= 0.9999 where the fit is used",
               "reproduced" if fit.paper_r2 >= 0.9999 else "differs",
               ctx.cmd(f"{SEED}/F1"), reason="R^2 below 0.9999",
               reading="range not stated by the paper; see the errata for u < 50"),
    ]


def t_closed_forms(ctx: Context) -> list[Target]:
    import sympy as sp

    from kvopt.theory import ratios as rt
    from kvopt.theory import symbolic as sy

    d = sy.derive_amin_two_point()
    sup_ok = sp.simplify(d["sup"] - (3 - sy.ALPHA) / 2) == 0
    tp = [rt.amin_two_point(a) for a in (0.25, 0.5, 0.1)]
    al = [rt.al_two_point(a) for a in (0.25, 0.1, 0.75)]
    qs = np.linspace(0.05, 0.95, 19)
    lg_dev = max(abs(rt.amin_lg(q) - rt.amin_lg_numeric(q)) for q in qs)
    lg_sup = float(sp.limit(sy.lg_expr(), sy.Q, 1))
    geo = [rt.amin_geometric(q) for q in np.linspace(0.05, 0.99, 30)]
    geo_ok = bool(np.all(np.diff(geo) > 0)) and rt.GEOMETRIC_LIMIT < 1.7
    return [
        Target(SEED, "R6a", "Theorem 6: sup over two-point mixes of CR(Amin) = (3 - alpha)/2 "
               "(s = 0), e.g. 1.375, 1.25, 1.45 at alpha = 1/4, 1/2, 1/10",
               "1.375, 1.25, 1.45", ", ".join(num(v) for v in tp) + " (sympy: Lemma 2 summed "
               f"and maximised gives (3 - alpha)/2: {sup_ok})", "exact",
               "reproduced" if sup_ok and compare(1.375, tp[0], 1e-12) == "reproduced"
               else "differs", "kvopt ratio amin --alpha 0.25", reason="not (3 - alpha)/2",
               reading="s = 0 (with s > 0 Lemma 2's two-point sup is larger: kvopt ratio amin "
                       "--l 1 --u 4 --s 3 gives 1.4702)"),
        Target(SEED, "R6b", "Theorem 7 (A_l): 1.166667, 1.055556, 2.125 at alpha = 1/4, 1/10, "
               "3/4; switch at alpha* = (3 - sqrt 5)/2 = 0.381966 (1.309017)",
               "1.166667, 1.055556, 2.125; 1.309017", ", ".join(f"{v:.6f}" for v in al)
               + f"; {rt.min_two_point(rt.ALPHA_STAR):.6f} at {rt.ALPHA_STAR:.6f}", "1e-6",
               "reproduced" if max(abs(a - b) for a, b in zip(al, (7 / 6, 19 / 18, 2.125),
                                                               strict=True)) < 1e-6 else "differs",
               "kvopt ratio a-l --alpha 0.25", reason="Theorem 7's values differ"),
        Target(SEED, "R9a", "Theorem 8 (LG): the closed form, increasing in q, sup 14/9 "
               "(\"about 1.56\")", "closed form; 1.56",
               f"closed form = Lemma 2 numerically to {lg_dev:.1e} on 19 q; sup {lg_sup:.6f}",
               "1e-9; 0.005", "reproduced" if lg_dev < 1e-9 and abs(lg_sup - 1.56) < 5e-3
               else "differs", ctx.cmd(f"{SEED}/R9"), reason="Theorem 8 differs"),
        Target(SEED, "R9b", "Figure 3 (geometric): CR(Amin) increasing in q, bounded by 1.7",
               "< 1.7, increasing", f"increasing on 30 q in [0.05, 0.99]: "
               f"{bool(np.all(np.diff(geo) > 0))}; sup (q -> 1, u = oo) = 10 - 12 ln 2 = "
               f"{rt.GEOMETRIC_LIMIT:.6f}", "-", "reproduced" if geo_ok else "differs",
               ctx.cmd(f"{SEED}/R9"), reason="not increasing or above 1.7",
               reading="u = oo (a finite u gives a non-monotone curve tending to 11/8)"),
    ]


def _thm2_amax(ctx: Context) -> dict[str, Any]:
    from kvopt.report.measure import hsf_tel, mean_se, policy_tel
    from kvopt.theory import adversarial as adv

    def compute() -> dict[str, Any]:
        inst = adv.amax_thm2_instance(4, 64, 2, 8)
        runs = [policy_tel(inst, "amax", s) for s in range(5 if ctx.fast else 20)]
        amax, se = mean_se(runs)
        return {"hsf": hsf_tel(inst), "amax": amax, "se": se, "runs": len(runs)}

    out: dict[str, Any] = ctx.once("000/thm2", compute)
    return out


def t_thm2(ctx: Context) -> list[Target]:
    from kvopt.theory import ratios as rt

    a = 1 / 16
    claimed, best = rt.amax_lower_claimed(a), rt.amax_construction(a)
    m = _thm2_amax(ctx)
    printed = (2 * 64 + 8 * 4) * 64 * (2 + 8) / 2
    return [
        Target(SEED, "Thm2", "Theorem 2: CR(Amax) >= alpha^-1 (1 + alpha^-1/2)/2 (so between "
               "O(alpha^-1.5) and O(alpha^-2))", f"{num(claimed, 2)} at alpha = 1/16",
               f"its own construction gives at most {num(best, 2)} (max over a/b; "
               "~1.207/alpha as alpha -> 0): the claim does not follow", "-",
               compare(claimed, best, 1e-6, mismatch="erratum"), "kvopt ratio amax --alpha "
               "0.0625"),
        Target(SEED, "R10a", "Theorem 2's instance (l = 4, u = 64, a = 2, b = 8, M = 256): "
               "TEL(H-SF)", "10240", num(m["hsf"]), "exact", compare(10240, m["hsf"], 0),
               ctx.cmd(f"{SEED}/R10")),
        Target(SEED, "R10b", "Theorem 2's proof: E[TEL(Amax)] = (au + bl) u (a + b)/2 on that "
               "instance", num(printed), f"{num(m['amax'], 1)} ± {num(m['se'], 1)} "
               f"({m['runs']} runs)", "2 standard errors",
               compare(printed, m["amax"], 2 * m["se"]), ctx.cmd(f"{SEED}/R10"),
               reason="the look-ahead admission check (eq. 3) starts jobs staggered, so Amax "
                      "runs up to ~2x more jobs at once than the proof's 'l parallel workers'",
               reading="one tie order per run"),
    ]


def _two_point(ctx: Context) -> dict[str, tuple[float, float, int]]:
    from kvopt.report.measure import hsf_tel, mean_se, policy_tel
    from kvopt.theory import adversarial as adv

    def compute() -> dict[str, tuple[float, float, int]]:
        inst = adv.amin_two_point_worst(4, 16, 4000, memory=600)
        h = hsf_tel(inst)
        seeds = range(2 if ctx.fast else 6)
        out = {}
        for pol in ("amin", "amin/per-sort"):
            r = [policy_tel(inst, pol, s) / h for s in seeds]
            out[pol] = (*mean_se(r), len(r))
        return out

    res: dict[str, tuple[float, float, int]] = ctx.once("000/two_point", compute)
    return res


def t_two_point_sim(ctx: Context) -> list[Target]:
    from kvopt.report.measure import READINGS

    res = _two_point(ctx)
    out = []
    for key, pol in (("Thm6-sim-a", "amin/per-sort"), ("Thm6-sim-b", "amin")):
        mean, se, k = res[pol]
        out.append(Target(
            SEED, key, "Theorem 6 in the token-level simulator: Amin / H-SF on the two-point "
            "worst case (l = 4, u = 16, x_l/x_u = 4, n = 4000, M = 600)", "1.375 (fluid)",
            f"{num(mean)} ± {num(se)} ({k} runs)", "0.04 (finite n: 1.397 at n = 16000)",
            compare(1.375, mean, 0.04), ctx.cmd(f"{SEED}/Thm6-sim"),
            reason=("with one tie order per run the same jobs are evicted again and again "
                    "(the earliest admitted among equal bounds), so no long job finishes "
                    "while short ones remain; redrawing the ties at every sort, as Algorithm "
                    "2 says, gives the fluid value"), reading=READINGS[pol]))
    return out


#: Section 6's three prediction settings: (label, Amin/Amax predictions, kvopt's spec).
EXPERIMENTS = (("Exp 1: [1, 1000] for all", None),
               ("Exp 2: classes of width 100", {"kind": "buckets", "width": 100}),
               ("Exp 3: x = 0.1", {"kind": "interval", "x": 0.1}),
               ("Exp 3: x = 0.95", {"kind": "interval", "x": 0.95}))


def experiment_instance(n: int, seed: int) -> Any:
    """Section 6's setting on the LMSYS stand-in: ``n`` requests, all at time 0, outputs
    clipped at 1000, interval ``[1, 1000]`` (Experiment 1), ``M = 16492``."""
    from kvopt import Instance
    from kvopt.report.table1 import lmsys_standin

    w = lmsys_standin(n, seed=seed)
    return Instance(memory=w.memory, arrival=np.zeros(n), prompt=w.prompt,
                    output=np.minimum(w.output, 1000), time_unit="second",
                    pred_lower=np.ones(n, np.int64), pred_upper=np.full(n, 1000),
                    name=f"seed000-experiments-standin-n{n}-seed{seed}")


def experiments(ctx: Context) -> dict[str, dict[str, float]]:
    """Mean latency over seeds of H-SF, Amin and Amax in each setting of Section 6."""
    from kvopt.sim import simulate

    def compute() -> dict[str, dict[str, float]]:
        n = 1000 if ctx.fast else 2000
        seeds = range(2 if ctx.fast else 5)
        out: dict[str, dict[str, float]] = {}
        for label, pred in EXPERIMENTS:
            row: dict[str, float] = {}
            for pol in ("hsf", "amin", "amin/per-sort", "amax"):
                name, _, ties = pol.partition("/")
                opts: dict[str, Any] = {"ties": ties} if ties else {}
                row[pol] = float(np.mean([simulate(
                    experiment_instance(n, k), name, step_time="a100-llama2-70b-tp2", seed=k,
                    predictions=None if pol == "hsf" else pred, **opts).metrics.mean_latency
                    for k in seeds]))
            out[label] = row
        out["meta"] = {"n": n, "seeds": len(seeds)}
        return out

    res: dict[str, dict[str, float]] = ctx.once("000/experiments", compute)
    return res


def t_experiments(ctx: Context) -> list[Target]:
    ex = experiments(ctx)
    e1, e2, lo, hi = (ex[label] for label, _ in EXPERIMENTS)
    reading = (f"LMSYS stand-in (lognormal fit to the paper's statistics, outputs clipped at "
               f"1000), n = {int(ex['meta']['n'])}, all at t = 0, M = 16492, A100 70B step "
               f"time, {int(ex['meta']['seeds'])} seeds; mean latency in seconds")
    cmd = ctx.cmd(f"{SEED}/Exp1-3")

    def r(row: dict[str, float], pol: str) -> float:
        return row[pol] / row["hsf"]

    return [
        Target(SEED, "Exp1a", "Experiment 1 (Fig. 5): Amin's average latency is nearly "
               "identical to H-SF's", "Amin ~ H-SF",
               f"Amin / H-SF = {r(e1, 'amin'):.3f} (one tie order per run), "
               f"{r(e1, 'amin/per-sort'):.3f} (Alg. 2 literal: ties redrawn at every sort)",
               "<= 1.10", "reproduced" if min(r(e1, "amin"), r(e1, "amin/per-sort")) <= 1.10
               else "differs", cmd,
               reason="Amin starts every job at the lower bound l = 1 and evicts often in the "
                      "token-level model (theory NOTES item 14: with l = 1 the simulator is "
                      "far from Lemma 2's fluid value); the paper's M and Vidur model are not "
                      "given", reading=reading),
        Target(SEED, "Exp1b", "Experiment 1: Amax is far worse (very few requests fit per "
               "batch)", "Amax >> H-SF", f"Amax / H-SF = {r(e1, 'amax'):.2f}", ">= 2",
               "reproduced" if r(e1, "amax") >= 2 else "differs", cmd,
               reason="Amax is not far worse", reading=reading),
        Target(SEED, "Exp2", "Experiment 2 (Fig. 6): with classes of width 100, Amax's average "
               "latency is nearly halved relative to Experiment 1", "~0.5",
               f"Amax(Exp 2) / Amax(Exp 1) = {e2['amax'] / e1['amax']:.3f}; Amin / H-SF = "
               f"{r(e2, 'amin'):.3f}", "0.35-0.65",
               "reproduced" if 0.35 <= e2["amax"] / e1["amax"] <= 0.65 else "differs", cmd,
               reason="the stand-in's outputs are short (median 45), so most requests fall in "
                      "the first class [1, 100] and the class upper bounds are tight: Amax "
                      "gains far more than half", reading=reading),
        Target(SEED, "Exp3", "Experiment 3 (Fig. 7): at x = 0.1 Amax ~ Amin ~ H-SF; at "
               "x = 0.95 Amax deteriorates significantly while Amin stays close to H-SF",
               "x = 0.95: Amax >> Amin ~ H-SF",
               f"x = 0.1: Amax {r(lo, 'amax'):.3f}, Amin {r(lo, 'amin'):.3f}; x = 0.95: Amax "
               f"{r(hi, 'amax'):.3f}, Amin {r(hi, 'amin'):.3f} (times H-SF)",
               "ordering", "reproduced" if r(hi, "amax") > 1.5 * r(hi, "amin") else "differs",
               cmd, reason="the intervals [(1 - x) o, (1 + x) o] are centred on o, so Amax's "
                           "overestimate is at most 1 + x < 2 (digest seed-000 §4) while Amin "
                           "starts from (1 - x) o = 0.05 o and evicts", reading=reading),
    ]


# ---------------------------------------------------------------------------- errata
def errata(ctx: Context) -> list[Erratum]:
    from kvopt.report.measure import hsf_tel, policy_tel
    from kvopt.theory import ratios as rt
    from kvopt.theory import symbolic as sy
    from kvopt.theory.adversarial import two_point_instance
    from kvopt.theory.rayleigh import fit_log_curve, lambda_max, paper_fit

    rows = "; ".join(f"alpha = {a:g}: claimed {rt.amax_lower_claimed(a):.4g}, construction "
                     f"{rt.amax_construction(a):.4g}" for a in (0.5, 0.25, 0.1, 0.01))
    q = 0.6
    closed = float(sy.lg_denominator_sums()["den"].subs(sy.Q, q))
    fit = fit_log_curve([1, 2, 5, 10, 20, 50])
    small = "; ".join(f"u = {u}: lambda_max {float(lambda_max(int(u))):.4f}, fit "
                      f"{float(paper_fit(u)):.4f}" for u in (1, 2, 5, 20))
    inst = two_point_instance(4, 4, 20, 20, memory=40)
    al_ratio = policy_tel(inst, "a-l", None) / hsf_tel(inst)
    return [
        Erratum(SEED, "Theorem 2 (Amax lower bound) and its proof",
                "CR(Amax) >= alpha^-1 (1 + alpha^-1/2)/2; the proof's H-SF latency has "
                "'u a^2 + l^2 a b + u b^2'",
                "the proof's own latencies give alpha^-1 (r + alpha)(r + 1)/(r^2 + 2 alpha r "
                "+ 1) with r = a/b (denominator term 2 l a b), at most ~1.207/alpha: the "
                "established range is Omega(alpha^-1) to O(alpha^-2)",
                rows + " (sympy derivation: kvopt.theory.symbolic.derive_amax_construction)",
                "kvopt ratio amax --alpha 0.25"),
        Erratum(SEED, "Theorem 8's proof (denominator summand)",
                "k^3 q^(k-1) (2 k q^(k-1) + sum_{i>k} i q^(i-1))",
                "k^3 q^(k-1) (k q^(k-1) + 2 sum_{i>k} i q^(i-1)); the final closed form is right",
                f"q = 0.6: corrected sum / closed form = "
                f"{rt.lg_denominator_sum(q) / closed:.9f}, printed sum / closed form = "
                f"{rt.lg_denominator_sum(q, printed=True) / closed:.4f}",
                ctx.cmd(f"{SEED}/errata")),
        Erratum(SEED, "Figure 1's fit: range of validity",
                "0.2555 ln(u + 0.2793) + 1.1587, R^2 > 0.9999 (range not stated)",
                "accurate for u >= ~50 (max |residual| 0.0065 on [50, 10^4]); not for small u",
                f"{small}; R^2 on u in [1, 50]: {fit.paper_r2:.4f}",
                ctx.cmd(f"{SEED}/errata")),
        Erratum(SEED, "Theorem 7 at alpha = 1",
                "CR(A_l; t) = 1 + (alpha^2 t + 2 alpha^2)/(alpha^2 t^2 + 2 alpha^2 t + 1) "
                "(gives 3 at alpha = 1, t = 0)",
                "the formula is for alpha < 1; at alpha = 1 nothing is evicted and the ratio "
                "is 1",
                f"A_l on 40 jobs of length 4 (l = u = 4): TEL / H-SF = {al_ratio:.4f}",
                ctx.cmd(f"{SEED}/errata")),
        Erratum(SEED, "Text-level slips",
                "Sec. 6: 'larger values of x correspond to more precise predictions'; "
                "Figure 4: 'number of words'; Theorems 6 and 8 'use Theorem 2'; Figure 3 "
                "right 'bounded by 1.6'",
                "smaller x is more precise (the results paragraph says so); tokens; Lemma 2; "
                "the tight bound is 14/9 = 1.5556",
                "text (digest seed-000 §7)", "-"),
    ]


# --------------------------------------------------------------------------- figures
def figures(ctx: Context) -> list[Figure]:
    from matplotlib.figure import Figure as MplFigure

    from kvopt.report.writers import figure_png
    from kvopt.theory.rayleigh import lambda_max, paper_fit

    uu = np.unique(np.round(np.geomspace(1, 10_000, 25 if ctx.fast else 60)).astype(int))
    lam = np.array([float(lambda_max(int(u))) for u in uu])
    fig = MplFigure(figsize=(6.4, 4.6))
    ax1, ax2 = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
    ax1.plot(uu, lam, "o", ms=3, label="lambda_max(A_u, B_u) (kvopt)")
    ax1.plot(uu, paper_fit(uu), "-", label="paper's fit 0.2555 ln(u + 0.2793) + 1.1587")
    ax1.set(xscale="log", ylabel="CR(Amin) vs H-SF", title="Seed 000, Figure 1")
    ax1.legend(fontsize=7)
    ax2.plot(uu, lam - paper_fit(uu), "o-", ms=3)
    ax2.axhline(0, color="k", lw=0.5)
    ax2.axvspan(1, 50, color="C3", alpha=0.1)
    ax2.set(xscale="log", xlabel="u (alpha = 1/u)", ylabel="lambda_max - fit")
    fig.tight_layout()
    first = Figure("seed000_lambda_fit.png", "Seed 000: Corollary 1's lambda_max against "
                   "Figure 1's fit; below, the residual (shaded: u < 50, where the fit is off, "
                   "-0.22 at u = 1).", figure_png(fig, dpi=100))
    res = _two_point(ctx)
    fig = MplFigure(figsize=(6.4, 3.2))
    ax = fig.subplots()
    labels = ["one tie order per run\n(simulator default)", "ties redrawn at every sort\n"
              "(Algorithm 2 literal)"]
    vals = [res["amin"], res["amin/per-sort"]]
    ax.bar([0, 1], [v[0] for v in vals], yerr=[2 * v[1] for v in vals], color=["C7", "C0"])
    ax.axhline(1.375, color="C3", ls="--", label="Theorem 6: (3 - alpha)/2 = 1.375")
    ax.set_xticks([0, 1], labels, fontsize=8)
    ax.set(ylabel="Amin / H-SF", ylim=(1.0, 1.5), title="Two-point worst case, n = 4000")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    second = Figure("seed000_two_point.png", "Seed 000: Amin on its two-point worst case "
                    "(l = 4, u = 16) under the two readings of Algorithm 2's tie-break "
                    "(bars: mean, whiskers: 2 standard errors).", figure_png(fig, dpi=100))
    return [first, second]


TARGETS: dict[str, Callable[[Context], list[Target]]] = {
    "R1": t_example1, "R2": t_ec1, "R7": t_rayleigh, "R6": t_closed_forms, "Thm2": t_thm2,
    "Thm6-sim": t_two_point_sim, "Exp1-3": t_experiments,
}
ALIASES = {"R5": "R7", "F1": "R7", "R9": "R6", "R10": "Thm2", "Exp1a": "Exp1-3",
           "Exp1b": "Exp1-3", "Exp2": "Exp1-3", "Exp3": "Exp1-3"}


def notes(ctx: Context) -> list[str]:
    """Example EC.1's Amin value (no paper value to compare with)."""
    from kvopt.report.measure import tie_order_expectation
    from kvopt.theory.adversarial import example_ec1

    e = tie_order_expectation(example_ec1())
    return [f"Example EC.1 has no Amin value in the paper; kvopt's Amin with one tie order per "
            f"run has E[TEL] = {e.numerator}/{e.denominator} = {float(e):.4f} exactly (all 24 "
            f"orders), {float(e) / 12:.4f} x H-SF; the per-sort reading: "
            "`reports/ratios/adversarial.md`."]
