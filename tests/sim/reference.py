"""A plain per-slot reference simulator (test oracle for the event-driven engine).

Every slot is visited; the running set and the queue are Python lists; MC-SF's check
(seed 001 eq. (5)) is recomputed from scratch at every decision point. No jumps, no
incremental profiles, no heaps. It uses the same conventions and random streams as
``kvopt.sim.simulate`` so that schedules can be compared run for run.
"""

from __future__ import annotations

import numpy as np

from kvopt.core.schedule import Schedule
from kvopt.sim.engine import LivelockError
from kvopt.sim.predicted_lengths import buckets, resolve_predictions
from kvopt.sim.steptime import UnitStepTime, get_step_time

FUTURE = {"mcsf", "mc-benchmark", "hsf", "amax", "amin", "amin-multi", "a-l", "mcsf-margin"}
GREEDY = {"fcfs", "sjf", "alpha-protection", "alpha-beta-clearing"}


def _arrival_rank(a):
    n = len(a)
    idx = np.lexsort((np.arange(n), a))
    rank = np.empty(n, dtype=np.int64)
    rank[idx] = np.arange(n)
    return rank


def reference_simulate(inst, policy, *, step_time="unit", seed=None, predictions=None, **opt):
    """Simulate ``policy`` slot by slot; returns a :class:`Schedule`."""
    ss = np.random.SeedSequence(seed)
    pred_ss, pol_ss = ss.spawn(2)
    pr = resolve_predictions(inst, predictions, np.random.default_rng(pred_ss))
    rng = np.random.default_rng(pol_ss)
    model = get_step_time(step_time)
    unit = isinstance(model, UnitStepTime)
    n, M = inst.n, inst.memory
    s = [int(x) for x in inst.prompt]
    o = [int(x) for x in inst.output]
    a = inst.arrival.tolist()
    slotted = inst.is_slotted

    # ---- policy parameters (as in kvopt.sim.policies, written out again)
    fam = "future" if policy in FUTURE else "greedy"
    margin, order, ties, overflow, raise_on_evict, promote = 0.0, "pred", "arrival", \
        "clear-all", False, None
    if policy == "mcsf":
        q0 = pr.point if pr.point is not None else inst.output
    elif policy == "mc-benchmark":
        q0, order = inst.output, "arrival"
    elif policy == "hsf":
        q0 = inst.output
    elif policy == "amax":
        q0, ties = pr.upper, "random"
    elif policy == "amin":
        q0 = pr.lower if pr.lower is not None else np.ones(n, dtype=np.int64)
        ties, overflow, raise_on_evict = "random", "evict-smallest", True
    elif policy == "amin-multi":
        q0 = buckets(inst.output, opt.get("width", 100))[0]
        ties, overflow, raise_on_evict = "random", "evict-smallest", True
    elif policy == "a-l":
        ell = int(pr.lower.min()) if pr.lower is not None else int(inst.output.min())
        u = int(pr.upper.max()) if pr.upper is not None else int(inst.output.max())
        q0 = np.full(n, ell)
        order, promote, overflow = "fifo", (ell, u), "evict-smallest"
    elif policy == "mcsf-margin":
        q0 = pr.point if pr.point is not None else inst.output
        margin = opt.get("alpha", 0.1)
    elif policy in GREEDY:
        g_order = "length" if policy == "sjf" else "arrival"
        alpha = {"alpha-protection": 0.25, "alpha-beta-clearing": 0.2}.get(policy, 0.0)
        alpha = opt.get("alpha", alpha)
        beta = opt.get("beta", 0.1)
        g_overflow = {"fcfs": "preempt", "sjf": "preempt", "alpha-protection": "clear-all",
                      "alpha-beta-clearing": "beta"}[policy]
    else:
        raise ValueError(policy)
    if fam == "future":
        ties = opt.get("ties", ties)
        overflow = opt.get("overflow", overflow)
        cap = int(np.floor((1.0 - margin) * M + 1e-9))
        q = [int(min(max(int(x), 1), M - s[i])) for i, x in enumerate(q0)]
        if ties == "random":
            rank = np.empty(n, dtype=np.int64)
            rank[rng.permutation(n)] = np.arange(n)
        else:
            rank = _arrival_rank(inst.arrival)
        key = list(q) if order == "pred" else [0] * n
        seq = 0
    else:
        rank = _arrival_rank(inst.arrival)
        key = list(o) if g_order == "length" else [0] * n
        thr = int(np.floor((1.0 - alpha) * M + 1e-9))
    rank = [int(x) for x in rank]

    start = [-1] * n
    done = [False] * n
    arrived = [False] * n
    waiting: list[int] = []
    running: list[int] = []
    runs: list[tuple[int, int, int, bool]] = []
    t = int(min(a)) if slotted else 0
    now = float(t) if (slotted and unit) else (0.0 if slotted else float(min(a)))
    times = ([float(k) for k in range(t + 1)] if unit else [0.0] * (t + 1)) if slotted else [now]
    stalls = 0
    completions = 0
    last_clear = None
    newcomers = False
    by_arrival = [int(i) for i in np.argsort(inst.arrival, kind="stable")]
    ptr = 0

    def requeue(ids, new_q=None, back=False):
        nonlocal seq
        for i in ids:
            if new_q is not None:
                q[i] = int(min(max(new_q[i], 1), M - s[i]))
            if fam == "future" and order == "pred":
                key[i] = q[i]
            elif fam == "future" and back:
                seq += 1
                key[i] = seq
            waiting.append(i)

    while not all(done):
        for i in list(running):
            if start[i] + o[i] == t:
                runs.append((i, start[i], o[i], True))
                done[i] = True
                running.remove(i)
                start[i] = -1
                completions += 1
        if all(done):
            break
        while ptr < n and (a[by_arrival[ptr]] <= t if slotted else
                           a[by_arrival[ptr]] <= now + 1e-9):
            i = by_arrival[ptr]
            ptr += 1
            if not arrived[i]:
                arrived[i] = True
                waiting.append(i)
                if fam == "future" and order == "fifo":
                    key[i] = seq + 1
                    newcomers = True
        if fam == "future" and order == "fifo" and newcomers:
            seq += 1
        newcomers = False
        evicted: list[int] = []
        stall = 0
        if fam == "future":
            if promote is not None:
                ell, u = promote
                pro = [i for i in running if q[i] == ell and q[i] < u and t - start[i] >= ell]
                for i in pro:
                    running.remove(i)
                    evicted.append(i)
                    runs.append((i, start[i], t - start[i], False))
                requeue(pro, {i: u for i in pro}, back=True)
            used = sum(s[j] + t + 1 - start[j] for j in running)
            if used > M and overflow == "clear-all":
                sig = (completions, ptr, tuple(sorted(running)))
                if last_clear == sig:
                    raise LivelockError("reference livelock")
                last_clear = sig
                victims = list(running)
            elif used > M:
                victims = []
                for j in sorted(running, key=lambda j: (q[j], rank[j])):
                    if used <= M:
                        break
                    victims.append(j)
                    used -= s[j] + t + 1 - start[j]
            else:
                victims = []
            newq = {j: max(q[j], t - start[j]) for j in victims} if raise_on_evict else None
            for j in victims:
                running.remove(j)
                runs.append((j, start[j], t - start[j], False))
            requeue(victims, newq)
            # predicted profile of the running set at t+1 .. t+H (lengths max(q, progress+1))
            H = max([q[i] for i in waiting] + [1])
            prof = [0] * (H + 1)
            for j in running:
                L = max(q[j], t - start[j] + 1)
                for tau in range(t + 1, min(start[j] + L, t + H) + 1):
                    prof[tau - t] += s[j] + tau - start[j]
            admitted = []
            for i in sorted(waiting, key=lambda i: (key[i], rank[i])):
                trial = list(prof)
                for d in range(1, q[i] + 1):
                    trial[d] += s[i] + d
                # eq. (5) at t' = t+1 .. t+q_i: the later slots hold what earlier checks allowed
                # (the running set's own profile may exceed cap there after a request larger
                # than cap was started alone, and that must not block the candidate)
                if max(trial[1:q[i] + 1]) > cap and (admitted or running):
                    break
                prof = trial
                admitted.append(i)
        else:
            used = sum(s[j] + t + 1 - start[j] for j in running)
            victims = []
            if used > M:
                if g_overflow == "preempt":
                    for j in sorted(running, key=lambda j: -(key[j] * n + rank[j])):
                        if used <= M:
                            break
                        victims.append(j)
                        used -= s[j] + t + 1 - start[j]
                elif g_overflow == "clear-all":
                    sig = (completions, ptr, tuple(sorted(running)))
                    if last_clear == sig:
                        raise LivelockError("reference livelock")
                    last_clear = sig
                    victims = list(running)
                    used = 0
                else:
                    live = sorted(running)
                    gone = [False] * len(live)
                    passes = 0
                    while used > M:
                        draw = rng.random(len(live))
                        for k, j in enumerate(live):
                            if draw[k] < beta and not gone[k]:
                                gone[k] = True
                                used -= s[j] + t + 1 - start[j]
                        passes += 1
                    victims = [j for k, j in enumerate(live) if gone[k]]
                    stall = passes - 1
            for j in victims:
                running.remove(j)
                runs.append((j, start[j], t - start[j], False))
                waiting.append(j)
            admitted = []
            for i in sorted(waiting, key=lambda i: (key[i], rank[i])):
                if used + s[i] + 1 > thr and (admitted or used > 0):
                    break
                used += s[i] + 1
                admitted.append(i)
        for i in admitted:
            waiting.remove(i)
            start[i] = t
            running.append(i)
        assert sum(s[j] + t + 1 - start[j] for j in running) <= M
        stalls += stall
        # idle on a timed instance: jump to the next arrival
        if not running and not waiting and not slotted:
            nxt = a[by_arrival[ptr]]
            now = max(now, nxt)
            times.append(now)
            t += 1
            continue
        new = [i for i in admitted]
        old = [j for j in running if j not in new]
        P = sum(s[i] for i in new)
        Psq = float(sum(s[i] ** 2 for i in new))
        kv = sum(s[j] + t - start[j] for j in old)
        dec = len(old)
        dur = float(model.durations(np.array([P + dec]), np.array([dec]), np.array([kv]),
                                    np.array([P]), np.array([Psq]))[0])
        now += dur * (1 + stall)
        times.append(now)
        t += 1
    arr = np.array(runs, dtype=np.int64).reshape(-1, 4)
    keep = not (slotted and unit and stalls == 0)
    return Schedule(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3].astype(bool), inst.sha256(),
                    source=f"ref:{policy}", times=np.array(times) if keep else None)
