"""Sweep engine (see the package docstring)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kvopt.core.errors import UsageError
from kvopt.core.generators import GENERATORS as GENERATORS  # kvopt.sweep.GENERATORS
from kvopt.sweep.spec import (
    EvaluatorSpec,
    InstanceSource,
    Spec,
    Task,
    check_spec,
    code_version,
    expand_tasks,
)
from kvopt.sweep.store import ResultStore
from kvopt.sweep.tasks import failed_row, iter_tasks, run_tasks


@dataclass(frozen=True)
class SweepSpec:
    """What to sweep.

    Parameters
    ----------
    generator
        Key of :data:`GENERATORS`.
    seeds
        One instance per seed.
    policies
        Simulator policy names (``kvopt.sim.POLICIES``).
    solver
        MIP backend for the hindsight optimum, or ``None`` to skip it.
    time_limit
        Per-solve time limit in seconds.
    generator_params
        Extra keyword arguments of the generator (e.g. ``{"n": 12}``).
    preemption
        Preemption mode of every policy (``None``: each policy's default); in a spec file it
        is a policy parameter (``params = { preemption = "recompute" }``).

    Examples
    --------
    >>> SweepSpec("model1", seeds=(0, 1), policies=("mcsf",), solver=None).generator
    'model1'
    """

    generator: str
    seeds: Sequence[int]
    policies: Sequence[str] = ("mcsf",)
    solver: str | None = None
    time_limit: float = 10.0
    generator_params: dict[str, Any] = field(default_factory=dict)
    preemption: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for manifests)."""
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        d["policies"] = list(self.policies)
        return d

    def to_spec(self) -> Spec:
        """The equivalent :class:`~kvopt.sweep.spec.Spec` (what ``--generator`` flags mean).

        Examples
        --------
        >>> s = SweepSpec("model1", seeds=(0, 1), policies=("mcsf",), solver="highs").to_spec()
        >>> [e.label for e in s.evaluators], s.seeds
        (['opt:highs', 'mcsf'], (0, 1))
        """
        seeds = tuple(int(x) for x in self.seeds)
        src = InstanceSource(self.generator, self.generator, dict(self.generator_params),
                             seeds=seeds)
        evs = []
        if self.solver is not None:
            evs.append(EvaluatorSpec("solver", self.solver, {}, "unit", float(self.time_limit),
                                     None, None, key="solvers[0]"))
        params = {} if self.preemption is None else {"preemption": self.preemption}
        evs += [EvaluatorSpec("policy", p, dict(params), "unit", key=f"policies[{i}]")
                for i, p in enumerate(self.policies)]
        return Spec(self.generator, (src,), tuple(evs), seeds)


@dataclass
class SweepOutcome:
    """What :func:`run_spec` did: task counts by status, skipped (already recorded) tasks.

    Examples
    --------
    >>> from kvopt.sweep import parse_spec
    >>> spec = parse_spec('seeds = "0:3"\\n[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "mcsf"')
    >>> with ResultStore(":memory:") as db:
    ...     out = run_spec(spec, db, workers=0)
    >>> out.total, out.ran, out.skipped, out.statuses
    (3, 3, 0, {'simulated': 3})
    """

    db: str
    total: int
    skipped: int
    ran: int
    statuses: dict[str, int]
    wall_s: float
    workers: int
    scheduler: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def run_spec(
    spec: Spec,
    db: str | Path | ResultStore,
    *,
    scheduler: str | None = None,
    workers: int = 2,
    progress: bool = False,
    retry_errors: bool = False,
    check: bool = True,
    batch: int | None = None,
    task_time_limit: float | None = None,
) -> SweepOutcome:
    """Run every task of ``spec`` not yet in ``db``, recording each result as it arrives.

    Parameters
    ----------
    spec
        The sweep (:func:`kvopt.sweep.load_spec`).
    db
        SQLite file (created if missing) or an open :class:`ResultStore`.
    scheduler
        Address of a running Dask scheduler (``tcp://host:port``); ``None`` starts a
        ``LocalCluster`` of ``workers`` processes (``workers=0``: run in this process).
    workers
        Worker processes of the ``LocalCluster`` (ignored with ``scheduler``).
    progress
        Completed/total with ETA on stderr.
    retry_errors
        Re-run tasks recorded with status ``error`` (internal failures, lost workers);
        other statuses (livelock, time limit, ...) are results and are never re-run.
    check
        Check the spec (:func:`kvopt.sweep.check_spec`) before any work starts.
    batch
        Tasks per Dask task (default: automatic, 1 to 32); a killed sweep loses at most the
        batches in flight.
    task_time_limit
        Seconds a task may run before it is killed and recorded as status ``timeout``
        (default: the spec's ``task_time_limit``; see :func:`kvopt.sweep.tasks.iter_tasks`).

    Examples
    --------
    >>> from kvopt.sweep import parse_spec
    >>> spec = parse_spec('seeds = "0:3"\\n[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "mcsf"')
    >>> with ResultStore(":memory:") as db:
    ...     first = run_spec(spec, db, workers=0)
    ...     again = run_spec(spec, db, workers=0)
    >>> (first.ran, first.skipped), (again.ran, again.skipped)
    ((3, 0), (0, 3))
    """
    from kvopt.core.progress import Progress, note

    if check:
        check_spec(spec)
    if workers < 0:
        raise UsageError("workers", f"must be >= 0, got {workers}")
    if batch is not None and batch < 1:
        raise UsageError("batch", f"must be >= 1, got {batch}")
    limit = spec.task_time_limit if task_time_limit is None else task_time_limit
    if not 0 < limit < float("inf"):
        raise UsageError("task_time_limit", f"must be seconds > 0, got {limit}")
    if scheduler is not None:
        check_reachable(scheduler)
    tasks = expand_tasks(spec)
    store = db if isinstance(db, ResultStore) else ResultStore(db)
    try:
        if retry_errors:
            store.forget(store.failed() & {t.key for t in tasks})
        done = store.done()
        todo = [t for t in tasks if t.key not in done]
        where = (scheduler if scheduler else
                 "this process" if workers == 0 else f"a LocalCluster of {workers} workers")
        note(f"sweep {spec.name}: {len(tasks)} tasks, {len(tasks) - len(todo)} already in "
             f"{store.path}, {len(todo)} to run on {where}", enabled=progress)
        store.record_run(spec.to_dict(), spec.text, code_version=code_version(),
                         scheduler=scheduler, workers=workers, tasks=len(tasks),
                         skipped=len(tasks) - len(todo))
        statuses: Counter[str] = Counter()
        t0 = time.perf_counter()
        with Progress(len(todo), f"sweep {spec.name}", enabled=progress, unit="task") as bar:
            for row in _results(todo, scheduler, workers, batch, limit):
                store.insert(row)
                statuses[row["status"]] += 1
                bar.update()
        return SweepOutcome(store.path, len(tasks), len(tasks) - len(todo), len(todo),
                            dict(sorted(statuses.items())), time.perf_counter() - t0,
                            workers, scheduler)
    finally:
        if not isinstance(db, ResultStore):
            store.close()


def check_reachable(address: str, timeout: float = 10.0) -> None:
    """Refuse (``UsageError`` naming ``--scheduler``) an address nobody listens on, before
    any file is written or task submitted.

    Examples
    --------
    >>> check_reachable("tcp://127.0.0.1:1", timeout=1)
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --scheduler: nothing listens at tcp://127.0.0.1:1 \
(Connection refused)
    """
    import socket

    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except ValueError:
        raise UsageError("--scheduler", f"expected tcp://HOST:PORT, got {address!r}") from None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise UsageError("--scheduler", f"nothing listens at {address} ({why})") from None


def _results(todo: list[Task], scheduler: str | None, workers: int,
             batch: int | None = None, task_time_limit: float | None = None) -> Any:
    """Yield one result row per task, in completion order.

    On a cluster, tasks travel in batches (interleaved, so each batch mixes entries and
    evaluators) of ``batch`` tasks, by default about 1/8 of a worker's share, at most 32:
    fewer, larger Dask tasks keep the scheduler's overhead small next to millisecond
    simulations. Rows still reach the database one transaction each.
    """
    if not todo:
        return
    if scheduler is None and workers == 0:
        yield from iter_tasks([t.payload(ship_instance=True) for t in todo], task_time_limit)
        return
    from dask.distributed import Client, LocalCluster, as_completed

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise UsageError("--scheduler", f"cannot reach a Dask scheduler at {scheduler}: "
                             f"{exc}") from None
        cluster = None
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        nw = len(client.scheduler_info().get("workers", {})) or max(workers, 1)
        size = batch if batch is not None else max(1, min(32, len(todo) // (8 * nw)))
        nb = -(-len(todo) // size)
        batches = [[t.payload(ship_instance=True) for t in todo[i::nb]] for i in range(nb)]
        del todo
        futures = {client.submit(run_tasks, b, task_time_limit,
                                 key=f"kvopt-tasks-{b[0]['key']}-{len(b)}", pure=False): b
                   for b in batches}
        for fut in as_completed(list(futures)):
            try:
                rows = fut.result()
            except Exception as exc:  # a lost worker, not the tasks' results
                rows = [failed_row(p, "error", f"{type(exc).__name__}: {exc} (the task did "
                                   "not return)") for p in futures[fut]]
            fut.release()
            del futures[fut]
            yield from rows
    finally:
        client.close()
        if cluster is not None:
            cluster.close()




def run_sweep(
    spec: SweepSpec,
    *,
    workers: int = 2,
    progress: bool = False,
    db: str | Path = ":memory:",
    scheduler: str | None = None,
    task_time_limit: float | None = None,
) -> list[dict[str, Any]]:
    """Run a flag-style :class:`SweepSpec` (through :func:`run_spec`) and return its rows.

    Parameters
    ----------
    spec
        The sweep.
    workers
        Number of worker processes; ``0`` evaluates in this process (no cluster).
    progress
        Show progress on stderr (:class:`kvopt.core.progress.Progress`).
    db
        Where results are recorded (default: in memory, nothing kept).
    scheduler
        Address of a running Dask scheduler instead of a ``LocalCluster``.
    task_time_limit
        Seconds a task may run before it is recorded as ``timeout`` (default 600).

    Returns
    -------
    list of dict
        One row per (seed, evaluator), sorted by seed then the evaluator order of ``spec``,
        with ``ratio_to_opt`` (policy TEL / proven optimum of the same instance, else None).

    Examples
    --------
    >>> rows = run_sweep(SweepSpec("random-small", seeds=[0, 1], policies=["fcfs"]), workers=0)
    >>> [(r["seed"], r["evaluator"], r["status"]) for r in rows]
    [(0, 'fcfs', 'simulated'), (1, 'fcfs', 'simulated')]
    """
    from kvopt.sweep.summary import with_ratios

    full = spec.to_spec()
    with ResultStore(db) as store:
        run_spec(full, store, workers=workers, progress=progress, scheduler=scheduler,
                 task_time_limit=task_time_limit)
        rows = with_ratios(store.rows())
    order = {e.label: i for i, e in enumerate(full.evaluators)}
    keys = {t.key for t in expand_tasks(full)}
    rows = [r for r in rows if r["task"] in keys]
    rows.sort(key=lambda r: (r["seed"], order[r["evaluator"]]))
    return rows
