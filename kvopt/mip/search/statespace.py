"""Exact best-first search over merged schedule states (a dynamic programme with bounds).

A partial schedule, decided slot boundary by slot boundary, is summarised at boundary ``t`` by
its **state**: the multiset of requests not yet started (by type ``(a, s, o)``) and the
running requests, each as ``(m, r)``: it holds ``m + d`` tokens ``d`` slots later,
``d = 1..r`` (started at ``k``: ``m = s + t - k``, ``r = o - (t - k)``; running requests of
different types with equal ``(m, r)`` are the same to the future and are not told apart).
Everything a completion of the partial schedule can do depends on the state alone, and so
does its cost from ``t`` on, once no arrival is pending (``t >= max a``): the problem is
invariant under a shift of time. Before that the state also holds ``t``. So every partial
schedule reaching a state is completed by the same best continuation, and the search keeps,
per state, only the cheapest way to reach it: partial schedules that differ in the order or
the exact times of the requests already completed merge (the dynamic-programming step that a
CP or MIP search, which re-explores them, lacks).

**The search.** From the empty schedule, a node (state, cost so far ``g``) is expanded by every
decision at its boundary ``t``: a sub-multiset ``S`` of the arrived unstarted requests starts
at ``t`` (possibly none), subject to memory (below), then one slot passes: the running
requests age by one and those reaching their output length complete. Its cost is the number
of unfinished arrived requests during slot ``t + 1`` (``TEL = sum_j (c_j - a_j)`` counts each
request once per slot ``a_j < tau <= c_j``). Nodes are expanded in order of ``f = g + h`` with
an admissible ``h`` (A*): the first complete schedule popped is optimal, and when the search
stops early the smallest ``f`` still open is a lower bound on OPT.

**Memory.** A start set ``S`` is allowed iff the running requests and ``S`` fit at every later
slot while they run (``sum_{r_j >= d} (m_j + d) <= M`` for every ``d``): later starts only
add memory, so no feasible schedule is cut, and every schedule the search builds is
feasible.

**Pruning, each valid for every schedule of TEL below the incumbent ``UB``** (the search
proves that none exists, or finds the best):

- *windows*: a request starts by ``hi_i`` of :func:`kvopt.mip.model.builder.start_windows`
  (``hi_i = a_i + UB - LB(I minus i) - o_i``; a later start gives TEL ``> UB``);
- *no idling on an empty machine* once every request has arrived: if nothing runs at ``t``
  and nothing starts, shifting every later start one slot earlier keeps the schedule feasible
  (the memory profile moves with it, all arrivals are ``<= t``) and lowers TEL, so such a
  node is never on an optimal path (and the search keeps the strictly better shifted one);
- *dominance*: a new state is dropped when a stored state of the same time class holds the
  same requests minus a set ``D`` -- any of the running ones (completed there) and at most
  one unstarted one -- and was reached at cost ``g_A <= g + sum_D`` (remaining lengths,
  ``o`` for the unstarted one): dropping ``D`` from a completion of the new state gives a
  completion of the stored one (less memory at every slot, all else equal) cheaper by at
  least ``sum_D``, so the stored state does at least as well (:func:`_dominated`);
- *bounds* ``h`` on the cost from ``t`` on, the largest of: (i) ``sum_R r_j + sum_U o_j``
  (running ``R`` with remaining ``r_j``, unstarted ``U``); (ii) the SRPT fluid bound of all
  unfinished requests (remaining memory-time volume at rate ``M``, all released now: a
  relaxation of any continuation, so its sum of fluid completions is at most the cost; valid
  once all have arrived); (iii) ``sum_R r_j`` plus the combinatorial bound
  (:func:`kvopt.mip.bounds.combinatorial.combinatorial_bound`) of the residual instance ``U``
  alone with arrivals ``max(a - t, 0)``: removing the running requests only frees memory;
  (iv) ``sum_R r_j`` plus, per disjunctive clique of types (pairwise never overlapping:
  ``s_i + o_i + s_j + 1 > M`` both ways), the shortest-first single-machine sum of the
  clique's unstarted members after the last running request that blocks them ends, plus
  ``o_j`` for the others (valid once all have arrived). A running ``(m, r)`` blocks type
  ``y`` until it ends if ``m + r + s_y + 1 > M`` and ``s_y + o_y + m + 1 > M``: if ``y``
  started before its end, either ``y`` still runs at its last slot (holding ``>= s_y + 1``
  beside ``m + r``) or ``y`` ends first (holding ``s_y + o_y`` beside ``>= m + 1``);
- (v) in (ii), the ``k``-th smallest completion after ``t`` is at least both the ``k``-th
  fluid completion, rounded up (completions are integers), and the ``k``-th smallest
  remaining length (``k`` requests done need ``k`` lengths); so the sum of the larger of
  the two, rank by rank, bounds the cost;
Every ``f`` is a lower bound on the TEL of the completions of its own state, and some open
state is always at least as good as an optimal schedule (a dropped state's better state is
open, or was expanded into one with fewer slots of work left, and so on down to a complete
schedule), so the first complete schedule popped is optimal and the smallest open ``f`` is a
bound at every moment (reported: the largest such value seen).

Examples
--------
>>> from kvopt import Instance
>>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
>>> res = state_search(inst, upper=10.0)
>>> res.status, res.objective, res.bound, res.starts.tolist()
('optimal', 9.0, 9.0, [0, 0, 3])
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.result import integral_bound

#: Nodes expanded between two looks at the deadline.
CHECK_EVERY = 256


@dataclass
class SearchResult:
    """Outcome of :func:`state_search`.

    Attributes
    ----------
    status
        ``"optimal"``: ``objective`` is OPT, or ``bound >= upper`` proves that no schedule
        beats the incumbent (``starts is None`` then); ``"time_limit"`` / ``"state_limit"``:
        stopped, ``bound`` is a valid lower bound on OPT (the smallest ``f`` still open).
    objective, starts
        The best schedule the search found below ``upper`` (``None`` if none).
    bound
        A valid lower bound on OPT.
    expanded, states
        Nodes expanded and states stored.

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> res = state_search(inst, upper=10.0)
    >>> res.status, res.objective, res.bound, res.expanded, res.states
    ('optimal', 9.0, 9.0, 5, 6)
    """

    status: str
    objective: float | None
    starts: NDArray[np.int64] | None
    bound: float
    expanded: int
    states: int
    info: dict[str, Any] = field(default_factory=dict)


class _Space:
    """The types, memory checks and bounds of one instance."""

    def __init__(self, instance: Instance, upper: float) -> None:
        from kvopt.mip.model.builder import start_windows

        a, s, o = (instance.arrival.tolist(), instance.prompt.tolist(),
                   instance.output.tolist())
        self.M = int(instance.memory)
        self.types = sorted(set(zip(a, s, o, strict=True)))
        idx = {t: i for i, t in enumerate(self.types)}
        self.members: list[list[int]] = [[] for _ in self.types]
        for j in range(instance.n):
            self.members[idx[a[j], s[j], o[j]]].append(j)
        self.ta = [t[0] for t in self.types]
        self.ts = [t[1] for t in self.types]
        self.to = [t[2] for t in self.types]
        self.a_max = max(self.ta)
        _, hi = start_windows(instance, horizon=instance.horizon, upper=upper)
        self.hi = [int(max(hi[m] for m in mem)) for mem in self.members]
        self.cnt0 = tuple(len(m) for m in self.members)
        K = len(self.types)
        self.vol = [self.volume(self.ts[k], self.to[k]) for k in range(K)]
        self.cliques, self.clique_of = self._cliques()
        self.clique_min = [(min(self.ts[k] for k in cl), min(self.ts[k] + self.to[k] for k in cl))
                           for cl in self.cliques]
        self._rest: dict[tuple[Any, ...], float] = {}
        self._fits: dict[tuple[tuple[int, int], ...], bool] = {}
        self._startable: dict[tuple[tuple[int, int], ...], list[bool]] = {}
        self._ucache: dict[tuple[int, ...], tuple[int, list[float], list[int], int,
                                                  list[list[int]]]] = {}
        self._subsets: dict[tuple[tuple[int, int], ...],
                            list[tuple[tuple[tuple[int, int], ...], int]]] = {}

    def _cliques(self) -> tuple[list[list[int]], dict[int, int]]:
        """Greedy disjoint cliques of types whose requests never overlap (self-conflicting)."""
        K, M = len(self.types), self.M
        peak = [self.ts[k] + self.to[k] for k in range(K)]

        def conf(x: int, y: int) -> bool:
            return peak[x] + self.ts[y] + 1 > M and peak[y] + self.ts[x] + 1 > M

        order = sorted(range(K), key=lambda k: -peak[k])
        cliques: list[list[int]] = []
        used: set[int] = set()
        for x in order:
            if x in used or not conf(x, x):
                continue
            cl = [x]
            for y in order:
                if y not in used and y not in cl and conf(y, y) and all(conf(y, z) for z in cl):
                    cl.append(y)
            cliques.append(cl)
            used.update(cl)
        return cliques, {k: i for i, cl in enumerate(cliques) for k in cl}

    def volume(self, m: int, r: int) -> float:
        """Memory-time left of a request ``(m, r)`` (a fresh one: ``(s, o)``), in slots of
        the whole memory: ``sum_{d=1..r} (m + d) / M``, i.e.
        :func:`kvopt.core.stability.lifetime_token_steps` ``(m, r) / M`` as a plain float (the
        search's hot path; ``tests/mip/test_statespace.py`` keeps the two equal)."""
        return (r * m + r * (r + 1) / 2) / self.M

    def fits(self, running: tuple[tuple[int, int], ...]) -> bool:
        """The running requests ``(m, r)`` fit at every later slot while they run.

        Between two completions the memory only grows, so it suffices to look at the slots
        where one of them completes (``d = r``); memoised per running set."""
        ok = self._fits.get(running)
        if ok is None:
            ok = True
            for d in {r for _, r in running}:
                if sum(m + d for m, r in running if d <= r) > self.M:
                    ok = False
                    break
            self._fits[running] = ok
        return ok

    def startable(self, running: tuple[tuple[int, int], ...]) -> list[bool]:
        """Per type: does one request of it fit beside ``running`` (memoised)? A start set
        with a type that does not is not tried."""
        out = self._startable.get(running)
        if out is None:
            out = [self.fits((*running, (self.ts[k], self.to[k]))) for k in range(len(self.ts))]
            self._startable[running] = out
        return out

    def subsets(self, run: tuple[tuple[int, int], ...]
                ) -> list[tuple[tuple[tuple[int, int], ...], int]]:
        """Every sub-multiset of the running requests ``run`` (sorted) with the remaining
        slots of the others: ``run`` itself first; memoised."""
        out = self._subsets.get(run)
        if out is None:
            n = len(run)
            out = []
            for mask in range(1 << n):
                if any(mask >> i & 1 and not mask >> (i - 1) & 1 and run[i] == run[i - 1]
                       for i in range(1, n)):
                    continue                  # one subset per multiset
                out.append((tuple(run[i] for i in range(n) if not mask >> i & 1),
                            sum(run[i][1] for i in range(n) if mask >> i & 1)))
            self._subsets[run] = out
        return out

    def rest_bound(self, cnt: tuple[int, ...], t: int) -> float:
        """The combinatorial bound of the unstarted requests alone, arrivals ``max(a-t, 0)``."""
        key = (cnt, min(t, self.a_max))
        v = self._rest.get(key)
        if v is None:
            from kvopt.mip.bounds.combinatorial import combinatorial_bound

            ks = [k for k, c in enumerate(cnt) for _ in range(c)]
            v = 0.0 if not ks else combinatorial_bound(Instance(
                memory=self.M, arrival=np.array([max(self.ta[k] - t, 0) for k in ks]),
                prompt=np.array([self.ts[k] for k in ks]),
                output=np.array([self.to[k] for k in ks])))
            self._rest[key] = v
        return v

    def _unstarted(self, cnt: tuple[int, ...]) -> tuple[int, list[float], list[int], int,
                                                         list[list[int]]]:
        """The unstarted requests' parts of :meth:`h`, memoised per ``cnt``: ``sum o``,
        sorted volumes and lengths, ``sum o`` outside the cliques, each clique's sorted
        lengths."""
        u = self._ucache.get(cnt)
        if u is None:
            to = self.to
            works = sorted(self.vol[k] for k, c in enumerate(cnt) for _ in range(c))
            lens = sorted(to[k] for k, c in enumerate(cnt) for _ in range(c))
            free = sum(c * to[k] for k, c in enumerate(cnt) if k not in self.clique_of)
            cl = [sorted(to[k] for k in members for _ in range(cnt[k]))
                  for members in self.cliques]
            u = (sum(lens), works, lens, free, cl)
            self._ucache[cnt] = u
        return u

    def h(self, cnt: tuple[int, ...], running: tuple[tuple[int, int], ...], t: int) -> float:
        """An admissible bound on the cost from ``t`` on (module docstring, (i)-(v))."""
        M = self.M
        rem = 0
        release = [0] * len(self.cliques)
        for m, r in running:
            rem += r
            for ci, (smin, pmin) in enumerate(self.clique_min):
                if r > release[ci] and m + r + smin + 1 > M and pmin + m + 1 > M:
                    release[ci] = r
        sum_o, works, lens, free, cliques = self._unstarted(cnt)
        best = max(rem + sum_o + 0.0, rem + self.rest_bound(cnt, t))
        if t < self.a_max:
            return best
        chain = rem + free
        for ci, lengths in enumerate(cliques):
            tt = release[ci]
            for x in lengths:
                tt += x
                chain += tt
        if running:
            works = sorted(works + [self.volume(m, r) for m, r in running])
            lens = sorted(lens + [r for _, r in running])
        fluid = acc = 0.0
        for w, x in zip(works, lens, strict=True):
            acc += w
            fluid += max(math.ceil(acc - 1e-9), x)
        return max(best, chain, fluid)


class _Store(dict[Any, int]):
    """The cheapest known cost ``g`` of every stored state ``(time class, unstarted, running)``
    (a dict) and, in :attr:`classes`, the ``(time class, unstarted)`` pairs that occur among
    them, for :func:`_dominated`.

    Item assignment (``st[key] = g``, the only write the search makes) updates both, so the
    index holds exactly the pairs of the stored states (states are never removed); ``update``
    and ``setdefault`` would bypass it and are not used. Reads are the plain dict's (the
    search's hot path).

    Examples
    --------
    >>> st = _Store()
    >>> st[(-1, (1, 0), ((3, 2),))] = 7
    >>> st.get((-1, (1, 0), ())), len(st), sorted(st.classes)
    (None, 1, [(-1, (1, 0))])
    """

    __slots__ = ("classes",)

    def __init__(self) -> None:
        super().__init__()
        self.classes: set[Any] = set()

    def __setitem__(self, key: Any, g: int) -> None:
        super().__setitem__(key, g)
        self.classes.add(key[:2])


def state_search(instance: Instance, *, upper: float, time_limit: float | None = None,
                 deadline: Deadline | None = None, max_states: int = 5_000_000
                 ) -> SearchResult:
    """OPT of ``instance`` if it is below ``upper`` (the TEL of a known schedule), else a
    proof that it is not, by the best-first search of the module docstring.

    Parameters
    ----------
    instance
        A slotted instance without a batch limit.
    upper
        The TEL of a feasible schedule: only schedules of TEL ``< upper`` are searched.
    time_limit, deadline
        Seconds, or a caller's :class:`~kvopt.core.limits.Deadline`.
    max_states
        Stop (``status="state_limit"``) once this many states are stored (RAM).

    Returns
    -------
    SearchResult
        ``status="optimal"`` with ``objective`` and ``starts`` when a better schedule was
        found (it is optimal), or ``objective=None`` when none exists (``upper`` is optimal);
        otherwise a valid lower ``bound``.

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> res = state_search(inst, upper=10.0)       # a schedule of TEL 10 is known
    >>> res.status, res.objective, res.starts.tolist()
    ('optimal', 9.0, [0, 0, 3])
    >>> res = state_search(inst, upper=9.0)        # nothing beats 9: the incumbent is optimal
    >>> res.status, res.objective, res.bound
    ('optimal', None, 9.0)
    """
    dl = as_deadline(time_limit, deadline)
    instance.require_slotted()
    sp = _Space(instance, upper)
    K = len(sp.types)
    start_key = (0 if sp.a_max > 0 else -1, sp.cnt0, ())
    best = _Store()
    best[start_key] = 0
    parent: dict[Any, tuple[Any, tuple[int, ...]]] = {}
    h0 = sp.h(sp.cnt0, (), 0)
    heap: list[tuple[float, int, int, Any]] = [(h0, 0, 0, start_key)]
    expanded = 0
    seen = -math.inf

    def result(status: str, objective: float | None, starts: Any, bound: float
               ) -> SearchResult:
        return SearchResult(status, objective, starts, bound, expanded, len(best))

    while heap:
        f, g, t, key = heap[0]
        if f >= upper - 1e-9:
            return result("optimal", None, None, float(upper))
        heapq.heappop(heap)
        if g > best.get(key, math.inf):
            continue
        seen = max(seen, f)
        _, cnt, running = key
        if not running and not any(cnt):
            return result("optimal", float(g), _starts(sp, parent, key, instance.n), float(g))
        expanded += 1
        if expanded % CHECK_EVERY == 0 and (dl.expired() or len(best) > max_states):
            status = "time_limit" if dl.expired() else "state_limit"
            return result(status, None, None, integral_bound(seen))
        if any(cnt[k] and sp.hi[k] < t for k in range(K)):
            continue                          # a request missed its window: TEL > UB
        arrived = [k for k in range(K) if sp.ta[k] <= t]
        for chosen, run in _decisions(sp, cnt, running, arrived, t):
            if not run and t >= sp.a_max and any(cnt):
                continue                      # idling on an empty machine
            c2 = list(cnt)
            for k in chosen:
                c2[k] -= 1
            step = len(run) + sum(c2[k] for k in arrived)
            nxt = tuple(sorted((m + 1, r - 1) for m, r in run if r > 1))
            t2 = t + 1
            key2 = (t2 if t2 < sp.a_max else -1, tuple(c2), nxt)
            g2 = g + step
            if g2 < best.get(key2, math.inf):
                f2 = g2 + sp.h(key2[1], nxt, t2)
                if f2 < upper - 1e-9 and not _dominated(sp, best, key2, g2):
                    best[key2] = g2
                    parent[key2] = (key, tuple(chosen))
                    heapq.heappush(heap, (f2, g2, t2, key2))
    return result("optimal", None, None, float(upper))


def _dominated(sp: _Space, best: _Store, key: Any, g: int) -> bool:
    """Is a stored state at least as good as ``key`` reached at cost ``g``?

    A state ``A`` with the same time class whose requests are those of ``key`` minus a set
    ``D`` (any running ones, already completed in ``A``, and at most one unstarted one) is:
    dropping ``D`` from any completion of ``key`` leaves a completion of ``A`` (less memory
    at every slot), cheaper by at least ``sum_D`` (remaining length, ``o`` if unstarted), so
    ``g_A <= g + that`` makes ``key`` redundant (module docstring, pruning)."""
    tk, cnt, run = key
    subs = sp.subsets(run)
    if (tk, cnt) in best.classes:
        for kept, dr in subs[1:]:
            if best.get((tk, cnt, kept), math.inf) <= g + dr:
                return True
    to = sp.to
    for k, c in enumerate(cnt):
        if c:
            cnt2 = (*cnt[:k], c - 1, *cnt[k + 1:])
            if (tk, cnt2) not in best.classes:
                continue
            for kept, dr in subs:
                if best.get((tk, cnt2, kept), math.inf) <= g + dr + to[k]:
                    return True
    return False


def _decisions(sp: _Space, cnt: tuple[int, ...], running: tuple[tuple[int, int], ...],
               arrived: list[int], t: int) -> Any:
    """Every start set (a sub-multiset of the arrived unstarted types, within their windows)
    that fits beside ``running``: ``(chosen types, new running)``; adding requests only adds
    memory, so a set that does not fit is not extended."""
    one = sp.startable(running)
    avail = [k for k in arrived if one[k] and sp.hi[k] >= t for _ in range(cnt[k])]

    def rec(i: int, chosen: list[int], run: tuple[tuple[int, int], ...]) -> Any:
        yield chosen, run
        for j in range(i, len(avail)):
            if j > i and avail[j] == avail[j - 1]:
                continue
            new = (*run, (sp.ts[avail[j]], sp.to[avail[j]]))
            if sp.fits(new):
                yield from rec(j + 1, [*chosen, avail[j]], new)

    yield from rec(0, [], running)


def _starts(sp: _Space, parent: dict[Any, tuple[Any, tuple[int, ...]]], key: Any,
            n: int) -> NDArray[np.int64]:
    """The start slots of the schedule that reached ``key``: walk the parents back, each
    step one slot; requests of one type take its starts in index order."""
    decisions: list[tuple[int, ...]] = []
    while key in parent:
        key, chosen = parent[key]
        decisions.append(chosen)
    decisions.reverse()
    by_type: list[list[int]] = [[] for _ in sp.types]
    for t, chosen in enumerate(decisions):
        for k in chosen:
            by_type[k].append(t)
    starts = np.full(n, -1, dtype=np.int64)
    for k, mem in enumerate(sp.members):
        starts[sorted(mem)] = sorted(by_type[k])
    return starts
