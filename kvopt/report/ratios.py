"""The ratio-vs-alpha report: theory columns, measured columns, table files, plots, manifest.

:func:`ratio_rows` computes one row per alpha; :func:`write_report` writes ``table.md``,
``table.csv``, ``table.tex``, ``ratios_amax.png``, ``ratios_amin.png``, ``lambda_fit.png``,
``convergence.md``/``.csv``, ``adversarial.md``/``.csv`` and ``manifest.json`` (command,
versions, seeds, parameters, file hashes). Everything is deterministic given the seeds;
PNGs are written by matplotlib's Agg backend without the ``Software`` tag, so reruns are
byte-identical.

Measured instances (all jobs at time 0, ``s = 0``; lengths ``l = 4, u = round(4/alpha)``
for the large instances so that ``l = 1`` degeneracies do not dominate, see NOTES.md):

* ``amin adv``: Amin's two-point worst case ``N_l/N_u = 1/alpha``, ``n`` jobs, ``M = 10 u``;
* ``amin rand``: i.i.d. uniform lengths on ``[l, u]``, same ``n`` and ``M``;
* ``... vs OPT``: small versions (``n = 6``, ``l = 1``, ``u = 1/alpha <= 10``, ``M = 2u``)
  solved by the MIP to proven optimality;
* ``amax thm2``: Theorem 2's instance with ``a/b ~ r*``; ``a-l adv``: A_l's worst mix.

Examples
--------
>>> rows = ratio_rows([0.5], measured=False)
>>> rows[0]["amax_upper"], rows[0]["amin_two_point"]
(3.0, 1.25)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kvopt.core.instance import Instance
from kvopt.report.writers import (
    figure_png,
    fmt,
    manifest,
    table,
    versions,
    write_files,
    write_manifest,
)
from kvopt.theory import adversarial as adv
from kvopt.theory import ratios as rt
from kvopt.theory.rayleigh import PAPER_FIT, fit_log_curve, harmonic, lambda_max, paper_fit

__all__ = [
    "COLUMNS",
    "adversarial_markdown",
    "adversarial_rows",
    "DEFAULT_ALPHAS",
    "MeasureConfig",
    "convergence_markdown",
    "convergence_rows",
    "ratio_rows",
    "table_csv",
    "table_markdown",
    "table_tex",
    "write_report",
]

DEFAULT_ALPHAS = (1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 10, 1 / 20, 1 / 50, 1 / 100, 1 / 1000)

#: (key, header, kind) of the table columns, in order.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("alpha", "alpha", "param"),
    ("l", "l", "param"),
    ("u", "u", "param"),
    ("amax_upper", "Amax upper (Thm 1, proven)", "theory"),
    ("amax_lower_claimed", "Amax lower (Thm 2, claimed)", "theory"),
    ("amax_construction", "Amax lower (Thm 2 construction, max_r)", "theory"),
    ("amax_thm2_hsf", "Amax on Thm 2 instance vs H-SF (measured)", "measured"),
    ("arandom_upper", "Arandom upper (Thm EC.1)", "theory"),
    ("amin_rayleigh", "Amin (Rayleigh lambda_max)", "theory"),
    ("amin_log_bound", "Amin trace bound H_u", "theory"),
    ("amin_two_point", "Amin two-point (3-alpha)/2", "theory"),
    ("al_two_point", "A_l two-point (Thm 7)", "theory"),
    ("min_two_point", "min two-point", "theory"),
    ("amin_adv_hsf", "Amin adv vs H-SF (measured; one tie order per run)", "measured"),
    ("amin_per_sort_adv_hsf", "Amin adv vs H-SF (measured; Alg. 2 literal, ties redrawn at "
     "every sort)", "measured"),
    ("amin_redraw_adv_hsf", "Amin/redraw adv vs H-SF (experiment; eviction ties redrawn)",
     "measured"),
    ("amin_rand_hsf", "Amin random vs H-SF (measured; one tie order per run)", "measured"),
    ("amin_adv_opt", "Amin adv vs OPT (small; exact over all tie orders)", "measured"),
    ("amin_rand_opt", "Amin random vs OPT (small; exact over all tie orders)", "measured"),
    ("al_adv_hsf", "A_l adv vs H-SF (measured)", "measured"),
)


@dataclass(frozen=True)
class MeasureConfig:
    """Sizes and seeds of the measured columns.

    Attributes
    ----------
    seeds
        Policy seeds (and seeds of the random instances).
    n
        Jobs per large instance.
    l
        Lower end used for the large measured instances (``u = round(l / alpha)``).
    max_u
        Skip measured columns whose ``u`` exceeds this (simulation cost).
    opt
        Compute the vs-OPT columns (MIP).
    opt_n, opt_max_u, time_limit, solver
        Small instances for the vs-OPT columns.

    Examples
    --------
    >>> cfg = MeasureConfig(seeds=(0,), n=100, opt=False)   # a quick run: one seed, no MIP
    >>> cfg.to_dict()
    {'seeds': [0], 'n': 100, 'l': 4, 'max_u': 400, 'opt': False, 'opt_n': 6, 'opt_max_u': 10,
     'time_limit': 20.0, 'solver': 'highs'}
    """

    seeds: tuple[int, ...] = (0, 1, 2)
    n: int = 2000
    l: int = 4
    max_u: int = 400
    opt: bool = True
    opt_n: int = 6
    opt_max_u: int = 10
    time_limit: float = 20.0
    solver: str = "highs"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"seeds": list(self.seeds), "n": self.n, "l": self.l, "max_u": self.max_u,
                "opt": self.opt, "opt_n": self.opt_n, "opt_max_u": self.opt_max_u,
                "time_limit": self.time_limit, "solver": self.solver}


def _theory_row(alpha: float) -> dict[str, Any]:
    l, u = rt.alpha_to_lu(alpha)
    return {
        "alpha": alpha, "l": l, "u": u,
        "amax_upper": rt.amax_upper(alpha),
        "amax_lower_claimed": rt.amax_lower_claimed(alpha),
        "amax_construction": rt.amax_construction(alpha),
        "arandom_upper": rt.arandom_upper(alpha),
        "amin_rayleigh": float(lambda_max(u, l=l)),  # type: ignore[arg-type]
        "amin_log_bound": harmonic(u) if l == 1 else None,
        "amin_two_point": rt.amin_two_point(alpha),
        "al_two_point": rt.al_two_point(alpha),
        "min_two_point": rt.min_two_point(alpha),
    }


def _uniform_instance(l: int, u: int, n: int, memory: int, seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    o = rng.integers(l, u + 1, size=n)
    return Instance(memory=memory, arrival=np.zeros(n, dtype=np.int64),
                    prompt=np.zeros(n, dtype=np.int64), output=o,
                    pred_lower=np.full(n, l), pred_upper=np.full(n, u),
                    name=f"uniform-l{l}-u{u}-n{n}-M{memory}-seed{seed}")


def _mean_ratio(inst: Instance, policy: str, seeds: Sequence[int]) -> tuple[float, float]:
    """Mean ratio to H-SF over the seeds and its standard error."""
    from kvopt.report.measure import measure

    m = measure(inst, policy, seeds=seeds, opt=False)
    return float(m["ratio_hsf"]), float(m["ratio_hsf_se"])


def _put(out: dict[str, Any], key: str, value: tuple[float, float]) -> None:
    out[key], out[key + "_se"] = value


def _measured_row(alpha: float, cfg: MeasureConfig) -> dict[str, Any]:
    from kvopt.report.measure import hsf_tel, mean_se, opt_tel, policy_tel

    out: dict[str, Any] = {}
    l = cfg.l
    u = max(l, round(l / alpha))
    if u <= cfg.max_u:
        M = max(10 * u, 100)
        inst = adv.amin_two_point_worst(l, u, cfg.n, memory=M)
        _put(out, "amin_adv_hsf", _mean_ratio(inst, "amin", cfg.seeds))
        _put(out, "amin_per_sort_adv_hsf", _mean_ratio(inst, "amin/per-sort", cfg.seeds))
        _put(out, "amin_redraw_adv_hsf", _mean_ratio(inst, "amin/redraw", cfg.seeds))
        vals = []
        for sd in cfg.seeds:
            ri = _uniform_instance(l, u, cfg.n, M, sd)
            vals.append(policy_tel(ri, "amin", seed=sd) / hsf_tel(ri))
        _put(out, "amin_rand_hsf", mean_se(vals))
        _put(out, "al_adv_hsf", _mean_ratio(adv.al_two_point_worst(l, u, cfg.n, memory=M),
                                            "a-l", cfg.seeds))
        r_star = rt.amax_construction_argmax(alpha)
        b = 2
        a = max(1, round(r_star * b))
        _put(out, "amax_thm2_hsf", _mean_ratio(adv.amax_thm2_instance(l, u, a, b), "amax",
                                               cfg.seeds))
    lo, uo = rt.alpha_to_lu(alpha)
    if cfg.opt and lo == 1 and uo <= cfg.opt_max_u:
        from kvopt.report.measure import tie_order_expectation

        M = 2 * uo
        small = adv.amin_two_point_worst(1, uo, cfg.opt_n, memory=M)
        obj, _, status = opt_tel(small, solver=cfg.solver, time_limit=cfg.time_limit)
        if obj is not None and status == "optimal":  # exact: every tie order of the n jobs
            out["amin_adv_opt"] = float(tie_order_expectation(small) / obj)
        vals = []
        for sd in cfg.seeds:
            ri = _uniform_instance(1, uo, cfg.opt_n, M, 1000 + sd)
            obj, _, status = opt_tel(ri, solver=cfg.solver, time_limit=cfg.time_limit)
            if obj is not None and status == "optimal":
                vals.append(float(tie_order_expectation(ri)) / obj)
        if vals:
            out["amin_rand_opt"] = float(np.mean(vals))
    return out


def ratio_rows(alphas: Sequence[float] = DEFAULT_ALPHAS, *, measured: bool = True,
               config: MeasureConfig | None = None,
               on_row: Callable[[float], None] | None = None) -> list[dict[str, Any]]:
    """One dict per alpha with every column of :data:`COLUMNS` (``None`` = not computed).

    Parameters
    ----------
    alphas
        Prediction accuracies ``l/u`` in ``(0, 1]``.
    measured
        Also simulate (``kvopt.sim``) and solve (``kvopt.mip``) the measured columns.
    config
        Sizes and seeds of the measured columns.
    on_row
        Called after each row (progress bars).

    Examples
    --------
    >>> r = ratio_rows([1 / 4], config=MeasureConfig(seeds=(0,), n=100, opt=False))[0]
    >>> r["l"], r["u"], r["amax_upper"], r["amin_two_point"]   # theory at l/u = 1/4
    (1, 4, 10.0, 1.375)
    >>> round(r["amin_adv_hsf"], 4), r["amin_adv_hsf_se"], r["amin_adv_opt"]  # l=4, u=16
    (1.1098, 0.0, None)
    """
    cfg = config or MeasureConfig()
    rows = []
    for a in alphas:
        row: dict[str, Any] = {k: None for k, _, _ in COLUMNS}
        row.update({k + "_se": None for k in SE_COLUMNS})
        row.update(_theory_row(float(a)))
        if measured:
            row.update(_measured_row(float(a), cfg))
        rows.append(row)
        if on_row is not None:
            on_row(float(a))
    return rows


def convergence_rows(*, scales: Sequence[int] = (1, 4, 16), seeds: Sequence[int] = (0, 1),
                     base_n: int = 1000, base_m: int = 600, l: int = 4, u: int = 16,
                     on_row: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Amin on its two-point worst case as ``n`` grows (``M`` fixed, then ``M`` x 4).

    Columns: ``n``, ``M``, fluid value ``(3 - alpha)/2``, measured Amin / H-SF under each
    tie reading (``amin_hsf``: one tie order per run, the simulator's default;
    ``amin_per_sort_hsf``: Algorithm 2 literally, ties redrawn at every sort;
    ``amin_redraw_hsf``: eviction ties redrawn, an experiment), each with its standard error
    over the seeds (``*_se``), and H-SF's TEL over Lemma 2's fluid TEL ``n^2/(2M) D(x)``
    (which tends to 1).

    Examples
    --------
    >>> rows = convergence_rows(scales=(1,), seeds=(0,), base_n=100, base_m=60)
    >>> [(r["n"], r["M"], r["theory"], round(r["amin_hsf"], 4), round(r["hsf_over_fluid"], 4))
    ...  for r in rows]
    [(100, 60, 1.375, 1.2842, 1.125), (100, 240, 1.375, 0.9773, 1.65)]
    """
    from kvopt.report.measure import hsf_tel

    alpha = l / u
    x = np.zeros(u - l + 1)
    x[0], x[-1] = u / (u + l), l / (u + l)
    D = float(np.sum(np.arange(l, u + 1) ** 2 * x * (x + 2 * (x.sum() - np.cumsum(x)))))
    rows = []
    for k in scales:
        for mscale in (1, 4) if k == scales[-1] else (1,):
            n, M = base_n * k, base_m * mscale
            inst = adv.amin_two_point_worst(l, u, n, memory=M)
            row: dict[str, Any] = {"n": n, "M": M, "l": l, "u": u,
                                   "theory": rt.amin_two_point(alpha), "seeds": len(seeds)}
            for key, pol in (("amin_hsf", "amin"), ("amin_per_sort_hsf", "amin/per-sort"),
                             ("amin_redraw_hsf", "amin/redraw")):
                _put(row, key, _mean_ratio(inst, pol, seeds))
            h = hsf_tel(inst)
            row["hsf_over_fluid"] = h / (n * n / (2 * M) * D)
            rows.append(row)
            if on_row is not None:
                on_row(n)
    return rows


#: Instances with at most this many jobs get exact expectations over all tie orders.
SMALL_EXACT_N = 7


def adversarial_rows(*, seeds: Sequence[int] = (0, 1, 2), solver: str = "highs",
                     time_limit: float = 30.0, on_row: Callable[[str], None] | None = None,
                     small_runs: int = 2000) -> list[dict[str, Any]]:
    """Every construction of the digests: measured ratio next to its theory value.

    Columns: ``construction``, ``policy``, ``n``, ``M``, ``theory`` (and what it is),
    ``runs`` and ``vs_hsf`` (with ``vs_hsf_se``): a deterministic policy runs once; Amin and
    Amax with one tie order per run on an instance of at most :data:`SMALL_EXACT_N` jobs are
    averaged exactly over all ``n!`` tie orders; the per-sort and redraw readings on such an
    instance over ``small_runs`` seeds; everything else over ``seeds``. ``vs_opt``: MIP,
    proven optimal only, small instances.
    """
    from kvopt.report.measure import RANDOMIZED, READINGS, measure, tie_order_expectation

    specs: list[tuple[str, Instance, str, float | None, str, bool]] = [
        ("seed000 Example 1", adv.example1(), "amax", 9 / 5, "printed TEL 9 / 5", True),
        ("seed000 Example 1", adv.example1(), "amin", 1.0, "printed TEL 5 / 5", True),
        ("seed000 Example EC.1", adv.example_ec1(), "amin", None, "-", True),
        ("seed000 Example EC.1", adv.example_ec1(), "amin/per-sort", None, "-", True),
    ]
    for m in (2, 3, 4):
        inst = adv.thm41_adaptive(m, lambda lone: 0)  # MC-SF starts a lone request at once
        specs.append((f"seed001 Thm 4.1 (m={m})", inst, "mcsf",
                      rt.jaillet_thm41_lower(inst.memory), "lower bound sqrt(M)/28 vs OPT",
                      True))
    specs += [
        ("seed000 Thm 2 (l=4,u=64,a=2,b=8)", adv.amax_thm2_instance(4, 64, 2, 8), "amax",
         rt.amax_construction_at(4 / 64, 0.25), "construction at r=a/b (claimed: 40)", False),
        ("seed000 Thm 2 (l=4,u=64,a=10,b=4)", adv.amax_thm2_instance(4, 64, 10, 4), "amax",
         rt.amax_construction_at(4 / 64, 2.5), "construction at r=a/b (r* = 2.46)", False),
        ("Amin two-point worst (l=4,u=16)", adv.amin_two_point_worst(4, 16, 4000, memory=600),
         "amin", rt.amin_two_point(0.25), "(3-alpha)/2", False),
        ("Amin two-point worst (l=4,u=16)", adv.amin_two_point_worst(4, 16, 4000, memory=600),
         "amin/per-sort", rt.amin_two_point(0.25), "(3-alpha)/2", False),
        ("Amin two-point worst (l=4,u=16)", adv.amin_two_point_worst(4, 16, 4000, memory=600),
         "amin/redraw", rt.amin_two_point(0.25), "(3-alpha)/2", False),
        ("Amin two-point worst, small (l=1,u=4)", adv.amin_two_point_worst(1, 4, 6, memory=8),
         "amin", rt.amin_two_point(0.25), "(3-alpha)/2 (fluid)", True),
        ("Amin two-point worst, small (l=1,u=4)", adv.amin_two_point_worst(1, 4, 6, memory=8),
         "amin/per-sort", rt.amin_two_point(0.25), "(3-alpha)/2 (fluid)", True),
        ("A_l two-point worst (l=4,u=16)", adv.al_two_point_worst(4, 16, 4000, memory=600),
         "a-l", rt.al_two_point(0.25), "Thm 7", False),
        ("Rayleigh-worst mix (l=4,u=40)", adv.rayleigh_worst_instance(40, 4000, memory=400,
                                                                      l=4),
         "amin", float(lambda_max(40, l=4)), "lambda_max(l=4, u=40)", False),
        ("Rayleigh-worst mix (l=1,u=10)", adv.rayleigh_worst_instance(10, 4000, memory=100),
         "amin", float(lambda_max(10)), "lambda_max(A_10, B_10)", False),
        ("geometric q=0.8 on [1,20]", adv.geometric_instance(0.8, 20, 3000, memory=1500),
         "amin", rt.amin_geometric(0.8, u=20), "Lemma 2 (digest R11 sim: ~1.52)", False),
        ("LG q=0.8 on [1,60]", adv.geometric_instance(0.8, 60, 3000, memory=1500,
                                                       linear=True),
         "amin", rt.amin_lg_numeric(0.8, u=60),
         f"Lemma 2 (Thm 8 at u=oo: {rt.amin_lg(0.8):.4f})", False),
    ]
    rows = []
    for name, inst, pol, theory, what, with_opt in specs:
        if pol in ("amin", "amax") and inst.n <= SMALL_EXACT_N:
            # one tie order per run on a small instance: the exact mean over all n! orders
            res = measure(inst, "hsf", opt=with_opt, solver=solver, time_limit=time_limit)
            tel = float(tie_order_expectation(inst, pol))
            res.update(ratio_hsf=tel / res["hsf"], ratio_hsf_se=0.0,
                       ratio_opt=None if res.get("opt") is None else tel / res["opt"])
            runs = f"exact ({math.factorial(inst.n)} tie orders)"
        else:
            use = (range(small_runs) if pol in RANDOMIZED and inst.n <= SMALL_EXACT_N
                   else seeds)
            res = measure(inst, pol, seeds=use, opt=with_opt, solver=solver,
                          time_limit=time_limit)
            runs = str(len(res["seeds"])) if pol in RANDOMIZED else "deterministic"
        vs_opt = res.get("ratio_opt") if res.get("opt_status") == "optimal" else None
        rows.append({"construction": name, "policy": pol, "reading": READINGS.get(pol, ""),
                     "n": inst.n, "M": inst.memory, "theory": theory, "theory_is": what,
                     "runs": runs, "vs_hsf": res["ratio_hsf"],
                     "vs_hsf_se": res["ratio_hsf_se"], "vs_opt": vs_opt})
        if on_row is not None:
            on_row(name)
    return rows


def adversarial_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of :func:`adversarial_rows` (``vs_hsf`` with its standard error).

    Examples
    --------
    >>> from kvopt.report.measure import READINGS
    >>> row = {"construction": "seed000 Example EC.1", "policy": "amin/per-sort",
    ...        "reading": READINGS["amin/per-sort"], "n": 4, "M": 7, "theory": None,
    ...        "theory_is": "-", "runs": "10", "vs_hsf": 1.275, "vs_hsf_se": 0.057,
    ...        "vs_opt": 1.275}
    >>> print(adversarial_markdown([row]).splitlines()[-1])
    | seed000 Example EC.1 | amin/per-sort | Alg. 2 literal: ties redrawn at every sort | 4 | 7
    | - | - | 10 | 1.2750 ± 0.0570 | 1.2750 |
    """
    keys = ["construction", "policy", "reading", "n", "M", "theory", "theory_is", "runs",
            "vs_hsf", "vs_opt"]
    return table(keys, [[_cell(r, k) for k in keys] for r in rows])


# ------------------------------------------------------------------------------ writers
def _alpha_label(a: float) -> str:
    inv = 1.0 / a
    return "1" if a == 1.0 else (f"1/{round(inv)}" if abs(inv - round(inv)) < 1e-9 else f"{a:g}")


def _cell(r: dict[str, Any], k: str) -> Any:
    """A cell: the value, with ``± standard error`` where it is a mean of random runs."""
    if r[k] is None:
        return None
    se = r.get(k + "_se")
    return f"{fmt(r[k])} ± {se:.4f}" if se else fmt(r[k])


def _table_cells(rows: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """Rows of the main table: alpha as a label, missing values as ``None``."""
    return [[_alpha_label(r["alpha"]) if k == "alpha" else _cell(r, k) for k, _, _ in COLUMNS]
            for r in rows]


#: Measured columns that carry a standard error (``<key>_se`` in the rows and the CSV).
SE_COLUMNS = ("amax_thm2_hsf", "amin_adv_hsf", "amin_per_sort_adv_hsf", "amin_redraw_adv_hsf",
              "amin_rand_hsf", "al_adv_hsf")


def table_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The table as GitHub markdown (alpha printed as 1/k where exact).

    Examples
    --------
    >>> md = table_markdown(ratio_rows([1, 1 / 2], measured=False))
    >>> print(md.splitlines()[-1])   # "-": measured columns not computed
    | 1/2 | 1 | 2 | 3.0000 | 2.4142 | 2.1547 | - | 1.5000 | 1.2500 | 1.5000 | 1.2500 | 1.5000 |
    1.2500 | - | - | - | - | - | - | - |
    """
    return table([h for _, h, _ in COLUMNS], _table_cells(rows))


def table_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The table as CSV (full precision, empty cells for missing values).

    Examples
    --------
    >>> lines = table_csv(ratio_rows([1 / 2], measured=False)).splitlines()
    >>> lines[0].split(",")[:5], len(lines[0].split(","))   # 20 columns + 6 standard errors
    (['alpha', 'l', 'u', 'amax_upper', 'amax_lower_claimed'], 26)
    >>> lines[1].split(",")[:4], lines[1].split(",")[6:8]
    (['0.5', '1', '2', '3.0'], ['', '1.5'])
    """
    keys = [k for k, _, _ in COLUMNS] + [k + "_se" for k in SE_COLUMNS]
    return table(keys, [[r.get(k) for k in keys] for r in rows], "csv")


def table_tex(rows: Sequence[dict[str, Any]]) -> str:
    """The table as a LaTeX ``tabular`` (booktabs).

    Examples
    --------
    >>> lines = table_tex(ratio_rows([1 / 2], measured=False)).splitlines()
    >>> print(lines[0])
    \\begin{tabular}{rrrrrrrrrrrrrrrrrrrr}
    >>> print(lines[4][:40])   # the alpha = 1/2 row
    1/2 & 1 & 2 & 3.0000 & 2.4142 & 2.1547 &
    """
    return table([h for _, h, _ in COLUMNS], _table_cells(rows), "tex")


def convergence_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of :func:`convergence_rows` (means ``± standard error`` over seeds).

    Examples
    --------
    >>> rows = convergence_rows(scales=(1,), seeds=(0, 1), base_n=40, base_m=12, l=1, u=4)
    >>> print(convergence_markdown(rows).splitlines()[2])
    | 40 | 12 | 1 | 4 | 2 | 1.3750 | 1.3051 ± 0.0404 | 1.2059 | 1.3051 ± 0.0404 | 1.2750 |
    """
    keys = ["n", "M", "l", "u", "seeds", "theory", "amin_hsf", "amin_per_sort_hsf",
            "amin_redraw_hsf", "hsf_over_fluid"]
    return table(keys, [[_cell(r, k) for k in keys] for r in rows])


def _dicts_csv(rows: Sequence[dict[str, Any]]) -> str:
    """CSV of equal-keyed dicts (columns in the first row's key order)."""
    keys = list(rows[0])
    return table(keys, [[r[k] for k in keys] for r in rows], "csv")


def _png(fig: Any) -> bytes:
    return figure_png(fig, dpi=110)


def _plots(rows: Sequence[dict[str, Any]], fit: Any) -> dict[str, bytes]:
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no global backend is chosen or changed

    grid = np.geomspace(min(r["alpha"] for r in rows), 1.0, 200)
    a_rows = np.array([r["alpha"] for r in rows])
    out: dict[str, bytes] = {}

    def points(key: str) -> tuple[np.ndarray, np.ndarray]:
        sel = [(r["alpha"], r[key]) for r in rows if r[key] is not None]
        return (np.array([p[0] for p in sel]), np.array([p[1] for p in sel])) if sel else (
            np.zeros(0), np.zeros(0))

    with matplotlib.rc_context({"font.size": 9}):
        fig = Figure(figsize=(6.4, 4.2))
        ax = fig.subplots()
        ax.plot(grid, [rt.amax_upper(a) for a in grid], label="Amax upper (Thm 1, proven)")
        ax.plot(grid, [rt.amax_lower_claimed(a) for a in grid], "--",
                label="Amax lower (Thm 2, claimed)")
        ax.plot(grid, [rt.amax_construction(a) for a in grid], ":",
                label="Thm 2 construction (max over r)")
        ax.plot(grid, [rt.arandom_upper(a) for a in grid], label="Arandom upper")
        xs, ys = points("amax_thm2_hsf")
        ax.plot(xs, ys, "o", label="Amax on Thm 2 instance (measured)")
        ax.set(xscale="log", yscale="log", xlabel="alpha = l/u", ylabel="ratio to H-SF",
               title="Amax: bounds vs alpha")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        out["ratios_amax.png"] = _png(fig)

        fig = Figure(figsize=(6.4, 4.2))
        ax = fig.subplots()
        ax.plot(a_rows, [r["amin_rayleigh"] for r in rows], "-o", ms=3,
                label="Amin lambda_max (l, u smallest integers)")
        hs = [(r["alpha"], r["amin_log_bound"]) for r in rows if r["amin_log_bound"] is not None]
        ax.plot([h[0] for h in hs], [h[1] for h in hs], "--", label="trace bound H_u")
        ax.plot(grid, [rt.amin_two_point(a) for a in grid], label="Amin two-point (3-alpha)/2")
        ax.plot(grid, [rt.al_two_point(a) for a in grid], label="A_l two-point")
        for key, mk, lab in (("amin_adv_hsf", "s", "Amin adv vs H-SF"),
                             ("amin_redraw_adv_hsf", "^", "Amin/redraw adv vs H-SF"),
                             ("amin_rand_hsf", "x", "Amin random vs H-SF"),
                             ("amin_adv_opt", "D", "Amin adv vs OPT (small)"),
                             ("al_adv_hsf", "v", "A_l adv vs H-SF")):
            xs, ys = points(key)
            if xs.size:
                ax.plot(xs, ys, mk, label=lab + " (measured)")
        ax.set(xscale="log", xlabel="alpha = l/u", ylabel="ratio",
               title="Amin and A_l: theory vs measured")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        out["ratios_amin.png"] = _png(fig)

        fig = Figure(figsize=(6.4, 5.0))
        ax1, ax2 = fig.subplots(2, 1, sharex=True)
        uu = fit.u.astype(float)
        ax1.plot(uu, fit.lam, "o", ms=3, label="lambda_max(A_u, B_u)")
        pa, pb, pc = PAPER_FIT
        ax1.plot(uu, paper_fit(uu), "-", label=f"paper fit {pa} ln(u + {pb}) + {pc}")
        ax1.set(xscale="log", ylabel="CR(Amin)")
        ax1.legend(fontsize=7)
        ax2.plot(uu, fit.lam - paper_fit(uu), "o-", ms=3, label="lambda_max - paper fit")
        a, b, c = fit.params
        ax2.plot(uu, fit.lam - (a * np.log(uu + b) + c), "x-", ms=3,
                 label=f"lambda_max - refit {a:.4f} ln(u {b:+.3f}) + {c:.4f}")
        ax2.axhline(0.0, color="k", lw=0.5)
        ax2.set(xscale="log", xlabel="u (alpha = 1/u)", ylabel="residual")
        ax2.legend(fontsize=7)
        fig.tight_layout()
        out["lambda_fit.png"] = _png(fig)
    return out


def _versions() -> dict[str, str]:
    return versions("numpy", "scipy", "sympy", "matplotlib")


def write_report(out_dir: str | Path, *, alphas: Sequence[float] = DEFAULT_ALPHAS,
                 config: MeasureConfig | None = None, measured: bool = True,
                 convergence: bool = True, command: Sequence[str] | None = None,
                 progress: bool = False) -> dict[str, Any]:
    """Compute the rows and write every report file into ``out_dir`` (atomically).

    Returns
    -------
    dict
        The manifest (also written as ``manifest.json``).
    """
    cfg = config or MeasureConfig()
    out = Path(out_dir)
    bar = None
    total = len(alphas) + (4 + 17 if (measured and convergence) else 0) + 1
    if progress:
        from kvopt.core.progress import Progress

        bar = Progress(total, "report ratios", unit="step")

    def tick(_: Any) -> None:
        if bar is not None:
            bar.update(1)

    rows = ratio_rows(alphas, measured=measured, config=cfg, on_row=tick)
    fit = fit_log_curve()
    tick(None)
    conv = (convergence_rows(seeds=cfg.seeds[:2] or (0,), on_row=tick)
            if (measured and convergence) else [])
    advr = (adversarial_rows(seeds=cfg.seeds, solver=cfg.solver, on_row=tick)
            if (measured and convergence) else [])
    if bar is not None:
        bar.close()
    files: dict[str, bytes] = {
        "table.md": table_markdown(rows).encode(),
        "table.csv": table_csv(rows).encode(),
        "table.tex": table_tex(rows).encode(),
    }
    if conv:
        files["convergence.md"] = convergence_markdown(conv).encode()
        files["convergence.csv"] = _dicts_csv(conv).encode()
    if advr:
        files["adversarial.md"] = adversarial_markdown(advr).encode()
        files["adversarial.csv"] = _dicts_csv(advr).encode()
    files.update(_plots(rows, fit))
    write_files(out, files)
    doc: dict[str, Any] = manifest(
        files,
        command=list(command) if command is not None else None,
        versions=_versions(),
        seeds=list(cfg.seeds),
        alphas=[float(a) for a in alphas],
        measured=measured,
        config=cfg.to_dict(),
        conventions={
            "benchmark": "H-SF (kvopt.sim 'hsf'); OPT = kvopt.mip.solve, proven optimal only",
            "theory_l_u": "smallest integers with l/u = alpha, s = 0 (Corollary 1 if l = 1)",
            "measured_l_u": f"l = {cfg.l}, u = round(l/alpha), s = 0, M = max(10u, 100)",
            "amin_redraw": "experiment: simulator Amin with eviction ties redrawn per decision",
        },
        fit={"paper_params": list(PAPER_FIT), "refit_params": list(fit.params),
             "u_range": [int(fit.u.min()), int(fit.u.max())],
             "paper_max_abs_residual": fit.paper_max_abs_residual,
             "paper_rms_residual": fit.paper_rms_residual},
    )
    write_manifest(out / "manifest.json", doc)
    doc["rows"] = rows
    doc["convergence"] = conv
    doc["adversarial"] = advr
    return doc
