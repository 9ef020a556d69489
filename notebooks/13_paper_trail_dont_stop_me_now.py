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
# # Paper: "Don't Stop Me Now: Embedding Based Scheduling for LLMs" — TRAIL (seed 004)
#
# Shahout, Malach, Liu, Jiang, Yu, Mitzenmacher (ICLR 2025). TRAIL ranks requests by their
# predicted remaining length (SPRPT) and lets a request be preempted only during its first
# `C r` tokens (`r` its prediction): less preemption, less memory. Its analysis (Lemma 1, via
# the SOAP framework) gives the M/G/1 mean response time; its system experiment in vLLM
# reports 1.66-2.01x lower mean latency than FCFS.
#
# kvopt checks the formula (`kvopt.queueing`: printed and corrected Lemma 1, a rank-policy
# simulator) and the policy in its LLM simulator (`kvopt.sim`, policy `trail`); targets in
# `kvopt.report.reproduce.seed004`. `KVOPT_FAST=1` keeps it small.

# %%
import os

from IPython.display import Image, display

from kvopt.queueing.distributions import parse_sizes
from kvopt.queueing.predictions import parse_predictions
from kvopt.queueing.soap import SoapModel
from kvopt.report.reproduce import default_root, seed002, seed004
from kvopt.report.reproduce.core import Context

FAST = os.environ.get("KVOPT_FAST") == "1"
ctx = Context(fast=FAST, root=default_root())

# %% [markdown]
# ## Formula against simulation: Lemma 1 printed and corrected
# Exp(1) sizes, exponential predictions (mean = the true size). The printed Lemma 1 uses the
# new job's threshold for old jobs and integrates past completion; the corrected one
# reduces to SPRPT at C = 1 and to SPJF as C -> 0, as the paper says it should.

# %%
m = SoapModel(parse_sizes("exp:1"), parse_predictions("exp"), 0.7)
for c in (0.2, 0.5, 1.0):
    print(f"lambda = 0.7, C = {c}: corrected {m.mean_response('trail', c):.4f}, "
          f"printed {m.mean_response('trail-printed', c):.4f}")
print(f"SPRPT {m.mean_response('sprpt'):.4f}, SPJF {m.mean_response('spjf'):.4f}")
for t in seed004.TARGETS["L1"](ctx):
    print(f"{t.key} [{t.verdict}] {t.kvopt}")
display(Image(seed004.figure(ctx).png))

# %% [markdown]
# ## Fig. 8: limiting preemption saves memory
# Memory = the sum of the ages of the jobs in the system (App. D). Smaller C keeps less
# memory at a small cost in response time.

# %%
d = seed004._fig8(ctx)
for i, c in enumerate(d["Cs"]):
    print(f"C = {c:g}: mean response {d['sim'][i].round(3).tolist()}, time-average memory "
          f"{d['mean_memory'][i].round(3).tolist()} at lambda = {d['lams'].tolist()}")

# %% [markdown]
# ## TRAIL in the LLM simulator
# The Azure conversation trace on a Llama-2-70B / 2xA100 step-time model, in vLLM's recompute
# preemption mode (a preempted request keeps its tokens and prefills them again) and in
# kvopt's restart mode (it starts over). In both, TRAIL with C = 0.8 loses to FCFS here: its
# binned refined ranks make newcomers preempt nearly finished requests again and again.

# %%
for t in seed004.TARGETS["Sys"](ctx):
    print(f"{t.key} [{t.verdict}] paper {t.paper}; kvopt {t.kvopt}\n  {t.reason}\n")
display(Image(seed002.figure(ctx).png))

# %% [markdown]
# ## Errata
# %%
for e in seed004.errata(ctx):
    print(f"- {e.where}\n  corrected: {e.corrected}\n  evidence: {e.evidence}\n")
