"""MC-SF's future-memory admission rule (seed 001 eq. (5)-(6), Algorithm 1).

Built once here and used by the simulator's MC-SF / MC-Benchmark policies and by the
MIP warm start. Timing convention (notes/seed-001 §1): a request started at ``p``
with predicted length ``q`` is predicted to hold ``s + (tau - p)`` at
``tau = p+1 .. p+q``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.schedule import Schedule


def predicted_profile(
    t: int,
    prompt: NDArray[np.int64],
    start: NDArray[np.int64],
    pred: NDArray[np.int64],
    horizon: int,
) -> NDArray[np.int64]:
    """Predicted memory of running requests at ``t + d``, ``d = 1..horizon`` (index d-1).

    Examples
    --------
    >>> predicted_profile(0, np.array([1]), np.array([0]), np.array([3]), 4).tolist()
    [2, 3, 4, 0]
    """
    d = np.arange(1, horizon + 1, dtype=np.int64)
    age = (t - start)[:, None] + d[None, :]  # tau - p
    live = age <= pred[:, None]
    return np.where(live, prompt[:, None] + age, 0).sum(axis=0).astype(np.int64)


def admit_prefix(
    base: NDArray[np.int64],
    cand_prompt: NDArray[np.int64],
    cand_pred: NDArray[np.int64],
    memory: int,
) -> int:
    """Length of the largest feasible prefix of the candidates (stop at first failure).

    Parameters
    ----------
    base
        Predicted memory of the running set at ``t+1 .. t+H`` (``H >= max cand_pred``).
    cand_prompt, cand_pred
        Candidates in scan order (MC-SF: ascending predicted length).
    memory
        The capacity used in the check (``M``, or ``(1 - alpha) M`` with a margin).

    Examples
    --------
    >>> admit_prefix(np.zeros(8, dtype=np.int64), np.array([1, 1, 1]), np.array([4, 8, 8]), 10)
    2
    """
    H = base.shape[0]
    if cand_pred.size and int(cand_pred.max()) > H:
        base = np.concatenate([base, np.zeros(int(cand_pred.max()) - H, dtype=np.int64)])
        H = base.shape[0]
    cur = base.copy()
    d = np.arange(1, H + 1, dtype=np.int64)
    for j in range(cand_prompt.shape[0]):
        if not try_admit(cur, d, int(cand_prompt[j]), int(cand_pred[j]), memory):
            return j
    return int(cand_prompt.shape[0])


def try_admit(window: NDArray[np.int64], d: NDArray[np.int64], prompt: int, pred: int,
              memory: int, extra_next: int = 0, force: bool = False) -> bool:
    """Eq. (5) for one candidate; on success its predicted memory is added to ``window``.

    Parameters
    ----------
    window
        Predicted memory at ``t+1 .. t+H`` (modified in place when admitted).
    d
        ``[1, 2, ..., H]``.
    prompt, pred
        The candidate's prompt size and predicted output length (``pred <= H``).
    memory
        Capacity of the check.
    extra_next
        Memory at ``t+1`` not in ``window`` (running requests past their prediction,
        projected to finish next slot).
    force
        Admit even if the check fails (returns True).

    Examples
    --------
    >>> w = np.zeros(4, dtype=np.int64); d = np.arange(1, 5)
    >>> try_admit(w, d, 1, 4, 9), w.tolist(), try_admit(w, d, 1, 4, 9)
    (True, [2, 3, 4, 5], False)
    """
    seg = window[:pred]
    trial = seg + (d[:pred] + prompt)
    if not force and (int(trial.max()) > memory or int(trial[0]) + extra_next > memory):
        return False
    seg[:] = trial
    return True


def mcsf_starts(
    instance: Instance,
    pred: NDArray[np.int64] | None = None,
    *,
    order: str = "shortest",
    memory: int | None = None,
) -> NDArray[np.int64]:
    """Start slots chosen by MC-SF (or MC-Benchmark with ``order="arrival"``), unit slots.

    A plain slot-by-slot implementation used as the MIP warm start and as a reference.
    With ``pred >= output`` (default ``pred = output``) the schedule never exceeds M.
    Ties among equal keys are broken by ``(arrival, index)``.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> mcsf_starts(inst).tolist()
    [0, 0]
    """
    if not instance.is_slotted:
        raise ValueError("mcsf_starts needs a slotted instance (time_unit='step')")
    n = instance.n
    s, o, a = instance.prompt, instance.output, instance.arrival
    q = o if pred is None else np.asarray(pred, dtype=np.int64)
    cap = instance.memory if memory is None else memory
    key = q if order == "shortest" else a
    scan = np.lexsort((np.arange(n), a, key))
    start = np.full(n, -1, dtype=np.int64)
    H = int(q.max())
    t = int(a.min())
    while (start < 0).any():
        running = (start >= 0) & (start + o > t)  # true lengths decide who is still running
        base = predicted_profile(t, s[running], start[running], q[running], H)
        waiting = scan[(start[scan] < 0) & (a[scan] <= t)]
        if waiting.size:
            k = admit_prefix(base, s[waiting], q[waiting], cap)
            start[waiting[:k]] = t
        if (start < 0).any():
            pending = a[start < 0]
            t = max(t + 1, int(pending.min())) if not (pending <= t).any() else t + 1
    return start


def mcsf_schedule(instance: Instance, pred: NDArray[np.int64] | None = None,
                  *, order: str = "shortest") -> Schedule:
    """MC-SF as a :class:`Schedule` (``source="ref:mcsf"``); see :func:`mcsf_starts`."""
    starts = mcsf_starts(instance, pred, order=order)
    return Schedule.from_starts(instance, starts,
                                source="ref:mcsf" if order == "shortest" else "ref:mc-benchmark")


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

    def __init__(self, size: int = 4096) -> None:
        self.buf = np.zeros(max(int(size), 16), dtype=np.int64)
        self.off = 0  # absolute slot of buf[0]
        self._d = np.arange(1, self.buf.shape[0] + 1, dtype=np.int64)

    def _ensure(self, t: int, end: int) -> None:
        """Make slots ``t .. end-1`` addressable (drops slots before ``t``)."""
        if end - self.off <= self.buf.shape[0] and t >= self.off:
            return
        keep_from = max(min(t, end) - self.off, 0)
        kept = self.buf[keep_from:]
        size = max(2 * (end - (self.off + keep_from)), self.buf.shape[0], 16)
        nb = np.zeros(size, dtype=np.int64)
        nb[: kept.shape[0]] = kept
        self.buf = nb
        self.off += keep_from
        if self._d.shape[0] < size:
            self._d = np.arange(1, size + 1, dtype=np.int64)

    def d(self, q: int) -> NDArray[np.int64]:
        """``[1, 2, ..., q]`` (cached)."""
        if self._d.shape[0] < q:
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
                 until: int | None = None) -> int:
    """First decision point ``t' > t`` at which a candidate ``(prompt, pred)`` passes eq. (5).

    Valid while the running set's predicted profile does not change (no admission,
    eviction or early completion), which is exactly when the engine may jump ahead.
    With ``until``, only ``t' <= until`` are searched and ``until`` is returned if none fits
    (the caller re-checks there). Without it, requires ``prompt + pred <= memory``.

    Examples
    --------
    >>> fp = FutureProfile(); fp.add(0, 1, 4)   # memory 2,3,4,5 at slots 1..4
    >>> earliest_fit(fp, 0, 1, 4, 8)            # (1+d) added from t'+1 fits once t' >= 2
    2
    >>> earliest_fit(fp, 0, 1, 4, 8, until=1)
    1
    """
    last = profile.last_nonzero(t) if until is None else int(until)
    if last <= t + 1:
        return t + 1
    # need max_{tau in [t'+1, t'+pred]} (base[tau] + tau) <= t' + memory - prompt, t' in [t+1, last]
    span = last - t + pred
    base = profile.window(t + 1, span)  # slots t+2 .. t+1+span
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
    ok = np.flatnonzero(m <= tp + memory - prompt)
    return int(tp[ok[0]]) if ok.size else last
