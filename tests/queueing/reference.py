"""The M/G/1 event loop of :func:`kvopt.queueing.simulator.simulate_jobs` as it was before
its inner loop was written out inline (rank function, ``max``/``min`` clipping, three-field
heap entries): the reference the faster loop must equal bit for bit."""

import heapq
import math

import numpy as np

_NEG = -math.inf


def simulate_jobs_reference(p, A, X, Y, C, lo_t, hi_t):
    """``(responses, mean_memory, peak_memory)`` of a non-FCFS rank policy ``p``."""
    n = A.size
    al, xl, yl = A.tolist(), X.tolist(), Y.tolist()
    dep = [0.0] * n
    rem = xl[:]
    heap = []
    push, pop = heapq.heappush, heapq.heappop
    t = 0.0
    cur = -1
    trail = p == "trail"
    age_rank = p in ("sprpt", "trail")
    nonpre = p in ("spjf", "fcfs")
    mem_q = 0.0
    area = 0.0
    peak = 0.0
    inf = math.inf

    def rank_now(j):
        a = xl[j] - rem[j]
        if nonpre:
            return _NEG
        if age_rank:
            if trail and a >= C * yl[j]:
                return _NEG
            return yl[j] - a
        return yl[j]

    i = 0
    while i < n or cur >= 0 or heap:
        t_next = al[i] if i < n else inf
        if cur < 0 and heap:
            _, _, cur = pop(heap)
            a = xl[cur] - rem[cur]
            mem_q -= a
        if cur >= 0:
            a0 = xl[cur] - rem[cur]
            fin = t + rem[cur]
            end = fin if fin <= t_next else t_next
            d = end - t
            c0, c1 = max(t, lo_t), min(end, hi_t)
            if c1 > c0:
                u0, u1 = a0 + (c0 - t), a0 + (c1 - t)
                area += (c1 - c0) * mem_q + (u1 * u1 - u0 * u0) / 2
            m_end = mem_q + a0 + d
            if m_end > peak:
                peak = m_end
            if fin <= t_next:
                t = fin
                rem[cur] = 0.0
                dep[cur] = t
                cur = -1
                continue
            rem[cur] -= d
            t = t_next
        else:
            t = t_next
        yi = 0.0 if p == "fcfs" else yl[i]
        if cur >= 0:
            rc = rank_now(cur)
            if yi < rc:
                a = xl[cur] - rem[cur]
                mem_q += a
                push(heap, (rc, cur, cur))
                cur = i
            else:
                push(heap, (yi, i, i))
        else:
            push(heap, (yi, i, i))
        i += 1
    resp = np.asarray(dep) - A
    return resp, float(area / max(hi_t - lo_t, 1e-300)), float(peak)
