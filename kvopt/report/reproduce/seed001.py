"""Seed 001 (Jaillet et al., MC-SF and the hindsight IP): targets, errata, figure.

Targets: the synthetic MC-SF/OPT statistics of Sec. 5.1 (Models 1 and 2) against the
committed paper-scale certificates (re-validated here) and interval-LP bounds, and against
small instances whose optimum the MIP proves here; Table 1's ordering and ratio with the
simulator; Theorem 4.1's Omega(sqrt n) adversary; the A.2 example; Theorem 4.3's lemma
bounds. Errata: the IP's horizon and Theorem 4.1's release time.
"""

from __future__ import annotations

import itertools
import json
import math
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

SEED = "001"
TITLE = "Online Scheduling for LLM Inference with KV Cache Constraints"
PAPER = "Jaillet, Jiang, Mellou, Molinaro, Podimata, Zhou; arXiv 2502.07115v5 (2026)"
INTRO = ("MC-SF (memory-constrained shortest first) against the hindsight-optimal integer "
         "program, an Omega(sqrt n) lower bound for deterministic online algorithms, and a "
         "real-trace simulation (Table 1). OPT here is proven by kvopt.mip or bracketed by a "
         "validated schedule (upper) and an LP bound (lower).")

PAPER_SCALE = "reports/mip/paper_scale"
DUAL = "reports/mip/dual_paper_all.json"
DUAL_CMD = "python benchmarks/mip_dual_paper.py --seeds 1-20 --time 600 --out " + DUAL


# ------------------------------------------------------------------------------ data
def certificate_rows(ctx: Context) -> list[dict[str, Any]]:
    """The 20 + 20 paper-scale instances: the committed certificate re-validated by the
    checker, MC-SF simulated now, the committed interval-LP bound, and whether the committed
    instance is the generator's ``model1(seed)`` / ``model2(seed)`` (same sha256)."""
    import kvopt
    from kvopt.core.generators import model1, model2
    from kvopt.sim import simulate

    def compute() -> list[dict[str, Any]]:
        base = ctx.root / PAPER_SCALE
        dual = ctx.root / DUAL
        if not base.is_dir() or not dual.is_file():
            return []
        bounds = {(r["kind"], r["seed"]): r.get("intervals")
                  for r in json.loads(dual.read_text())["records"]}
        rows = []
        for kind, gen in (("model1", model1), ("model2", model2)):
            for seed in range(1, 21):
                inst = kvopt.load_instance(base / f"{kind}-seed{seed}.json")
                sch = kvopt.load_schedule(base / f"{kind}-seed{seed}.best.json")
                rep = kvopt.check_schedule(inst, sch)
                mcsf = float(simulate(inst, "mcsf").metrics.total_latency)
                lb = bounds.get((kind, seed))
                rows.append({"kind": kind, "seed": seed, "n": inst.n, "M": inst.memory,
                             "generator_match": gen(seed).sha256() == inst.sha256(),
                             "valid": bool(rep.ok),
                             "best": float(rep.objective) if rep.objective is not None
                             else math.nan,
                             "mcsf": mcsf, "bound": None if lb is None else math.ceil(lb)})
        return rows

    rows: list[dict[str, Any]] = ctx.once("001/certificates", compute)
    return rows


def small_proven_rows(ctx: Context) -> list[dict[str, Any]]:
    """Small instances of both models with OPT proven here (CP-SAT ``cp+pairs``): Model 1
    ``model1(1000 + k, n=8)`` and the first 8 arrivals of ``model2(2000 + k)``."""
    from kvopt.core.generators import model1, model2
    from kvopt.mip import solve
    from kvopt.sim import simulate

    def compute() -> list[dict[str, Any]]:
        rows = []
        k_max = 3 if ctx.fast else 10
        for kind in ("model1", "model2"):
            for k in range(k_max):
                if kind == "model1":
                    inst = model1(1000 + k, n=8)
                else:
                    full = model2(2000 + k)
                    order = np.argsort(full.arrival, kind="stable")[:8]
                    inst = full.take(np.sort(order))
                res = solve(inst, solver="cpsat", formulation="cp+pairs", time_limit=30)
                mcsf = float(simulate(inst, "mcsf").metrics.total_latency)
                rows.append({"kind": kind, "k": k, "n": inst.n, "M": inst.memory,
                             "status": res.status, "opt": res.objective, "mcsf": mcsf})
        return rows

    rows: list[dict[str, Any]] = ctx.once("001/small", compute)
    return rows


# --------------------------------------------------------------------------- targets
def t_model(ctx: Context, kind: str, key: str, paper_mean: float, paper_max: float
            ) -> list[Target]:
    from kvopt.report.measure import mean_se

    rows = [r for r in certificate_rows(ctx) if r["kind"] == kind]
    claim = (f"Sec. 5.1 {'Model 1 (all at 0)' if kind == 'model1' else 'Model 2 (Poisson)'}: "
             f"mean MC-SF/OPT over 200 instances")
    if not rows:
        return [Target(SEED, key, claim, num(paper_mean), "-", "-", "not yet implemented",
                       ctx.cmd(f"{SEED}/{key}"), reason=f"{PAPER_SCALE} and {DUAL} are not "
                       "in this checkout (run from the repository root)")]
    lo, se = mean_se([r["mcsf"] / r["best"] for r in rows])
    hi = float(np.mean([r["mcsf"] / r["bound"] for r in rows if r["bound"]]))
    beaten = sum(r["best"] < r["mcsf"] for r in rows)
    ok = all(r["valid"] and r["generator_match"] for r in rows)
    small = [r for r in small_proven_rows(ctx) if r["kind"] == kind and r["status"] == "optimal"]
    sm = float(np.mean([r["mcsf"] / r["opt"] for r in small])) if small else math.nan
    # the paper's mean is below what valid schedules prove for MC-SF/OPT (a lower bound)
    verdict = "differs" if paper_mean < lo - 2 * se else compare(paper_mean, lo, 2 * se)
    return [Target(
        SEED, key, claim, f"{num(paper_mean, 3)} (max {num(paper_max, 3)})",
        f"MC-SF/OPT >= {num(lo)} ± {num(se)} (MC-SF / validated schedule, {len(rows)} "
        f"paper-scale instances, MC-SF beaten on {beaten}/{len(rows)}; all valid: {ok}) and "
        f"<= {num(hi)} (MC-SF / interval-LP bound); proven small n = 8: {num(sm)} "
        f"({len(small)} instances)",
        "2 standard errors of the 20-instance mean", verdict, ctx.cmd(f"{SEED}/{key}"),
        reason=("The paper's OPT values cannot have been optimal: validated schedules beat "
                "MC-SF on every paper-scale instance (the paper has MC-SF optimal on 114 of "
                "200 Model-1 instances), so the true mean MC-SF/OPT is at least the lower "
                "value. The "
                "likeliest cause (an inference; no solver settings are given) is a "
                "time-limited Gurobi run warm-started from MC-SF. Certificates: "
                f"{PAPER_SCALE}/*.best.json; bounds: {DUAL_CMD}."))]


def t_model_order(ctx: Context) -> list[Target]:
    small = [r for r in small_proven_rows(ctx) if r["status"] == "optimal"]
    m = {k: float(np.mean([r["mcsf"] / r["opt"] for r in small if r["kind"] == k]))
         for k in ("model1", "model2")}
    ok = m["model2"] > m["model1"] and all(r["mcsf"] >= r["opt"] - 1e-9 for r in small)
    return [Target(SEED, "T3", "Sec. 5.1: ratios >= 1 and Model 2's mean above Model 1's "
                   "(the cost of online arrivals)", "1.047 > 1.005",
                   f"proven n = 8: {num(m['model2'])} > {num(m['model1'])}",
                   "ordering", "reproduced" if ok else "differs", ctx.cmd(f"{SEED}/T3"),
                   reason="" if ok else "Model 2's mean is not above Model 1's here")]


def t_table1(ctx: Context) -> list[Target]:
    from kvopt.report.table1 import run_table1

    seeds = 3 if ctx.fast else 20
    res = ctx.once("001/table1", lambda: run_table1("lmsys-standin", seeds))
    ratio = float(res["ratio_mcbench_over_mcsf"])
    order = bool(res["ordering_mcsf_lt_mcbench_lt_alpha"])
    cmd = f"kvopt report table1 --seeds {seeds} --workloads lmsys-standin"
    why = ("LMSYS-Chat-1M is not available here: a lognormal stand-in fitted to the paper's "
           "length statistics, and kvopt's A100 step-time model instead of the paper's "
           "unpublished Vidur configuration")
    return [
        Target(SEED, "T4a", "Table 1 (N = 1000, 50/s): MC-SF < MC-Benchmark < every "
               "alpha/beta benchmark", "yes", "yes" if order else "no", "ordering",
               "reproduced" if order else "differs", cmd, reason="" if order else why,
               reading=f"lmsys-standin, {seeds} seeds"),
        Target(SEED, "T4b", "Table 1: MC-Benchmark / MC-SF average latency", "1.447",
               num(ratio, 3), "± 0.10", compare(1.447, ratio, 0.10), cmd, reason=why,
               reading=f"lmsys-standin, {seeds} seeds"),
    ]


def t_thm41(ctx: Context) -> list[Target]:
    from kvopt.report.measure import opt_tel, policy_tel
    from kvopt.theory import adversarial as adv
    from kvopt.theory import ratios as rt

    def compute() -> list[dict[str, Any]]:
        rows = []
        for m in (2, 3, 4) if ctx.fast else (2, 3, 4, 5):
            inst = adv.thm41_adaptive(m, lambda lone: 0)  # MC-SF starts a lone request at 0
            obj, _, status = opt_tel(inst, time_limit=60)
            rows.append({"m": m, "M": inst.memory, "n": inst.n,
                         "mcsf": policy_tel(inst, "mcsf", None), "opt": obj, "status": status})
        return rows

    rows = ctx.once("001/thm41", compute)
    ok = [r for r in rows if r["status"] == "optimal"]
    ratios = [r["mcsf"] / r["opt"] for r in ok]
    lower_ok = all(q >= rt.jaillet_thm41_lower(r["M"]) for q, r in zip(ratios, ok, strict=True))
    opt_ok = all(r["opt"] <= rt.jaillet_thm41_opt_upper(r["M"]) for r in ok)
    grows = all(b > a for a, b in itertools.pairwise(ratios))
    txt = ", ".join(f"M={r['M']}: {num(r['mcsf'])}/{num(r['opt'])} = {num(q, 3)}"
                    for r, q in zip(ok, ratios, strict=True))
    good = lower_ok and opt_ok and grows
    return [Target(SEED, "T12", "Theorem 4.1: on its adaptive instance TEL(A)/OPT >= "
                   "sqrt(M)/28 for every deterministic A, OPT <= 3.5 M (MC-SF as A)",
                   "ratio >= sqrt(M)/28, growing like sqrt(M)", txt + " (OPT proven)",
                   "inequalities", "reproduced" if good else "differs",
                   ctx.cmd(f"{SEED}/T12"), reason="" if good else "an inequality fails")]


def t_a2(ctx: Context) -> list[Target]:
    from kvopt import Instance
    from kvopt.report.measure import policy_tel

    inst = Instance(memory=10, arrival=np.zeros(2, np.int64), prompt=np.ones(2, np.int64),
                    output=np.array([4, 8]))
    tel = policy_tel(inst, "mcsf", None)
    return [Target(SEED, "A2", "App. A.2: two requests whose peaks exceed M together still "
                   "run concurrently (M = 10, s = (1, 1), o = (4, 8))", "TEL 12 (both at 0)",
                   num(tel), "exact", compare(12, tel, 0), "kvopt simulate "
                   "instances/tiny/a2-example.json --policy mcsf")]


def t_lemmas(ctx: Context) -> list[Target]:
    from kvopt import Instance
    from kvopt.report.measure import opt_tel, policy_tel
    from kvopt.theory import ratios as rt

    rng = np.random.default_rng(ctx.seed + 43)
    held, tried = 0, 0
    for _ in range(4 if ctx.fast else 12):
        s = int(rng.integers(0, 3))
        o = rng.integers(1, 7, size=int(rng.integers(4, 8)))
        M = int(2 * (s + o.max()) + rng.integers(0, 6))
        inst = Instance(memory=M, arrival=np.zeros(o.size, np.int64),
                        prompt=np.full(o.size, s), output=o)
        obj, _, status = opt_tel(inst, time_limit=30)
        if status != "optimal" or obj is None:
            continue
        tried += 1
        mc = policy_tel(inst, "mcsf", None)
        held += (mc <= rt.jaillet_lemma44_bound(o, s, M) + 1e-9
                 and obj >= rt.jaillet_lemma47_bound(o, s, M) - 1e-9 and mc >= obj - 1e-9)
    return [Target(SEED, "T13", "Theorem 4.3: Lemma 4.4 (upper bound on MC-SF) and Lemma 4.7 "
                   "(lower bound on OPT) on all-at-0, equal-s instances with M >= 2 max(s+o)",
                   "both hold", f"hold on {held}/{tried} random instances (OPT proven)",
                   "all", "reproduced" if held == tried and tried else "differs",
                   ctx.cmd(f"{SEED}/T13"), reason="" if held == tried else "a bound fails")]


# ---------------------------------------------------------------------------- errata
def errata(ctx: Context) -> list[Erratum]:
    """The IP's horizon and Theorem 4.1's release time, each with computed evidence."""
    from kvopt import Instance, Schedule, check_schedule
    from kvopt.report.measure import opt_tel, policy_tel
    from kvopt.theory import adversarial as adv

    # (1) constraint (3) holds for t <= T_bar only, starts are allowed up to T_bar
    inst = Instance(memory=6, arrival=np.zeros(2, np.int64), prompt=np.ones(2, np.int64),
                    output=np.array([5, 5]))
    tbar = int((inst.arrival + inst.output).sum())
    start = tbar - 1
    mem_by_t = {t: sum(inst.prompt[i] + t - start for i in range(2)
                       if start + 1 <= t <= start + inst.output[i]) for t in range(1, tbar + 1)}
    printed_ok = all(v <= inst.memory for v in mem_by_t.values())
    rep = check_schedule(inst, Schedule.from_starts(inst, [start, start]))
    horizon = Erratum(
        SEED, "Sec. 3, IP (1)-(4): horizon",
        "constraint (3) for t in [T_bar] (T_bar = sum_i (a_i + o_i)) while x_{i,t} may be 1 for "
        "t up to T_bar",
        "restrict starts to t <= T_bar - o_i (or impose (3) up to T_bar + max o_i); kvopt uses "
        "starts in [a_i, T_bar - o_i] with T_bar = max a + sum o (exact by an exchange argument)",
        f"M = 6, s = (1, 1), o = (5, 5), T_bar = {tbar}: both requests started at "
        f"{start} satisfy every printed row of (3) ({printed_ok}), but their memory reaches "
        f"{2 * (1 + 5)} > 6 after T_bar; the validator rejects the schedule "
        f"(ok = {rep.ok}). Such points are dominated, so the optimum is unchanged, but the "
        "printed IP is not the exact model the paper calls it.",
        ctx.cmd(f"{SEED}/errata"))
    # (2) Theorem 4.1's release time: b + M - sqrt(M)/2 (construction) vs b + M - 1 - sqrt(M)/2
    vals = []
    for off in (0, -1):
        i41 = adv.thm41_adaptive(3, lambda lone: 0, r_offset=off)
        obj, _, _ = opt_tel(i41, time_limit=60)
        vals.append((off, policy_tel(i41, "mcsf", None), obj))
    release = Erratum(
        SEED, "App. B.1, Theorem 4.1: release time of the short requests",
        "r = b + M - sqrt(M)/2 in the construction, r = b + (M - 1) - sqrt(M)/2 in the proof",
        "one value; kvopt exposes both (thm41_adaptive(m, r_offset=0 | -1)); the ratio "
        "bound sqrt(M)/28 holds for either",
        "m = 3 (M = 36): " + "; ".join(f"r_offset {o}: MC-SF {num(a)}, OPT {num(b)}"
                                        for o, a, b in vals),
        ctx.cmd(f"{SEED}/errata"))
    text = Erratum(
        SEED, "Prop. 4.2 and Lemma B.1 (constants)",
        "Prop. 4.2: at most M/(max_i s_i + 1) requests run; Lemma B.1: alpha^2 in the statement",
        "min_i s_i (the count of the smallest requests); alpha^3 as in Lemma B.1's proof (the "
        "final alpha^5 O(1) is unaffected)",
        "text-level (digest seed-001 §3.1, §4); no number of the paper depends on it",
        "-")
    return [horizon, release, text]


# ---------------------------------------------------------------------------- figure
def figure(ctx: Context) -> Figure | None:
    from matplotlib.figure import Figure as MplFigure

    from kvopt.report.writers import figure_png

    rows = certificate_rows(ctx)
    if not rows:
        return None
    fig = MplFigure(figsize=(6.4, 4.4))
    ax = fig.subplots()
    for j, (kind, paper, col) in enumerate((("model1", 1.005, "C0"), ("model2", 1.047, "C1"))):
        rs = [r for r in rows if r["kind"] == kind]
        x = np.arange(len(rs)) + 22 * j
        lo = np.array([r["mcsf"] / r["best"] for r in rs])
        hi = np.array([r["mcsf"] / r["bound"] for r in rs])
        ax.vlines(x, lo, hi, color=col, lw=2, alpha=0.5)
        ax.plot(x, lo, "o", color=col, ms=4, label=f"{kind}: MC-SF / validated schedule")
        ax.plot(x, hi, "_", color=col, ms=8, label=f"{kind}: MC-SF / LP bound")
        ax.hlines(paper, x[0] - 0.5, x[-1] + 0.5, color=col, ls="--",
                  label=f"{kind}: paper's mean {paper}")
    ax.set(xlabel="instance (seeds 1-20 of each model)", ylabel="MC-SF / OPT bracket",
           title="Seed 001, Sec. 5.1: MC-SF / OPT is inside each bar")
    ax.set_xticks([])
    ax.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    fig.tight_layout()
    return Figure("seed001_mcsf_opt.png", "Seed 001: every paper-scale instance's MC-SF/OPT "
                  "bracket (dot: MC-SF over a validated schedule, a lower bound; tick: MC-SF "
                  "over the interval-LP bound, an upper bound) against the paper's means "
                  "(dashed).", figure_png(fig, dpi=100))


TARGETS: dict[str, Callable[[Context], list[Target]]] = {
    "T1": lambda c: t_model(c, "model1", "T1", 1.005, 1.074),
    "T2": lambda c: t_model(c, "model2", "T2", 1.047, 1.227),
    "T3": t_model_order,
    "T4": t_table1,
    "T12": t_thm41,
    "A2": t_a2,
    "T13": t_lemmas,
}


def figures(ctx: Context) -> list[Figure]:
    """The section's figures."""
    fig = figure(ctx)
    return [] if fig is None else [fig]
