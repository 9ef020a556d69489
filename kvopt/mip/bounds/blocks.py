"""Multipliers for the Lagrangian bound from a coarse *block* LP, for instances too long for
any time-indexed LP (traces of hundreds to thousands of requests).

The windowed Lagrangian bound of :func:`kvopt.mip.bounds.relaxations.lagrangian_bound`,

    L(lam) = sum_i min_k [k + o_i - a_i + sum_{d=1..o_i} lam_{k+d} (s_i + d)] - M sum_tau lam_tau,

is a valid lower bound on OPT for **every** ``lam >= 0`` (weak duality; the module docstring of
:mod:`kvopt.mip.bounds.lagrangian`), however ``lam`` was found. Subgradient ascent from
``lam = 0`` needs thousands of steps on a trace (each ``O(n T)``); this module finds good
multipliers in one LP instead, and the bound is then the exact Lagrangian value at them:

- the time axis is cut into blocks of ``B`` slots, block ``beta`` holding slots
  ``beta B + 1 .. (beta + 1) B``;
- each request may start at its arrival or at a block boundary (``k`` a multiple of ``B``)
  up to ``min(H, k_i + reach)``, ``H`` the makespan and ``k_i`` the start of a feasible
  schedule (``starts``);
- one row per block: the token-slots the chosen ramps put in the block are at most ``M B``;
  one row per request: its starts sum to 1.

That LP is neither a relaxation nor a restriction of the problem, and its value is not used.
Its block duals ``mu_beta >= 0`` are spread over their slots (``lam_tau = mu_beta``): the
price per token-slot of a block. On the first 2000 Azure requests (0.05 s slots), in 30 s,
this gives ``L = 1.692e7`` where the SRPT fluid bound is ``1.659e7`` and subgradient ascent
from zero reaches ``1.33e7`` (``benchmarks/mip_trace_bounds.py``, ``reports/mip/README.md``
section 10.17).

:func:`block_lagrangian_bound` halves the block size while the next LP is predicted to fit
the time, then evaluates and refines the finest multipliers by
:func:`~kvopt.mip.bounds.relaxations.lagrangian_bound` (which returns the best exact value
over its iterations, the first being the block multipliers themselves).

Examples
--------
>>> from kvopt import Instance
>>> inst = Instance(memory=6, arrival=[0, 0, 1, 2], prompt=[2, 1, 2, 1], output=[3, 2, 3, 4])
>>> from kvopt.core.mcsf import mcsf_starts
>>> starts = mcsf_starts(inst)
>>> lam = block_multipliers(inst, starts, block=2)
>>> bool((lam >= 0).all()), lam.size
(True, 15)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from kvopt.core.arrays import ragged_arange
from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline

#: Blocks of the first LP: the makespan cut into this many.
FIRST_BLOCKS = 32
#: An LP with half the block size is predicted to take this many times the last one's time
#: (measured on Azure windows of 200-2000 requests: 4-7.5 from the third level on; an LP
#: stopped at the time limit gives nothing, so the prediction errs high).
HALVING_COST = 8.0
#: Share of the time kept for the exact evaluation and the subgradient refinement.
REFINE_SHARE = 0.25
#: Columns of one block LP at the most (a guard on its size, ~10 s of HiGHS at this size).
MAX_COLUMNS = 400_000
#: Start slots scanned per Lagrangian evaluation (:func:`evaluation_work`) at the most, ~2 s
#: of numpy: the first 2000 Azure requests (0.05 s slots) need 8.1e7, the whole trace 5.9e9.
MAX_WORK = 200_000_000


def _column_counts(instance: Instance, starts: Sequence[int] | NDArray[np.int64], block: int,
                   reach: int | None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per request, the first block boundary after its arrival and its number of columns in
    the block LP (the arrival, then every multiple of ``block`` up to ``min(H, start +
    reach)``)."""
    a = instance.arrival.astype(np.int64)
    H = instance.makespan_of_starts(starts)
    top = (np.full(instance.n, H) if reach is None
           else np.minimum(H, np.asarray(starts, dtype=np.int64) + int(reach)))
    first = (a // block + 1) * block
    return first, 1 + np.maximum((top - first) // block + 1, 0)


def evaluation_work(instance: Instance, starts: Sequence[int] | NDArray[np.int64]) -> int:
    """Start slots one exact Lagrangian evaluation scans when the multipliers end at the
    makespan ``H`` of ``starts``: ``sum_i (max(H - a_i, 0) + 1)``.

    Examples
    --------
    >>> from kvopt import Instance
    >>> evaluation_work(Instance(memory=4, arrival=[0, 2, 9], prompt=[1, 1, 1],
    ...                          output=[3, 3, 3]), [0, 3, 9])    # H = 12: 13 + 11 + 4
    28
    """
    a = instance.arrival.astype(np.int64)
    return int((np.maximum(instance.makespan_of_starts(starts) - a, 0) + 1).sum())


def work_refusal(instance: Instance, starts: Sequence[int] | NDArray[np.int64]) -> str | None:
    """Why no Lagrangian bound is computed at block-LP multipliers: one evaluation
    (:func:`evaluation_work`) would scan more than :data:`MAX_WORK` start slots; ``None``
    where it fits (the check ``kvopt solve``'s portfolio and ``kvopt bound`` share).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=4, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> work_refusal(inst, [0, 3]) is None
    True
    >>> work_refusal(inst, [0, 10**9])
    'one Lagrangian evaluation would scan 2000000008 start slots, above 200000000'
    """
    work = evaluation_work(instance, starts)
    if work <= MAX_WORK:
        return None
    return f"one Lagrangian evaluation would scan {work} start slots, above {MAX_WORK}"


def ramp_mass(s: NDArray[np.int64], k: NDArray[np.int64], o: NDArray[np.int64],
              lo: NDArray[np.int64], hi: NDArray[np.int64]) -> NDArray[np.float64]:
    """Token-slots a request (prompt ``s``, output ``o``, started at ``k``) holds in slots
    ``lo .. hi``: ``sum_{tau in [max(k+1, lo), min(k+o, hi)]} (s + tau - k)`` (elementwise).

    Examples
    --------
    >>> one = lambda v: np.array([v])
    >>> ramp_mass(one(2), one(0), one(3), one(1), one(10)).tolist()    # 3 + 4 + 5
    [12.0]
    >>> ramp_mass(one(2), one(0), one(3), one(3), one(10)).tolist()    # slot 3 only
    [5.0]
    """
    t0 = np.maximum(k + 1, lo)
    cnt = np.maximum(np.minimum(k + o, hi) - t0 + 1, 0).astype(np.float64)
    return cnt * (s + t0 - k) + cnt * (cnt - 1.0) / 2.0


def block_multipliers(instance: Instance, starts: Sequence[int] | NDArray[np.int64], *,
                      block: int, reach: int | None = None,
                      deadline: Deadline | None = None) -> NDArray[np.float64] | None:
    """Per-slot multipliers ``lam`` (``lam[0] = 0``) from the block LP of the module docstring.

    ``starts``: a feasible schedule's start slots (its makespan ``H`` and, with ``reach``, the
    last start offered to each request, ``starts[i] + reach``; default: up to ``H``).
    ``None`` if HiGHS stops without an optimum (time limit of ``deadline``).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[3, 3, 3])
    >>> lam = block_multipliers(inst, [0, 3, 6], block=3)
    >>> lam.shape, bool(lam[1:7].max() > 0)     # the two first blocks are full: priced
    ((13,), True)
    """
    from scipy.optimize import linprog

    a = instance.arrival.astype(np.int64)
    o = instance.output.astype(np.int64)
    s = instance.prompt.astype(np.int64)
    B = int(block)
    # columns: the arrival, then every multiple of B in (a, top]
    first, per = _column_counts(instance, starts, B, reach)
    req = np.repeat(np.arange(instance.n), per)
    off = ragged_arange(per)
    k = np.where(off == 0, a[req], first[req] + (off - 1) * B)
    n_cols = k.size
    # rows: the blocks each column's ramp [k+1, k+o] touches
    b0, b1 = k // B, (k + o[req] - 1) // B
    nb = b1 - b0 + 1
    col = np.repeat(np.arange(n_cols), nb)
    blk = np.repeat(b0, nb) + ragged_arange(nb)
    r = req[col]
    mass = ramp_mass(s[r], k[col], o[r], blk * B + 1, (blk + 1) * B)
    n_blocks = int(blk.max()) + 1
    A_ub = sp.csr_matrix((mass, (blk, col)), shape=(n_blocks, n_cols))
    A_eq = sp.csr_matrix((np.ones(n_cols), (req, np.arange(n_cols))),
                         shape=(instance.n, n_cols))
    cost = (k + o[req] - a[req]).astype(np.float64)
    options: dict[str, Any] = {}
    left = None if deadline is None else deadline.remaining()
    if left is not None:
        options["time_limit"] = max(left, 0.01)
    res = linprog(cost, A_ub=A_ub, b_ub=np.full(n_blocks, float(instance.memory) * B),
                  A_eq=A_eq, b_eq=np.ones(instance.n), bounds=(0, None), method="highs",
                  options=options)
    if res.status != 0 or res.ineqlin is None:
        return None
    mu = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=np.float64), 0.0)
    lam = np.zeros(n_blocks * B + 1)
    lam[1:] = np.repeat(mu, B)
    return lam


def block_columns(instance: Instance, starts: Sequence[int] | NDArray[np.int64], *,
                  block: int, reach: int | None = None) -> int:
    """Columns of :func:`block_multipliers` for these arguments (``O(n)``, nothing built).

    Examples
    --------
    >>> from kvopt import Instance
    >>> block_columns(Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 1],
    ...                        output=[3, 3, 3]), [0, 3, 6], block=3)   # 0, 3, 6, 9 each
    12
    """
    return int(_column_counts(instance, starts, int(block), reach)[1].sum())


@dataclass
class BlockBound:
    """What :func:`block_lagrangian_bound` found.

    Examples
    --------
    >>> BlockBound(value=10.0).value
    10.0
    """

    value: float
    #: Block LPs run, coarse to fine: block size, columns, seconds and ``"optimal"`` or ``"not
    #: solved"`` (HiGHS stopped at the time limit or failed: the halving ends there, and the
    #: multipliers are the last optimal level's; none at all: the subgradient starts at 0).
    levels: list[dict[str, Any]] = field(default_factory=list)
    #: Seconds of the exact evaluation and subgradient refinement.
    refine_s: float = 0.0
    #: The subgradient's last multipliers (the value is the best seen, not necessarily theirs).
    multipliers: NDArray[np.float64] | None = None


def block_lagrangian_bound(instance: Instance, starts: Sequence[int] | NDArray[np.int64], *,
                           upper: float | None = None, deadline: Deadline,
                           iterations: int = 10**9) -> BlockBound:
    """The Lagrangian bound at block-LP multipliers, refined by subgradient steps.

    Block LPs (:func:`block_multipliers`, ``reach`` = an eighth of the makespan and at least
    eight blocks) run from ``makespan /`` :data:`FIRST_BLOCKS` slots per block, halving while
    the next one is predicted (:data:`HALVING_COST` times the last) to end before
    :data:`REFINE_SHARE` of the time is left and has at most :data:`MAX_COLUMNS` columns.
    The finest multipliers then seed
    :func:`~kvopt.mip.bounds.relaxations.lagrangian_bound` (``iterations`` at the most, small
    steps, no leave-one-out windows) until ``deadline``; its value, the best exact Lagrangian
    value seen, is the bound (valid for any multipliers). ``upper``: a feasible TEL (default
    that of ``starts``).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=6, arrival=[0, 0, 1, 2], prompt=[2, 1, 2, 1],
    ...                 output=[3, 2, 3, 4])
    >>> from kvopt.core.mcsf import mcsf_starts
    >>> from kvopt.mip.bounds.relaxations import lp_bound
    >>> starts = mcsf_starts(inst)                       # TEL 21
    >>> res = block_lagrangian_bound(inst, starts, deadline=Deadline(5.0), iterations=50)
    >>> [(lv["block"], lv["status"]) for lv in res.levels]   # makespan 11: blocks of 1
    [(1, 'optimal')]
    >>> round(res.value, 2), round(lp_bound(inst), 2)    # one-slot blocks: the LP's duals
    (16.3, 16.3)
    """
    from kvopt.mip.bounds.relaxations import lagrangian_bound

    k_inc = np.asarray(starts, dtype=np.int64)
    if upper is None:
        upper = instance.tel_of_starts(k_inc)
    H = instance.makespan_of_starts(k_inc)
    block = max(1, math.ceil(H / FIRST_BLOCKS))
    levels: list[dict[str, Any]] = []
    lam: NDArray[np.float64] | None = None
    keep = deadline.share(REFINE_SHARE) or 0.0
    last_s = 0.0
    while block >= 1:
        reach = max(8 * block, H // 8)
        cols = block_columns(instance, k_inc, block=block, reach=reach)
        rem = deadline.remaining()
        left = math.inf if rem is None else rem - keep
        if cols > MAX_COLUMNS or (levels and HALVING_COST * last_s > left) or left <= 0:
            break
        t = time.monotonic()
        got = block_multipliers(instance, k_inc, block=block, reach=reach,
                                deadline=deadline.sub(None, reserve=keep))
        last_s = time.monotonic() - t
        levels.append({"block": block, "columns": cols, "seconds": round(last_s, 3),
                       "status": "optimal" if got is not None else "not solved"})
        if got is None:
            break
        lam = got
        if block == 1:
            break
        block = max(1, block // 2)
    t = time.monotonic()
    value, lam_last = lagrangian_bound(instance, iterations=max(int(iterations), 1),
                                       upper=upper, seed_multipliers=lam, deadline=deadline,
                                       step=0.2, narrow=False)
    return BlockBound(value=value, levels=levels, refine_s=round(time.monotonic() - t, 3),
                      multipliers=lam_last)
