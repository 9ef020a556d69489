"""The default of ``kvopt solve``: the toolkit's best answer within the whole time limit.

:func:`solve_auto` is what :func:`kvopt.mip.solve` runs when neither ``solver`` nor
``formulation`` is given (``kvopt solve`` without ``--solver`` / ``--formulation`` /
``--improve``). It proceeds in phases, each announced on stderr with ``progress``:

1. **incumbents and cheap bounds** (milliseconds): MC-SF, MC-Benchmark and serial decodes of
   five priority rules (:func:`kvopt.mip.search.improve.improve`'s starting points), and the
   trivial, volume, fluid and core bounds (:mod:`kvopt.mip.bounds.combinatorial`). If the best
   schedule meets the best bound, it is optimal and the call ends.
2. **exact path**, for instances inside the frontier (:func:`exact_path_fits`: ``n <= 20`` and
   the interval LP small enough): a short improvement search for an upper bound, then two
   child processes until one proves the optimum or the limit: the interval LP followed by the
   exact state search of :mod:`kvopt.mip.search.statespace` (a best-first dynamic programme
   over merged schedule states, which also finds a better schedule if there is one), and
   CP-SAT on ``cp+pairs`` warm-started from the best schedule. Where neither proves, the
   result is the best incumbent and the best bound like every path.
3. **portfolio**, otherwise: the strongest bound that fits runs in a child process (one
   core) while the improvement search runs in this one (the other):

   - the interval LP (:func:`kvopt.mip.bounds.intervals.interval_bound`: ``tight+cores`` plus
     lag-interval rows, row-differenced, interior point, after the ``tight+cores`` LP alone,
     whose bound stands if the interval LP runs out of time; each LP by column generation
     over start columns, :mod:`kvopt.mip.bounds.columns`, whose every round is a bound and
     is sized to the time left, the time a round would not fit going to an ascent from the
     last round's multipliers; no first round expected to fit after the model's build, the
     block-LP Lagrangian below; no round solved, subgradient ascent on the same rows; how
     the bound was reached in ``bounds["intervals"]``), windows from the best starting
     schedule, when its estimate fits the RAM budget
     (:func:`kvopt.mip.model.sizing.memory_refusal`) and ``n T <=`` :data:`MAX_BOUND_SIZE`;
     else the Lagrangian bound at the multipliers of coarse block LPs,
     refined by subgradient steps until the deadline
     (:func:`kvopt.mip.bounds.blocks.block_lagrangian_bound`: on traces of hundreds to
     thousands of requests, where it is the only bound above the fluid one);
   - the search (:func:`kvopt.mip.search.improve.improve`, list search then CP-SAT LNS) from
     the best starting schedule, reading the child's bound as soon as it arrives and stopping
     once its schedule meets it (the gap is closed: optimal);
   - once the bound's child has finished (both LPs take a median 5.8 s, 1.1-38 s, alone,
     on the 20 + 20 paper-scale instances; more beside the search), on the core it freed:
     for ``n <=`` :data:`BRANCH_MAX_N`, the branch-and-bound of
     :mod:`kvopt.mip.bounds.branch` (interval-LP nodes, each warm-started from its parent's
     basis; :class:`_Branch`, ``bounds["branch"]``, ``model["phases"][-1]["branch"]``),
     whose bound the search reads when it arrives; otherwise, or once the branch-and-bound
     has ended before the limit, a second search with another seed and more LNS in a child
     process (:class:`_SecondSearch`, ``model["phases"][-1]["second_search"]``). Both are
     stopped when the gap closes; the second search's schedule is kept if better.

The result says which schedule and which bound won (``model["schedule_source"]``,
``model["bound_source"]``), every bound considered (``bounds``) and how the time was split
(``steps``: seconds per phase; ``model["phases"]``; ``model["reserve_s"]``, the seconds kept
at the end for the validations, scaled by the measured cost of one). Every schedule is validated by
:func:`kvopt.core.validate.check_schedule`; ``"optimal"`` only with ``ceil(bound) >=
objective``.

Examples
--------
>>> from kvopt import Instance
>>> from kvopt.core.limits import Deadline
>>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
>>> res = solve_auto(inst, deadline=Deadline(20), ram_bytes=2**30)
>>> res.status, res.objective, res.model["path"]
('optimal', 9.0, 'exact')
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.isolate import KILLED_AT_DEADLINE, IsolatedJob, start_isolated
from kvopt.core.limits import Deadline
from kvopt.core.progress import note
from kvopt.core.schedule import Schedule
from kvopt.core.validate import check_profile_fits, check_schedule
from kvopt.mip.result import SolveResult, SolveStatus, best_bound, integral_bound
from kvopt.mip.search.starts import ValuedPoints

#: The exact path is taken for instances with at most this many requests, if their interval
#: LP is small too (:func:`exact_path_fits`): the state search proves all 10 n = 14-16
#: frontier instances in 1.6-33 CPU-s where CP-SAT alone proved 6 of 10 in 60
#: (``reports/mip/README.md`` section 10.4). At 60 s on the frontier instances the exact
#: path proves 3 of 5 at n = 18 (the portfolio 0) and at n = 20 gives the median certified
#: gap 8.0 % against the portfolio's 9.6 % (the state search's bound beats the LP; section
#: 10.2), so the rule takes it up to n = 20. At n = 22 the exact path's median gap is 10.6 %
#: against the portfolio's 10.1 % (section 10.9), so the rule stops at 20.
EXACT_MAX_N = 20
#: The portfolio computes no LP above this ``n * T`` (horizon ``T``; ``kvopt bound --lp
#: auto`` uses the same cap): above it the Lagrangian bound at block-LP multipliers
#: (:mod:`kvopt.mip.bounds.blocks`) where one evaluation fits
#: :data:`kvopt.mip.bounds.blocks.MAX_WORK`, else the combinatorial bounds only.
MAX_BOUND_SIZE = 20_000_000
#: The list search of the portfolio needs :func:`kvopt.mip.search.lists.list_table_bytes`
#: (rows of the starting schedule's makespan, every eighth list prefix); above this share of
#: the RAM budget the search is LNS only.
SEARCH_RAM_SHARE = 0.5
#: The exact path: share of the time for the first improvement search (its upper bound) ...
EXACT_SEARCH_SHARE = 0.1
#: ... and for the interval LP before the state search (of what is left then).
EXACT_LP_SHARE = 0.25
#: Bytes per stored state of the state search (a generous measure: about 0.5 kB each), which
#: caps its states at the RAM budget.
STATE_BYTES = 1000
#: Seconds kept at the end of the call to collect the bound and validate the schedule ...
COLLECT_RESERVE_S = 0.5
#: ... plus this many times the measured cost of validating one schedule (the search's own
#: check, the result's, and the caller's output): on the whole Azure trace at 0.5 s slots one
#: check takes ~0.15 s, and a fixed 0.5 s let ``--time-limit 5`` overrun by up to 0.6 s.
RESERVE_CHECKS = 3
#: The portfolio's second improvement search (:class:`_SecondSearch`) starts only if at least
#: this many seconds are left when the bound's child has finished.
SECOND_SEARCH_MIN_S = 10.0
#: List-search share of the second search (the first one's is 0.9): more LNS, another walk.
SECOND_LIST_SHARE = 0.5
#: The portfolio's branch-and-bound (:func:`kvopt.mip.bounds.branch.branch_bound`, class
#: :class:`_Branch`) takes the bound child's core once the interval LP has arrived, in place
#: of the second search, for instances of at most this many requests. Past the frontier rule
#: (n = 22-30, ``paper-M`` / ``paper-M2``, 6 + 6 instances) the default at ``--time-limit 60``
#: with it raised the bound on all 12 and lowered the certified gap on 10, a median change of
#: -0.24 / -0.22 points (8.80 -> 8.57 %, 6.79 -> 6.65 %), where the second search's effect
#: at paper scale could not be told from the run-to-run spread of a time-budgeted search.
#: At n = 34-38 (8 instances) it changed the median certified gap by -0.005 points: it adds
#: less bound there (2-13 units) and the schedules without the second search came out 0.26-
#: 1.59 % worse on 6 of 8; at paper scale (n ~ 50) it adds 0.2-0.3 % of the LP's distance to
#: the best schedule in 180 s (``reports/mip/README.md`` sections 10.6, 10.28, 10.29).
BRANCH_MAX_N = 30
#: The branch-and-bound splits requests of peak ``s + o >`` this share of ``M`` (the runs of
#: section 10.28).
BRANCH_FRAC = 0.5
#: Share of the limit the incumbents (MC-SF in two orders, MC-Benchmark, rule decodes) may take;
#: those not finished by then are left out (:func:`kvopt.mip.search.starts.starting_points`).
INCUMBENT_SHARE = 0.5


def exact_path_fits(instance: Instance) -> bool:
    """The frontier rule: ``n <=`` :data:`EXACT_MAX_N` and the interval LP (``tight+cores``
    plus intervals, estimated without incumbent windows) has at most
    :data:`kvopt.mip.paths.CP_LP_MAX_NNZ` non-zeros (a long horizon: the state search's
    states grow with it).

    Examples
    --------
    >>> exact_path_fits(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]))
    True
    """
    from kvopt.mip.model.sizing import estimate
    from kvopt.mip.paths import CP_LP_MAX_NNZ

    return (instance.n <= EXACT_MAX_N
            and estimate(instance, "tight+cores", "lp-differenced").nnz <= CP_LP_MAX_NNZ)


@dataclass
class _Record:
    """What the phases of one call did: seconds per phase, every bound, the notes."""

    deadline: Deadline
    progress: bool
    steps: dict[str, float] = field(default_factory=dict)
    bounds: dict[str, dict[str, Any]] = field(default_factory=dict)
    phases: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Seconds to value and validate one schedule, measured on the starting points.
    check_s: float = 0.0

    @property
    def reserve(self) -> float:
        """Seconds kept at the end of the call: :data:`COLLECT_RESERVE_S` plus
        :data:`RESERVE_CHECKS` validations at the measured :attr:`check_s`."""
        return COLLECT_RESERVE_S + RESERVE_CHECKS * self.check_s

    def start(self, name: str, what: str) -> float:
        left = self.deadline.remaining()
        note(f"kvopt solve: {what}" + ("" if left is None else f" ({left:.0f} s left)"),
             enabled=self.progress)
        self.phases.append({"phase": name, "what": what, "start_s": round(
            self.deadline.elapsed(), 3)})
        return time.monotonic()

    def done(self, name: str, t: float) -> None:
        self.steps[f"{name}_s"] = round(time.monotonic() - t, 3)
        self.phases[-1]["seconds"] = self.steps[f"{name}_s"]


def solve_auto(instance: Instance, *, deadline: Deadline, ram_bytes: int, threads: int = 1,
               progress: bool = False, verbose: bool = False, seed: int = 0,
               isolate: bool = True, path: str | None = None) -> SolveResult:
    """The toolkit's best schedule and best bound within ``deadline`` (module docstring).

    Parameters
    ----------
    instance
        A slotted instance without a batch limit.
    deadline
        The time budget of the whole call.
    ram_bytes
        The RAM budget (bytes) of every model built.
    threads
        CP-SAT workers of the exact path.
    progress, verbose
        Phase lines and progress on stderr; solver logs.
    seed
        Seed of the improvement search.
    isolate
        Run the exact path's solver in a child process killed at the deadline.
    path
        ``"exact"`` or ``"portfolio"`` to force phase 2 or 3 (default: the frontier rule,
        :func:`exact_path_fits`).

    Returns
    -------
    SolveResult
        ``solver="auto"``; ``formulation`` is the path taken (``"exact"``, ``"portfolio"``
        or ``"incumbents"``).

    Examples
    --------
    Phase 1 already proves this one: MC-SF's schedule meets the level-1 core bound.

    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[8, 8, 2])
    >>> res = solve_auto(inst, deadline=Deadline(20.0), ram_bytes=2**30)
    >>> res.status, res.objective, res.bound, res.formulation
    ('optimal', 26.0, 26.0, 'incumbents')
    >>> res.model["schedule_source"], res.model["bound_source"], res.schedule.run_start.tolist()
    ('mcsf', 'core1', [0, 8, 0])
    """
    from kvopt.mip.bounds.combinatorial import combinatorial_bounds
    from kvopt.mip.search.starts import best_start, starting_points, value_points

    instance.require_slotted()
    check_profile_fits(instance, ram_bytes)  # before any work (arrivals 1e12 apart: 7 TiB)
    rec = _Record(deadline, progress)
    started = deadline.elapsed()
    t = rec.start("incumbents", "incumbents (MC-SF, priority rules) and combinatorial bounds")
    # at most INCUMBENT_SHARE of the limit (each takes minutes on the whole Azure trace)
    # valued and validated once, here; the search gets them with the measured cost
    points = value_points(instance, starting_points(instance,
                                                    Deadline(deadline.share(INCUMBENT_SHARE))))
    starts, values, src = best_start(instance, None, points)
    rec.check_s = points.check_s
    rec.bounds.update({k: {"value": v, "status": "computed"}
                       for k, v in combinatorial_bounds(instance).items()})
    rec.done("incumbents", t)
    rec.steps = {"before_solve_s": round(started, 3), **rec.steps}
    best: dict[str, Any] = {"starts": starts, "objective": values[src], "source": src,
                            "points": points}
    if integral_bound(_best_bound(rec)[1]) >= best["objective"]:
        return _result(instance, best, rec, "incumbents")
    if path not in (None, "exact", "portfolio"):
        from kvopt.core.errors import UsageError

        raise UsageError("path", f"must be 'exact' or 'portfolio', got {path!r}")
    if path == "exact" or (path is None and exact_path_fits(instance)):
        return _exact(instance, rec, best, ram_bytes=ram_bytes, seed=seed, threads=threads)
    return _portfolio(instance, rec, best, ram_bytes=ram_bytes, seed=seed)


def _best_bound(rec: _Record) -> tuple[str, float]:
    """The name and value of the largest computed bound."""
    return best_bound({k: v["value"] for k, v in rec.bounds.items()
                       if v.get("status") == "computed"})


class _ChildBound:
    """A bound computed in a child process (``job``), read by :meth:`poll` once it arrives;
    subclasses record the child's outcome in :meth:`_collect`."""

    job: IsolatedJob | None
    value: float | None

    def poll(self) -> float | None:
        """The child's bound if it has arrived (never waits)."""
        if self.job is not None:
            out = self.job.poll()
            if out is not None:
                self._collect(out)
        return self.value

    def _collect(self, out: Any) -> None:
        raise NotImplementedError


class _BoundJob(_ChildBound):
    """The bound of phase 3 in a child process: what runs, and its value once it arrives."""

    def __init__(self, instance: Instance, rec: _Record, upper: float, ram_bytes: int,
                 starts: NDArray[np.int64], exact: bool = False) -> None:
        from kvopt.mip.bounds.blocks import work_refusal
        from kvopt.mip.model.sizing import SizeEstimate, memory_refusal

        self.rec = rec
        self.value: float | None = None
        self.job: IsolatedJob | None = None
        self.estimate: SizeEstimate | None = None
        self.found: dict[str, Any] | None = None      # a better schedule of the exact search
        self.exact = exact
        self.deadline = rec.deadline.sub(None, reserve=rec.reserve)
        size = instance.n * instance.horizon
        if size > MAX_BOUND_SIZE:
            why = f"n * T = {size} above {MAX_BOUND_SIZE}: no LP at this size"
            rec.bounds["intervals"] = {"value": None, "status": "skipped", "reason": why}
            too_long = work_refusal(instance, starts)
            if too_long is not None:
                rec.bounds["lagrangian"] = {
                    "value": None, "status": "skipped",
                    "reason": f"{too_long} (kvopt.mip.bounds.blocks.MAX_WORK)"}
                self.name = "none"
                return
            self.name = "lagrangian"
        else:
            self.estimate, refused = memory_refusal(instance, "tight+cores", "lp-differenced",
                                                    ram_bytes, upper=upper,
                                                    what="the interval LP")
            self.name = "intervals" if refused is None else "lagrangian"
            if refused is not None:
                rec.bounds["intervals"] = {"value": None, "status": "skipped",
                                           "reason": refused.reason}
        self.job = start_isolated(self._work(instance, upper, ram_bytes, starts),
                                  memory_cap=ram_bytes)

    def _work(self, instance: Instance, upper: float, ram_bytes: int,
              starts: NDArray[np.int64]) -> Any:
        dl, name, exact = self.deadline, self.name, self.exact

        def job() -> dict[str, Any]:
            t = time.monotonic()
            part = dl.sub(dl.share(EXACT_LP_SHARE)) if exact else dl
            if name == "intervals":
                from kvopt.mip.bounds.intervals import interval_bound

                iv = interval_bound(instance, upper=upper, ram=ram_bytes, deadline=part,
                                    starts=starts)
                doc = {"value": iv.bound, "status": iv.status, "lp_value": iv.lp_value,
                       "families": iv.families,
                       "method": iv.method, **_interval_path(iv.meta)}
            else:
                from kvopt.mip.bounds.blocks import block_lagrangian_bound

                bb = block_lagrangian_bound(instance, starts, upper=upper, deadline=part)
                doc = {"value": bb.value, "status": "time_limit",
                       "method": "block LP multipliers, then subgradient",
                       "blocks": bb.levels, "refine_s": bb.refine_s}
            doc["seconds"] = round(time.monotonic() - t, 3)
            if exact:
                doc["search"] = _exact_search(instance, upper, ram_bytes, dl)
            return doc

        return job

    def decided(self) -> bool:
        """The exact search has ended with the optimum (found, or the incumbent proved)."""
        search = self.rec.bounds.get("search")
        return search is not None and search.get("solver_status") == "optimal"

    def finish(self) -> None:
        """Wait for the child (it stops by itself at its deadline, the record's
        :attr:`_Record.reserve` before the call's; killed at the call's); record what it gave."""
        if self.job is not None and self.value is None:
            self._collect(self.job.wait(deadline=self.rec.deadline, grace=0.0))

    def _collect(self, out: Any) -> None:
        self.job = None
        self.rec.steps[f"{self.name}_child_s"] = round(out.seconds, 3)
        if out.ok:
            doc = dict(out.value)
            search = doc.pop("search", None)
            self.value = float(doc["value"])
            self.rec.bounds[self.name] = {**doc, "status": "computed",
                                          "solver_status": doc["status"]}
            if search is not None:
                self.value = max(self.value, float(search["value"]))
                self.found = search.pop("found", None)
                self.rec.bounds["search"] = {**search, "status": "computed"}
        else:
            self.rec.bounds[self.name] = {"value": None, "status": "skipped",
                                          "reason": _no_result(out)}


def _interval_path(meta: dict[str, Any]) -> dict[str, Any]:
    """What the bound's record keeps of how :func:`kvopt.mip.bounds.intervals.interval_bound`
    got its bound (its ``meta``): the first LP's outcome, the interval LP's status and, when
    one ran, the ascent from a round's multipliers.

    Examples
    --------
    >>> path = _interval_path({"lp_status": "optimal", "rows": 9650,
    ...                        "first_lp": {"status": "optimal", "bound": 7478.8,
    ...                                     "seconds": 1.9, "rounds": 2, "value": 7478.8}})
    >>> path["lp_status"], path["first_lp"]
    ('optimal', {'status': 'optimal', 'bound': 7478.8, 'seconds': 1.9, 'rounds': 2})
    """
    out: dict[str, Any] = {}
    if "first_lp" in meta:
        out["first_lp"] = {k: v for k, v in meta["first_lp"].items() if k != "value"}
    for key in ("lp_status", "subgradient"):
        if key in meta:
            out[key] = meta[key]
    return out


def _no_result(out: Any) -> str:
    """Why a child process of the portfolio returned nothing (``out``: its
    :class:`~kvopt.core.isolate.IsolatedOutcome`): the reason it was killed with (at the
    deadline, or stopped because the other search proved the optimum), out of memory, or the
    last line of its error.

    Examples
    --------
    >>> from kvopt.core.isolate import KILLED_AT_DEADLINE, IsolatedOutcome
    >>> _no_result(IsolatedOutcome(killed=True, error=KILLED_AT_DEADLINE))
    'killed at the deadline'
    >>> _no_result(IsolatedOutcome(killed=True, error=CP_PROVED))
    'stopped: CP-SAT proved the optimum first'
    >>> _no_result(IsolatedOutcome(out_of_memory=True, error="MemoryError"))
    'out of its RAM budget'
    """
    if out.killed:
        return str(out.error)
    return ("out of its RAM budget" if out.out_of_memory
            else (out.error.strip().splitlines() or ["?"])[-1])


#: Why the exact path's state search (the bound's child) is stopped when CP-SAT proves first.
CP_PROVED = "stopped: CP-SAT proved the optimum first"
#: Why the exact path's CP-SAT child is stopped when the state search proves first.
SEARCH_PROVED = "stopped: the state search proved the optimum first"


class _SecondSearch:
    """A second improvement search, in a child process on the core the bound's child leaves
    idle once its bound has arrived (the interval LP takes a median 10 s of a 180 s call on
    the paper-scale instances, ``reports/mip/README.md`` section 10.6): seed ``seed + 1``,
    list share :data:`SECOND_LIST_SHARE`, from the same starting points as the first, until
    the first's deadline. Started at most once, by :meth:`start`, only with
    :data:`SECOND_SEARCH_MIN_S` left; capped at the RAM budget."""

    def __init__(self, instance: Instance,
                 points: ValuedPoints | dict[str, NDArray[np.int64]], seed: int,
                 deadline: Deadline, ram_bytes: int, lists: bool) -> None:
        self.instance, self.points, self.seed = instance, points, seed
        self.deadline, self.ram_bytes, self.lists = deadline, ram_bytes, lists
        self.job: IsolatedJob | None = None
        self.started_s: float | None = None

    def start(self) -> None:
        """Start the search if it has not started and enough time is left."""
        left = self.deadline.remaining()
        if self.started_s is not None or (left is not None and left < SECOND_SEARCH_MIN_S):
            return
        self.started_s = round(self.deadline.elapsed(), 3)
        inst, points, seed, dl = self.instance, self.points, self.seed, self.deadline
        share = SECOND_LIST_SHARE if self.lists else 0.0

        def job() -> dict[str, Any]:
            from kvopt.mip.search.improve import improve

            imp = improve(inst, deadline=dl, seed=seed, points=points, list_share=share)
            return {"objective": imp.objective, "source": imp.incumbent_source,
                    "steps": imp.solver_status,
                    "starts": None if imp.schedule is None else imp.schedule.run_start}

        self.job = start_isolated(job, memory_cap=self.ram_bytes)

    def finish(self, best: dict[str, Any], early: bool, rec: _Record) -> dict[str, Any]:
        """Collect the search (killed now if the first one ended ``early``: the gap closed or
        the optimum is known) and keep its schedule if it is better; record what it did."""
        doc: dict[str, Any] = {"seed": self.seed, "started_s": self.started_s}
        if self.job is None:
            rec.phases[-1]["second_search"] = {**doc, "status": "not started"}
            return best
        out = self.job.kill() if early else self.job.wait(deadline=rec.deadline, grace=0.0)
        self.job = None
        if out.ok:
            v = out.value
            doc.update(status="done", objective=v["objective"], steps=v["steps"])
            if v["starts"] is not None:
                best = _better(best, v["starts"], v["objective"],
                               f"improve, second search ({v['source']})")
        else:
            doc["status"] = "stopped" if early else _no_result(out)
        rec.phases[-1]["second_search"] = doc
        return best


class _Branch(_ChildBound):
    """The branch-and-bound of :mod:`kvopt.mip.bounds.branch` in a child process on the core
    the bound's child leaves idle, for instances of ``n <=`` :data:`BRANCH_MAX_N` whose
    interval LP fits (``"intervals"`` is the bound's child): splits on requests of peak
    ``>`` :data:`BRANCH_FRAC` ``* M``, start windows from ``upper`` (the schedule the bound's
    child started from), until the search's deadline. Started at most once, by
    :meth:`start`, only with :data:`SECOND_SEARCH_MIN_S` left; capped at the RAM budget. Its
    bound joins the record as ``bounds["branch"]`` (valid whatever the LP solver's accuracy:
    the module's docstring), what it did as ``model["phases"][-1]["branch"]``."""

    def __init__(self, instance: Instance, upper: float, deadline: Deadline,
                 ram_bytes: int, wanted: bool, progress: bool = False) -> None:
        self.instance, self.upper, self.deadline = instance, upper, deadline
        self.ram_bytes, self.wanted, self.progress = ram_bytes, wanted, progress
        self.job: IsolatedJob | None = None
        self.started_s: float | None = None
        self.value: float | None = None
        self.doc: dict[str, Any] | None = None

    def start(self) -> None:
        """Start the search if it is wanted, has not started and enough time is left."""
        left = self.deadline.remaining()
        if (not self.wanted or self.started_s is not None
                or (left is not None and left < SECOND_SEARCH_MIN_S)):
            return
        self.started_s = round(self.deadline.elapsed(), 3)
        inst, upper, dl = self.instance, self.upper, self.deadline
        note("kvopt solve: the interval LP has arrived; branch-and-bound on its core"
             + ("" if left is None else f" ({left:.0f} s left)"), enabled=self.progress)

        def job() -> dict[str, Any]:
            from kvopt.mip.bounds.branch import branch_bound

            t = time.monotonic()
            r = branch_bound(inst, upper=upper, deadline=dl, frac=BRANCH_FRAC)
            return {"value": r.bound, "solver_status": r.status, "root": r.root,
                    "nodes": r.nodes, "depth": r.depth, "open": r.open,
                    "seconds": round(time.monotonic() - t, 3)}

        self.job = start_isolated(job, memory_cap=self.ram_bytes)

    def _collect(self, out: Any) -> None:
        self.job = None
        if out.ok:
            self.doc = dict(out.value)
            if math.isfinite(self.doc["value"]):
                self.value = float(self.doc["value"])
        else:
            self.doc = {"status": _no_result(out)}

    def finish(self, early: bool, rec: _Record) -> None:
        """Collect the search (killed now if the call ended ``early``); record its bound."""
        if not self.wanted:
            return
        doc: dict[str, Any] = {"started_s": self.started_s, "frac": BRANCH_FRAC}
        if self.job is not None:
            self._collect(self.job.kill() if early
                          else self.job.wait(deadline=rec.deadline, grace=0.0))
        if self.started_s is None:
            rec.phases[-1]["branch"] = {**doc, "status": "not started"}
            return
        got = self.doc or {}
        if self.value is not None:
            rec.bounds["branch"] = {**got, "status": "computed",
                                    "method": "branch-and-bound, interval-LP nodes"}
            doc.update(status="done", **{k: got[k] for k in ("solver_status", "nodes",
                                                               "depth", "seconds")})
        else:
            why = (got.get("status") or ("stopped" if early else
                                         f"no root LP ({got.get('solver_status')})"))
            rec.bounds["branch"] = {"value": None, "status": "skipped", "reason": why}
            doc["status"] = why
        rec.phases[-1]["branch"] = doc


def _portfolio(instance: Instance, rec: _Record, best: dict[str, Any], *, ram_bytes: int,
               seed: int) -> SolveResult:
    """Phase 3: the bound in a child process while the improvement search runs here."""
    from kvopt.mip.search.improve import improve
    from kvopt.mip.search.lists import list_table_bytes

    name = "portfolio"
    t = rec.start(name, "interval LP / Lagrangian bound (child process) and the "
                  "improvement search (here), until the gap closes or the limit")
    bound = _BoundJob(instance, rec, float(best["objective"]), ram_bytes, best["starts"])
    search_dl = rec.deadline.sub(None, reserve=rec.reserve)
    table = list_table_bytes(instance, best["starts"])
    lists = table <= SEARCH_RAM_SHARE * ram_bytes
    if not lists:
        rec.notes.append(f"list search skipped: its buffers ({table} bytes) exceed "
                         f"{SEARCH_RAM_SHARE:g} of the RAM budget; LNS only")
    points = _search_points(best)
    second = _SecondSearch(instance, points, seed + 1, search_dl, ram_bytes, lists)
    branch = _Branch(instance, float(best["objective"]), search_dl, ram_bytes,
                     wanted=instance.n <= BRANCH_MAX_N and bound.name == "intervals",
                     progress=rec.progress)

    def poll() -> float | None:
        value, more = bound.poll(), branch.poll()
        if bound.job is None:          # the bound's child is done: its core is free
            if bound.value is not None:
                branch.start()
            if branch.job is None:     # not wanted, not started, or ended before the limit
                second.start()
        return value if more is None or value is None else max(value, more)

    early = False
    if (search_dl.remaining() or 1.0) > 0.05:
        imp = improve(instance, deadline=search_dl, seed=seed, points=points, bound=poll,
                      stop=bound.decided, progress=rec.progress, label="kvopt solve: search",
                      list_share=0.9 if lists else 0.0)
        if imp.schedule is not None:
            best = _better(best, imp.schedule.run_start, imp.objective,
                           f"improve ({imp.incumbent_source})")
        rec.phases[-1]["search"] = {"steps": imp.solver_status, "seed": seed,
                                    "start_source": imp.model["start_source"]}
        early = imp.status == "optimal" or bound.decided()
    best = second.finish(best, early, rec)
    branch.finish(early, rec)
    bound.finish()
    if bound.found is not None:
        best = _better(best, bound.found["starts"], bound.found["objective"], "state search")
    rec.done(name, t)
    out = _result(instance, best, rec, name)
    out.ram = {"budget_bytes": ram_bytes, "bound": bound.name,
               "estimate": None if bound.estimate is None else bound.estimate.to_dict()}
    return out


def _exact(instance: Instance, rec: _Record, best: dict[str, Any], *, ram_bytes: int,
           seed: int, threads: int) -> SolveResult:
    """Phase 2: after a short improvement search, two child processes until one proves the
    optimum or the limit: the interval LP then the state search
    (:mod:`kvopt.mip.search.statespace`), and CP-SAT on ``cp+pairs`` warm-started from the
    best schedule (:func:`kvopt.mip.paths.solve_model`)."""
    from kvopt.mip.paths import solve_model

    best = _quick_search(instance, rec, best, seed)
    t = rec.start("exact", "exact path: interval LP then state search, and CP-SAT cp+pairs "
                  "(two child processes), until one proves the optimum or the limit")
    bound = _BoundJob(instance, rec, float(best["objective"]), ram_bytes, best["starts"],
                      exact=True)
    starts, dl = best["starts"], bound.deadline
    cp = start_isolated(lambda: solve_model(
        instance, solver="cpsat", formulation="cp+pairs", deadline=dl, ram=ram_bytes,
        threads=threads, isolate=False, initial=starts), memory_cap=ram_bytes)
    res = None
    while not rec.deadline.expired():
        bound.poll()
        res = cp.poll()
        if res is not None and res.ok and res.value.status == "optimal":
            break
        if bound.decided() or (bound.job is None and res is not None):
            break
        time.sleep(0.05)
    if res is None:
        res = cp.kill(SEARCH_PROVED if bound.decided() else KILLED_AT_DEADLINE)
    if bound.job is not None and res.ok and res.value.status == "optimal":
        bound._collect(bound.job.kill(CP_PROVED))
    bound.finish()
    best = _cp_outcome(rec, best, res)
    if bound.found is not None:
        best = _better(best, bound.found["starts"], bound.found["objective"], "state search")
    rec.done("exact", t)
    result = _result(instance, best, rec, "exact")
    result.ram = {"budget_bytes": ram_bytes}
    return result


def _cp_outcome(rec: _Record, best: dict[str, Any], out: Any) -> dict[str, Any]:
    """CP-SAT's schedule and bounds (``cp:solver``, ``cp:lp``) from its child process."""
    if not out.ok:
        rec.bounds["cp"] = {"value": None, "status": "skipped", "reason": _no_result(out)}
        return best
    res = out.value
    for name in ("solver", "lp"):
        b = res.bounds.get(name)
        if b is not None:
            rec.bounds[f"cp:{name}"] = b
    rec.notes += res.model.get("notes", [])
    if res.schedule is None:
        return best
    return _better(best, res.schedule.run_start, res.objective,
                   f"cp+pairs ({res.incumbent_source})")


def _better(best: dict[str, Any], starts: Any, objective: float | None, source: str
            ) -> dict[str, Any]:
    """``best``, or the schedule ``starts`` of TEL ``objective`` found by ``source`` if it is
    better."""
    if objective is None or objective >= best["objective"]:
        return best
    return {**best, "starts": np.asarray(starts, dtype=np.int64), "objective": float(objective),
            "source": source}


def _search_points(best: dict[str, Any]) -> ValuedPoints | dict[str, NDArray[np.int64]]:
    """The improvement search's starting points: the best schedule, and MC-SF's if it
    finished in time; valued and validated already while the best is one of the starting
    points (it always is on the portfolio path), else plain (the search checks them)."""
    pts: ValuedPoints = best["points"]
    src = best["source"]
    names = [src] + (["mcsf"] if "mcsf" in pts.points and src != "mcsf" else [])
    if src in pts.points and np.array_equal(pts.points[src], best["starts"]):
        return ValuedPoints({k: pts.points[k] for k in names},
                            {k: pts.values[k] for k in names},
                            pts.valid & frozenset(names), pts.check_s)
    return {src: best["starts"], **{k: pts.points[k] for k in names[1:]}}


def _quick_search(instance: Instance, rec: _Record, best: dict[str, Any], seed: int
                  ) -> dict[str, Any]:
    """The exact path's first step: :data:`EXACT_SEARCH_SHARE` of the time (at most
    ``3 n`` LNS steps) of the improvement search, for the upper bound the exact search
    starts from."""
    from kvopt.mip.search.improve import improve

    t = rec.start("search", "improvement search for the exact search's upper bound")
    dl = rec.deadline.sub(rec.deadline.share(EXACT_SEARCH_SHARE, reserve=rec.reserve))
    if (dl.remaining() or 1.0) > 0.05:
        imp = improve(instance, deadline=dl, seed=seed, points=_search_points(best),
                      max_steps=3 * instance.n, label="kvopt solve: search")
        if imp.schedule is not None:
            best = _better(best, imp.schedule.run_start, imp.objective,
                           f"improve ({imp.incumbent_source})")
    rec.done("search", t)
    return best


def _exact_search(instance: Instance, upper: float, ram_bytes: int, dl: Deadline
                  ) -> dict[str, Any]:
    """The state search of :mod:`kvopt.mip.search.statespace` below ``upper`` until ``dl``
    (states capped by the RAM budget): its bound and, if it found one, a better schedule."""
    from kvopt.mip.search.statespace import state_search

    t = time.monotonic()
    res = state_search(instance, upper=upper, deadline=dl,
                       max_states=max(int(ram_bytes // STATE_BYTES), 1000))
    doc: dict[str, Any] = {"value": res.bound if res.objective is None else res.objective,
                           "solver_status": res.status, "expanded": res.expanded,
                           "states": res.states, "seconds": round(time.monotonic() - t, 3)}
    if res.objective is not None and res.starts is not None:
        doc["found"] = {"objective": res.objective, "starts": res.starts.tolist()}
    return doc


def _result(instance: Instance, best: dict[str, Any], rec: _Record, path: str
            ) -> SolveResult:
    """Validate the best schedule; status, bound and gap from the record."""
    t = time.monotonic()
    starts: NDArray[np.int64] = best["starts"]
    name, raw = _best_bound(rec)
    bound = integral_bound(raw)
    sched = Schedule.from_starts(instance, starts, source=f"mip:auto:{best['source']}",
                                 claimed_objective=instance.tel_of_starts(starts),
                                 meta={"solver": "auto", "formulation": path})
    rep = check_schedule(instance, sched)
    if not rep.ok:  # pragma: no cover - every producer validates its schedules
        raise RuntimeError(f"the portfolio's best schedule is invalid: {rep}")
    obj = float(rep.objective or 0.0)
    if bound > obj:  # pragma: no cover - a bound above a schedule is a bug
        rec.notes.append(f"bound {raw} ({name}) above a validated objective {obj}: bug")
        status = SolveStatus.ERROR
    else:
        status = SolveStatus.OPTIMAL if bound >= obj else SolveStatus.TIME_LIMIT
    gap = 0.0 if status is SolveStatus.OPTIMAL else max(obj - bound, 0.0) / max(obj, 1.0)
    sched = sched.with_meta(status=str(status), bound=bound, gap=gap)
    rec.steps["validate_s"] = round(time.monotonic() - t, 3)
    dl = rec.deadline
    model = {"path": path, "schedule_source": best["source"], "bound_source": name,
             "phases": rec.phases, "notes": rec.notes, "reserve_s": round(rec.reserve, 3)}
    return SolveResult(status=status, objective=obj, bound=bound, gap=gap, solver="auto",
                       formulation=path,
                       runtime_s=dl.elapsed(), schedule=sched, report=rep,
                       solver_status=f"best schedule: {best['source']}; best bound: {name}",
                       incumbent_source=best["source"], model=model, time_limit=dl.limit,
                       overrun_s=dl.overrun(), bounds=rec.bounds, steps=rec.steps)
