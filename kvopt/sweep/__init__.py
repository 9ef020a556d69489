"""Parameter sweeps on Dask: spec files, keyed tasks, a resumable SQLite store, summaries.

A sweep spec (TOML, :func:`load_spec`) names instance sources (a generator over a parameter
grid, or files), policies with option grids, solver runs with time limits, seeds, the
step-time model and the metrics to export. :func:`expand_tasks` turns it into tasks keyed by a
stable hash; :func:`run_spec` runs those not yet in the SQLite database on a Dask cluster (a
``LocalCluster`` by default, or a running scheduler) or in-process, recording each result in
its own transaction as it arrives, so a killed sweep resumes where it stopped. A task's
failure (livelock, solver refusal, an exception) is recorded with its status; it never stops
the sweep. :mod:`kvopt.sweep.summary` turns the rows into tables.

The flag-style :class:`SweepSpec` (``kvopt sweep --generator ...``) maps onto a spec
(:meth:`SweepSpec.to_spec`); :func:`run_sweep` returns its rows sorted by seed.
"""

from kvopt.sweep.run import GENERATORS, SweepOutcome, SweepSpec, run_spec, run_sweep
from kvopt.sweep.spec import Spec, SpecError, check_spec, expand_tasks, load_spec, parse_spec
from kvopt.sweep.store import ResultStore
from kvopt.sweep.summary import export_csv, summarize, summary_table, with_ratios

__all__ = ["GENERATORS", "ResultStore", "Spec", "SpecError", "SweepOutcome", "SweepSpec",
           "check_spec", "expand_tasks", "export_csv", "load_spec", "parse_spec", "run_spec",
           "run_sweep", "summarize", "summary_table", "with_ratios"]
