"""Seed 002 (TIE: log-t length distributions and E + beta CVaR scores): targets, figure.

The source is a third-party summary of the paper (notes/seed-004-002 §4): the score
arithmetic, the log-t quadrature, the KS family comparison and the serving results. kvopt
checks the arithmetic exactly and the serving results in its LLM simulator.
"""

from __future__ import annotations

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

SEED = "002"
TITLE = "Scheduling LLM Inference with Uncertainty-Aware Output Length Predictions (TIE)"
PAPER = "arXiv 2604.00499 (ICML 2026), read through a third-party summary"
INTRO = ("TIE models a request's output length as log-t (nu = 3.5), scores it by "
         "E[X~] + beta CVaR_0.9[X~] of the length capped at max_tokens, with an adaptive "
         "beta and a waiting decay, and schedules shortest score first without preemption.")

#: (mu, sigma, x_max) -> (E, VaR_0.9, CVaR_0.9, score beta = 0.1, score beta = 0.5), nu = 3.5
#: (digest §4.2, computed independently there).
QUADRATURE = {(5.0, 0.6, 2048): (212.7115, 382.2007, 773.5840, 290.0699, 599.5035),
              (6.0, 1.0, 2048): (636.6160, 1951.9353, 2045.4630, 841.1623, 1659.3475),
              (4.0, 0.3, 1024): (60.8606, 87.6168, 134.1009, 74.2707, 127.9111)}


def t_arithmetic(ctx: Context) -> list[Target]:
    from kvopt.predictions import LogT
    from kvopt.sim.prediction_policies import adaptive_beta

    worst = 0.0
    for (mu, sigma, xmax), want in QUADRATURE.items():
        d = LogT(mu, sigma, 3.5)
        got = (float(d.truncated_mean(xmax)), float(d.truncated_var(0.9, xmax)),
               float(d.truncated_cvar(0.9, xmax)), float(d.score(0.1, 0.9, xmax)),
               float(d.score(0.5, 0.9, xmax)))
        worst = max(worst, max(abs(g / w - 1) for g, w in zip(got, want, strict=True)))
    betas = [adaptive_beta(q, 32) for q in (0, 32, 64, 160, 1000)]
    half = 30 * math.log(0.5) / math.log(0.9)
    return [
        Target(SEED, "Q1", "E[X~], VaR_0.9, CVaR_0.9 and the score of the capped log-t "
               "(nu = 3.5), three (mu, sigma, max_tokens), against independent values",
               "e.g. (5, 0.6, 2048): 212.7115, 382.2007, 773.5840",
               f"max relative difference over 15 values: {worst:.1e} (deterministic "
               "quadrature; the summary's 10k-sample Monte Carlo has ~2 % noise on CVaR)",
               "1e-5 relative", compare(0.0, worst, 1e-5), ctx.cmd(f"{SEED}/Q1")),
        Target(SEED, "Q2", "beta = min(0.5, max(0.1, 0.1 L_q / B)); decay gamma^(t_w/tau), "
               "gamma = 0.9, tau = 30 s", "beta in [0.1, 0.5]; half-life 30 ln 0.5 / ln 0.9",
               f"beta at L_q = 0, 32, 64, 160, 1000 (B = 32): {betas}; half-life {half:.1f} s",
               "exact", "reproduced" if betas == [0.1, 0.1, 0.2, 0.5, 0.5] else "differs",
               ctx.cmd(f"{SEED}/Q1"), reason="adaptive beta differs"),
    ]


def t_ks(ctx: Context) -> list[Target]:
    from kvopt.predictions import LogT, ks_pass_rate

    rng = np.random.default_rng(ctx.seed + 2)
    groups: list[Any] = [
        LogT(float(rng.uniform(3, 6)), float(rng.uniform(0.3, 1.2)), 3.5).sample(100, rng)
        for _ in range(30 if ctx.fast else 150)]
    rates = {f: ks_pass_rate(groups, f) for f in ("logt", "logt-3.5", "lognormal")}
    return [Target(SEED, "KS", "KS pass rates on LMSYS (1K prompts x 100 generations): log-t "
                   "3 parameters 93.1 %, log-t nu = 3.5 90.6 %, log-normal 60.3 %; heavy tail: "
                   "top 10 % = 35.7 % of length, P99/P50 10.77",
                   "93.1 / 90.6 / 60.3 %", "on synthetic log-t groups (circular, not a "
                   "reproduction): " + " / ".join(f"{100 * v:.1f} %" for v in rates.values()),
                   "-", "not yet implemented", ctx.cmd(f"{SEED}/KS"),
                   reason="needs repeated generations per prompt (LMSYS-Chat-1M, 100 samples "
                          "each); none are available offline. The machinery is there "
                          "(kvopt.predictions.compare_families, ks_pass_rate; LogT.fit now "
                          "reaches the maximum likelihood, issue 23)",
                   reading=f"{len(groups)} groups of 100")]


def t_serving(ctx: Context) -> list[Target]:
    from kvopt.report.reproduce.seed004 import _llm

    rows = {r["policy"]: r for r in _llm(ctx, "recompute")}
    p = {k: rows[k]["ptla_s_per_token"] for k in ("FCFS", "SSJF (point)", "TIE", "TIE E only",
                                                   "TIE log-normal")}
    n = rows["FCFS"]["n"]
    gain = p["FCFS"] / p["TIE"]
    order = p["TIE"] < p["FCFS"] and p["SSJF (point)"] < p["FCFS"]
    tie_vs_ssjf = p["TIE"] < p["SSJF (point)"]
    reading = (f"Azure conversation trace, first {n} requests, arrivals x 1/8, A100 70B step "
               "time, recompute preemption, synthetic predictor (R^2 = 0.82 for mu)")
    why = ("the paper measures at 100 RPS with thousands queued; here a KV-bound batch of ~30 "
           "requests under near-capacity load, so the order of the queue matters less, and "
           "the predictor is synthetic (not DeBERTa)")
    why_beta = (why + "; adaptive beta stays at 0.1 unless the queue exceeds B = 32, and the "
                "CVaR term reorders few requests here")
    why_ln = ("the log-normal ablation here keeps the same predicted mu and moment-matches "
              "sigma, so both families order requests almost alike; the paper retrains the "
              "predictor on log-normal labels")
    return [
        Target(SEED, "TIE1", "PTLA (latency / output token): TIE 4.73x lower than FCFS "
               "(0.67 vs 3.17 s/token, 8B, LMSYS, 100 RPS)", "4.73x", f"{gain:.2f}x",
               "± 25 %", compare(4.73, gain, 0.25, relative=True), ctx.cmd(f"{SEED}/TIE"),
               reason=why, reading=reading),
        Target(SEED, "TIE2", "PTLA ordering TIE < SSJF < FCFS", "TIE < SSJF < FCFS",
               " / ".join(f"{k} {num(v, 3)}" for k, v in p.items() if "E only" not in k
                          and "log" not in k), "ordering",
               "reproduced" if order and tie_vs_ssjf else "differs", ctx.cmd(f"{SEED}/TIE"),
               reason=why, reading=reading),
        Target(SEED, "TIE3", "Ablation: E[X] only (SEPT) has 12 % higher PTLA than E + "
               "adaptive beta CVaR (0.75 vs 0.67)", "1.12x", f"{p['TIE E only'] / p['TIE']:.3f}x",
               "± 0.05", compare(1.12, p["TIE E only"] / p["TIE"], 0.05),
               ctx.cmd(f"{SEED}/TIE"), reason=why_beta, reading=reading),
        Target(SEED, "TIE4", "Ablation: a log-normal length model has 2.4x higher PTLA (1.63 "
               "vs 0.67)", "2.43x", f"{p['TIE log-normal'] / p['TIE']:.3f}x", "± 0.25",
               compare(2.43, p["TIE log-normal"] / p["TIE"], 0.25), ctx.cmd(f"{SEED}/TIE"),
               reason=why_ln, reading=reading),
    ]


def errata(ctx: Context) -> list[Erratum]:
    return [Erratum(SEED, "Summary's TL;DR: throughput",
                    "throughput 1.42x", "1.42x is the time-to-3K-samples ratio (139.5 / "
                    "98.1 s); the 3-minute throughput rises 3672 -> 4762 samples = "
                    f"{4762 / 3672:.2f}x", "arithmetic on the summary's own numbers", "-")]


def figure(ctx: Context) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    from kvopt.report.reproduce.seed004 import _llm
    from kvopt.report.writers import figure_png

    rows = [r for r in _llm(ctx, "recompute")]
    rows.sort(key=lambda r: r["ptla_s_per_token"])
    fig = MplFigure(figsize=(6.4, 3.8))
    ax = fig.subplots()
    y = np.arange(len(rows))
    ax.barh(y, [r["ptla_s_per_token"] for r in rows],
            color=["C0" if "TIE" in r["policy"] else "C3" if "TRAIL" in r["policy"] else "C7"
                   for r in rows])
    ax.set_yticks(y, [r["policy"] for r in rows], fontsize=7)
    ax.set(xlabel="mean latency per output token (s)", title=f"Azure trace, first "
           f"{rows[0]['n']} requests, A100 70B (lower is better)")
    fig.tight_layout()
    return Figure("seed002_seed004_serving.png", "Seeds 002 and 004 in kvopt's LLM simulator: "
                  "per-token latency of FCFS, the oracles, SSJF, TIE (and ablations) and "
                  "TRAIL, with vLLM's recompute preemption.", figure_png(fig, dpi=100))


TARGETS: dict[str, Callable[[Context], list[Target]]] = {
    "Q1": t_arithmetic, "KS": t_ks, "TIE": t_serving,
}
ALIASES = {"Q2": "Q1", "TIE1": "TIE", "TIE2": "TIE", "TIE3": "TIE", "TIE4": "TIE"}


def figures(ctx: Context) -> list[Figure]:
    """The section's figures."""
    return [figure(ctx)]
