"""Incremental, event-driven form of MC-SF's admission rule, used by :mod:`kvopt.sim.engine`.

The rule itself (eq. (5)-(6)) and the offline MC-SF schedule live in :mod:`kvopt.core.mcsf`;
this module re-exports them for the simulator's policies.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.limits import check_allocation
from kvopt.core.mcsf import admit_prefix, mcsf_schedule, mcsf_starts, predicted_profile, try_admit

__all__ = [
    "FutureProfile",
    "admit_prefix",
    "earliest_fit",
    "mcsf_schedule",
    "mcsf_starts",
    "predicted_profile",
    "sliding_max",
    "try_admit",
]

# --------------------------------------------------------------------------------------------
# Incremental form of the same rule, used by the event-driven engine (kvopt.sim.engine).
# The predicted memory of the running set is kept in *absolute* slot time, so it changes only
# when a request is admitted, evicted or completes earlier than predicted; the check of a
# candidate is then the same as in :func:`admit_prefix` on a window of this array.


class FutureProfile:
    """Predicted memory of the running set at absolute slots, updated incrementally.

    ``value(tau)`` is ``sum_j (s_j + tau - p_j) * 1{tau - p_j <= q_j}`` over the running
    requests ``j`` (start ``p_j``, predicted length ``q_j``), i.e. the left-hand side of
    seed 001 eq. (5) for the running set. Slots before the current decision point are
    dropped when the buffer is re-based, so memory stays ``O(max q)``.

    Examples
    --------
    >>> fp = FutureProfile()
    >>> fp.add(0, 1, 3)          # s=1 started at 0, predicted length 3
    >>> fp.window(0, 4).tolist()
    [2, 3, 4, 0]
    >>> fp.remove(1, 1, 0, 3)    # completes at decision point 1
    >>> fp.window(1, 3).tolist()
    [0, 0, 0]
    """

    def __init__(self, size: int = 4096, field: str = "requests.output",
                 owner: str = "the simulator") -> None:
        self.field, self.owner = field, owner
        self._check(max(int(size), 16))
        self.buf = np.zeros(max(int(size), 16), dtype=np.int64)
        self.off = 0  # absolute slot of buf[0]
        self._d = np.arange(1, self.buf.shape[0] + 1, dtype=np.int64)

    def _check(self, size: int) -> None:
        """Refuse a buffer (and its ``d`` table) of ``size`` slots above the memory budget,
        naming :attr:`field`, the instance field that sizes it (issue 25: a window of 4 x 10^11
        slots was a 2.91 TiB numpy MemoryError)."""
        check_allocation(2 * 8 * size, f"{self.owner}'s predicted-memory profile of "
                         f"{size:,} slots", self.field)

    def _ensure(self, t: int, end: int) -> None:
        """Make slots ``t .. end-1`` addressable (drops slots before ``t``)."""
        if end - self.off <= self.buf.shape[0] and t >= self.off:
            return
        keep_from = max(min(t, end) - self.off, 0)
        kept = self.buf[keep_from:]
        size = max(2 * (end - (self.off + keep_from)), self.buf.shape[0], 16)
        self._check(size)
        nb = np.zeros(size, dtype=np.int64)
        nb[: kept.shape[0]] = kept
        self.buf = nb
        self.off += keep_from
        if self._d.shape[0] < size:
            self._d = np.arange(1, size + 1, dtype=np.int64)

    def d(self, q: int) -> NDArray[np.int64]:
        """``[1, 2, ..., q]`` (cached)."""
        if self._d.shape[0] < q:
            self._check(2 * q)
            self._d = np.arange(1, 2 * q + 1, dtype=np.int64)
        return self._d[:q]

    def window(self, t: int, horizon: int) -> NDArray[np.int64]:
        """A writable *view* of the predicted memory at ``t+1 .. t+horizon``."""
        self._ensure(t, t + 1 + horizon)
        lo = t + 1 - self.off
        return self.buf[lo: lo + horizon]

    def add(self, start: int, prompt: int, pred: int) -> None:
        """Add a request started at ``start`` with prompt ``prompt`` and predicted length."""
        w = self.window(start, pred)
        w += prompt + self.d(pred)

    def remove(self, t: int, prompt: int, start: int, pred: int) -> None:
        """Remove what is left after decision point ``t`` of a run (completed or evicted)."""
        end = start + pred
        if end <= t:
            return
        w = self.window(t, end - t)
        w -= prompt + (t - start) + self.d(end - t)

    def last_nonzero(self, t: int) -> int:
        """Last absolute slot ``> t`` with non-zero predicted memory (``t`` if none)."""
        lo = max(t + 1 - self.off, 0)
        nz = np.flatnonzero(self.buf[lo:])
        return t if nz.size == 0 else int(nz[-1]) + lo + self.off


def sliding_max(x: NDArray[np.int64], w: int) -> NDArray[np.int64]:
    """``out[i] = max(x[i : i + w])`` for ``i = 0 .. len(x) - w`` in ``O(len(x))``.

    Van Herk / Gil-Werman: block-wise prefix and suffix maxima.

    Examples
    --------
    >>> sliding_max(np.array([1, 3, 2, 5, 4]), 2).tolist()
    [3, 3, 5, 5]
    """
    n = x.shape[0]
    if w <= 1:
        return x.copy()
    m = -(-n // w) * w
    pad = np.full(m, np.iinfo(np.int64).min, dtype=np.int64)
    pad[:n] = x
    blocks = pad.reshape(-1, w)
    pre = np.maximum.accumulate(blocks, axis=1).reshape(-1)
    suf = np.maximum.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    i = np.arange(n - w + 1)
    return np.maximum(suf[i], pre[i + w - 1])


def earliest_fit(profile: FutureProfile, t: int, prompt: int, pred: int, memory: int,
                 until: int | None = None, extra: int = 0, extra_rate: int = 0) -> int:
    """First decision point ``t' > t`` at which a candidate ``(prompt, pred)`` passes eq. (5).

    Valid while the running set's predicted profile does not change (no admission,
    eviction or early completion), which is exactly when the engine may jump ahead.
    With ``until``, only ``t' <= until`` are searched and ``until`` is returned if none fits
    (the caller re-checks there). Without it, requires ``prompt + pred <= memory``.

    ``extra`` and ``extra_rate`` add the memory the profile does not hold: running requests
    already past their predicted length (MC-SF's ``overrun="next-step"``: ``extra`` is their
    memory at ``t+1``, ``extra_rate`` their count). Until the next event they keep running
    and each grows by one token a step, so at ``t'`` they hold ``extra + extra_rate (t' - t)``
    at ``t'+1`` (requests passing their prediction later only add to it), and ``t'`` also
    needs ``profile[t'+1] + prompt + 1 + extra + extra_rate (t' - t) <= memory``, the first
    slot of :func:`~kvopt.core.mcsf.try_admit`'s check. Requires ``until`` when non-zero.

    Examples
    --------
    >>> fp = FutureProfile(); fp.add(0, 1, 4)   # memory 2,3,4,5 at slots 1..4
    >>> earliest_fit(fp, 0, 1, 4, 8)            # (1+d) added from t'+1 fits once t' >= 2
    2
    >>> earliest_fit(fp, 0, 1, 4, 8, until=1)
    1
    >>> earliest_fit(fp, 0, 1, 4, 8, until=9, extra=3)   # first slots: 4 + 2 + 3, 5 + 2 + 3
    4
    >>> earliest_fit(fp, 0, 1, 4, 8, until=9, extra=3, extra_rate=1)   # 0 + 2 + 3 + 4 > 8
    9
    """
    if (extra or extra_rate) and until is None:
        raise UsageError("until", "earliest_fit needs the next event when extra memory grows "
                         "outside the profile (extra, extra_rate)")
    last = profile.last_nonzero(t) if until is None else int(until)
    if last <= t + 1:
        return t + 1
    # need max_{tau in [t'+1, t'+pred]} (base[tau] + tau) <= t' + memory - prompt, t' in [t+1, last]
    span = last - t + pred
    base = profile.window(t + 1, span)  # slots t+2 .. t+1+span
    # t' = t + 1 first (the usual answer in a simulation: the head fits at the next step):
    # slots t+2 .. t+1+pred, where the candidate would hold prompt + d at d = 1 .. pred
    first = memory - prompt - 1 - extra  # the first slot's room, shrinking by extra_rate a step
    if pred > 0 and int((base[:pred] + profile.d(pred)).max()) <= memory - prompt \
            and int(base[0]) + extra_rate <= first:
        return t + 1
    g = base + np.arange(t + 2, t + 2 + span, dtype=np.int64)
    k = last - t  # number of t' to test
    if pred >= k:
        # all windows [t'+1, t'+pred] share the core [last+1, t+1+pred]: window max =
        # max(suffix max of g over [t'+1, last], core max, prefix max over [t+pred+2, t'+pred])
        head = g[: k - 1]
        core = g[k - 1: pred]
        tail = g[pred: pred + k - 1]
        m = np.full(k, int(core.max()) if core.size else np.iinfo(np.int64).min,
                    dtype=np.int64)
        if k > 1:
            m[:-1] = np.maximum(m[:-1], np.maximum.accumulate(head[::-1])[::-1])
            m[1:] = np.maximum(m[1:], np.maximum.accumulate(tail))
    else:
        m = sliding_max(g, pred)[:k]  # index j <-> t' = t + 1 + j
    tp = np.arange(t + 1, t + 1 + m.shape[0], dtype=np.int64)
    fits = m <= tp + memory - prompt
    if extra or extra_rate:
        fits &= base[: m.shape[0]] + extra_rate * (tp - t) <= first
    ok = np.flatnonzero(fits)
    return int(tp[ok[0]]) if ok.size else last
