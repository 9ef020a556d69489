"""Parameter sweeps on a Dask cluster: seeded instances x evaluators -> one table.

A sweep draws instances from a generator (one per seed), evaluates each with online
policies (``kvopt.sim.simulate``) and optionally the hindsight MIP (``kvopt.mip.solve``),
validates every schedule, and returns rows sorted by ``(seed, evaluator)`` so the table
does not depend on the order in which workers finish. ``workers=0`` runs in-process
(no cluster); otherwise a ``dask.distributed.LocalCluster`` of processes is started.
"""

from kvopt.sweep.run import GENERATORS, SweepSpec, evaluate_seed, run_sweep

__all__ = ["GENERATORS", "SweepSpec", "evaluate_seed", "run_sweep"]
