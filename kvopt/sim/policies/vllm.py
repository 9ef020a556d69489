"""vLLM's scheduler as vLLM does it: the ``vllm`` policy.

One decision point of the engine is one scheduler step of vLLM (``Scheduler.schedule``):

- **KV in blocks** of ``block_size`` tokens (16): a request holding ``x`` tokens takes
  ``ceil(x / block_size)`` of the ``M / block_size`` blocks (the engine and the validator
  count memory in blocks; ``block_size`` must divide ``M``).
- **Admission** in FCFS order (arrival; requests preempted for recompute go back to the
  *front* of the waiting queue, the last one preempted first, as vLLM's ``extendleft`` /
  ``prepend_request``), head-of-line blocking, while the blocks it needs leave at least the
  **watermark** ``int(watermark * blocks)`` free (vLLM's ``can_allocate``; default 1 %),
  at most ``max_num_seqs`` requests run (256) and the step's tokens stay within
  ``max_num_batched_tokens`` (a request whose prompt alone exceeds it starts in a step of its
  own, and one that could never pass the watermark starts on an empty system: vLLM would
  reject both, kvopt cannot drop a request).
- **Decode growth** needs one more token per running request; when the blocks run out the
  **most recently admitted** request is preempted (vLLM pops the tail of its running queue),
  repeatedly, until the rest fits. Preempted requests keep their tokens (``recompute``,
  vLLM's default and this policy's), go to host memory (``swap``; back, oldest first, once
  the blocks they need pass the watermark and before any new prefill, as vLLM v0 does), or
  lose them (``restart``).
- **Batching** (``batching``): ``"prefill-only"`` (vLLM v0 without chunked prefill, and
  Vidur's vLLM scheduler: a step that admits prompts runs only those prefills, the running
  requests wait, and no one is preempted in it); ``"mixed"`` (the seed convention: new
  prefills share the step with the decodes, the decodes are served first); ``"chunked"``
  (Sarathi-Serve and vLLM v1: a budget of ``max_num_batched_tokens`` tokens per step, one per
  decode first, the rest to prefills in admission order, a prompt split across steps; its
  blocks are allocated when its first chunk is scheduled, as vLLM v0's block manager does).

Differences from vLLM, on purpose: vLLM's decode check wants one free block per running
sequence before appending (a one-block heuristic) where kvopt wants the blocks the step
really needs; vLLM v1 allocates a chunked prompt's blocks chunk by chunk where kvopt holds the
whole prompt from its first chunk (v0's rule); no prefix caching.

Defaults: ``block_size=16``, ``watermark=0.01``, ``max_num_seqs=256`` (vLLM's);
``max_num_batched_tokens`` 4096 without chunking (vLLM v0 uses ``max(max_model_len, 2048)``,
4096 for Llama-2) and 512 with it (Sarathi-Serve's and Vidur's chunk; vLLM v1 defaults to
2048-16384 depending on the entry point); ``batching="prefill-only"``; preemption
``recompute``. The other policies' memory defaults and why: every seed policy (``fcfs``,
``mcsf``, the alpha family, ...) keeps token-exact memory (``block_size`` 1) and no watermark
(``fcfs``: ``alpha = 0``, the seed papers' "vLLM-like FCFS"; the alpha family: its paper's
``alpha``), because that is the model their results are stated in; ``vllm`` is the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.sim.engine import Decision, SimState, WaitQueue, evictions_to_cover
from kvopt.sim.policies.base import Policy, _count, _number, arrival_rank
from kvopt.sim.policies.registry import PolicyInfo, declare_policy_options, register_policy
from kvopt.sim.predicted_lengths import Predictions
from kvopt.sim.serving import BATCHING


class VllmPolicy(Policy):
    """vLLM's scheduler (module docstring).

    Parameters
    ----------
    block_size
        KV block size in tokens.
    watermark
        Fraction of the blocks kept free at admission, in ``[0, 1)``.
    max_num_seqs
        Most requests running (and prefilling) at once (and at most the instance's
        ``max_batch``).
    max_num_batched_tokens
        Tokens per step (``None``: 4096, or 512 with ``batching="chunked"``).
    batching
        ``"prefill-only"``, ``"mixed"`` or ``"chunked"``.

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=64, arrival=[0, 1], prompt=[14, 14], output=[40, 40])
    >>> r = simulate(inst, "vllm")   # 4 blocks; request 1's prefill pauses request 0 at 2
    >>> r.schedule.preemption, r.schedule.block_size, r.schedule.paused.tolist()
    ('recompute', 16, [2])
    >>> r.metrics.evictions, r.schedule.completion(inst).tolist()  # 1 preempted at 19 (18
    (1, [41, 63])
    >>> r.schedule.run_offset.tolist()   # tokens, 3 blocks), resumes from them at 41
    [0, 0, 18]
    """

    name = "vllm"

    def __init__(self, *, block_size: int = 16, watermark: float = 0.01,
                 max_num_seqs: int = 256, max_num_batched_tokens: int | None = None,
                 batching: str = "prefill-only") -> None:
        b = _count("block_size", block_size)
        wm = _number("watermark", watermark, 0.0, 1.0, hi_open=True)
        seqs = _count("max_num_seqs", max_num_seqs)
        if batching not in BATCHING:
            raise UsageError("batching", f"must be one of {', '.join(BATCHING)}, got "
                             f"{batching!r}")
        chunked = batching == "chunked"
        if max_num_batched_tokens is None:
            max_num_batched_tokens = 512 if chunked else 4096
        T = _count("max_num_batched_tokens", max_num_batched_tokens)
        if chunked and seqs > T:
            raise UsageError("max_num_batched_tokens", f"the chunk budget ({T}) must be at "
                             f"least max_num_seqs ({seqs}), as vLLM requires")
        self.b, self.wm_frac, self.max_seqs, self.T, self.batching = b, wm, seqs, T, batching
        self.serving = {"block_size": b, "batching": batching,
                        "chunk_budget": T if chunked else None}
        self.options = {"block_size": b, "watermark": wm, "max_num_seqs": seqs,
                        "max_num_batched_tokens": T, "batching": batching}

    def reset(self, st: SimState) -> None:
        self.N = st.M // self.b
        self.wm = int(self.wm_frac * self.N)
        self.queue = WaitQueue(arrival_rank(st.a))
        self.front = 0  # keys of requests put back at the front (more negative = earlier)
        self.seq = np.zeros(st.n, dtype=np.int64)  # admission order of the running
        self.counter = 0
        self.base = np.zeros(st.n, dtype=np.int64)  # s + kept at admission (prefilling)
        self.victims: list[int] = []
        self.swapped: list[int] = []  # swapped-out requests, oldest first
        self.stats = {"preemptions": 0, "prefill_steps": 0}

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        self.queue.push(ids, np.zeros(ids.shape[0], dtype=np.int64))

    def _blocks(self, tokens: Any) -> Any:
        return -(-tokens // self.b)

    def _requeue_victims(self, st: SimState) -> None:
        """Last decision's victims: swapped ones wait for a swap-in, the others go to the
        front of the waiting queue (the last one preempted first)."""
        for i in self.victims:
            if st.swapped[i]:
                self.swapped.append(i)
            else:
                self.front -= 1
                self.queue.push_one(i, self.front)
        self.victims = []

    def _preempt(self, st: SimState, ids: NDArray[np.int64], need: NDArray[np.int64],
                 total: int) -> tuple[list[int], int]:
        """Preempt the most recently admitted of ``ids`` (needing ``need`` blocks) until the
        total fits the blocks; returns the victims and the new total."""
        out: list[int] = []
        if total <= self.N:
            return out, total
        order = np.argsort(-self.seq[ids], kind="stable")
        k, freed = evictions_to_cover(need[order], total - self.N)
        out = ids[order[:k]].tolist()
        self.stats["preemptions"] += k
        return out, total - freed

    def _admit(self, st: SimState, used: int, seqs: int, tokens: int, admit: list[int]
               ) -> tuple[bool, int]:
        """Admit from the waiting queue (FCFS, watermark, batch and token caps); returns
        whether the token cap (not memory) stopped it, and the tokens used."""
        queue, s, kept = self.queue, st.s, st.kept
        empty = seqs == 0 and not admit
        while len(queue):
            i = queue.peek()
            base = int(s[i] + kept[i])
            need = int(self._blocks(base + 1))
            if seqs + len(admit) + 1 > min(self.max_seqs, st.B):
                return False, tokens
            if self.batching == "chunked":
                if tokens >= self.T:
                    return True, tokens
                add = min(base, self.T - tokens)
            else:
                add = base
                if tokens + add > self.T and (admit or tokens):
                    return True, tokens
            if self.N - used - need < self.wm and not (empty and not admit):
                return False, tokens
            queue.pop()
            admit.append(i)
            used += need
            tokens += add
        return False, tokens

    def _swap_in(self, st: SimState, used: int, seqs: int, admit: list[int]) -> int:
        """Swapped-out requests come back, oldest first, while the watermark allows."""
        s, kept = st.s, st.kept
        while self.swapped and seqs + len(admit) < min(self.max_seqs, st.B):
            i = self.swapped[0]
            need = int(self._blocks(s[i] + kept[i] + 1))
            if self.N - used - need < self.wm and (used or admit):
                break
            self.swapped.pop(0)
            admit.append(i)
            used += need
        return used

    def decide(self, st: SimState) -> Decision:
        if self.victims:
            self._requeue_victims(st)
        t, s = st.t, st.s
        run, pf = st.running, st.prefilling
        admit: list[int] = []
        evict: list[int] = []
        seqs = int(run.shape[0] + pf.shape[0])
        capped = False
        if self.batching == "prefill-only" and not self.swapped:
            now = self._blocks(s[run] + t - st.start[run])
            capped, _ = self._admit(st, int(now.sum()), seqs, 0, admit)
        if admit:  # a prefill-only step: the running requests wait, nobody is preempted
            self.stats["prefill_steps"] += 1
        else:
            nxt = self._blocks(s[run] + t + 1 - st.start[run])
            ids = np.concatenate([run, pf]) if pf.shape[0] else run
            need = (np.concatenate([nxt, self._blocks(self.base[pf] + 1)]) if pf.shape[0]
                    else nxt)
            evict, total = self._preempt(st, ids, need, int(need.sum()))
            seqs -= len(evict)
            if not evict:
                total = self._swap_in(st, total, seqs, admit)
            if self.batching != "prefill-only" and not self.swapped:
                tokens = 0  # mixed: prefill tokens only (the seed convention has no cap)
                if self.batching == "chunked":  # decodes first, then the ongoing prefills
                    pf_on = pf[~np.isin(pf, evict)]
                    tokens = int(np.count_nonzero(~np.isin(run, evict))) + len(admit)
                    tokens += int(np.minimum(st.pre_left[pf_on], self.T).sum())
                capped, _ = self._admit(st, total, seqs, tokens, admit)
        adm = np.asarray(admit, dtype=np.int64)
        if adm.shape[0]:
            self.counter += 1
            self.seq[adm] = self.counter + np.arange(adm.shape[0])
            self.counter += int(adm.shape[0])
            self.base[adm] = s[adm] + st.kept[adm]
        self.victims = evict
        # capped by the token budget, or victims to requeue: the next step looks again
        wake = t + 1 if capped or evict else None
        return Decision(evict=np.asarray(evict, dtype=np.int64) if evict else None, admit=adm,
                        wake=wake, arrivals_matter=not len(self.queue))


def _vllm(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return VllmPolicy(**kw)


register_policy("vllm", _vllm, PolicyInfo(modes=("recompute", "swap", "restart")))
declare_policy_options("vllm", VllmPolicy)
