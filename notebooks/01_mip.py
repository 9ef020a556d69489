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
# # The hindsight-optimal IP (seed 001, Sec. 3)
#
# Solve tiny instances exactly with all four backends, compare MC-SF with the optimum, look
# at the lower bounds, and watch an honest time-limited solve. `KVOPT_FAST=1` (the test
# suite) keeps every solve short.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import kvopt
from kvopt.core.generators import model1, random_small
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip import (
    build_milp,
    fluid_bound,
    lagrangian_bound,
    lp_bound,
    solve,
    solver_availability,
    trivial_bound,
    volume_bound,
)

FAST = os.environ.get("KVOPT_FAST") == "1"

# %% [markdown]
# ## Backends
# Four backends read one solver-neutral `MILPData`; `cpsat` also runs the `cp` model
# (cumulative staircase of rigid rectangles).

# %%
for row in solver_availability():
    print(row["name"], row["available"], row["version"])

# %%
inst = kvopt.load_instance(kvopt.shipped_path("instances/tiny/mcsf-suboptimal-distinct.json"))
for solver in ("highs", "cbc", "cpsat", "scipy"):
    res = solve(inst, solver=solver, time_limit=10)
    print(f"{solver:>6}: {res.status}, TEL {res.objective}, starts "
          f"{res.schedule.run_start.tolist()} ({res.formulation})")
print("MC-SF TEL:", int((mcsf_starts(inst) + inst.output - inst.arrival).sum()))

# %% [markdown]
# ## Formulation sizes
# `naive` is the paper's IP with its horizon `sum(a + o)` (starts capped so requests finish);
# `tight` uses the exact horizon `max a + sum o`, start windows from the MC-SF incumbent and
# aggregated identical requests; `tight+cuts` adds DFF and clique rows.

# %%
big = kvopt.load_instance(kvopt.shipped_path("instances/synthetic/model1-seed1.json"))
ws = mcsf_starts(big)
for f in ("naive", "tight", "tight+cuts"):
    st = build_milp(big, f, warm_starts=ws).stats()
    print(f"{f:>11}: {st['cols']} columns, {st['rows']} rows, {st['nnz']} nonzeros")

# %% [markdown]
# ## MC-SF against the optimum on random small instances

# %%
ratios = []
for seed in range(8 if FAST else 40):
    x = random_small(seed, n_range=(4, 7))
    res = solve(x, solver="cpsat", time_limit=10)
    mc = float((mcsf_starts(x) + x.output - x.arrival).sum())
    if res.status == "optimal":
        ratios.append(mc / res.objective)
print(f"{len(ratios)} proven; MC-SF/OPT mean {np.mean(ratios):.3f}, max {np.max(ratios):.3f}")

# %% [markdown]
# ## Lower bounds
# Trivial `sum o`, seed 001's volume LP (Sec. 4), the SRPT fluid bound, the LP relaxation
# and its Lagrangian approximation, on a small Model-1 instance.

# %%
small = model1(5, n=10)
opt = solve(small, time_limit=5 if FAST else 60)
bounds = {"trivial": trivial_bound(small), "volume": volume_bound(small),
          "fluid": fluid_bound(small), "LP (tight)": lp_bound(small, "tight"),
          "LP (tight+cuts)": lp_bound(small, "tight+cuts"),
          "Lagrangian": lagrangian_bound(small, iterations=100)[0]}
fig, ax = plt.subplots(figsize=(6, 3))
ax.barh(list(bounds), list(bounds.values()))
ax.axvline(opt.objective, color="k", ls="--", label=f"best schedule ({opt.status})")
ax.legend()
fig.tight_layout()
print(opt.status, opt.objective, {k: round(v, 1) for k, v in bounds.items()})

# %% [markdown]
# ## An honest time limit
# A Model-1 instance with 20 requests is not proven in a couple of seconds: the result is
# `time_limit` with the incumbent, the bound and the gap.

# %%
hard = model1(6, n=20)
res = solve(hard, solver="highs", formulation="tight", time_limit=2)
print(res.status, res.objective, round(res.bound, 1), f"gap {100 * res.gap:.1f}%")
assert res.status == "time_limit" and kvopt.check_schedule(hard, res.schedule).ok
