"""Step-time validation report: error tables and a predicted-vs-measured plot
(``kvopt steptime validate --out DIR``; numbers from :func:`kvopt.sim.steptime.fit.validate`).
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
    """``result`` without the per-row predictions (for ``--json`` on stdout).

    Examples
    --------
    >>> from kvopt.sim.steptime.fit import validate
    >>> result = validate(["h100-steps"])
    >>> model = result["sets"][0]["setups"][0]["models"][0]
    >>> model["model"], len(model["rows"]["measured_ms"])
    ('h100-llama2-7b-tp1-gpu', 53)
    >>> short = strip_rows(result)
    >>> "rows" in short["sets"][0]["setups"][0]["models"][0], "rows" in model  # a copy
    (False, True)
    """
    out = copy.deepcopy(result)
    for s in out["sets"]:
        for st in s["setups"]:
            for m in st["models"]:
                m.pop("rows", None)
    return out


def _setup_medians(s: dict[str, Any], variant: str) -> str:
    """Per-setup median |error| of the models of ``variant`` (e.g. ``profiled-engine``)."""
    vals = []
    for st in s["setups"]:
        for m in st["models"]:
            if m["family"] == variant:
                vals.append(_abs_pct(m["default"]["all"]["median_abs"]))
    return " / ".join(vals)


def summary_markdown(result: dict[str, Any]) -> str:
    """The out-of-the-box table: per measurement set and model variant (GPU time, serving
    engine), pooled median and worst error, per-setup medians, whether the engine costs were
    calibrated on that set; then the calibration-transfer matrix (when computed).

    Examples
    --------
    >>> from kvopt.sim.steptime.fit import validate
    >>> md = summary_markdown(validate(["splitwise-a100"]))
    >>> "| splitwise-a100 | profiled-engine | out-of-sample |" in md
    True
    """
    cal = result.get("engine_calibration", {})
    lines = [f"Engine costs of the shipped serving-engine models: calibration "
             f"`{cal.get('name')}` on {', '.join(cal.get('calibrated_on', [])) or '-'} "
             f"(`{cal.get('command')}`).", ""]
    head = ["set", "variant", "engine costs", "n", "median abs err", "worst err",
            "median per setup"]
    rows = []
    for s in result["sets"]:
        for variant, doc in s["pooled"].items():
            e = doc["default"]["all"]
            sample = "-" if variant.endswith("-gpu") else (
                "in-sample" if s.get("engine_in_sample") else "out-of-sample")
            cells = [s["set"], variant, sample, str(e["n"]), _abs_pct(e["median_abs"]),
                     _pct(e["worst"]), _setup_medians(s, variant)]
            rows.append(cells)
    lines += table(head, rows).splitlines()
    tr = result.get("engine_transfer")
    if tr:
        lines += ["", "Calibration transfer: engine costs calibrated on one set alone (rows), "
                  "scored on every set (columns): pooled median abs error (per setup). "
                  "Diagonal = in-sample.", ""]
        for fam, doc in tr.items():
            sets = list(doc["rows"][0]["tested"])
            body = []
            for r in doc["rows"]:
                c = r["costs"]
                cells = [r["calibrated_on"], f"{1e3 * c['step']:.2f} ms / "
                         f"{1e3 * c['seq']:.3f} ms / {1e6 * c['ar_rank_latency']:.1f} us"]
                for n in sets:
                    t = r["tested"][n]
                    per = " / ".join(_abs_pct(v) for v in t["per_setup"].values())
                    v = f"{_abs_pct(t['median_abs'])} ({per})"
                    cells.append(f"*{v}*" if t["in_sample"] else v)
                body.append(cells)
            lines += table([f"{fam}: calibrated on", "step / seq / ar_rank_latency",
                            *sets], body).splitlines()
            lines.append("")
    return "\n".join(lines)


def validation_markdown(result: dict[str, Any]) -> str:
    """Tables: per set, per setup and model, per kind: n, median |error| and worst error of
    the shipped model, and (when fitted) of the cross-validated fit on held-out rows.

    Examples
    --------
    >>> from kvopt.sim.steptime.fit import validate
    >>> md = validation_markdown(validate(["h100-steps"]))
    >>> "| h100 llama2-7b tp1 | h100-llama2-7b-tp1-gpu | decode |" in md
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
    """Predicted vs measured (log-log), one panel per measurement set: filled markers the
    shipped profiled models (serving-engine ones on the Splitwise sets), crosses the GPU-time
    ``-gpu`` models where they differ, open markers the held-out fits (when fitted).

    Examples
    --------
    >>> import io
    >>> from PIL import Image
    >>> from kvopt.sim.steptime.fit import validate
    >>> png = validation_plot(validate(["h100-steps"]))
    >>> png[:4] == b"\\x89PNG", Image.open(io.BytesIO(png)).size  # one set: 4 x 4 in, 110 dpi
    (True, (440, 440))
    """
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
                fams = {m["family"]: m for m in st["models"]}
                shipped = fams.get("profiled-engine", fams.get("profiled-gpu"))
                gpu_only = fams.get("profiled-gpu") if "profiled-engine" in fams else None
                if shipped is None:
                    continue
                r = shipped["rows"]
                for i, k in enumerate(r["kind"]):
                    meas = r["measured_ms"][i]
                    lo, hi = min(lo, meas), max(hi, meas)
                    ax.plot(meas, r["default_ms"][i], "o", ms=3, color=colors[k], alpha=0.7)
                    if gpu_only is not None:
                        ax.plot(meas, gpu_only["rows"]["default_ms"][i], "x", ms=3,
                                color=colors[k], alpha=0.5)
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
        handles.append(plt.Line2D([], [], marker="o", ls="", color="gray",
                                  label="shipped model (engine where calibrated)"))
        handles.append(plt.Line2D([], [], marker="x", ls="", color="gray",
                                  label="GPU-time model (-gpu)"))
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
    returns the paths written.

    Examples
    --------
    >>> import tempfile
    >>> from kvopt.sim.steptime.fit import validate
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = write_validation_report(validate(["h100-steps"]), d, "kvopt steptime validate")
    ...     [Path(p).name for p in paths], Path(paths[1]).read_text().splitlines()[2]
    (['validate.json', 'validate.md', 'pred_vs_measured.png'], 'Command: `kvopt steptime validate`')
    """
    d = Path(out)
    paths = [d / "validate.json", d / "validate.md", d / "pred_vs_measured.png"]
    write_json(paths[0], result)
    atomic_write_text(paths[1], f"# Step-time models vs measured step times\n\n"
                                f"Command: `{command}`\n\n## Out of the box\n\n"
                                + summary_markdown(result) + "\n\n## Per set, setup, model "
                                "and kind\n\n" + validation_markdown(result))
    atomic_write_bytes(paths[2], validation_plot(result))
    return [str(p) for p in paths]
