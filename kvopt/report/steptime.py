"""Step-time validation report: error tables and a predicted-vs-measured plot
(``kvopt steptime validate --out DIR``; numbers from :func:`kvopt.sim.steptime_fit.validate`).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from kvopt.core.io import atomic_write_bytes, atomic_write_text, write_json
from kvopt.report.writers import figure_png, table


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:+.1f}%".replace("+-", "-")


def _abs_pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def strip_rows(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without the per-row predictions (for ``--json`` on stdout)."""
    out = copy.deepcopy(result)
    for s in out["sets"]:
        for st in s["setups"]:
            for m in st["models"]:
                m.pop("rows", None)
    return out


def validation_markdown(result: dict[str, Any]) -> str:
    """Tables: per set, per setup and model, per kind: n, median |error| and worst error of
    the shipped model, and (when fitted) of the cross-validated fit on held-out rows.

    Examples
    --------
    >>> from kvopt.sim.steptime_fit import validate
    >>> md = validation_markdown(validate(["h100-steps"]))
    >>> "| h100 llama2-7b tp1 | h100-llama2-7b-tp1 | decode |" in md
    True
    """
    fit = result.get("folds") is not None
    head = ["setup", "model", "kind", "n", "median abs err", "worst err", "mean err"]
    if fit:
        head += [f"held-out median abs ({result['folds']}-fold fit)", "held-out worst"]
    lines: list[str] = []
    for s in result["sets"]:
        lines += [f"### {s['set']} (`{s['source']}`)", ""]
        rows: list[list[str]] = []

        def row(setup: str, model: str, doc: dict[str, Any], rows: list[list[str]] = rows
                ) -> None:
            for kind, e in doc["default"].items():
                cells = [setup, model, kind, str(e["n"]), _abs_pct(e["median_abs"]),
                         _pct(e["worst"]), _pct(e["mean"])]
                if fit:
                    f = doc["fitted_heldout"][kind]
                    cells += [_abs_pct(f["median_abs"]), _pct(f["worst"])]
                if kind == "all":
                    cells = [f"**{c}**" for c in cells]
                rows.append(cells)

        for st in s["setups"]:
            for m in st["models"]:
                row(st["setup"], m["model"], m)
        for family, doc in s["pooled"].items():
            row("all setups", family, doc)
        lines += table(head, rows).splitlines()
        lines.append("")
        for e in s["excluded"]:
            lines.append(f"Excluded: {e['setup']} {e['kind']} {e['config']}: measured "
                         f"{e['ms']:.1f} ms, {e['reason']} ({e['floor_ms']:.0f} ms).")
        if s["excluded"]:
            lines.append("")
        if fit:
            lines.append("Fitted constants (all rows of the setup):")
            lines.append("")
            for st in s["setups"]:
                for m in st["models"]:
                    c = ", ".join(f"{k} {v:.4g}" for k, v in m["fitted_constants_all_rows"].items())
                    lines.append(f"- {st['setup']}, {m['model']}: {c}")
            lines.append("")
    return "\n".join(lines)


def validation_plot(result: dict[str, Any]) -> bytes:
    """Predicted vs measured (log-log), one panel per measurement set; filled markers the
    shipped models, open markers the held-out fits (when fitted)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = result["sets"]
    fit = result.get("folds") is not None
    colors = {"prefill": "tab:blue", "decode": "tab:orange", "mixed": "tab:green",
              "prefill-batch": "tab:purple"}
    with plt.rc_context({"font.size": 8}):
        fig, axes = plt.subplots(1, len(sets), figsize=(4.0 * len(sets), 4.0), squeeze=False)
        for ax, s in zip(axes[0], sets, strict=True):
            lo, hi = float("inf"), 0.0
            for st in s["setups"]:
                for m in st["models"]:
                    if m["family"] != "profiled":
                        continue
                    r = m["rows"]
                    for i, k in enumerate(r["kind"]):
                        meas = r["measured_ms"][i]
                        lo, hi = min(lo, meas), max(hi, meas)
                        ax.plot(meas, r["default_ms"][i], "o", ms=3, color=colors[k], alpha=0.7)
                        if fit:
                            ax.plot(meas, r["heldout_fit_ms"][i], "o", ms=4, mfc="none",
                                    color=colors[k], alpha=0.7)
            lo, hi = lo / 1.5, hi * 1.5
            ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
            for f in (0.9, 1.1):
                ax.plot([lo, hi], [lo * f, hi * f], "k:", lw=0.6)
            ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi),
                   xlabel="measured (ms)", ylabel="predicted (ms)",
                   title=f"{s['set']} (profiled models)")
            ax.grid(True, which="both", alpha=0.2)
        handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=k)
                   for k, c in colors.items()]
        handles.append(plt.Line2D([], [], marker="o", ls="", color="gray", label="shipped model"))
        if fit:
            handles.append(plt.Line2D([], [], marker="o", ls="", mfc="none", color="gray",
                                      label="fitted, held out"))
        axes[0][0].legend(handles=handles, fontsize=7, loc="upper left")
        fig.tight_layout()
        data = figure_png(fig, dpi=110)
        plt.close(fig)
    return data


def write_validation_report(result: dict[str, Any], out: str | os.PathLike[str],
                            command: str) -> list[str]:
    """Write ``validate.json``, ``validate.md`` and ``pred_vs_measured.png`` into ``out``;
    returns the paths written."""
    d = Path(out)
    paths = [d / "validate.json", d / "validate.md", d / "pred_vs_measured.png"]
    write_json(paths[0], result)
    atomic_write_text(paths[1], f"# Step-time models vs measured step times\n\n"
                                f"Command: `{command}`\n\n" + validation_markdown(result))
    atomic_write_bytes(paths[2], validation_plot(result))
    return [str(p) for p in paths]
