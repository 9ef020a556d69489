"""The offline goodput-maximising program (seed 003, notes §2.2 (b)) in the hindsight MIP's model.

Same model as the TEL program of :mod:`kvopt.mip.model.builder` (its ``naive`` time-indexed rows):
one binary ``x[i, k]`` per request ``i`` and start slot ``k in [a_i, T - o_i]``, assignment
``sum_k x[i, k] = 1`` (every request is served, possibly late), the KV ramp
``sum (s_i + tau - k) x[i, k] <= M`` at every slot ``tau`` (a start at ``k`` holds
``s + tau - k`` at ``tau = k+1 .. k+o``), and, when the instance has ``max_batch = B``, the batch
rows ``sum_{k < tau <= k + o_i} x[i, k] <= B``. Requests run non-preemptively (preemption
with recompute never helps an offline schedule: it only delays the completing run).

Objective (maximised): for ``stream``, ``deadline`` and ``none`` requests the goodput of a start
is known per column, ``g[i, k]`` (:func:`kvopt.core.slo.start_goodput`, binary or soft rule);
a ``compound`` group ``g`` gets one binary ``z_g`` with ``z_g <= sum_{k on time} x[j, k]``
for each member ``j`` and earns ``sum_j R_j z_g`` (binary rule only). The returned schedule is
checked by :func:`kvopt.check_schedule`, which recomputes its goodput independently.

Examples
--------
>>> from kvopt import Instance
>>> inst = Instance(memory=30, arrival=[0, 0], prompt=[1, 0], output=[1, 20],
...                 slo_kind=["deadline", "deadline"], deadline=[20, 20], max_batch=1)
>>> res = solve_goodput(inst, solver="highs", time_limit=10)
>>> res.status, res.objective, res.schedule.run_start.tolist()
('optimal', 20.0, [20, 0])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from kvopt.core.arrays import ragged_arange
from kvopt.core.errors import InvalidInstanceError, UsageError
from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.core.schedule import Schedule
from kvopt.core.slo import COMPOUND, due_time, group_arrival, start_goodput
from kvopt.core.validate import FeasibilityReport, check_schedule
from kvopt.mip.backends.base import BackendResult, get_backend, unsolved_child
from kvopt.mip.model.builder import build_milp
from kvopt.mip.model.data import MILPData
from kvopt.mip.model.sizing import SizeEstimate
from kvopt.mip.result import SolveResult, SolveStatus

#: Default backend of the goodput program (a MILP; every backend of kvopt.mip reads it).
DEFAULT_GOODPUT_SOLVER = "highs"


def _require_slo(instance: Instance) -> None:
    instance.require_slotted()
    if instance.slo is None:
        raise InvalidInstanceError("requests.slo_kind", "objective 'goodput' needs per-request "
                                   "SLOs (slo_kind and its fields)")
    if instance.goodput.rule == "soft" and (instance.slo.kind == COMPOUND).any():
        raise UsageError("objective", "the goodput program encodes the soft rule for stream and "
                         "deadline requests only, not for compound groups")


def build_goodput_milp(instance: Instance,
                       warm_starts: NDArray[np.int64] | None = None) -> MILPData:
    """The goodput program of ``instance`` as :class:`MILPData` (``min -goodput``).

    Columns: the ``naive`` start binaries of :func:`kvopt.mip.model.builder.build_milp` (layout in
    ``col_group``/``col_start``, group ``i`` = request ``i``), then one ``z`` per compound
    group (``meta["compound_groups"]``).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=9, arrival=[0, 0], prompt=[0, 0], output=[2, 3],
    ...                 slo_kind=["deadline"] * 2, deadline=[3, 3], max_batch=1)
    >>> d = build_goodput_milp(inst)
    >>> d.n_cols, d.row_kind.count("batch")
    (7, 5)
    """
    _require_slo(instance)
    spec = instance.slo
    assert spec is not None
    base = build_milp(instance, "naive", dff=(), use_cliques=False)
    assert base.col_group is not None and base.col_start is not None
    req, k = base.col_group, base.col_start
    o = instance.output.astype(np.int64)
    a = instance.arrival.astype(np.int64)
    ncol = req.size
    comp = spec.kind[req] == COMPOUND
    value = np.where(comp, 0.0, start_goodput(spec, instance.goodput, a, instance.prompt, o,
                                              req, k))
    blocks_r, blocks_c, blocks_v = [], [], []
    rl, ru, kinds = [], [], []
    nrow = base.n_rows
    B = instance.max_batch
    if B is not None:  # running at tau = k+1 .. k+o
        jj = np.repeat(np.arange(ncol), o[req])
        off = ragged_arange(o[req])
        tau = k[jj] + 1 + off
        used, rows = np.unique(tau, return_inverse=True)
        blocks_r.append(nrow + rows.reshape(-1))
        blocks_c.append(jj)
        blocks_v.append(np.ones(jj.size))
        rl.append(np.full(used.size, -np.inf))
        ru.append(np.full(used.size, float(B)))
        kinds += ["batch"] * used.size
        nrow += used.size
    groups: list[int] = []
    z_value: list[float] = []
    if (spec.kind == COMPOUND).any():
        cm = np.flatnonzero(spec.kind == COMPOUND)
        a_g = group_arrival(spec, a)
        R = spec.base_value(instance.prompt, o, instance.goodput)
        groups = sorted({int(g) for g in spec.group[cm]})
        late_ok = a_g[req] + spec.deadline[req] + 1e-9 >= k + o[req]  # member on time alone
        for zi, g in enumerate(groups):
            members = cm[spec.group[cm] == g]
            z_value.append(float(R[members].sum()))
            for j in members:
                cols = np.flatnonzero((req == j) & late_ok)
                # z - sum_{on-time k} x[j, k] <= 0
                blocks_r.append(np.full(cols.size + 1, nrow))
                blocks_c.append(np.concatenate([[ncol + zi], cols]))
                blocks_v.append(np.concatenate([[1.0], -np.ones(cols.size)]))
                rl.append(np.array([-np.inf]))
                ru.append(np.array([0.0]))
                kinds.append(f"compound{g}")
                nrow += 1
    nz = len(groups)
    A0 = sp.hstack([base.A, sp.csr_matrix((base.n_rows, nz))]).tocsr()
    if blocks_r:
        extra = sp.csr_matrix((np.concatenate(blocks_v), (np.concatenate(blocks_r) - base.n_rows,
                                                          np.concatenate(blocks_c))),
                              shape=(nrow - base.n_rows, ncol + nz))
        A = sp.vstack([A0, extra]).tocsr()
    else:
        A = A0
    c = -np.concatenate([value, np.asarray(z_value, dtype=np.float64)])
    x0 = None
    if warm_starts is not None:
        x0 = np.zeros(ncol + nz)
        ws = np.asarray(warm_starts, dtype=np.int64)
        hit = k == ws[req]
        x0[:ncol] = hit
        for zi, g in enumerate(groups):
            members = np.flatnonzero((spec.kind == COMPOUND) & (spec.group == g))
            ok = ws[members] + o[members] <= group_arrival(spec, a)[members] + \
                spec.deadline[members] + 1e-9
            x0[ncol + zi] = float(ok.all())
    meta: dict[str, Any] = {"formulation": "goodput", "horizon": base.meta["horizon"],
                            "max_batch": B, "compound_groups": groups, "start_columns": ncol}
    return MILPData(
        c=c, A=A, row_lower=np.concatenate([base.row_lower, *rl]),
        row_upper=np.concatenate([base.row_upper, *ru]),
        col_lower=np.zeros(ncol + nz), col_upper=np.ones(ncol + nz),
        integrality=np.ones(ncol + nz, dtype=np.int8), obj_offset=0.0,
        col_group=req, col_start=k, groups=base.groups, row_kind=[*base.row_kind, *kinds],
        x0=x0, objective_is_integer=bool(np.all(c == np.round(c))), meta=meta)


def serial_edf_starts(instance: Instance) -> NDArray[np.int64]:
    """A feasible warm start: one request at a time in order of absolute SLO due time (EDF),
    each as early as possible (feasible for any ``M`` and ``B >= 1`` since ``s + o <= M``).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=9, arrival=[0, 0], prompt=[0, 0], output=[2, 3],
    ...                 slo_kind=["deadline"] * 2, deadline=[9, 3])
    >>> serial_edf_starts(inst).tolist()
    [3, 0]
    """
    a = instance.arrival.astype(np.int64)
    o = instance.output.astype(np.int64)
    due = (due_time(instance.slo, a, o) if instance.slo is not None
           else np.full(instance.n, np.inf))
    order = np.lexsort((np.arange(instance.n), a, due))
    starts = np.zeros(instance.n, dtype=np.int64)
    t = 0
    for i in order.tolist():
        starts[i] = max(t, int(a[i]))
        t = int(starts[i] + o[i])
    return starts


def _goodput_schedule(instance: Instance, starts: NDArray[np.int64], source: str,
                      meta: dict[str, Any],
                      claimed: float | None) -> tuple[Schedule, FeasibilityReport]:
    m = dict(meta)
    if claimed is not None:
        m["claimed_goodput"] = claimed
    sched = Schedule.from_starts(instance, starts, source=source,
                                 claimed_objective=instance.tel_of_starts(starts), meta=m)
    return sched, check_schedule(instance, sched)


def check_goodput_size(instance: Instance, solver: str,
                       budget: str | int | float | None = None) -> SizeEstimate:
    """Refuse, before it is built, a goodput program above the memory budget (default: the
    call's, :func:`kvopt.core.limits.resolve_memory_budget`). Its size is the ``naive``
    model's (:func:`kvopt.mip.model.sizing.estimate`), doubled with a batch limit (a batch
    row per slot with a non-zero per running slot, as many as the memory rows). Before this
    check, ``kvopt hardness knapsack`` with 60 items (horizon 13,471 slots, ~357 M
    non-zeros) built for minutes past its ``--time-limit 2``.

    Raises
    ------
    MemoryBudgetError
        Naming ``instance`` (its horizon and size make the program large).

    Examples
    --------
    >>> inst = Instance(memory=9, arrival=[0, 0], prompt=[0, 0], output=[2, 3],
    ...                 slo_kind=["deadline"] * 2, deadline=[3, 3], max_batch=1)
    >>> check_goodput_size(inst, "highs").cols
    7
    >>> check_goodput_size(inst, "highs", budget=1000)
    Traceback (most recent call last):
    ...
    kvopt.core.errors.MemoryBudgetError: invalid instance: the goodput program (naive on \
highs: 14 rows, 7 columns, 48 non-zeros, ~64.0 MiB) exceeds the memory budget of 1000 B \
(set it with ram / --memory-budget / KVOPT_MEMORY_BUDGET; default 50% of the available \
memory); solve a smaller instance (fewer requests or a shorter horizon)
    """
    from dataclasses import replace

    from kvopt.core.limits import resolve_memory_budget
    from kvopt.mip.model.sizing import BASE_BYTES, budget_refusal, estimate

    est = estimate(instance, "naive", solver)
    if instance.max_batch is not None:
        est = replace(est, rows=2 * est.rows, nnz=2 * est.nnz,
                      bytes=BASE_BYTES + 2 * (est.bytes - BASE_BYTES))
    refused = budget_refusal(instance, est, resolve_memory_budget(budget), flag="instance",
                             what="the goodput program", hint="solve a smaller instance "
                             "(fewer requests or a shorter horizon)")
    if refused is not None:
        raise refused
    return est


def solve_goodput(
    instance: Instance,
    *,
    solver: str = DEFAULT_GOODPUT_SOLVER,
    time_limit: float | None = 60.0,
    threads: int = 1,
    warm_start: bool = True,
    verbose: bool = False,
    deadline: Deadline | None = None,
    isolate: bool = True,
) -> SolveResult:
    """Maximise goodput offline; honest status, bound (an upper bound) and gap.

    The program is refused above the memory budget (:func:`check_goodput_size`); with
    ``isolate`` its build and solve run in a forked child killed at the deadline and capped at
    that budget (the build alone took 28 s of a 2 s limit on a 20-item ``kvopt hardness
    knapsack``); a killed or out-of-memory child leaves the EDF-serial warm start as the answer.

    ``status`` is ``"optimal"`` only when the solver's bound (or, for an integral objective,
    its floor) reaches the validated goodput; a time limit gives ``"time_limit"`` with the
    incumbent (solver or the EDF-serial warm start), the bound and the gap
    ``(bound - objective) / max(objective, 1)``.

    Returns
    -------
    kvopt.mip.SolveResult
        ``objective`` = validated token goodput; ``formulation = "goodput"``.

    Examples
    --------
    One request at a time and both due at slot 3: only one can be on time, and serving the
    longer one first earns its 3 tokens (of the 5 that could at most be earned).

    >>> inst = Instance(memory=9, arrival=[0, 0], prompt=[0, 0], output=[2, 3],
    ...                 slo_kind=["deadline"] * 2, deadline=[3, 3], max_batch=1)
    >>> res = solve_goodput(inst, time_limit=10)
    >>> res.status, res.objective, res.bound, res.model["value_bound"]
    ('optimal', 3.0, 3.0, 5.0)
    >>> res.schedule.run_start.tolist()
    [3, 0]
    """
    from kvopt.core.limits import resolve_memory_budget

    dl = as_deadline(time_limit, deadline)
    _require_slo(instance)
    backend = get_backend(solver)
    budget = resolve_memory_budget()
    check_goodput_size(instance, solver, budget)
    ws = serial_edf_starts(instance) if warm_start else None

    def job() -> tuple[BackendResult, dict[str, Any]]:
        data = build_goodput_milp(instance, ws)
        return backend.solve(data, deadline=dl, threads=threads, verbose=verbose), {
            "ncol": int(data.meta["start_columns"]), "group": data.col_group,
            "start": data.col_start, "integer": data.objective_is_integer,
            "stats": data.stats()}

    res, info = _run_goodput_job(job, dl, budget) if isolate else job()
    meta = {"solver": solver, "formulation": "goodput", "objective": "goodput",
            "solver_status": res.message}
    notes: list[str] = [res.message] if info["stats"] == {} else []
    best: tuple[Schedule, FeasibilityReport] | None = None
    source = ""
    if res.x is not None:
        x = np.rint(res.x[: info["ncol"]]).astype(np.int64)
        starts = np.full(instance.n, -1, dtype=np.int64)
        starts[info["group"][x > 0]] = info["start"][x > 0]
        if (x.sum() == instance.n) and (starts >= 0).all():
            claimed = None if res.objective is None else -float(res.objective)
            sched, rep = _goodput_schedule(instance, starts, f"mip:{solver}", meta, claimed)
            if rep.ok:
                best, source = (sched, rep), "solver"
            else:
                notes.append(f"solver solution rejected by the validator: {rep}")
        else:
            notes.append("solver solution does not start every request once")
    if ws is not None:
        sched, rep = _goodput_schedule(instance, ws, "mip:warm-start(edf-serial)", meta, None)
        assert rep.goodput is not None
        if rep.ok and (best is None or rep.goodput.token_goodput >
                       _good(best[1])):
            best, source = (sched, rep), "warm_start"
    R = instance.slo.base_value(instance.prompt, instance.output, instance.goodput)  # type: ignore[union-attr]
    bounds = [float(R.sum())]
    if res.status != "infeasible" and math.isfinite(res.bound):
        bounds.append(-float(res.bound))
    bound = min(bounds)
    status = "error" if best is None else "time_limit"
    if res.status == "infeasible":
        notes.append(f"solver reported infeasible ({res.message}); a serial schedule exists")
        status = "error"
    objective = None if best is None else _good(best[1])
    if objective is not None and status != "error":
        if objective > bound + 1e-6:
            notes.append(f"validated goodput {objective} above the bound {bound}: bug")
            status = "error"
        elif objective >= (math.floor(bound + 1e-6) if info["integer"]
                           else bound) - 1e-6:
            status = "optimal"
    gap = None
    if objective is not None and status != "error":
        gap = 0.0 if status == "optimal" else max(bound - objective, 0.0) / max(objective, 1.0)
    model = {**info["stats"], "solver_bound": None if not math.isfinite(res.bound)
             else -float(res.bound), "solver_objective": None if res.objective is None
             else -float(res.objective), "solver_runtime_s": res.runtime_s,
             "value_bound": float(R.sum()), "notes": notes}
    sched_out, rep_out = (None, None) if best is None else best
    if sched_out is not None:
        sched_out = sched_out.with_meta(status=status, bound=bound, gap=gap,
                                        claimed_goodput=objective)
    return SolveResult(status=SolveStatus(status), objective=objective, bound=bound, gap=gap,
                       solver=solver, formulation="goodput", runtime_s=dl.elapsed(),
                       schedule=sched_out, report=rep_out, solver_status=res.message,
                       incumbent_source=source, model=model)


def _run_goodput_job(job: Callable[[], tuple[BackendResult, dict[str, Any]]], dl: Deadline,
                     ram_bytes: int) -> tuple[BackendResult, dict[str, Any]]:
    """``job()`` (build and solve) in a forked child killed 1 s after ``dl`` and capped at
    ``ram_bytes`` of added address space (as the TEL solve's child); a killed or out-of-memory
    child gives a result without a solution (the caller keeps its warm start).

    Examples
    --------
    >>> def job():
    ...     return BackendResult("optimal", None, None, 0.0, 0.0, "x" * (1 << 30)), {}
    >>> res, info = _run_goodput_job(job, as_deadline(30.0), 64 << 20)
    >>> res.status, res.message
    ('error', "the goodput program's build and solve ran out of its memory budget (64.0 MiB)")
    """
    from kvopt.core.isolate import run_isolated
    from kvopt.core.limits import format_bytes

    out = run_isolated(job, deadline=dl, grace=1.0, memory_cap=ram_bytes)
    if out.ok:
        return out.value  # type: ignore[no-any-return]
    empty: dict[str, Any] = {"ncol": 0, "group": None, "start": None, "integer": False, "stats": {}}
    return unsolved_child(out, "the goodput program's build and solve", dl.limit, 1.0,
                          memory=f"its memory budget ({format_bytes(ram_bytes)})"), empty


def _good(rep: FeasibilityReport) -> float:
    assert rep.goodput is not None
    return rep.goodput.token_goodput


def __getattr__(name: str) -> Any:
    """``serial_deadline_starts``: the deprecated name of :func:`serial_edf_starts` (within
    :mod:`kvopt.mip`, ``deadline`` names the time budget, :class:`kvopt.core.limits.Deadline`)."""
    if name == "serial_deadline_starts":
        import warnings

        warnings.warn("kvopt.mip.goodput.serial_deadline_starts is deprecated; use "
                      "serial_edf_starts", DeprecationWarning, stacklevel=2)
        return serial_edf_starts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
