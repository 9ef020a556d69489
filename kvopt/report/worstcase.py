"""Worst ratio to OPT per policy and instance size, by the counterexample search.

For every policy and every range of instance sizes, :func:`kvopt.report.search.search`
maximises ``mean TEL(policy) / OPT`` (OPT proven by the MIP; randomised policies averaged
over their seeds) over small instances in the offline batch setting (every request at 0,
the setting of GSA / GBA's guarantees) with interval predictions ``[l, u]`` on every request
(Amin / Amax need them; the other policies ignore them). Each worst instance is written with
the policy's schedule (seed 0) and an optimal schedule, so every row can be replayed:
``kvopt validate INSTANCE SCHEDULE`` recomputes both objectives.

Examples
--------
>>> rows = worst_case_rows(["gba"], [(2, 3)], restarts=1, steps=3)
>>> rows[0]["policy"], rows[0]["ratio"] >= 1.0, rows[0]["proven_ratio"]
('gba', True, 10.67)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.report.search import SearchSpace, check_search, search

if TYPE_CHECKING:
    from kvopt.mip.result import SolverName  # checked by solve at run time

__all__ = ["PROVEN_RATIOS", "WORST_CASE_POLICIES", "replay_files", "worst_case_rows"]

#: The policies of the table (issue 24).
WORST_CASE_POLICIES = ("mcsf", "amin", "amax", "trail", "tie", "gmax", "wait", "nested-wait",
                       "gsa", "gba")

#: Proven competitive / approximation ratios for the offline batch setting (general M),
#: Feng, Yang & Zhang arXiv:2601.22996.
PROVEN_RATIOS = {"gsa": 61.92, "gba": 10.67}


def _space(n: tuple[int, int]) -> SearchSpace:
    return SearchSpace(n=n, memory=(4, 12), prompt=(0, 3), output=(1, 8), max_arrival=0,
                       interval=(1, 8))


def worst_case_rows(policies: Sequence[str] = WORST_CASE_POLICIES,
                    sizes: Sequence[tuple[int, int]] = ((2, 3), (4, 5), (6, 7)), *,
                    restarts: int = 6, steps: int = 30, rng_seed: int = 0,
                    solver: str = "highs", time_limit: float = 10.0) -> list[dict[str, Any]]:
    """Run the search for every (policy, size); one row each with the worst instance.

    Examples
    --------
    >>> rows = worst_case_rows(["amax", "gsa"], [(2, 3)], restarts=1, steps=1)
    >>> [(r["policy"], r["n"], r["ratio"], r["tel"], r["opt"], r["proven_ratio"]) for r in rows]
    [('amax', [2, 3], 2.0, 6.0, 3.0, None), ('gsa', [2, 3], 1.0, 3.0, 3.0, 61.92)]
    """
    for p in policies:
        for n in sizes:
            check_search(p, _space(n))
    rows = []
    for p in policies:
        for n in sizes:
            t0 = time.perf_counter()
            res = search(p, space=_space(n), restarts=restarts, steps=steps,
                         rng_seed=rng_seed, solver=solver, time_limit=time_limit)
            rows.append({"policy": p, "n": list(n), "ratio": res.ratio, "tel": res.tel,
                         "opt": res.opt, "evaluations": res.evaluations,
                         "skipped": res.skipped, "proven_ratio": PROVEN_RATIOS.get(p),
                         "wall_s": time.perf_counter() - t0, "instance": res.instance})
    return rows


def replay_files(row: dict[str, Any], out_dir: str | Path, *, solver: str = "highs",
                 time_limit: float = 30.0) -> dict[str, str]:
    """Write the row's worst instance, the policy's schedule (seed 0) and an optimal schedule
    into ``out_dir``; return their relative names (``kvopt validate`` replays each).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from kvopt.core.instance import load_instance
    >>> from kvopt.core.schedule import load_schedule
    >>> from kvopt.core.validate import check_schedule
    >>> from kvopt.theory.adversarial import example1
    >>> row = {"policy": "amax", "n": [5, 5], "instance": example1()}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     names = replay_files(row, d)
    ...     inst = load_instance(Path(d) / names["instance"])
    ...     reps = [check_schedule(inst, load_schedule(Path(d) / names[k]))
    ...             for k in ("policy_schedule", "opt_schedule")]
    >>> names["opt_schedule"], [(r.ok, r.objective) for r in reps]   # Amax 9, OPT 5
    ('amax-n5-5.opt.json', [(True, 9.0), (True, 5.0)])
    """
    from kvopt.mip import solve
    from kvopt.sim import simulate

    inst: Instance = row["instance"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{row['policy']}-n{row['n'][0]}-{row['n'][1]}"
    inst.save(out / f"{stem}.json")
    simulate(inst, row["policy"], seed=0).schedule.save(out / f"{stem}.{row['policy']}.json")
    res = solve(inst, solver=cast("SolverName", solver), time_limit=time_limit)
    if res.schedule is not None:
        res.schedule.save(out / f"{stem}.opt.json")
    return {"instance": f"{stem}.json", "policy_schedule": f"{stem}.{row['policy']}.json",
            "opt_schedule": f"{stem}.opt.json"}


def at_scale_rows(records: Sequence[dict[str, Any]], policies: Sequence[str], *,
                  seed: int = 0) -> list[dict[str, Any]]:
    """TEL / best lower bound at paper scale: for each record of a committed bound run
    (``reports/mip/dual_paper_all.json``: ``kind`` model1/model2, ``seed``, ``n``, the
    certified ``intervals`` bound and the ``best`` known schedule), regenerate the instance,
    check it is the one bounded (same ``n`` and ``M``) and simulate every policy.

    Examples
    --------
    >>> rec = {"kind": "model1", "seed": 1, "n": 50, "memory": 39, "intervals": 7488.714,
    ...        "best": 8504.0}
    >>> r = at_scale_rows([rec], ["mcsf"])[0]
    >>> r["policy"], r["tel"] >= r["bound"]
    ('mcsf', True)
    """
    from kvopt.core import generators
    from kvopt.sim import simulate

    rows = []
    for rec in records:
        inst = getattr(generators, rec["kind"])(rec["seed"])
        if (inst.n, inst.memory) != (rec["n"], rec["memory"]):
            raise UsageError("records", f"{rec['kind']}-seed{rec['seed']}: generator gives "
                             f"n={inst.n}, "
                             f"M={inst.memory}, the bound record n={rec['n']}, "
                             f"M={rec['memory']}")
        for p in policies:
            tel = float(simulate(inst, p, seed=seed).metrics.total_latency)
            rows.append({"instance": f"{rec['kind']}-seed{rec['seed']}", "n": inst.n,
                         "policy": p, "tel": tel, "bound": float(rec["intervals"]),
                         "best": float(rec["best"]), "ratio_bound": tel / rec["intervals"],
                         "ratio_best": tel / rec["best"]})
    return rows
