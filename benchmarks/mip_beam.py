"""Issue 22, figure 2, the primal side: a beam search over the state search's merged states.

**Question.** Is the paper-scale certified gap (~12 %) partly in the schedules? The default's
improvement search (priority lists decoded by the serial scheme, then CP-SAT LNS) plateaus
within 0.2-0.8 % of its 180 s schedule even with 13 times the time
(``reports/mip/README.md`` section 10.14); a plateau of one method is not a bound. This
script tries a method that explores the schedules differently: the dynamic programme of
:mod:`kvopt.mip.search.statespace`, whose states (unstarted types, running ``(m, r)``) merge
every partial schedule that reaches them, searched slot by slot as a **beam**.

**The beam.** Layer ``t`` holds at most ``width`` states at slot boundary ``t``, each with its
cheapest cost so far ``g`` (the TEL accrued up to ``t``, as in the state search). Every
state is expanded by the start sets that fit beside its running requests
(:func:`kvopt.mip.search.statespace._decisions`, the same memory test, the first ``cap`` of
them in its depth-first order; idling with nothing running is skipped once every request has
arrived, as there), one slot passes, children reaching the same state keep the cheaper
``g``. The next layer is the ``width`` children of smallest ``g + rollout``, where the
rollout completes the child by the serial schedule-generation scheme
(:func:`kvopt.mip.search.starts.sgs_earliest_fit`, every unstarted request at its earliest
fit after the running ones, in shortest-output order and in volume order, the cheaper of
the two): a feasible completion, so ``g + rollout`` is the TEL of a schedule. The beam's
answer is the best complete schedule seen, a rollout's or the beam's own; every answer is
rebuilt as start slots and passes :func:`kvopt.core.validate.check_schedule` before it is
printed. No randomness.

Ranking by the state search's admissible bound ``g + h`` instead was tried first (scratch):
with a width of 50 it ended at 10566 on ``model1-seed1``, 24 % above the certificate (8504)
and with a makespan of ~560 slots: ``h`` is loosest for states that have started little, so
they rank first; the rollout ranks by what a completion costs.

Prints per instance and width the beam's TEL beside the committed certificate's
(``reports/mip/paper_scale/*.best.json``, section 6's search and polishing) or, given the
frontier records, the proven OPT; the ratio; whether a rollout or the beam's own path gave
it; the layers (slots) and the wall seconds. With ``--improve S`` also the improvement
search's TEL after ``S`` seconds from the beam's schedule (``initial=``) and alone.

Runs of ``reports/mip/README.md`` section 10.25::

    PYTHONPATH=. python benchmarks/mip_beam.py reports/mip/frontier_cpu_v2.json \\
        --n 14 16 18 --width 10 100 > reports/mip/beam_frontier.txt
    PYTHONPATH=. python benchmarks/mip_beam.py reports/mip/paper_scale \\
        --only model1-seed1 model1-seed2 model2-seed1 model2-seed2 --width 10 100
    PYTHONPATH=. python benchmarks/mip_beam.py reports/mip/paper_scale \\
        --only model1-seed1 model2-seed2 --width 1000
    PYTHONPATH=. python benchmarks/mip_beam.py reports/mip/paper_scale \\
        --only model1-seed2 --width 1000
    PYTHONPATH=. python benchmarks/mip_beam.py reports/mip/paper_scale \\
        --only model2-seed1 --width 1000       # all four: reports/mip/beam_paper.txt
    PYTHONPATH=. python benchmarks/mip_beam.py reports/mip/paper_scale \\
        --only model1-seed1 model2-seed2 --width 100 --improve 180
    PYTHONPATH=. python benchmarks/mip_beam.py reports/mip/paper_scale \\
        --only model1-seed2 model2-seed1 --width 100 --improve 180   # reports/mip/beam_improve.txt
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))


class Rollout:
    """The TEL from slot boundary ``t`` on of the serial decode of a state's unstarted
    requests (shortest output first, and by volume; the cheaper), memoised per state."""

    def __init__(self, space: Any, slots: int) -> None:
        self.sp = space
        self.slot = np.arange(slots, dtype=np.int64)
        self.slots = slots
        K = len(space.types)
        self.orders = [sorted(range(K), key=lambda k: (space.to[k], space.ts[k])),
                       sorted(range(K), key=lambda k: (space.vol[k], space.to[k]))]
        self.cache: dict[Any, tuple[float, list[tuple[int, int]]]] = {}

    def __call__(self, cnt: tuple[int, ...], running: tuple[tuple[int, int], ...],
                 t: int) -> tuple[float, list[tuple[int, int]]]:
        """``(TEL from t on, [(type, start slot relative to t), ...])``.

        Examples
        --------
        >>> from kvopt import Instance
        >>> from kvopt.mip.search.statespace import _Space
        >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
        >>> sp = _Space(inst, 100.0)
        >>> Rollout(sp, 20)(sp.cnt0, (), 0)[0]     # the cheaper serial decode; OPT is 9
        10.0
        """
        from kvopt.mip.search.starts import sgs_earliest_fit

        key = (cnt, running, min(t, self.sp.a_max))
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        sp = self.sp
        base = np.full(self.slots, sp.M, dtype=np.int64)
        busy = rem = 0
        for m, r in running:
            base[1:r + 1] -= m + np.arange(1, r + 1)
            busy, rem = max(busy, r), rem + r
        best: tuple[float, list[tuple[int, int]]] = (math.inf, [])
        for order in self.orders:
            free, b, cost, placed = base.copy(), busy, float(rem), []
            for k in order:
                s, o, rel = sp.ts[k], sp.to[k], max(sp.ta[k] - t, 0)
                for _ in range(cnt[k]):
                    st = sgs_earliest_fit(free, self.slot, rel, b, s, o)
                    free[st + 1: st + o + 1] -= s + np.arange(1, o + 1)
                    b = max(b, st + o)
                    cost += st + o - rel
                    placed.append((k, st))
            if cost < best[0]:
                best = (cost, placed)
        self.cache[key] = best
        return best


def beam_search(instance: Any, width: int, cap: int) -> dict[str, Any]:
    """The beam of the module docstring: ``{"tel", "starts", "layers", "source",
    "first_rollout"}`` (the last: the TEL of the rollout from the empty schedule, which the
    answer never exceeds).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> r = beam_search(inst, 10, 100)            # OPT is 9 (starts 0, 0, 3)
    >>> r["tel"], r["starts"].tolist(), checked_tel(inst, r["starts"], r["tel"])
    (9.0, [0, 0, 3], 9.0)
    """
    from kvopt.mip.search.statespace import _decisions, _Space

    # windows from the serial schedule's TEL bound (each request after all others): they cut
    # no schedule the beam could return
    sp = _Space(instance, float(instance.n * (instance.horizon + instance.output.sum())))
    K = len(sp.types)
    roll = Rollout(sp, int(instance.horizon + instance.output.sum() + instance.output.max())
                   + 3)
    start = (0 if sp.a_max > 0 else -1, sp.cnt0, ())
    layer: dict[Any, int] = {start: 0}
    parents: list[dict[Any, tuple[Any, tuple[int, ...]]]] = []
    v0, placed0 = roll(sp.cnt0, (), 0)
    best: dict[str, Any] = {"tel": v0, "t": 0, "key": start, "tail": placed0,
                            "source": "rollout"}
    t = 0
    while layer:
        arrived = [k for k in range(K) if sp.ta[k] <= t]
        par: dict[Any, tuple[Any, tuple[int, ...]]] = {}
        kids: dict[Any, int] = {}
        for key, g in layer.items():
            _, cnt, running = key
            for chosen, run in itertools.islice(_decisions(sp, cnt, running, arrived, t), cap):
                if not run and t >= sp.a_max and any(cnt):
                    continue                  # idling with nothing running
                c2 = list(cnt)
                for k in chosen:
                    c2[k] -= 1
                g2 = g + len(run) + sum(c2[k] for k in arrived)
                nxt = tuple(sorted((m + 1, r - 1) for m, r in run if r > 1))
                t2 = t + 1
                key2 = (t2 if t2 < sp.a_max else -1, tuple(c2), nxt)
                if not nxt and not any(c2):
                    if g2 < best["tel"]:
                        best = {"tel": g2, "t": t, "key": key, "chosen": tuple(chosen),
                                "tail": [], "source": "beam"}
                    continue
                if g2 < kids.get(key2, math.inf):
                    kids[key2] = g2
                    par[key2] = (key, tuple(chosen))
        parents.append(par)
        scored = []
        for key2, g2 in kids.items():
            v, placed = roll(key2[1], key2[2], t + 1)
            scored.append((g2 + v, g2, key2))
            if g2 + v < best["tel"]:
                best = {"tel": g2 + v, "t": t + 1, "key": key2, "tail": placed,
                        "source": "rollout"}
        scored.sort(key=lambda x: (x[0], x[1]))
        layer = {key2: g2 for _, g2, key2 in scored[:width]}
        t += 1
    # the start slots: the decisions back to slot 0, then the rollout's tail
    decisions: list[tuple[int, tuple[int, ...]]] = []
    if "chosen" in best:
        decisions.append((best["t"], best["chosen"]))
    key = best["key"]
    tt = best["t"] - 1                    # the state at best["t"] came from layer t - 1
    while tt >= 0:
        key, ch = parents[tt][key]
        decisions.append((tt, ch))
        tt -= 1
    by_type: list[list[int]] = [[] for _ in sp.types]
    for slot, ch in decisions:
        for k in ch:
            by_type[k].append(slot)
    for k, rel in best["tail"]:
        by_type[k].append(best["t"] + rel)
    starts = np.full(instance.n, -1, dtype=np.int64)
    for k, mem in enumerate(sp.members):
        starts[sorted(mem)] = sorted(by_type[k])
    return {"tel": float(best["tel"]), "starts": starts, "layers": t,
            "source": best["source"], "first_rollout": float(v0)}


def checked_tel(instance: Any, starts: NDArray[np.int64], claimed: float) -> float:
    """The TEL of ``starts`` by the independent checker; ``RuntimeError`` if infeasible or
    not ``claimed``."""
    from kvopt.core.schedule import Schedule
    from kvopt.core.validate import check_schedule

    rep = check_schedule(instance, Schedule.from_starts(instance, starts))
    tel = float(instance.tel_of_starts(starts))
    if not rep.ok or abs(tel - claimed) > 1e-6:
        raise RuntimeError(f"beam schedule not feasible or not {claimed}: {rep}, {tel}")
    return tel


def main(argv: list[str] | None = None) -> int:
    from mip_staged_lp import add_record_arguments, frontier_or_paper_jobs

    from kvopt.cli.common import float_in, int_at_least

    p = argparse.ArgumentParser(
        prog="mip_beam.py",
        description="A beam search over the state search's merged states, ranked by "
                    "rollouts (module docstring), against the certificates or proven optima.")
    add_record_arguments(p, default_n=16)
    p.add_argument("--width", type=int_at_least(1), nargs="+", default=[10],
                   help="states per layer; one run per value (default 10)")
    p.add_argument("--cap", type=int_at_least(1), default=1000,
                   help="start sets tried per state at most (default 1000)")
    p.add_argument("--improve", type=float_in(0, lo_open=True), default=None, metavar="S",
                   help="also run the improvement search (kvopt.mip.search.improve, seed 0) "
                        "for S seconds from the beam's schedule and, beside it, alone")
    args = p.parse_args(argv)
    paper, jobs = frontier_or_paper_jobs(p, args.records, args.only, args.n, args.seeds,
                                         "frontier n = {n} seed {seed}")
    print(f"# benchmarks/mip_beam.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    ref = "certificate" if paper else "OPT"
    extra = "" if args.improve is None else (f" improve {args.improve:g} s from the beam | "
                                             f"improve {args.improve:g} s alone |")
    print(f"| instance | n | {ref} | width | beam | beam / {ref} | found by | layers | wall s |"
          + extra)
    print("|---|---|---|---|---|---|---|---|---|" + "---|" * (2 * bool(extra)))
    for width in args.width:
        for name, inst, o in jobs:
            t0 = time.perf_counter()
            r = beam_search(inst, width, args.cap)
            tel = checked_tel(inst, r["starts"], r["tel"])
            row = (f"| {name} | {inst.n} | {o:.0f} | {width} | {tel:.0f} | {tel / o:.4f} | "
                   f"{r['source']} | {r['layers']} | {time.perf_counter() - t0:.1f} |")
            if args.improve is not None:
                from kvopt.mip.search.improve import improve

                for initial in (r["starts"], None):
                    res = improve(inst, time_limit=args.improve, seed=0, initial=initial)
                    row += f" {res.objective:.0f} |"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
