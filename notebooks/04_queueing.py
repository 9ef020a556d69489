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
# # Queueing: SOAP formulas for SRPT, SPRPT and TRAIL's limited preemption
#
# An M/G/1 queue with Poisson arrivals, job sizes `X` and predictions `Y = X Z`.
# `kvopt.queueing` gives the mean response time of FCFS, SJF/SPJF, PSJF/PSPJF, SRPT/SPRPT
# and TRAIL's SPRPT with limited preemption (the *corrected* Lemma 1 of seed 004), checks
# them against an event-driven simulator, and shows how far the printed Lemma 1 is off.
# Set `KVOPT_FAST=1` for the small mode the test suite uses.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from kvopt.queueing import (
    SoapModel,
    classical_mean,
    parse_predictions,
    parse_sizes,
    simulate_queue,
    soap_mean_response,
)

FAST = os.environ.get("KVOPT_FAST") == "1"
N_JOBS = 20_000 if FAST else 400_000
print("fast mode" if FAST else "full mode", "- jobs per simulation:", N_JOBS)

# %% [markdown]
# ## 1. Classical oracles: M/M/1 at load 0.8
# FCFS is Pollaczek-Khinchine, `1 / (1 - rho)` for Exp(1) sizes; SRPT is Schrage-Miller.

# %%
sizes = parse_sizes("exp:1")
for policy in ("fcfs", "sjf", "psjf", "srpt"):
    print(f"{policy:5s} E[T] = {classical_mean(policy, 0.8, sizes):.4f}")
print("1/(1-rho) =", 1 / (1 - 0.8))

# %% [markdown]
# ## 2. TRAIL: SPRPT with limited preemption, exponential predictions
# Preemption is allowed only while a job's age is below `C` times its prediction.
# `C >= 1` is SPRPT, `C -> 0+` is non-preemptive SPJF.

# %%
preds = parse_predictions("exp")
model = SoapModel(sizes, preds, lam=0.9)
Cs = np.array([0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 1.0])
corrected = np.array([model.mean_response("trail", C) for C in Cs])
printed = np.array([model.mean_response("trail-printed", C) for C in Cs])
print(f"SPJF {model.mean_response('spjf'):.4f}  SPRPT {model.mean_response('sprpt'):.4f}")
for C, a, b in zip(Cs, corrected, printed, strict=True):
    print(f"C={C:4.2f}  corrected {a:.4f}  printed {b:.4f}  ({100 * (b / a - 1):+.1f}%)")

# %% [markdown]
# ## 3. Formula vs simulation
# Each simulated mean carries a batch-means standard error; the formula should be within
# about 3 of them.

# %%
rows = []
for policy, C in (("sprpt", None), ("trail", 0.2), ("trail", 0.8)):
    sim = simulate_queue(policy, 0.7, sizes, preds, C, n_jobs=N_JOBS, seed=1)
    f = SoapModel(sizes, preds, 0.7).mean_response(policy, C)
    rows.append((policy, C, f, sim.mean_response, sim.se))
    print(f"{policy:6s} C={C}  formula {f:.4f}  simulated {sim.mean_response:.4f} +- {sim.se:.4f}"
          f"  z={(sim.mean_response - f) / sim.se:+.2f}  peak memory {sim.peak_memory:.1f}")

# %% [markdown]
# ## 4. Printed vs corrected Lemma 1 against one simulation (lambda = 0.5, C = 0.2)

# %%
sim = simulate_queue("trail", 0.5, sizes, preds, 0.2, n_jobs=N_JOBS, seed=2)
m05 = SoapModel(sizes, preds, 0.5)
print(f"simulated {sim.mean_response:.4f} +- {sim.se:.4f}")
print(f"corrected {m05.mean_response('trail', 0.2):.4f}   printed "
      f"{m05.mean_response('trail-printed', 0.2):.4f}")

# %% [markdown]
# ## 5. A new policy from its rank function only
# The generic SOAP evaluator needs just `rank(x, y, a)`; here foreground-background (rank =
# age), which for exponential sizes must equal FCFS (`1 / (1 - lambda)`).

# %%
las = soap_mean_response(lambda x, y, a: a + 0 * y, 0.6, sizes, n_nodes=8 if FAST else 12)
print(f"LAS/FB E[T] = {las:.4f}  (M/M/1: {1 / 0.4:.4f})")

# %% [markdown]
# ## 6. Response time and memory vs C (the trade-off behind seed 004 Fig. 8)

# %%
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(Cs, corrected, "o-", label="corrected Lemma 1")
ax.plot(Cs, printed, "s--", label="printed Lemma 1")
ax.axhline(model.mean_response("sprpt"), color="grey", lw=0.8, label="SPRPT (C=1)")
ax.set_xlabel("C")
ax.set_ylabel("E[T], λ = 0.9")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
mem = [simulate_queue("trail", 0.9, sizes, preds, C, n_jobs=N_JOBS // 2, seed=3).mean_memory
       for C in (0.01, 0.5, 1.0)]
print("time-average memory (sum of ages) at C = 0.01, 0.5, 1:", np.round(mem, 3))
