"""Formula-vs-simulation agreement table (markdown) of :mod:`kvopt.queueing`.

Command: ``kvopt report agreement OUT.md [--n N] [--seed S]``. Every row simulates ``N`` jobs
(``2.5 N`` at load 0.9) and reports ``z = (simulated - formula) / SE`` with a batch-means
standard error.

Examples
--------
>>> rows = list(agreement_rows(2000, 0, loads=(0.5,), dists=("exp:1",),
...                            cases=(("fcfs", "perfect", None),)))
>>> text = agreement_markdown(rows, n=2000, seed=0, wall_s=1.0, out="a.md")
>>> text.splitlines()[0], len(rows)
('# Formula vs simulation', 1)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from kvopt.queueing.distributions import parse_sizes
from kvopt.queueing.predictions import parse_predictions
from kvopt.queueing.simulator import simulate_queue
from kvopt.queueing.soap import SoapModel
from kvopt.report.writers import table

__all__ = ["CASES", "DISTS", "AgreementRow", "agreement_markdown", "agreement_rows"]

DISTS = ("exp:1", "uniform:0,2", "hyperexp:0.5,0.5,0.5,1.5", "det:1")
CASES: tuple[tuple[str, str, float | None], ...] = (
    ("fcfs", "perfect", None), ("sjf", "perfect", None), ("srpt", "perfect", None),
    ("spjf", "exp", None), ("sprpt", "exp", None), ("trail", "exp", 0.2),
    ("trail", "exp", 0.8), ("trail", "perfect", 0.5))

#: ``(sizes, policy, predictions, C, load, formula, simulated, se, z)``
AgreementRow = tuple[str, str, str, float | None, float, float, float, float, float]


def agreement_rows(n: int, seed: int, loads: Sequence[float] = (0.3, 0.6, 0.9),
                   dists: Sequence[str] = DISTS,
                   cases: Sequence[tuple[str, str, float | None]] = CASES,
                   ) -> Iterator[AgreementRow]:
    """Yield ``(dist, policy, predictions, C, rho, formula, simulated, se, z)`` rows.

    Examples
    --------
    >>> rows = list(agreement_rows(2000, 0, loads=(0.5,), dists=("exp:1",),
    ...                            cases=(("fcfs", "perfect", None), ("srpt", "perfect", None))))
    >>> [(r[1], round(r[5], 4), round(r[6], 4), round(r[8], 2)) for r in rows]
    [('fcfs', 2.0, 1.976, -0.18), ('srpt', 1.4254, 1.5486, 1.24)]
    """
    for spec in dists:
        d = parse_sizes(spec)
        for rho in loads:
            lam = rho / d.mean
            for k, (pol, pred, C) in enumerate(cases):
                pm = parse_predictions(pred)
                f = SoapModel(d, pm, lam).mean_response(pol, C)
                nj = int(2.5 * n) if rho >= 0.9 else n
                s = simulate_queue(pol, lam, d, pm, C, n_jobs=nj,
                                   seed=seed + 100 * k + int(10 * rho))
                z = (s.mean_response - f) / s.se
                yield spec, pol, pred, C, rho, f, s.mean_response, s.se, z


def agreement_markdown(rows: Sequence[AgreementRow], *, n: int, seed: int, wall_s: float,
                       out: str) -> str:
    """The agreement report: the command, a z-score summary and one table row per case.

    Examples
    --------
    >>> rows = [("exp:1", "fcfs", "perfect", None, 0.5, 2.0, 1.875, 0.05, -2.5)]
    >>> text = agreement_markdown(rows, n=2000, seed=0, wall_s=3.0, out="a.md")
    >>> print(text.splitlines()[4])
    1 rows; max |z| = 2.50; rows with |z| > 2: 1; |z| > 3: 0; mean z = -2.50. Wall time 3 s.
    >>> print(text.splitlines()[-1])
    | exp:1 | fcfs | perfect |  | 0.5 | 2.0000 | 1.8750 ± 0.0500 | -2.50 |
    """
    z = np.array([r[-1] for r in rows])
    lines = ["# Formula vs simulation", "",
             f"`kvopt report agreement {out} --n {n} --seed {seed}`: "
             f"{n} jobs per row ({int(2.5 * n)} at load 0.9), batch-means SE (20 batches, "
             "10% warm-up and 5% tail dropped). z = (simulated − formula) / SE.", "",
             f"{len(rows)} rows; max |z| = {np.abs(z).max():.2f}; rows with |z| > 2: "
             f"{int((np.abs(z) > 2).sum())}; |z| > 3: {int((np.abs(z) > 3).sum())}; "
             f"mean z = {z.mean():+.2f}. Wall time {wall_s:.0f} s.", ""]
    cells = [[spec, pol, pred, "" if C is None else str(C), f"{rho:g}", f"{f:.4f}",
              f"{sm:.4f} ± {se:.4f}", f"{zz:+.2f}"]
             for spec, pol, pred, C, rho, f, sm, se, zz in rows]
    return "\n".join(lines) + "\n" + table(
        ["sizes", "policy", "predictions", "C", "load", "formula", "simulated ± SE", "z"], cells)
