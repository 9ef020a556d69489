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
