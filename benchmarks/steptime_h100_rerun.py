"""Re-measured H100 step times against the shipped ``h100_llama_steps.csv`` (same profiler).

``kvopt steptime profile`` was run on a lent H100 on 2026-11-25 (the first run of kvopt's
profiler on a GPU): Llama-2-7B twice (same machine, back to back) and one Llama-2-70B TP-2
shard, full grid. This script prints, per model and kind, the ratio of the new median step time
to the shipped one (same grid point) and the back-to-back repeatability, so the step-time
models' validation errors can be read against the spread between two H100 machines.

Usage::

    python benchmarks/steptime_h100_rerun.py [--dir reports/steptime/h100_rerun]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from kvopt.core.io import shipped_path

Key = tuple[str, str, int, int, int]


def load(path: str | Path) -> dict[Key, float]:
    """Median ms per (kind, model, prefill, batch, context)."""
    with open(path, newline="") as f:
        return {(r["kind"], r["model"], int(r["prefill"]), int(r["batch"]), int(r["context"])):
                float(r["ms_median"]) for r in csv.DictReader(f)}


def ratio_rows(new: dict[Key, float], ref: dict[Key, float]) -> list[str]:
    """Markdown rows: model, kind, points, min / median / max of new / ref."""
    rows = []
    for model in sorted({k[1] for k in new}):
        for kind in ("prefill", "decode", "mixed"):
            r = np.array([new[k] / ref[k] for k in new
                          if k in ref and k[0] == kind and k[1] == model])
            if r.size:
                lo, med, hi = np.percentile(r, [0, 50, 100])
                rows.append(f"| {model} | {kind} | {r.size} | {lo:.3f} | {med:.3f} | {hi:.3f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="reports/steptime/h100_rerun")
    d = Path(ap.parse_args().dir)
    shipped = load(shipped_path("kvopt/data/measured/h100_llama_steps.csv"))
    run1, run2 = load(d / "h100_7b_full.csv"), load(d / "h100_7b_full_run2.csv")
    big = load(d / "h100_70b_tp2_full.csv")
    head = ["| model | kind | points | min | median | max |", "|---|---|---|---|---|---|"]
    print("new / shipped (median step time, same grid point)")
    print("\n".join(head + ratio_rows(run1, shipped) + ratio_rows(big, shipped)))
    print("\nrepeatability: 7B run 2 / run 1 (same machine, back to back)")
    print("\n".join(head + ratio_rows(run2, run1)))


if __name__ == "__main__":
    main()
