# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Paper: "Scheduling LLM Inference with Uncertainty-Aware Output Length Predictions"
# ## TIE (seed 002)
#
# arXiv 2604.00499 (ICML 2026), known here through a summary. TIE predicts a log-t
# distribution of each request's output length (`ln X = mu + sigma T`, `T ~ t_3.5`), caps it
# at `max_tokens` and schedules shortest `E[X~] + beta CVaR_0.9[X~]` first, with
# `beta = min(0.5, max(0.1, 0.1 L_q / B))` and a waiting decay. It reports that log-t fits
# real lengths better than log-normal (KS pass rates) and 4.73x lower per-token latency than
# FCFS.
#
# kvopt has the distribution (`kvopt.predictions.LogT`: quadrature moments, MLE fits, KS
# comparison) and the policy (`tie` in `kvopt.sim`); targets in
# `kvopt.report.reproduce.seed002`. `KVOPT_FAST=1` keeps it small.

# %%
import os

import numpy as np
from IPython.display import Image, display

from kvopt.predictions import LogT, compare_families
from kvopt.report.reproduce import default_root, seed002
from kvopt.report.reproduce.core import Context

FAST = os.environ.get("KVOPT_FAST") == "1"
ctx = Context(fast=FAST, root=default_root())

# %% [markdown]
# ## The capped log-t and its score
# No moment of the untruncated log-t is finite, so every expectation is of
# `min(X, max_tokens)`; kvopt computes them by deterministic quadrature.

# %%
d = LogT(5.0, 0.6, 3.5)
print("E, VaR_0.9, CVaR_0.9 of min(X, 2048):",
      [round(float(v), 4) for v in (d.truncated_mean(2048), d.truncated_var(0.9, 2048),
                                    d.truncated_cvar(0.9, 2048))])
print("score, beta = 0.1 and 0.5:", [round(float(d.score(b, 0.9, 2048)), 4) for b in (0.1, 0.5)])
for t in seed002.TARGETS["Q1"](ctx):
    print(f"{t.key} [{t.verdict}] {t.kvopt}")

# %% [markdown]
# ## Fitting and comparing families
# The paper's KS pass rates come from 100 generations per prompt of LMSYS prompts, which are
# not available here; the machinery is (`LogT.fit` reaches the maximum likelihood from
# several starts, issue 23). On a synthetic heavy-tailed sample:

# %%
x = LogT(5.0, 0.8, 3.5).sample(2000 if FAST else 20000, np.random.default_rng(0))
for row in compare_families(x)[:4]:
    print(f"{row['family']:12s} KS {row['ks']:.4f}  params "
          f"{ {k: round(v, 3) for k, v in row['params'].items()} }")
f = LogT.fit(x, None)
print(f"free-nu fit: mu {f.mu:.3f}, sigma {f.sigma:.3f}, nu {f.nu:.2f}")

# %% [markdown]
# ## TIE against FCFS and SSJF in the LLM simulator
# Azure conversation trace, Llama-2-70B on 2xA100, a synthetic predictor with the paper's
# R^2. Length-aware orders beat FCFS by ~1.4-2x here (the paper: 4.73x at 100 RPS with
# thousands queued); the CVaR term and the log-t family matter little at this load.

# %%
for t in seed002.TARGETS["TIE"](ctx):
    print(f"{t.key} [{t.verdict}] paper {t.paper}; kvopt {t.kvopt}")
display(Image(seed002.figure(ctx).png))
