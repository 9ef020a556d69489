"""An independent brute-force enumerator of the hindsight optimum (test oracle).

Depth-first search over start slots, one request at a time, with the memory profile
kept as a plain Python list (no kvopt code is used, so it checks the MIP and the
validator independently). Starts range over ``[a_i, T - o_i]`` with the paper's loose
horizon ``T = sum_i (a_i + o_i)``; branches are pruned by memory and by the bound
``partial TEL + sum of remaining o_j >= best``. Only for tiny instances (n <= 7).
"""

from __future__ import annotations


def brute_force_opt(memory, arrival, prompt, output):
    """Return (OPT total latency, list of start slots) by exhaustive search."""
    n = len(arrival)
    a, s, o = list(map(int, arrival)), list(map(int, prompt)), list(map(int, output))
    T = sum(a[i] + o[i] for i in range(n))
    mem = [0] * (T + 2)
    order = sorted(range(n), key=lambda i: (-o[i], a[i], i))  # long jobs first prunes faster
    best = [float("inf"), None]
    starts = [0] * n
    rest = [0] * (n + 1)
    for j in range(n - 1, -1, -1):
        rest[j] = rest[j + 1] + o[order[j]]

    def fits(i, k):
        return all(mem[tau] + s[i] + tau - k <= memory for tau in range(k + 1, k + o[i] + 1))

    def place(i, k, sign):
        for tau in range(k + 1, k + o[i] + 1):
            mem[tau] += sign * (s[i] + tau - k)

    def dfs(j, partial):
        if partial + rest[j] >= best[0]:
            return
        if j == n:
            best[0], best[1] = partial, list(starts)
            return
        i = order[j]
        for k in range(a[i], T - o[i] + 1):
            lat = k + o[i] - a[i]
            if partial + lat + rest[j + 1] >= best[0]:
                break
            if fits(i, k):
                place(i, k, +1)
                starts[i] = k
                dfs(j + 1, partial + lat)
                place(i, k, -1)

    dfs(0, 0)
    return best[0], best[1]


def brute_force_preemptive_opt(memory, arrival, prompt, output):
    """The preemptive optimum (tokens kept on eviction, no memory for paused requests) by
    dynamic programming over slots and token counts, with no kvopt code.

    At slot ``tau`` any set of arrived (``a_i < tau``), unfinished requests may produce one
    token each if ``sum (s_i + p_i + 1) <= M`` (``p_i`` tokens produced before); the slot costs
    the number of arrived requests unfinished before it, so a request adds ``c_i - a_i``.
    Horizon ``max a + sum o``. Tiny instances only (n <= 4, outputs <= 4)."""
    from itertools import combinations

    n = len(arrival)
    a, s, o = list(map(int, arrival)), list(map(int, prompt)), list(map(int, output))
    T = max(a) + sum(o)
    layer = {tuple([0] * n): 0}
    best = float("inf")
    for tau in range(1, T + 1):
        nxt = {}
        for p, cost in layer.items():
            live = [i for i in range(n) if a[i] < tau and p[i] < o[i]]
            c = cost + len(live)
            for r in range(len(live) + 1):
                for sub in combinations(live, r):
                    if sum(s[i] + p[i] + 1 for i in sub) > memory:
                        continue
                    q = list(p)
                    for i in sub:
                        q[i] += 1
                    q = tuple(q)
                    if all(q[i] == o[i] for i in range(n)):
                        best = min(best, c)
                    elif nxt.get(q, float("inf")) > c:
                        nxt[q] = c
        layer = nxt
    return best


def brute_force_goodput(inst):
    """Max binary-rule goodput over all non-preemptive start vectors (plain Python, no kvopt
    goodput code): starts in ``[a_i, T - o_i]`` with ``T = max a + sum o``, memory ``M`` and
    batch ``max_batch`` checked slot by slot. Tiny instances only (n <= 4)."""
    n = inst.n
    a, s, o = (list(map(int, x)) for x in (inst.arrival, inst.prompt, inst.output))
    M, B = int(inst.memory), inst.max_batch
    spec, rule = inst.slo, inst.goodput
    kinds = [("none", "stream", "deadline", "compound")[k] for k in spec.kind]
    T = max(a) + sum(o)

    def R(i):
        v = spec.value[i]
        return float(v) if v == v else rule.input_weight * s[i] + rule.output_weight * o[i]

    def goodput(k):
        total = 0.0
        groups = {}
        for i in range(n):
            if kinds[i] == "deadline":
                total += R(i) if k[i] + o[i] - a[i] <= spec.deadline[i] + 1e-9 else 0.0
            elif kinds[i] == "stream":
                ok = [k[i] + j - a[i] <= spec.ttft[i] + (j - 1) * spec.tbt[i] + 1e-9
                      for j in range(1, o[i] + 1)]
                v = spec.value[i]
                if v == v:
                    total += float(v) * sum(ok) / o[i]
                else:
                    total += rule.output_weight * sum(ok) + rule.input_weight * s[i] * ok[0]
            elif kinds[i] == "compound":
                groups.setdefault(int(spec.group[i]), []).append(i)
        for members in groups.values():
            ag = min(a[i] for i in members)
            if max(k[i] + o[i] for i in members) - ag <= spec.deadline[members[0]] + 1e-9:
                total += sum(R(i) for i in members)
        return total

    best = [-1.0, None]
    mem = [0] * (T + 2)
    cnt = [0] * (T + 2)
    k = [0] * n

    def dfs(i):
        if i == n:
            g = goodput(k)
            if g > best[0]:
                best[0], best[1] = g, list(k)
            return
        for ki in range(a[i], T - o[i] + 1):
            taus = range(ki + 1, ki + o[i] + 1)
            if any(mem[t] + s[i] + t - ki > M for t in taus):
                continue
            if B is not None and any(cnt[t] + 1 > B for t in taus):
                continue
            for t in taus:
                mem[t] += s[i] + t - ki
                cnt[t] += 1
            k[i] = ki
            dfs(i + 1)
            for t in taus:
                mem[t] -= s[i] + t - ki
                cnt[t] -= 1

    dfs(0)
    return best[0], best[1]


def brute_force_mkp(weights, values, capacity, knapsacks):
    """Multiple-knapsack optimum by enumerating every item -> knapsack (or none) map."""
    import itertools

    best = 0.0
    for assign in itertools.product(range(-1, knapsacks), repeat=len(weights)):
        load = [0] * knapsacks
        for w, j in zip(weights, assign, strict=True):
            if j >= 0:
                load[j] += w
        if max(load) <= capacity:
            best = max(best, sum(v for v, j in zip(values, assign, strict=True) if j >= 0))
    return float(best)
