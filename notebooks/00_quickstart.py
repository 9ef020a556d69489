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
# # kvopt quickstart
#
# Load an instance, validate it, look at it, and check a schedule with the independent
# validator. Set `KVOPT_FAST=1` for the small mode the test suite uses.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import kvopt

FAST = os.environ.get("KVOPT_FAST") == "1"

# %% [markdown]
# ## A shipped instance
# Seed 001's Model 1: every request arrives at slot 0; prompt s ~ U{1..5}, output o ~ U{1..M-s}.

# %%
inst = kvopt.load_instance(kvopt.shipped_path("instances/synthetic/model1-seed1.json"))
print(inst, "sum of outputs:", int(inst.output.sum()))

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3))
axes[0].hist(inst.output, bins=15)
axes[0].set_xlabel("output length o")
axes[1].scatter(inst.prompt, inst.output, s=10)
axes[1].set_xlabel("prompt s")
axes[1].set_ylabel("output o")
fig.tight_layout()

# %% [markdown]
# ## The real Azure conversation trace
# Arrivals in seconds; KV capacity defaults to 16492 tokens (Llama-2-70B on 2xA100, seed 001).

# %%
trace = kvopt.load_instance(kvopt.shipped_path("instances/traces/azure_conv_2023.csv"))
head = trace.take(np.arange(500 if FAST else trace.n))
fig, ax = plt.subplots(figsize=(9, 3))
ax.scatter(head.arrival, head.prompt + head.output, s=2)
ax.set_xlabel("arrival (s)")
ax.set_ylabel("peak KV tokens s+o")
print(head)

# %% [markdown]
# ## Solve, simulate, validate
# The hindsight optimum (the default path of `kvopt.mip.solve`: the exact model where it can
# finish, else search and bounds; `status` is `optimal` only when proven) and the
# online MC-SF policy on a tiny instance where MC-SF is not optimal. Both produce the same
# `Schedule` type, which the independent validator checks, recomputing the TEL.

# %%
from kvopt.mip import solve
from kvopt.sim import simulate

tiny = kvopt.load_instance(kvopt.shipped_path("instances/tiny/mcsf-suboptimal-distinct.json"))
opt = solve(tiny, time_limit=20)
mcsf = simulate(tiny, "mcsf")
print(opt.status, opt.objective, "vs MC-SF", mcsf.metrics.total_latency)
for sched in (opt.schedule, mcsf.schedule):
    print(kvopt.check_schedule(tiny, sched))

# %% [markdown]
# On the Model-1 instance (n = 50) the MIP is not proven within a short limit: the result says
# so and reports the incumbent, the bound and the gap.

# %%
res = solve(inst, time_limit=3 if FAST else 30)
print(res.status, res.objective, res.bound, f"gap {res.gap:.1%}")
sim = simulate(inst, "mcsf")
print(kvopt.compute_metrics(inst, sim.schedule))

# %% [markdown]
# A broken schedule (everything at slot 0) is rejected with the slot and the excess.

# %%
bad = kvopt.Schedule.from_starts(inst, np.zeros(inst.n, dtype=int))
print(kvopt.check_schedule(inst, bad).violations[0])
