"""Counterexample search: small instances that maximise ``TEL(policy) / OPT``.

Random restarts plus hill climbing with local moves (change one request's output, prompt or
arrival; add or drop a request; change ``M``), under explicit constraints
(:class:`SearchSpace`). OPT is the hindsight IP solved to proven optimality by
:func:`kvopt.mip.solve` (cached by instance hash); an instance whose optimum is not proven
within the time limit is skipped. Randomised policies are averaged over ``seeds``.

Examples
--------
>>> space = SearchSpace(n=(2, 3), memory=(4, 5), prompt=(0, 2), output=(1, 3))
>>> res = search("mcsf", space=space, restarts=2, steps=5, rng_seed=0)
>>> res.ratio >= 1.0
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.report.measure import RANDOMIZED, opt_tel, policy_tel

__all__ = ["SearchResult", "SearchSpace", "check_search", "search"]


@dataclass(frozen=True)
class SearchSpace:
    """Constraints of the search (all ranges inclusive).

    Attributes
    ----------
    n, memory, prompt, output
        Ranges of the number of requests, ``M``, prompt sizes and output lengths
        (outputs are also capped at ``M - s``).
    max_arrival
        Arrivals in ``0..max_arrival`` (0: everything at time 0, seed 000's setting).
    same_prompt
        All requests share one prompt size (seed 000's and Thm 4.3's assumption).
    interval
        ``(l, u)``: every request gets the prediction interval ``[l, u]`` and outputs are
        drawn inside it (Amin / Amax need it); ``None`` leaves predictions out.

    Examples
    --------
    >>> space = SearchSpace(n=(2, 3), max_arrival=2)   # online: arrivals in 0..2
    >>> space.to_dict()
    {'n': [2, 3], 'memory': [4, 12], 'prompt': [0, 3], 'output': [1, 8], 'max_arrival': 2,
     'same_prompt': False, 'interval': None}
    """

    n: tuple[int, int] = (2, 6)
    memory: tuple[int, int] = (4, 12)
    prompt: tuple[int, int] = (0, 3)
    output: tuple[int, int] = (1, 8)
    max_arrival: int = 0
    same_prompt: bool = False
    interval: tuple[int, int] | None = None

    def check(self) -> None:
        """Raise :class:`~kvopt.core.errors.UsageError` naming the attribute if the space is
        malformed or holds no instance (the search would otherwise loop forever).

        Examples
        --------
        >>> SearchSpace().check()
        >>> SearchSpace(memory=(2, 3), prompt=(2, 2), output=(2, 4)).check()
        Traceback (most recent call last):
        kvopt.core.errors.UsageError: invalid memory: no request fits: the smallest request \
needs 4 tokens (prompt 2 + output 2) but memory is at most 3
        """
        least = {"n": 1, "memory": 1, "prompt": 0, "output": 1}
        for name, lo_min in least.items():
            lo, hi = getattr(self, name)
            if lo < lo_min or lo > hi:
                raise UsageError(name, f"need {lo_min} <= MIN <= MAX, got {lo} {hi}")
        if self.max_arrival < 0:
            raise UsageError("max_arrival", f"must be >= 0, got {self.max_arrival}")
        if self.interval is not None and not 1 <= self.interval[0] <= self.interval[1]:
            raise UsageError("interval", f"need 1 <= L <= U, got {self.interval[0]} "
                             f"{self.interval[1]}")
        o_min = self.output[0] if self.interval is None else self.interval[0]
        if self.prompt[0] + o_min > self.memory[1]:
            raise UsageError("memory", f"no request fits: the smallest request needs "
                             f"{self.prompt[0] + o_min} tokens (prompt {self.prompt[0]} + "
                             f"output {o_min}) but memory is at most {self.memory[1]}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"n": list(self.n), "memory": list(self.memory), "prompt": list(self.prompt),
                "output": list(self.output), "max_arrival": self.max_arrival,
                "same_prompt": self.same_prompt,
                "interval": None if self.interval is None else list(self.interval)}


@dataclass
class SearchResult:
    """Best instance found and the search trace.

    Examples
    --------
    >>> space = SearchSpace(n=(2, 3), memory=(4, 6), prompt=(0, 1), output=(1, 5),
    ...                     max_arrival=2)
    >>> res = search("wait", space=space, restarts=1, steps=2)
    >>> res.policy, res.ratio, res.tel, res.opt, res.evaluations, res.skipped
    ('wait', 2.0, 6.0, 3.0, 3, 0)
    """

    policy: str
    instance: Instance | None
    ratio: float
    tel: float
    opt: float
    evaluations: int
    skipped: int
    history: list[float] = field(default_factory=list)


def _o_range(space: SearchSpace, M: int, s: int) -> tuple[int, int]:
    lo, hi = space.output if space.interval is None else space.interval
    return lo, min(hi, M - s)


def _valid(space: SearchSpace, M: int, s: np.ndarray, o: np.ndarray) -> bool:
    lo = space.output[0] if space.interval is None else space.interval[0]
    return bool(s.size and (s + o <= M).all() and (o >= lo).all())


def _random(space: SearchSpace, rng: np.random.Generator
            ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    while True:
        M = int(rng.integers(space.memory[0], space.memory[1] + 1))
        n = int(rng.integers(space.n[0], space.n[1] + 1))
        if space.same_prompt:
            s = np.full(n, int(rng.integers(space.prompt[0], space.prompt[1] + 1)))
        else:
            s = rng.integers(space.prompt[0], space.prompt[1] + 1, size=n)
        o = np.array([int(rng.integers(_o_range(space, M, int(si))[0],
                                       max(_o_range(space, M, int(si))) + 1)) for si in s])
        a = rng.integers(0, space.max_arrival + 1, size=n)
        if _valid(space, M, s, o):
            return M, a, s, o


def _neighbour(space: SearchSpace, state: tuple[int, np.ndarray, np.ndarray, np.ndarray],
               rng: np.random.Generator) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    for _ in range(50):
        M, a, s, o = state[0], state[1].copy(), state[2].copy(), state[3].copy()
        move = int(rng.integers(0, 6))
        n = s.size
        j = int(rng.integers(0, n))
        if move == 0:      # output of one request
            lo, hi = _o_range(space, M, int(s[j]))
            o[j] = int(rng.integers(lo, max(lo, hi) + 1))
        elif move == 1:    # prompt (of one, or of all when prompts are shared)
            v = int(rng.integers(space.prompt[0], space.prompt[1] + 1))
            if space.same_prompt:
                s[:] = v
            else:
                s[j] = v
        elif move == 2 and space.max_arrival > 0:
            a[j] = int(rng.integers(0, space.max_arrival + 1))
        elif move == 3 and n < space.n[1]:  # add a copy-like request
            si = s[0] if space.same_prompt else int(rng.integers(space.prompt[0],
                                                                 space.prompt[1] + 1))
            lo, hi = _o_range(space, M, int(si))
            s = np.append(s, si)
            o = np.append(o, int(rng.integers(lo, max(lo, hi) + 1)))
            a = np.append(a, int(rng.integers(0, space.max_arrival + 1)))
        elif move == 4 and n > space.n[0]:
            keep = np.arange(n) != j
            a, s, o = a[keep], s[keep], o[keep]
        elif move == 5:
            M = int(np.clip(M + rng.choice([-1, 1]), space.memory[0], space.memory[1]))
        else:
            continue
        if _valid(space, M, s, o):
            return M, a, s, o
    return state


def _instance(space: SearchSpace, state: tuple[int, np.ndarray, np.ndarray, np.ndarray],
              name: str) -> Instance:
    M, a, s, o = state  # request order is kept: it decides tie-breaks of the policies
    kw: dict[str, Any] = {}
    if space.interval is not None:
        kw = {"pred_lower": np.full(s.size, space.interval[0]),
              "pred_upper": np.full(s.size, space.interval[1])}
    return Instance(memory=M, arrival=a, prompt=s, output=o, name=name, **kw)


def check_search(policy: str, space: SearchSpace) -> None:
    """Check the arguments of :func:`search` before it runs: the space
    (:meth:`SearchSpace.check`), the policy name and the predictions it needs. Raises
    :class:`~kvopt.core.errors.UsageError` naming ``policy``, ``interval`` or the space field.

    Examples
    --------
    >>> check_search("amin", SearchSpace())
    >>> check_search("amax", SearchSpace())
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid interval: amax needs interval predictions: give \
every request the interval [l, u]
    """
    from kvopt.sim import POLICIES, check_policy

    space.check()
    opts: dict[str, Any] = {}
    name, opts = ("amin", {"ties": "redraw"}) if policy == "amin/redraw" else (policy, opts)
    lo = space.output[0] if space.interval is None else space.interval[0]
    kw: dict[str, Any] = {}
    if space.interval is not None:
        kw = {"pred_lower": [space.interval[0]], "pred_upper": [space.interval[1]]}
    probe = Instance(memory=space.memory[1], arrival=np.zeros(1, dtype=np.int64),
                     prompt=np.array([space.prompt[0]]), output=np.array([lo]), **kw)
    try:
        check_policy(probe, name, **opts)
    except UsageError as exc:
        if exc.field == "predictions":
            raise UsageError("interval", f"{policy} needs interval predictions: give every "
                             "request the interval [l, u]") from None
        if exc.field == "policy":
            raise UsageError("policy", f"unknown policy {policy!r}; choose from "
                             f"{', '.join([*sorted(POLICIES), 'amin/redraw'])}") from None
        raise


def search(policy: str, *, space: SearchSpace | None = None, restarts: int = 10,
           steps: int = 40, seeds: Sequence[int] = (0, 1, 2, 3), rng_seed: int = 0,
           solver: str = "highs", time_limit: float = 10.0, progress: bool = False
           ) -> SearchResult:
    """Maximise ``mean TEL(policy) / OPT`` over small instances.

    Parameters
    ----------
    policy
        A ``kvopt.sim`` policy name (``"mcsf"``, ``"amin"``, ...; ``"amin/redraw"``).
    space
        Constraints (default :class:`SearchSpace` ``()``).
    restarts, steps
        Random restarts and hill-climbing steps per restart.
    seeds
        Policy seeds averaged for randomised policies.
    rng_seed
        Seed of the search itself (the search is deterministic given it).
    solver, time_limit
        OPT backend and its per-instance time limit.
    progress
        Progress on stderr (:class:`kvopt.core.progress.Progress`).

    Returns
    -------
    SearchResult
        The best instance carries ``expected`` with the measured TEL and OPT.

    Examples
    --------
    >>> space = SearchSpace(n=(2, 3), memory=(4, 6), prompt=(0, 1), output=(1, 5),
    ...                     max_arrival=2)
    >>> res = search("wait", space=space, restarts=2, steps=2, rng_seed=0)
    >>> res.history   # final ratio of each restart
    [2.0, 1.0]
    >>> w = res.instance   # three one-token requests arriving at 0, 2, 1
    >>> w.memory, w.arrival.tolist(), w.prompt.tolist(), w.output.tolist()
    (6, [0, 2, 1], [1, 0, 0], [1, 1, 1])
    >>> w.expected["wait_total_latency_mean"], w.expected["opt_total_latency"]
    (6.0, 3.0)
    """
    space = space or SearchSpace()
    rng = np.random.default_rng(rng_seed)
    opt_cache: dict[str, float | None] = {}
    evals = skipped = 0
    use_seeds = list(seeds) if policy in RANDOMIZED else [None]

    def score(state: tuple[int, np.ndarray, np.ndarray, np.ndarray]
              ) -> tuple[float, float, float]:
        nonlocal evals, skipped
        inst = _instance(space, state, "search")
        key = inst.sha256()
        if key not in opt_cache:
            obj, _, status = opt_tel(inst, solver=solver, time_limit=time_limit)
            opt_cache[key] = obj if status == "optimal" else None
        opt = opt_cache[key]
        evals += 1
        if opt is None:
            skipped += 1
            return -math.inf, math.nan, math.nan
        tel = float(np.mean([policy_tel(inst, policy, seed=sd) for sd in use_seeds]))
        return tel / opt, tel, opt

    best: tuple[float, float, float] = (-math.inf, math.nan, math.nan)
    best_state = None
    history: list[float] = []
    bar = None
    if progress:
        from kvopt.core.progress import Progress

        bar = Progress(restarts * (steps + 1), f"search {policy}", unit="eval")
    for _ in range(restarts):
        state = _random(space, rng)
        cur = score(state)
        if bar is not None:
            bar.update(1)
        for _ in range(steps):
            cand = _neighbour(space, state, rng)
            sc = score(cand)
            if bar is not None:
                bar.update(1)
            if sc[0] >= cur[0]:  # accept ties: plateau moves
                state, cur = cand, sc
        if cur[0] > best[0]:
            best, best_state = cur, state
        history.append(cur[0])
    if bar is not None:
        bar.close()
    inst = None
    if best_state is not None:
        inst = _instance(space, best_state, f"worst-{policy.replace('/', '-')}-seed{rng_seed}")
        inst = inst.replace(
            source=f"kvopt report search {policy} (rng_seed={rng_seed}, restarts={restarts}, "
                   f"steps={steps})",
            expected={f"{policy.replace('/', '_')}_total_latency_mean": best[1],
                      "opt_total_latency": best[2], "ratio_to_opt": best[0],
                      "policy_seeds": [s for s in use_seeds if s is not None]})
    return SearchResult(policy, inst, best[0], best[1], best[2], evals, skipped, history)
