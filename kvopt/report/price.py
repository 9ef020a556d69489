"""The price of prediction: ``TEL(policy) / OPT(true lengths)`` as a function of prediction error.

For each prediction-based policy and each noise level ``e``:

========== ================================================================ ==================
policy     predictions at noise level ``e``                                 kind
========== ================================================================ ==================
``mcsf``   point ``round(U((1-e) o, (1+e) o))`` (seed 001)                  point
``ssjf``   the same points, vLLM-like greedy admission                      point
``amax``   interval ``[floor((1-e) o), ceil((1+e) o)]``, upper end used      interval
``amin``   the same interval, lower end used                                interval
``sprpt``  the same points, static rank ``r - age``                          point
``trail``  refined remaining-length predictions, log-error ``e`` at age 0,  refined
           shrinking to 0 at completion (``bins=0``, ``C = 0.8``)
``tie``    calibrated log-t around the true length with scale ``e``           distributional
========== ================================================================ ==================

Small instances (``n`` requests) are solved to proven optimality by :func:`kvopt.mip.solve`
(rows whose solve is not proven optimal are dropped and counted); larger instances are
compared with the best combinatorial lower bound
(:func:`kvopt.mip.bounds.combinatorial.combinatorial_bound`),
so their ratio is an upper estimate of ``TEL / OPT``. The measured mean absolute relative
error of the point the policy orders by (``|p - o| / o``) is reported next to ``e``.
MC-SF under under-predictions can clear memory forever (seed 001 Sec. 5.2); such runs raise
:class:`~kvopt.sim.engine.LivelockError`, are counted in ``livelocks`` and left out of the
ratio.

Examples
--------
>>> rows = price_rows(errors=[0.0, 0.5], instances=2, n=4, policies=["mcsf", "tie"])
>>> sorted({r["policy"] for r in rows}), all(r["ratio_mean"] >= 1 for r in rows)
(['mcsf', 'tie'], True)
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kvopt.core.deprecation import renamed_names
from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.io import atomic_write_text
from kvopt.core.schedule import PreemptionMode
from kvopt.mip import solve
from kvopt.mip.bounds.combinatorial import combinatorial_bound
from kvopt.mip.bounds.preemptive import preemptive_bound, solve_preemptive
from kvopt.report.writers import save_figure, table
from kvopt.sim import policy_info, simulate
from kvopt.sim.engine import LivelockError

#: Policies of the price-of-prediction report (:func:`price_rows`).
PRICE_POLICIES = ("mcsf", "ssjf", "amax", "amin", "sprpt", "trail", "tie")
DEFAULT_ERRORS = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0)


def _spec(policy: str, e: float) -> tuple[Any, dict[str, Any]]:
    """``(predictions, options)`` of ``policy`` at noise level ``e``."""
    if policy in ("mcsf", "ssjf", "sprpt"):
        return {"kind": "uniform", "eps": e}, {}
    if policy in ("amax", "amin"):
        return {"kind": "interval", "x": e}, {}
    if policy == "trail":
        return None, {"sigma0": e, "bins": 0, "C": 0.8}
    if policy == "tie":
        return {"kind": "logt", "scale": max(e, 1e-3)}, {}
    raise UsageError("policy", f"must be one of {PRICE_POLICIES}, got {policy!r}")


def small_instance(rng: np.random.Generator, n: int) -> Instance:
    """A random small online instance: ``M ~ U{16..24}``, ``s ~ U{0..2}``, ``o ~ U{1..M-s}``
    capped at 10, arrivals ``U{0..2n}``.

    Examples
    --------
    >>> inst = small_instance(np.random.default_rng(0), 5)
    >>> inst.name, inst.memory, inst.prompt.tolist(), inst.output.tolist()
    ('price-small', 23, [1, 1, 0, 0, 0], [2, 1, 5, 10, 10])
    >>> inst.arrival.tolist()
    [10, 5, 6, 10, 8]
    """
    M = int(rng.integers(16, 25))
    s = rng.integers(0, 3, n)
    o = np.minimum(rng.integers(1, M - s + 1), 10)
    a = rng.integers(0, 2 * n + 1, n)
    return Instance(memory=M, arrival=a, prompt=s, output=o, name="price-small")


def large_instance(rng: np.random.Generator, n: int) -> Instance:
    """A larger slotted instance: ``M = 200``, ``s ~ U{1..10}``, ``o ~ U{1..60}``, Poisson
    arrivals at about the service rate.

    Examples
    --------
    >>> inst = large_instance(np.random.default_rng(0), 50)
    >>> inst.name, inst.n, inst.memory, int(inst.output.max()), int(inst.arrival.max())
    ('price-large', 50, 200, 60, 298)
    """
    M = 200
    s = rng.integers(1, 11, n)
    o = rng.integers(1, 61, n)
    a = np.sort(rng.integers(0, int(n * 6), n))
    return Instance(memory=M, arrival=a, prompt=s, output=o, name="price-large")


def price_rows(errors: Sequence[float] = DEFAULT_ERRORS, *, instances: int = 20, n: int = 7,
               seed: int = 0, policies: Sequence[str] = PRICE_POLICIES, large: int = 0,
               large_n: int = 200, time_limit: float = 60.0,
               preemption: PreemptionMode = "restart") -> list[dict[str, Any]]:
    """One row per (scale, policy, error level): mean and max ratio over instances.

    With ``preemption`` ``"recompute"`` or ``"swap"`` (policies keep their tokens on
    eviction; only the policies supporting the mode run) a preemptive schedule can beat the
    non-preemptive optimum, so the reference is the preemptive optimum
    (:func:`kvopt.mip.bounds.preemptive.solve_preemptive`, proven by HiGHS) on small instances
    and :func:`~kvopt.mip.bounds.preemptive.preemptive_bound` on larger ones: both bound every
    schedule in every mode.

    Parameters
    ----------
    errors
        Noise levels ``e``.
    instances, n
        Small instances solved to optimality (and their size).
    large, large_n
        Larger instances compared with the combinatorial bound (0 = none).
    seed
        Seeds the instances and every simulation (``seed + instance index``).
    time_limit
        Per MIP solve.

    Examples
    --------
    One small instance solved to optimality: both policies are optimal with exact lengths
    and pay for predictions off by up to 50 % (``mean_rel_error``: the measured error).

    >>> rows = price_rows(errors=[0.0, 0.5], instances=1, n=5, seed=4, policies=["mcsf", "tie"])
    >>> [(r["policy"], r["error"], round(r["ratio_mean"], 3), round(r["mean_rel_error"], 3))
    ...  for r in rows]
    [('mcsf', 0.0, 1.0, 0.0), ('mcsf', 0.5, 1.341, 0.407),
     ('tie', 0.0, 1.0, 0.0), ('tie', 0.5, 1.136, 0.4)]
    """
    for e in errors:
        if not 0 <= e <= 1.5:
            raise UsageError("errors", f"each must be in [0, 1.5], got {e}")
    for p in policies:
        if p not in PRICE_POLICIES:
            raise UsageError("policies", f"each must be one of {PRICE_POLICIES}, got {p!r}")
        if preemption not in policy_info(p).modes:
            raise UsageError("policies", f"{p} does not support preemption {preemption!r} "
                             f"(it supports {', '.join(policy_info(p).modes)})")
    keeps = preemption != "restart"
    rng = np.random.default_rng(seed)
    cases: list[tuple[str, Instance, float, bool]] = []
    dropped = 0
    for _ in range(instances):
        inst = small_instance(rng, n)
        if keeps:
            pre = solve_preemptive(inst, time_limit=time_limit)
            ref = pre.objective if pre.status == "optimal" else None
        else:
            res = solve(inst, solver="highs", time_limit=time_limit)
            ref = res.objective if res.status == "optimal" else None
        if ref is None:
            dropped += 1
            continue
        cases.append(("opt", inst, float(ref), True))
    for _ in range(large):
        inst = large_instance(rng, large_n)
        cases.append(("bound", inst, float(preemptive_bound(inst) if keeps
                                           else combinatorial_bound(inst)), False))
    rows: list[dict[str, Any]] = []
    for scale in ("opt", "bound"):
        sub = [c for c in cases if c[0] == scale]
        if not sub and not (scale == "opt" and dropped):  # none proven: rows of 0 instances
            continue
        for pol in policies:
            for e in errors:
                pred, opts = _spec(pol, float(e))
                ratios, errs = [], []
                livelocks = 0
                for k, (_, inst, ref, _) in enumerate(sub):
                    try:
                        r = simulate(inst, pol, seed=seed + k, predictions=pred,
                                     preemption=preemption, **opts)
                    except LivelockError:  # MC-SF clearing under under-prediction (seed 001)
                        livelocks += 1
                        continue
                    ratios.append(r.metrics.total_latency / ref)
                    pt = _ordering_point(inst, pol, pred, opts, seed + k)
                    if pt is not None:
                        errs.append(float(np.mean(np.abs(pt - inst.output) / inst.output)))
                rows.append({
                    "scale": scale, "policy": pol, "error": float(e),
                    "mean_rel_error": float(np.mean(errs)) if errs else None,
                    "ratio_mean": float(np.mean(ratios)) if ratios else None,
                    "ratio_max": float(np.max(ratios)) if ratios else None,
                    "instances": len(sub), "livelocks": livelocks,
                    "dropped_unproven": dropped if scale == "opt" else 0,
                    **({} if not keeps else {"preemption": preemption}),
                })
    return rows


def _ordering_point(inst: Instance, pol: str, pred: Any, opts: dict[str, Any],
                    seed: int) -> np.ndarray | None:
    """The per-request number the policy orders by at arrival (for the error column)."""
    from kvopt.sim.predicted_lengths import resolve_predictions

    ss = np.random.SeedSequence(seed)
    pred_ss, _ = ss.spawn(2)
    pr = resolve_predictions(inst, pred, np.random.default_rng(pred_ss))
    if pol in ("mcsf", "ssjf", "sprpt", "tie"):
        return None if pr.point is None else pr.point.astype(float)
    if pol == "amax":
        return None if pr.upper is None else pr.upper.astype(float)
    if pol == "amin":
        return None if pr.lower is None else pr.lower.astype(float)
    if pol == "trail":
        from kvopt.predictions import RefinedPredictor

        rp = RefinedPredictor(sigma0=opts["sigma0"], bins=0)
        return rp.initial(np.arange(inst.n), inst.output)
    return None


FIELDS = ["scale", "policy", "error", "mean_rel_error", "ratio_mean", "ratio_max", "instances",
          "livelocks", "dropped_unproven"]


def price_table_md(rows: list[dict[str, Any]]) -> str:
    """Markdown: one table per scale, policies as rows, error levels as columns.

    Examples
    --------
    >>> rows = price_rows(errors=[0.0, 0.5], instances=1, n=5, seed=1, policies=["mcsf", "tie"])
    >>> print(price_table_md(rows))
    ### TEL / OPT (proven optimum), mean over instances (1 instances, 0 unproven dropped)
    <BLANKLINE>
    | policy | e=0 | e=0.5 |
    |---|---|---|
    | mcsf | 1.018 (max 1.02) | livelock x1 |
    | tie | 1.054 (max 1.05) | 1.411 (max 1.41) |
    <BLANKLINE>
    """
    out = []
    mode = rows[0].get("preemption") if rows else None
    titles = (("opt", "TEL / OPT (proven optimum), mean over instances"),
              ("bound", "TEL / combinatorial lower bound (upper estimate of the ratio), mean "
                        "over instances"))
    if mode is not None:  # tokens kept on eviction: the preemptive optimum is the reference
        titles = (("opt", f"TEL / preemptive OPT (proven; preemption {mode}), mean over "
                          "instances"),
                  ("bound", f"TEL / preemptive lower bound (upper estimate of the ratio; "
                            f"preemption {mode}), mean over instances"))
    for scale, title in titles:
        sub = [r for r in rows if r["scale"] == scale]
        if not sub:
            continue
        errs = sorted({r["error"] for r in sub})
        pols = list(dict.fromkeys(r["policy"] for r in sub))
        out.append(f"### {title} ({sub[0]['instances']} instances"
                   + (f", {sub[0]['dropped_unproven']} unproven dropped" if scale == "opt"
                      else "") + ")\n")
        body: list[list[str]] = []
        for p in pols:
            cells = []
            for e in errs:
                r = next(x for x in sub if x["policy"] == p and x["error"] == e)
                if r["ratio_mean"] is None:
                    cells.append(f"livelock x{r['livelocks']}" if r["instances"] else "-")
                    continue
                ll = f", {r['livelocks']} livelock" if r["livelocks"] else ""
                cells.append(f"{r['ratio_mean']:.3f} (max {r['ratio_max']:.2f}{ll})")
            body.append([str(p), *cells])
        out += table(["policy", *(f"e={e:g}" for e in errs)], body).splitlines()
        out.append("")
    return "\n".join(out)


def price_csv(rows: list[dict[str, Any]]) -> str:
    """CSV of the rows.

    Examples
    --------
    A livelocked run (MC-SF under under-prediction) leaves its ratio cells empty:

    >>> rows = price_rows(errors=[0.0, 0.5], instances=1, n=5, seed=1, policies=["mcsf", "tie"])
    >>> print(price_csv(rows), end="")
    scale,policy,error,mean_rel_error,ratio_mean,ratio_max,instances,livelocks,dropped_unproven
    opt,mcsf,0,0,1.01786,1.01786,1,0,0
    opt,mcsf,0.5,,,,1,1,0
    opt,tie,0,0,1.05357,1.05357,1,0,0
    opt,tie,0.5,0.54,1.41071,1.41071,1,0,0
    """
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r[k] is None else (f"{r[k]:.6g}" if isinstance(r[k], float)
                                                  else r[k])) for k in FIELDS})
    return buf.getvalue()


def price_plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Ratio vs noise level, one line per policy, one panel per scale (PNG).

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> rows = price_rows(errors=[0.0, 0.5], instances=1, n=5, seed=1, policies=["mcsf", "tie"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     price_plot(rows, Path(d) / "price.png")
    ...     Image.open(Path(d) / "price.png").size  # one scale: one 6 x 4.2 in panel, 110 dpi
    (660, 462)
    """
    from matplotlib.figure import Figure  # no pyplot: no global backend is chosen or changed

    scales = [s for s in ("opt", "bound") if any(r["scale"] == s for r in rows)]
    fig = Figure(figsize=(6 * len(scales), 4.2))
    axes = fig.subplots(1, len(scales), squeeze=False)
    for ax, scale in zip(axes[0], scales, strict=True):
        sub = [r for r in rows if r["scale"] == scale]
        for p in dict.fromkeys(r["policy"] for r in sub):
            pts = sorted((r["error"], r["ratio_mean"]) for r in sub
                         if r["policy"] == p and r["ratio_mean"] is not None)
            if not pts:
                continue
            ll = sum(r["livelocks"] for r in sub if r["policy"] == p)
            label = f"{p} ({ll} livelocked runs left out)" if ll else p
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=label)
        ax.set_xlabel("noise level e (point/interval: relative half-width; "
                      "TRAIL/TIE: log-scale)", fontsize=8)
        ax.set_ylabel("TEL / OPT" if scale == "opt" else "TEL / lower bound")
        ax.set_title("small instances, proven OPT" if scale == "opt"
                     else "larger instances, vs best bound")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
        else:  # every small instance unproven (price_rows keeps the rows, with the count)
            dropped = max((int(r.get("dropped_unproven") or 0) for r in sub), default=0)
            ax.text(0.5, 0.5, f"no instance with a ratio to show\n({dropped} unproven "
                    "dropped: raise --solve-time-limit)", transform=ax.transAxes, ha="center",
                    va="center")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def write_price_report(out: Path, rows: list[dict[str, Any]], command: str) -> list[Path]:
    """Write ``price.md``, ``price.csv`` and ``price.png`` into ``out``.

    Examples
    --------
    >>> import tempfile
    >>> rows = price_rows(errors=[0.0, 0.5], instances=1, n=5, seed=1, policies=["mcsf", "tie"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = write_price_report(Path(d) / "price", rows, "kvopt report price")
    ...     [p.name for p in paths], paths[0].read_text().splitlines()[2]
    (['price.md', 'price.csv', 'price.png'], 'Command: `kvopt report price`')
    """
    out.mkdir(parents=True, exist_ok=True)
    md = ("# The price of prediction\n\nCommand: `" + command + "`\n\n" + price_table_md(rows))
    atomic_write_text(out / "price.md", md)
    atomic_write_text(out / "price.csv", price_csv(rows))
    price_plot(rows, out / "price.png")
    return [out / "price.md", out / "price.csv", out / "price.png"]


#: Deprecated (one release): ``POLICIES``, a name that clashed with :data:`kvopt.sim.POLICIES`.
__getattr__ = renamed_names(__name__, {"POLICIES": "PRICE_POLICIES"})
