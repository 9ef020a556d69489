"""The step-time terms issue 21 (item 4) singled out, before and after, on measured rows.

Before = the profiled models' constants until then (``bw_eff`` 0.7, ``mfu`` 0.5, 2 ms
per-iteration overhead for every model, analytic attention everywhere), with serving-engine
costs recalibrated on ``splitwise-h100`` for them exactly as the shipped ones are (so the
before column reproduces the previous shipped models). After = the shipped models.

Rows: the Splitwise A100 Llama-2-70B serving runs (never used to fit anything: the engine
costs come from the H100 runs), all kinds pooled and the two groups the cross-check pointed
at (large-batch decode, long single prefills); the 7B CUDA-graph rows of ``h100-steps`` per
kind (its decode rows set the 7B overhead, so they are in-sample for it; prefill and mixed
rows are not).

    python reports/sim/vidur/steptime_terms.py > reports/sim/vidur/steptime_terms.md
"""

from __future__ import annotations

import dataclasses

import numpy as np

from kvopt.sim.steptime.fit import fit_engine_costs
from kvopt.sim.steptime.measured import MEASUREMENT_SETS, StepRows

BEFORE = {"bw_eff": 0.7, "mfu": 0.5, "overhead": 2e-3, "attention": "analytic"}


def _pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def _med(rel: np.ndarray) -> str:
    return f"{100 * float(np.median(np.abs(rel))):.1f}%" if rel.size else "-"


def main() -> None:
    h100 = MEASUREMENT_SETS["splitwise-h100"]()
    old_costs = fit_engine_costs([(st.rows, dataclasses.replace(st.gpu_models["profiled"](),
                                                                **BEFORE), st.tp, st.config)
                                  for st in h100.setups], "before")
    print("# Step-time terms before / after (issue 21, item 4)\n")
    print("Command: `python reports/sim/vidur/steptime_terms.py`. Engine costs of the before "
          f"models, recalibrated on splitwise-h100: step {old_costs.step * 1e3:.2f} ms, seq "
          f"{old_costs.seq * 1e3:.3f} ms, all-reduce {old_costs.ar_rank_latency * 1e6:.1f} us "
          "(the shipped ones until now).\n")
    print("## Splitwise A100 Llama-2-70B (held out)\n")
    print("| setup | rows | measured ms | before | after |")
    print("|---|---|---|---|---|")
    pooled: dict[str, list[np.ndarray]] = {"before": [], "after": []}
    for st in MEASUREMENT_SETS["splitwise-a100"]().setups:
        r: StepRows = st.rows
        name = st.label.replace("a100 llama2-70b tp", "a100-llama2-70b-tp")
        after_m = st.models[name]()
        before_m = old_costs.apply(dataclasses.replace(st.gpu_models["profiled"](), **BEFORE))
        pa, pb = r.predict_ms(after_m), r.predict_ms(before_m)
        ea, eb = pa / r.ms - 1, pb / r.ms - 1
        pooled["after"].append(ea)
        pooled["before"].append(eb)
        groups = (("decode, batch 64", (r.kind == "decode") & (r.decode == 64)),
                  ("prefill, 4096 tokens", (r.kind == "prefill") & (r.prefill == 4096)),
                  ("prefill, 8192 tokens", (r.kind == "prefill") & (r.prefill == 8192)))
        for label, m in groups:
            for i in np.flatnonzero(m):
                print(f"| {st.label} | {label} | {r.ms[i]:.1f} | {pb[i]:.1f} ({_pct(eb[i])}) | "
                      f"{pa[i]:.1f} ({_pct(ea[i])}) |")
        print(f"| {st.label} | all {len(r)} rows, median abs | | {_med(eb)} | {_med(ea)} |")
    print(f"| all | {sum(len(x) for x in pooled['after'])} rows, median abs | | "
          f"{_med(np.concatenate(pooled['before']))} | "
          f"{_med(np.concatenate(pooled['after']))} |\n")
    print("## h100-steps, Llama-2-7B (CUDA-graph GPU time)\n")
    print("| kind | n | before median abs / mean | after median abs / mean |")
    print("|---|---|---|---|")
    st = MEASUREMENT_SETS["h100-steps"]().setups[0]
    r = st.rows
    after_m = st.models["h100-llama2-7b-tp1-gpu"]()
    before_m = dataclasses.replace(after_m, **BEFORE)
    ea, eb = r.predict_ms(after_m) / r.ms - 1, r.predict_ms(before_m) / r.ms - 1
    for k in ("decode", "prefill", "mixed"):
        m = r.kind == k
        print(f"| {k}{' (overhead fitted here)' if k == 'decode' else ''} | {int(m.sum())} | "
              f"{_med(eb[m])} / {_pct(float(eb[m].mean()))} | "
              f"{_med(ea[m])} / {_pct(float(ea[m].mean()))} |")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__,  # no options: --help says what it prints
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
