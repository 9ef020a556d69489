"""Starting points of the improvement search (:mod:`kvopt.mip.search.improve`) and of the default
solve (:mod:`kvopt.mip.portfolio`): MC-SF, MC-Benchmark and serial schedule-generation decodes
of priority rules, each under a deadline, the one-at-a-time fallback, and the best of them.

Examples
--------
>>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
>>> best_start(inst, None)[2]
'mc-benchmark'
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance, horizon_field
from kvopt.core.limits import Deadline, DeadlineExpired, check_allocation
from kvopt.core.schedule import Schedule
from kvopt.core.validate import check_schedule

__all__ = ["ValuedPoints", "best_start", "serial_starts", "sgs_decode", "sgs_earliest_fit",
           "starting_points", "value_points"]


def sgs_decode(instance: Instance, order: NDArray[np.int64] | list[int],
               release: NDArray[np.int64] | None = None,
               deadline: Deadline | None = None) -> NDArray[np.int64]:
    """Serial schedule-generation scheme: place requests in ``order``, each at its earliest
    feasible start slot (not before its ``release``, default its arrival) given the requests
    placed before it.

    Request ``i`` goes to the smallest ``k >= max(a_i, release_i)`` with
    ``mem[k + d] + s_i + d <= M`` for ``d = 1 .. o_i`` (``mem`` = memory of the requests
    placed so far). Such a ``k`` always exists (every request fits alone, and after the last
    busy slot memory is 0), so the result is feasible by construction.

    Unlike the constant-demand RCPSP, plain lists (``release = arrival``) do **not** reach
    every optimal schedule here: starting a request earlier raises its memory at every later
    slot of its ramp, which may block a request placed after it, so an optimum can need a
    request to start later than its earliest fit (on 4 of 300 random instances with n <= 6
    no permutation decodes to the optimum, up to 3.8 % worse). With releases every feasible
    schedule ``S`` is a decode: ``order`` = requests sorted by ``S``, ``release = S``.
    Past ``deadline`` it raises :class:`~kvopt.core.limits.DeadlineExpired` (the whole Azure
    trace in 0.05 s slots takes ~1 minute per order).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> sgs_decode(inst, [0, 1, 2]).tolist()    # long one with the short one, then s=2
    [0, 0, 3]
    """
    a, s, o = instance.arrival, instance.prompt, instance.output
    M = int(instance.memory)
    rel = a if release is None else np.maximum(a, np.asarray(release, dtype=np.int64))
    H = int(rel.max() + o.sum()) + int(o.max()) + 2
    check_allocation(4 * 8 * H, f"the serial decode's free-memory table over {H:,} slots",
                     horizon_field(instance))
    free = np.full(H, M, dtype=np.int64)
    starts = np.empty(instance.n, dtype=np.int64)
    slot = np.arange(H, dtype=np.int64)
    busy_end = 0  # every slot >= busy_end has free == M
    for i in np.asarray(order, dtype=np.int64):
        if deadline is not None and deadline.expired():
            raise DeadlineExpired(f"the serial decode stopped at its deadline "
                                  f"({deadline.limit:g} s)")
        si, oi = int(s[i]), int(o[i])
        k = sgs_earliest_fit(free, slot, int(rel[i]), busy_end, si, oi)
        starts[i] = k
        free[k + 1: k + oi + 1] -= si + np.arange(1, oi + 1, dtype=np.int64)
        busy_end = max(busy_end, k + oi)
    return starts


def sgs_earliest_fit(free: NDArray[np.int64], slot: NDArray[np.int64], release: int,
                     busy_end: int, s: int, o: int) -> int:
    """Smallest ``k >= release`` with ``free[k + d] >= s + d`` for ``d = 1 .. o``, where
    every slot ``>= busy_end`` is entirely free (so ``k = max(release, busy_end)`` fits).

    Start ``k`` fits iff ``free[t] - t >= s - k`` for ``t = k+1 .. k+o``: a sliding minimum
    of ``g = free - slot`` over windows of ``o`` slots (``O(length)``, not ``O(length o)``).
    ``slot`` is ``arange(len(free))``.

    Examples
    --------
    ``M = 4`` with a request ``s = 1, o = 3`` placed at slot 0 (it holds 2, 3, 4 tokens at
    slots 1 to 3, busy until slot 3):

    >>> free, slot = np.array([4, 2, 1, 0, 4, 4, 4, 4]), np.arange(8)
    >>> sgs_earliest_fit(free, slot, 0, 3, 1, 1)   # s=1, o=1 needs 2 free at slot k+1
    0
    >>> sgs_earliest_fit(free, slot, 0, 3, 2, 2)   # s=2, o=2 waits until the slots are free
    3
    """
    if release >= busy_end:
        return release
    from scipy.ndimage import minimum_filter1d

    g = free[release + 1: busy_end + o + 1] - slot[release + 1: busy_end + o + 1]
    m = minimum_filter1d(g, o, mode="nearest", origin=-(o // 2))
    ok = m[: busy_end - release + 1] + slot[release: busy_end + 1] >= s
    return release + int(np.argmax(ok)) if ok.any() else busy_end


def starting_points(instance: Instance, deadline: Deadline | None = None
                    ) -> dict[str, NDArray[np.int64]]:
    """MC-SF, MC-Benchmark, MC-SF in volume order (:func:`kvopt.core.mcsf.mcsf_starts`) and
    serial decodes of a few priority rules (start slots by name).

    Each stops at ``deadline`` and is then left out (on the whole Azure trace in 0.05 s
    slots they take ~2 minutes each); when none finished, ``"serial"`` (one request at a
    time in arrival order, ``O(n)``, feasible since each request fits alone) is the only one.
    The cheapest good one runs first: the volume-rule decode (0.5 s on 2000 Azure requests
    in 0.05 s slots, within 3 % of MC-SF's 3 s), then MC-SF in volume order (5.6 % below
    MC-SF there, 12.1 % below on the whole trace, where each takes ~50 s), then MC-SF, then
    the others (the names keep their order, which breaks ties).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> sorted(starting_points(inst))[:3]
    ['mc-benchmark', 'mcsf', 'mcsf:volume']
    >>> list(starting_points(inst, Deadline(0.0)))
    ['serial']
    """
    from kvopt.core.mcsf import mcsf_starts
    from kvopt.core.stability import lifetime_token_steps

    a, s, o = instance.arrival, instance.prompt, instance.output
    idx = np.arange(instance.n)
    vol = lifetime_token_steps(s, o)
    sgs = {"sgs:output": (idx, a, o), "sgs:peak": (idx, a, s + o), "sgs:volume": (idx, a, vol),
           "sgs:arrival-output": (idx, o, a), "sgs:long-first": (idx, a, -o)}
    mc = {"mcsf": "shortest", "mc-benchmark": "arrival", "mcsf:volume": "volume"}
    names = [*mc, *sgs]
    got: dict[str, NDArray[np.int64]] = {}
    for name in ("sgs:volume", "mcsf:volume", "mcsf", "mc-benchmark", "sgs:output", "sgs:peak",
                 "sgs:arrival-output", "sgs:long-first"):
        with contextlib.suppress(DeadlineExpired):
            if name in sgs:
                got[name] = sgs_decode(instance, np.lexsort(sgs[name]), deadline=deadline)
            else:
                got[name] = mcsf_starts(instance, order=mc[name], deadline=deadline)
    out = {name: got[name] for name in names if name in got}
    if not out:
        out["serial"] = serial_starts(instance)
    return out


def serial_starts(instance: Instance) -> NDArray[np.int64]:
    """One request at a time, in arrival order: always feasible (every request fits alone),
    ``O(n)``.

    Examples
    --------
    >>> serial_starts(Instance(memory=9, arrival=[0, 0, 9], prompt=[1, 1, 1],
    ...                        output=[3, 2, 1])).tolist()
    [0, 3, 9]
    """
    starts = np.empty(instance.n, dtype=np.int64)
    end = 0
    for i in np.lexsort((np.arange(instance.n), instance.arrival)).tolist():
        starts[i] = max(int(instance.arrival[i]), end)
        end = int(starts[i]) + int(instance.output[i])
    return starts


def best_start(instance: Instance, initial: NDArray[np.int64] | None,
               points: dict[str, NDArray[np.int64]] | ValuedPoints | None = None,
               deadline: Deadline | None = None,
               ) -> tuple[NDArray[np.int64], dict[str, float], str]:
    """The best valid starting point (MC-SF in two orders, MC-Benchmark, priority-rule decodes,
    ``initial``; or the given ``points``), every starting point's TEL, and the name of the
    best. Those not computed by ``deadline`` are left out (:func:`starting_points`).
    :class:`ValuedPoints` were valued and validated already: only ``initial`` is.

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> starts, values, src = best_start(inst, None)
    >>> values["mcsf"], values[src]
    (10.0, 9.0)
    """
    if isinstance(points, ValuedPoints):
        extra = value_points(instance, {"initial": initial}) if initial is not None else None
        if extra is not None:
            points = ValuedPoints({**points.points, **extra.points},
                                  {**points.values, **extra.values},
                                  points.valid | extra.valid, points.check_s)
        src = min((k for k in points.points if k in points.valid),  # first of equals
                  key=points.values.__getitem__)
        return points.points[src].copy(), dict(points.values), src
    starts_by = dict(starting_points(instance, deadline) if points is None else points)
    if initial is not None:
        starts_by["initial"] = np.asarray(initial, dtype=np.int64)
    return best_start(instance, None, value_points(instance, starts_by))


@dataclass(frozen=True)
class ValuedPoints:
    """Starting points with their TEL and validity, computed once (:func:`value_points`) and
    handed on (``solve_auto`` to the improvement search: on the whole Azure trace each check
    takes ~0.15 s), with the measured cost of valuing and validating one.

    Attributes
    ----------
    points
        Start slots by name.
    values
        TEL of each.
    valid
        The names that :func:`kvopt.core.validate.check_schedule` accepts.
    check_s
        Seconds to value and validate one point (wall), measured.

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> vp = value_points(inst, {"sgs": sgs_decode(inst, [0, 1, 2]),
    ...                          "serial": serial_starts(inst)})
    >>> vp.values, sorted(vp.valid), best_start(inst, None, vp)[2]
    ({'sgs': 9.0, 'serial': 13.0}, ['serial', 'sgs'], 'sgs')
    """

    points: dict[str, NDArray[np.int64]]
    values: dict[str, float]
    valid: frozenset[str]
    check_s: float


def value_points(instance: Instance, points: dict[str, NDArray[np.int64]]) -> ValuedPoints:
    """Value and validate every starting point once (:class:`ValuedPoints`).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> vp = value_points(inst, {"serial": np.array([0, 3, 4]), "bad": np.array([0, 0, 0])})
    >>> vp.values["serial"], sorted(vp.valid)
    (13.0, ['serial'])
    """
    t0 = time.monotonic()
    pts = {k: np.asarray(v, dtype=np.int64) for k, v in points.items()}
    values = {k: instance.tel_of_starts(v) for k, v in pts.items()}
    valid = frozenset(k for k, v in pts.items()
                      if check_schedule(instance, Schedule.from_starts(instance, v)).ok)
    return ValuedPoints(pts, values, valid, (time.monotonic() - t0) / max(len(pts), 1))
