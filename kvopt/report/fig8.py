"""Reproduction of seed 004 Fig. 8: mean response time and peak memory vs arrival rate
(``kvopt queueing --plot-fig8 OUT.png``).

The paper's figure gives no numbers (only the caption): blue = mean response time, green =
peak memory, across arrival rates and values of ``C``, for Exp(1) sizes.  We draw one panel
per ``C``: the simulated mean response (blue markers with 95% error bars) on top of the
corrected-formula curve (blue line), and the simulated peak memory (green) and time-average
memory (dashed green) on a second axis.  Memory is the sum of the ages of the jobs in the
system (App. D).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from kvopt.queueing.distributions import SizeDistribution
from kvopt.queueing.predictions import PredictionModel
from kvopt.queueing.simulator import simulate_queue
from kvopt.queueing.soap import SoapModel
from kvopt.report.writers import save_figure

__all__ = ["fig8_data", "plot_fig8"]


def fig8_data(lams: Sequence[float] | np.ndarray, Cs: Sequence[float] | np.ndarray,
              sizes: SizeDistribution, predictions: PredictionModel,
              n_jobs: int = 100_000, seed: int = 0) -> dict[str, np.ndarray]:
    """Simulate and evaluate every ``(C, lam)`` pair of the figure.

    Returns
    -------
    dict
        ``lams``, ``Cs`` and arrays of shape ``(len(Cs), len(lams))``: ``formula``,
        ``sim``, ``se``, ``peak_memory``, ``mean_memory``.

    Examples
    --------
    >>> from kvopt.queueing.distributions import Exponential
    >>> from kvopt.queueing.predictions import ExpPredictions
    >>> d = fig8_data([0.5], [0.5], Exponential(1.0), ExpPredictions(), n_jobs=2000)
    >>> d["sim"].shape
    (1, 1)
    """
    lams, Cs = np.asarray(lams, float), np.asarray(Cs, float)
    shape = (Cs.size, lams.size)
    out = {k: np.zeros(shape) for k in ("formula", "sim", "se", "peak_memory", "mean_memory")}
    seeds = np.random.SeedSequence(seed).spawn(lams.size)
    for j, lam in enumerate(lams):
        model = SoapModel(sizes, predictions, float(lam))
        for i, C in enumerate(Cs):
            out["formula"][i, j] = model.mean_response("trail", float(C))
            # common random numbers across C at a given lam
            rng = np.random.default_rng(seeds[j])
            s = simulate_queue("trail", float(lam), sizes, predictions, float(C), n_jobs=n_jobs,
                         seed=rng)
            out["sim"][i, j], out["se"][i, j] = s.mean_response, s.se
            out["peak_memory"][i, j], out["mean_memory"][i, j] = s.peak_memory, s.mean_memory
    out["lams"], out["Cs"] = lams, Cs
    return out


def plot_fig8(data: dict[str, Any], out: str | os.PathLike[str], title: str = "") -> None:
    """Draw the Fig. 8 panels from :func:`fig8_data` output and write a PNG to ``out``
    (atomically, through :func:`kvopt.report.writers.save_figure`: no ``Software`` tag).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from PIL import Image
    >>> from kvopt.queueing.distributions import Exponential
    >>> from kvopt.queueing.predictions import ExpPredictions
    >>> d = fig8_data([0.5, 0.8], [0.5], Exponential(1.0), ExpPredictions(), n_jobs=2000)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = pathlib.Path(tmp) / "fig8.png"
    ...     plot_fig8(d, out, title="Exp(1) sizes")
    ...     Image.open(out).size   # one C: one 4.2 x 3.4 inch panel at 120 dpi
    (504, 408)
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lams, Cs = data["lams"], data["Cs"]
    npanel = Cs.size + (1 if Cs.size > 1 else 0)  # last panel: everything vs C at top lam
    ncol = min(npanel, 3 if npanel in (5, 6, 9) else 4)
    nrow = int(np.ceil(npanel / ncol))
    fig = Figure(figsize=(4.2 * ncol, 3.4 * nrow), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrow, ncol, squeeze=False)
    peak_max = float(np.max(data["peak_memory"])) * 1.05
    t_max = float(max(np.max(data["sim"] + 2 * data["se"]), np.max(data["formula"]))) * 1.05
    for k, C in enumerate(Cs):
        ax = axes[k // ncol, k % ncol]
        ax.plot(lams, data["formula"][k], "-", color="tab:blue", label="E[T] formula")
        ax.errorbar(lams, data["sim"][k], yerr=1.96 * data["se"][k], fmt="o", ms=3,
                    color="tab:blue", label="E[T] simulated")
        ax.set_ylim(0, t_max)
        ax.set_xlabel("arrival rate λ")
        ax.set_ylabel("mean response time", color="tab:blue")
        ax.set_title(f"C = {C:g}")
        ax2 = ax.twinx()
        ax2.plot(lams, data["peak_memory"][k], "s-", ms=3, color="tab:green", label="peak memory")
        ax2.plot(lams, data["mean_memory"][k], "--", color="tab:green", label="mean memory")
        ax2.set_ylim(0, peak_max)
        ax2.set_ylabel("memory (sum of ages)", color="tab:green")
        if k == 0:
            h1, l1 = ax.get_legend_handles_labels()
            h2, l2 = ax2.get_legend_handles_labels()
            ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper left")
    if Cs.size > 1:
        k = Cs.size
        ax = axes[k // ncol, k % ncol]
        j = int(np.argmax(lams))
        ax.plot(Cs, data["formula"][:, j], "-", color="tab:blue")
        ax.errorbar(Cs, data["sim"][:, j], yerr=1.96 * data["se"][:, j], fmt="o", ms=3,
                    color="tab:blue")
        ax.set_xlabel("C")
        ax.set_ylabel("mean response time", color="tab:blue")
        ax.set_title(f"all C at λ = {lams[j]:g}")
        ax2 = ax.twinx()
        ax2.plot(Cs, data["peak_memory"][:, j], "s-", ms=3, color="tab:green")
        ax2.plot(Cs, data["mean_memory"][:, j], "o--", ms=3, color="tab:green")
        ax2.set_ylim(0, peak_max)
        ax2.set_ylabel("memory (sum of ages)", color="tab:green")
    for k in range(npanel, nrow * ncol):
        axes[k // ncol, k % ncol].set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    save_figure(fig, out, dpi=120)
