"""An independent slot-by-slot replay of a schedule in any preemption mode (test oracle for
:func:`kvopt.check_schedule`).

Plain Python, no kvopt code: every run is walked slot by slot from its start, counting the
tokens it produces (none in its chunked-prefill slots, none in a paused slot unless the run
started at the slot before), its GPU memory (prompt + resumed tokens + produced tokens, the
whole prompt allocation during prefill), rounded up to blocks, and for a swapped-in run the
host memory it held since its previous run ended. The verdict is the set of violation kinds
the replay finds among ``KINDS`` and the total latency.
"""

from __future__ import annotations

from itertools import pairwise

#: The kinds the replay decides (the validator's names).
KINDS = ("not_completed", "multiple_completions", "run_length", "before_arrival", "overlap",
         "progress", "memory", "host_memory", "block_size", "paused")


def _ceil_blocks(x, b):
    return ((x + b - 1) // b) * b


def replay(memory, arrival, prompt, output, runs, *, preemption="restart", block_size=1,
           host_memory=None, paused=()):
    """Replay ``runs`` (dicts with request, start, length, completed, offset, prefill,
    swapped) slot by slot. Returns ``(kinds, total_latency or None, gpu memory per slot)``."""
    n = len(arrival)
    paused = list(paused)
    pset = set(paused)
    kinds = set()
    if memory % block_size:
        kinds.add("block_size")
    if paused and (paused[0] < 1 or any(y <= x for x, y in pairwise(paused))
                   or any(r["prefill"] for r in runs)):
        return kinds | {"paused"}, None, []
    horizon = max([r["start"] + r["length"] for r in runs] + [0])
    gpu = [0] * (horizon + 1)
    host = [0] * (horizon + 1)
    tokens_of = []  # tokens each run produced
    for r in runs:
        i, k, L, P, off = r["request"], r["start"], r["length"], r["prefill"], r["offset"]
        made = 0
        for tau in range(k + 1, k + L + 1):
            if tau <= k + P:
                held = prompt[i] + off
            else:
                if tau == k + P + 1 or tau not in pset:
                    made += 1
                held = prompt[i] + off + made
            gpu[tau] += _ceil_blocks(held, block_size)
        tokens_of.append(made)
        left = output[i] - off
        if r["completed"]:
            last = k + L
            ends_paused = L > P + 1 and last in pset
            if made != left or ends_paused:
                kinds.add("run_length")
        elif made >= left:
            kinds.add("run_length")
        if k < arrival[i]:
            kinds.add("before_arrival")
    # per request, its runs in start order
    completion = [None] * n
    for i in range(n):
        mine = sorted((r["start"], j) for j, r in enumerate(runs) if r["request"] == i)
        done = [j for _, j in mine if runs[j]["completed"]]
        if not done:
            kinds.add("not_completed")
        elif len(done) > 1:
            kinds.add("multiple_completions")
        else:
            completion[i] = runs[done[0]]["start"] + runs[done[0]]["length"]
        produced = 0
        prev = None
        for _, j in mine:
            r = runs[j]
            if prev is not None:
                p = runs[prev]
                if r["start"] < p["start"] + p["length"] or p["completed"]:
                    kinds.add("overlap")
            expect = 0 if (prev is None or preemption == "restart") else produced
            if r["offset"] != expect or r["prefill"] < 0:
                kinds.add("progress")
            if r["swapped"]:
                if prev is None or preemption != "swap":
                    kinds.add("progress")
                else:
                    p = runs[prev]
                    for tau in range(p["start"] + p["length"] + 1, r["start"] + 1):
                        if tau <= horizon:
                            host[tau] += _ceil_blocks(prompt[i] + r["offset"], block_size)
            produced = r["offset"] + tokens_of[j]
            prev = j
    if any(m > memory for m in gpu):
        kinds.add("memory")
    if host_memory is not None and any(h > host_memory for h in host):
        kinds.add("host_memory")
    total = None
    if all(c is not None for c in completion):
        total = sum(c - a for c, a in zip(completion, arrival, strict=True))
    return kinds, total, gpu
