"""Prediction-aware scheduling experiments (TRAIL, TIE and baselines) on the A100 step time.

Workloads (both timed, ``M = 16492`` KV tokens, Llama-2-70B on 2xA100, the GPU-time
``a100-llama2-70b-tp2-gpu`` step-time model, the one the committed report was made with; the
unsuffixed name includes serving-engine costs since issue 12):

- ``heavy-tailed``: :func:`kvopt.predictions.heavy_tailed_workload` (per-prompt log-t
  lengths, ``nu = 3.5``, ``max_tokens = 2048``); predictors see the truth through
  :class:`~kvopt.predictions.LogTPredictor` (``mu`` error chosen for TIE's ``R^2 = 0.82``,
  ``sigma`` log-error 0.2);
- ``azure-conv``: the first ``n`` requests of the Azure conversation trace (2023,
  ``instances/traces/azure_conv_2023.csv``) with arrivals compressed by ``time_scale``;
  lacking prompts, the distributional prediction is the calibrated log-t around the true
  length (:meth:`~kvopt.predictions.LogTPredictor.from_lengths`, scale 0.8). The trace is
  package data (``kvopt/data/traces``; ``instances/traces`` links to it in a checkout).

Policies: ``fcfs``; ``sjf`` (oracle true lengths); ``srpt`` and ``spjf`` with true lengths
(the preemptive and non-preemptive oracles of the rank family: their gap is the price of
recompute preemption); ``ssjf`` (the predicted median
``exp(mu_hat)`` as a point, SSJF-like); ``trail`` (refined remaining-length predictions,
log-error 0.8 at age 0 shrinking to 0, 10 bins over 0..``max_tokens``, re-predicted every
8 tokens, ``C = 0.8``; ``C = 0.2``; and ``C = 0.8`` with log-error 0.3); ``tie`` (log-t
``E + beta CVaR_0.9``, adaptive beta with ``B = 32``, about the number of requests that fit
in ``M`` here, decay ``gamma = 0.9, tau = 30 s``) and its ablations ``E only``
(``beta = 0``), ``log-normal`` (same ``mu_hat``, ``sigma_hat sqrt(nu / (nu - 2))``: the same
log-variance), ``beta = 0.1`` and ``beta = 0.3`` fixed, and TIE paying 3 ms per prediction
batch (a DeBERTa-size predictor; predictions are synchronous here, TIE's are asynchronous).

Metrics: mean and P90 request latency (s), mean per-token latency (latency / output tokens,
TIE's PTLA), mean TTFT, throughput (output tokens per second of makespan), evictions.

Preemption modes (issue 21): ``experiment_rows(preemption=...)`` runs the policies of
:func:`mode_runs` (FCFS, SRPT, SPJF, SPRPT, SSJF, TRAIL with ``C`` in 0.2, 0.8, 1, inf, TIE)
in that mode (``kvopt predictions experiment --preemption recompute``); ``seeds`` averages
over seeds with standard errors.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import as_file
from pathlib import Path
from typing import Any

import numpy as np

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance, load_instance
from kvopt.core.io import atomic_write_text, data_file
from kvopt.core.metrics import request_table
from kvopt.core.schedule import PreemptionMode
from kvopt.predictions import LogTPredictor, heavy_tailed_workload
from kvopt.report.measure import mean_se
from kvopt.report.writers import save_figure, table
from kvopt.sim import simulate
from kvopt.sim.predicted_lengths import Predictions

STEP_TIME = "a100-llama2-70b-tp2-gpu"


@dataclass(frozen=True)
class Case:
    """One workload with the predictions every policy sees.

    Examples
    --------
    >>> case = heavy_tailed_case(20, rate=1.3, seed=0)
    >>> case.name, case.instance.n, case.max_tokens, case.nu, case.mu_hat.shape
    ('heavy-tailed', 20, 2048, 3.5, (20,))
    """

    name: str
    instance: Instance
    mu_hat: np.ndarray
    sigma_hat: np.ndarray
    max_tokens: int
    nu: float = 3.5


def heavy_tailed_case(n: int, rate: float, seed: int) -> Case:
    """The heavy-tailed workload with log-t predictions (``R^2(mu) = 0.82``).

    Examples
    --------
    >>> case = heavy_tailed_case(20, rate=1.3, seed=0)
    >>> case.instance.name, case.instance.memory, case.instance.time_unit
    ('heavy-tailed-n20-rate1.3-seed0', 16492, 'second')
    >>> np.rint(np.exp(case.mu_hat[:4])).astype(int).tolist()  # predicted medians
    [81, 46, 465, 1249]
    >>> case.instance.output[:4].tolist()  # true lengths
    [43, 80, 176, 2048]
    """
    w = heavy_tailed_workload(n, rate=rate, memory=16492, seed=seed, catalog_seed=seed)
    mu_sd = 0.8  # the catalog's spread of mu
    noise = mu_sd * float(np.sqrt((1 - 0.82) / 0.82))
    pred = LogTPredictor(nu=w.nu, mu_noise=noise, sigma_noise=0.2)
    mu, sg = pred.predict(w.mu, w.sigma, np.random.default_rng(seed + 1000))
    return Case("heavy-tailed", w.instance, mu, sg, w.max_tokens, w.nu)


def azure_case(n: int, time_scale: float, seed: int, window: int = 0) -> Case:
    """The first ``n`` Azure conversation requests (with ``window = k``: requests
    ``k n .. (k + 1) n - 1``, arrivals shifted to start at 0), arrivals divided by
    ``time_scale``.

    Examples
    --------
    >>> case = azure_case(20, time_scale=0.5, seed=0)
    >>> case.name, case.instance.name, case.max_tokens
    ('azure-conv', 'azure-conv-first20-x0.5', 174)
    >>> later = azure_case(20, time_scale=0.5, seed=0, window=1)
    >>> later.instance.source, float(later.instance.arrival[0])
    ('azure_conv_2023.csv (requests 20..39, arrivals / 0.5)', 0.0)
    """
    with as_file(data_file("traces", "azure_conv_2023.csv")) as path:
        full = load_instance(path)
    lo = window * n
    if lo + n > full.n:
        raise UsageError("n", f"the trace has {full.n} requests, asked for {lo + n}")
    sl = slice(lo, lo + n)
    arr = full.arrival[sl] - (full.arrival[lo] if window else 0.0)
    what = f"first {n} requests" if not window else f"requests {lo}..{lo + n - 1}"
    tag = f"first{n}" if not window else f"w{window}x{n}"
    inst = Instance(memory=full.memory, arrival=arr / time_scale,
                    prompt=full.prompt[sl], output=full.output[sl], time_unit="second",
                    name=f"azure-conv-{tag}-x{time_scale:g}",
                    source=f"azure_conv_2023.csv ({what}, arrivals / {time_scale:g})")
    pred = LogTPredictor(nu=3.5, trace_scale=0.8)
    mu, sg = pred.from_lengths(inst.output, np.random.default_rng(seed + 2000))
    return Case("azure-conv", inst, mu, sg, int(inst.output.max()))


def policy_runs(case: Case) -> list[tuple[str, str, Any, dict[str, Any]]]:
    """``(label, policy, predictions, options)`` of every compared policy.

    Examples
    --------
    >>> runs = policy_runs(heavy_tailed_case(20, rate=1.3, seed=0))
    >>> len(runs), runs[0]
    (14, ('FCFS', 'fcfs', None, {}))
    >>> runs[5]
    ('TRAIL C=0.8', 'trail', None,
     {'sigma0': 0.8, 'every': 8, 'bins': 10, 'max_len': 2048.0, 'pred_seed': 7, 'C': 0.8})
    """
    n = case.instance.n
    point = np.maximum(np.rint(np.exp(case.mu_hat)), 1).astype(np.int64)
    dist = Predictions(point=point, label="logt", mu=case.mu_hat, sigma=case.sigma_hat)
    ln_sigma = case.sigma_hat * np.sqrt(case.nu / (case.nu - 2))
    dist_ln = Predictions(point=point, label="lognormal", mu=case.mu_hat, sigma=ln_sigma)
    trail = {"sigma0": 0.8, "every": 8, "bins": 10, "max_len": float(case.max_tokens),
             "pred_seed": 7}
    tie = {"max_tokens": case.max_tokens, "batch_size": 32}
    del n
    return [
        ("FCFS", "fcfs", None, {}),
        ("SJF (oracle)", "sjf", None, {}),
        ("SRPT (oracle)", "srpt", None, {}),
        ("SPJF (oracle)", "spjf", "exact", {}),
        ("SSJF (point)", "ssjf", Predictions(point=point, label="median"), {}),
        ("TRAIL C=0.8", "trail", None, {**trail, "C": 0.8}),
        ("TRAIL C=0.2", "trail", None, {**trail, "C": 0.2}),
        ("TRAIL C=0.8 sigma0=0.3", "trail", None, {**trail, "C": 0.8, "sigma0": 0.3}),
        ("TIE", "tie", dist, tie),
        ("TIE E only", "tie", dist, {**tie, "beta": 0.0}),
        ("TIE log-normal", "tie", dist_ln, {**tie, "family": "lognormal"}),
        ("TIE beta=0.1", "tie", dist, {**tie, "beta": 0.1}),
        ("TIE beta=0.3", "tie", dist, {**tie, "beta": 0.3}),
        ("TIE +3 ms/prediction batch", "tie", dist, {**tie, "prediction_cost": (0.003, 0.0)}),
    ]


def mode_runs(case: Case, seed: int = 0) -> list[tuple[str, str, Any, dict[str, Any]]]:
    """The policies compared across preemption modes (issue 21): FCFS, the oracles SRPT and
    SPJF, SPRPT and SSJF on the predicted median, TRAIL with ``C`` in 0.2, 0.8, 1 and
    infinity (refined predictions as in :func:`policy_runs`, their noise seeded by
    ``7 + seed``) and TIE.

    Examples
    --------
    >>> [label for label, *_ in mode_runs(heavy_tailed_case(20, rate=1.3, seed=0))]
    ['FCFS', 'SRPT (oracle)', 'SPJF (oracle)', 'SPRPT (point)', 'SSJF (point)',
     'TRAIL C=0.2', 'TRAIL C=0.8', 'TRAIL C=1', 'TRAIL C=inf', 'TIE']
    """
    point = np.maximum(np.rint(np.exp(case.mu_hat)), 1).astype(np.int64)
    dist = Predictions(point=point, label="logt", mu=case.mu_hat, sigma=case.sigma_hat)
    median = Predictions(point=point, label="median")
    trail = {"sigma0": 0.8, "every": 8, "bins": 10, "max_len": float(case.max_tokens),
             "pred_seed": 7 + seed}
    return [
        ("FCFS", "fcfs", None, {}),
        ("SRPT (oracle)", "srpt", None, {}),
        ("SPJF (oracle)", "spjf", "exact", {}),
        ("SPRPT (point)", "sprpt", median, {}),
        ("SSJF (point)", "ssjf", median, {}),
        *((f"TRAIL C={c:g}", "trail", None, {**trail, "C": c})
          for c in (0.2, 0.8, 1.0, float("inf"))),
        ("TIE", "tie", dist, {"max_tokens": case.max_tokens, "batch_size": 32}),
    ]


def run_case(case: Case, seed: int = 0, only: set[str] | None = None,
             preemption: PreemptionMode | None = None,
             runs: list[tuple[str, str, Any, dict[str, Any]]] | None = None
             ) -> list[dict[str, Any]]:
    """Simulate every policy of ``runs`` (default :func:`policy_runs`) on ``case`` (or those
    whose label is in ``only``), in the engine's ``preemption`` mode (default: each policy's
    own); one row each.

    Examples
    --------
    >>> rows = run_case(heavy_tailed_case(40, rate=50.0, seed=0), only={"FCFS", "TIE"})
    >>> [(r["policy"], round(r["mean_latency_s"], 2), r["evictions"]) for r in rows]
    [('FCFS', 34.75, 12), ('TIE', 32.57, 6)]
    """
    rows = []
    inst = case.instance
    for label, pol, pred, opts in (policy_runs(case) if runs is None else runs):
        if only is not None and label not in only:
            continue
        r = simulate(inst, pol, step_time=STEP_TIME, seed=seed, predictions=pred,
                     preemption=preemption, **opts)
        tab = request_table(inst, r.schedule)
        lat = np.asarray(tab["latency_s" if "latency_s" in tab else "latency"], dtype=np.float64)
        m = r.metrics
        rows.append({
            "workload": case.name, "policy": label, "n": inst.n,
            "mean_latency_s": float(lat.mean()), "p90_latency_s": float(np.percentile(lat, 90)),
            "ptla_s_per_token": float(np.mean(lat / inst.output)),
            "p90_ptla": float(np.percentile(lat / inst.output, 90)),
            "ttft_mean_s": float(m.ttft_mean_s) if m.ttft_mean_s is not None else None,
            "throughput_tok_s": float(inst.output.sum() / m.makespan_s),
            "evictions": int(r.schedule.num_evictions),
            "recomputed_tokens": int(r.stats.get("recomputed_tokens", 0)),
            "wall_s": float(r.stats["wall_seconds"]),
        })
    return rows


def experiment_rows(n: int = 1500, rate: float = 1.3, azure_n: int = 1500,
                    time_scale: float = 0.5, seed: int = 0,
                    workloads: Sequence[str] = ("heavy-tailed", "azure-conv"),
                    preemption: PreemptionMode | None = None, seeds: int = 1
                    ) -> list[dict[str, Any]]:
    """All rows of the experiment (see the module docstring).

    With ``preemption`` the policies of :func:`mode_runs` run in that mode; with
    ``seeds > 1`` seeds ``seed .. seed + seeds - 1`` each draw the workload (heavy-tailed: a
    new sample; Azure: the ``k``-th window of ``azure_n`` requests of the trace, ``k = 0``
    being the first), the predictions and the policies' randomness, and the rows are
    :func:`aggregate` d (mean and standard error over the seeds).

    Examples
    --------
    >>> rows = experiment_rows(n=5, rate=50.0, workloads=("heavy-tailed",), seeds=2)
    >>> len(rows), rows[0]["policy"], rows[0]["seeds"]
    (14, 'FCFS', 2)
    >>> round(rows[0]["mean_latency_s"], 3), round(rows[0]["mean_latency_s_se"], 3)
    (5.05, 0.562)
    """
    for w in workloads:
        if w not in ("heavy-tailed", "azure-conv"):
            raise UsageError("workloads", f"unknown workload {w!r}")
    rows: list[dict[str, Any]] = []
    for sd in range(seed, seed + seeds):
        for w in workloads:
            case = (heavy_tailed_case(n, rate, sd) if w == "heavy-tailed"
                    else azure_case(azure_n, time_scale, sd, window=sd - seed))
            part = run_case(case, sd, preemption=preemption,
                            runs=None if preemption is None else mode_runs(case, sd))
            if seeds > 1:
                for r in part:
                    r["seed"] = sd
            rows += part
    return aggregate(rows) if seeds > 1 else rows


#: Per-seed metrics that :func:`aggregate` averages.
METRICS = ("mean_latency_s", "p90_latency_s", "ptla_s_per_token", "p90_ptla", "ttft_mean_s",
           "throughput_tok_s", "evictions", "recomputed_tokens", "fcfs_ratio")


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and standard error (``std / sqrt(seeds)``, ``ddof = 1``) over seeds of every
    metric, per (workload, policy); ``fcfs_ratio`` is FCFS's mean latency over the policy's,
    per seed, then averaged.

    Examples
    --------
    >>> rows = [{"workload": "w", "policy": p, "n": 2, "seed": s, "wall_s": 1.0,
    ...          **{m: v for m in METRICS[:-1]}}
    ...         for s, (p, v) in enumerate([("FCFS", 4.0), ("X", 2.0), ("FCFS", 6.0),
    ...                                     ("X", 2.0)])]
    >>> for r in rows:
    ...     r["seed"] //= 2
    >>> [(r["policy"], r["fcfs_ratio"], round(r["fcfs_ratio_se"], 3)) for r in aggregate(rows)]
    [('FCFS', 1.0, 0.0), ('X', 2.5, 0.5)]
    """
    base = {(r["workload"], r["seed"]): r["mean_latency_s"] for r in rows
            if r["policy"] == "FCFS"}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        fr = base.get((r["workload"], r["seed"]))
        r = {**r, "fcfs_ratio": None if fr is None else fr / r["mean_latency_s"]}
        groups.setdefault((r["workload"], r["policy"]), []).append(r)
    out = []
    for (w, p), rs in groups.items():
        row: dict[str, Any] = {"workload": w, "policy": p, "n": rs[0]["n"], "seeds": len(rs),
                               "wall_s": float(sum(r["wall_s"] for r in rs))}
        for m in METRICS:
            x = [r[m] for r in rs if r[m] is not None]
            row[m], row[m + "_se"] = mean_se(x) if x else (None, None)
        out.append(row)
    return out


FIELDS = ["workload", "policy", "n", "mean_latency_s", "p90_latency_s", "ptla_s_per_token",
          "p90_ptla", "ttft_mean_s", "throughput_tok_s", "evictions", "wall_s"]


def _pm(r: dict[str, Any], key: str, fmt: str) -> str:
    """``mean +- se`` of an aggregated row."""
    if r[key] is None:
        return "-"
    return f"{format(r[key], fmt)} ± {format(r[key + '_se'], fmt)}"


def table_md_seeds(rows: list[dict[str, Any]]) -> str:
    """Markdown of :func:`aggregate` d rows: mean ± standard error over seeds.

    Examples
    --------
    >>> rows = [dict(r, seed=s) for s in (0, 1)
    ...         for r in run_case(heavy_tailed_case(40, 50.0, s), s, only={"FCFS", "TIE"})]
    >>> md = table_md_seeds(aggregate(rows)).splitlines()
    >>> print(md[0])
    ### heavy-tailed (n = 40, 2 seeds, mean ± standard error)
    >>> md[5].split(" | ")[:4]  # policy, mean latency, FCFS / policy, P90 latency
    ['| TIE', '27.6 ± 5.0', '1.03 ± 0.03x', '50.2 ± 13.6']
    """
    out = []
    for w in dict.fromkeys(r["workload"] for r in rows):
        sub = [r for r in rows if r["workload"] == w]
        out.append(f"### {w} (n = {sub[0]['n']}, {sub[0]['seeds']} seeds, mean ± standard "
                   "error)\n")
        head = ["policy", "mean latency s", "FCFS / policy", "P90 latency s", "PTLA s/token",
                "TTFT s", "throughput tok/s", "evictions", "re-prefilled tokens",
                "wall s (all seeds)"]
        cells = [[str(r["policy"]), _pm(r, "mean_latency_s", ".1f"),
                  _pm(r, "fcfs_ratio", ".2f") + "x", _pm(r, "p90_latency_s", ".1f"),
                  _pm(r, "ptla_s_per_token", ".3f"), _pm(r, "ttft_mean_s", ".1f"),
                  _pm(r, "throughput_tok_s", ".0f"), _pm(r, "evictions", ".0f"),
                  _pm(r, "recomputed_tokens", ".3g"), f"{r['wall_s']:.0f}"] for r in sub]
        out += table(head, cells).splitlines()
        out.append("")
    return "\n".join(out)


def table_md(rows: list[dict[str, Any]]) -> str:
    """Markdown table, one block per workload, with ratios to FCFS.

    Examples
    --------
    >>> rows = run_case(heavy_tailed_case(40, rate=50.0, seed=0), only={"FCFS", "TIE"})
    >>> md = table_md(rows).splitlines()
    >>> print(md[0])
    ### heavy-tailed (n = 40)
    >>> md[5].split(" | ")[:3]  # policy, mean latency s, FCFS / policy
    ['| TIE', '32.6', '1.07x']
    """
    if rows and "seeds" in rows[0]:
        return table_md_seeds(rows)
    out = []
    for w in dict.fromkeys(r["workload"] for r in rows):
        sub = [r for r in rows if r["workload"] == w]
        base = next(r for r in sub if r["policy"] == "FCFS")
        out.append(f"### {w} (n = {sub[0]['n']})\n")
        head = ["policy", "mean latency s", "FCFS / policy", "P90 latency s", "PTLA s/token",
                "P90 PTLA", "TTFT s", "throughput tok/s", "evictions"]
        cells = [[str(r["policy"]), f"{r['mean_latency_s']:.1f}",
                  f"{base['mean_latency_s'] / r['mean_latency_s']:.2f}x",
                  f"{r['p90_latency_s']:.1f}", f"{r['ptla_s_per_token']:.3f}",
                  f"{r['p90_ptla']:.3f}", f"{r['ttft_mean_s']:.1f}",
                  f"{r['throughput_tok_s']:.0f}", str(r["evictions"])] for r in sub]
        out += table(head, cells).splitlines()
        out.append("")
    return "\n".join(out)


def table_csv(rows: list[dict[str, Any]]) -> str:
    """CSV of the rows (with ``_se`` columns and ``seeds`` for aggregated rows).

    Examples
    --------
    >>> import csv, io
    >>> rows = run_case(heavy_tailed_case(40, rate=50.0, seed=0), only={"FCFS", "TIE"})
    >>> text = table_csv(rows)
    >>> [(r["policy"], r["mean_latency_s"], r["evictions"])
    ...  for r in csv.DictReader(io.StringIO(text))]
    [('FCFS', '34.7454', '12'), ('TIE', '32.5656', '6')]
    """
    buf = io.StringIO()
    fields = FIELDS
    if rows and "seeds" in rows[0]:
        fields = ["workload", "policy", "n", "seeds",
                  *(x for m in METRICS for x in (m, m + "_se")), "wall_s"]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Mean latency and PTLA per policy, one panel pair per workload (PNG).

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> rows = run_case(heavy_tailed_case(40, rate=50.0, seed=0), only={"FCFS", "TIE"})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     plot(rows, Path(d) / "latency.png")
    ...     Image.open(Path(d) / "latency.png").size  # one workload: 12 x 3.8 in at 100 dpi
    (1200, 380)
    """
    from matplotlib.figure import Figure

    ws = list(dict.fromkeys(r["workload"] for r in rows))
    fig = Figure(figsize=(12, 3.8 * len(ws)))
    axes = fig.subplots(len(ws), 2, squeeze=False)
    for k, w in enumerate(ws):
        sub = [r for r in rows if r["workload"] == w]
        labels = [r["policy"] for r in sub]
        y = np.arange(len(sub))
        for j, (key, title) in enumerate((("mean_latency_s", "mean latency (s)"),
                                          ("ptla_s_per_token", "per-token latency (s/token)"))):
            ax = axes[k][j]
            err = [r.get(key + "_se") or 0.0 for r in sub]
            ax.barh(y, [r[key] for r in sub], color="#4c72b0", xerr=err)
            ax.set_yticks(y, labels, fontsize=8)
            ax.invert_yaxis()
            ax.set_title(f"{w}: {title}", fontsize=10)
            ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


def write_experiment(out: Path, rows: list[dict[str, Any]], header: str = "") -> list[Path]:
    """Write ``table.md`` (``header`` first: the command and its wall time), ``table.csv``
    and ``latency.png`` into ``out``.

    Examples
    --------
    >>> import tempfile
    >>> rows = run_case(heavy_tailed_case(40, rate=50.0, seed=0), only={"FCFS", "TIE"})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = write_experiment(Path(d) / "exp", rows, header="# demo\\n\\n")
    ...     [p.name for p in paths], paths[0].read_text().splitlines()[2]
    (['table.md', 'table.csv', 'latency.png'], '### heavy-tailed (n = 40)')
    """
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "table.md", header + table_md(rows))
    atomic_write_text(out / "table.csv", table_csv(rows))
    plot(rows, out / "latency.png")
    return [out / "table.md", out / "table.csv", out / "latency.png"]
