"""How the engine serves: preemption mode, KV blocks, host (swap) memory, prefill batching.

:class:`EngineConfig` is what :func:`kvopt.sim.engine.run_engine` needs beyond the policy:

``preemption``
    ``"restart"`` (the seed convention: an evicted request loses its tokens), ``"recompute"``
    (vLLM's default: it keeps them and re-prefills prompt + generated tokens when it resumes)
    or ``"swap"`` (its KV goes to host memory and comes back over the host link; when the host
    memory is full the victim is recomputed instead). See :mod:`kvopt.core.schedule`.
``block_size``
    KV allocation unit in tokens (1: token-exact, the seed convention; vLLM: 16). Memory is
    rounded up per request; it must divide ``M``.
``host_memory``
    Swap space in tokens; ``None``: vLLM's default of 4 GiB per GPU converted with the
    step-time model's KV bytes per token, or ``M`` for models without a device (``unit``,
    ``affine``).
``batching``
    ``"mixed"`` (the seed convention: a started request's prefill shares the step with every
    running request's decode), ``"prefill-only"`` (vLLM v0 without chunked prefill: a step
    that prefills runs no decodes; the others pause, a *paused* slot of the schedule) or
    ``"chunked"`` (Sarathi-Serve, vLLM v1: a budget of ``chunk_budget`` tokens per step,
    decodes first, prefills split into chunks in admission order; a prefilling request holds
    its whole prompt allocation from its first chunk).

Swap transfers take ``tokens * kv_bytes_per_token / tp / host_bandwidth`` seconds, charged to
the step after the decision that swaps (out and in). Host-link bandwidth
(:data:`HOST_LINK_BANDWIDTH`): 0.8 x the PCIe x16 line rate of the GPU's host link (A100:
Gen4, 31.5 GB/s; H100: Gen5, 63 GB/s), per GPU; every GPU of a TP group moves its shard in
parallel. On unit steps a swap costs no slot (slots are the theory's unit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.schedule import PREEMPTION_MODES, PreemptionMode

#: Prefill batching modes (see the module docstring).
BATCHING = ("mixed", "prefill-only", "chunked")

#: Host-link (PCIe x16) bandwidth per GPU family, bytes/s: 0.8 x line rate (assumption).
HOST_LINK_BANDWIDTH = {"a100": 0.8 * 31.5e9, "h100": 0.8 * 63e9}

#: vLLM's default swap space per GPU (``swap_space=4`` GiB).
VLLM_SWAP_BYTES = 4 * 2**30


class BlockSizeError(UsageError):
    """A block size that does not divide the KV memory (a :class:`UsageError` naming
    ``block_size``), with the nearest fixes: ``memories``, the multiples of the block size
    around ``M``, and ``blocks``, the block sizes up to it that divide ``M``.

    Examples
    --------
    >>> err = BlockSizeError(16492, 16)
    >>> err.memories, err.blocks, err.suggested_block
    ((16480, 16496), (1, 2, 4, 7, 14), 4)
    >>> print(err)   # doctest: +NORMALIZE_WHITESPACE
    invalid block_size: 16 does not divide the KV memory M = 16492 tokens; take a memory that
    is a multiple of 16 (16480 or 16496) or a block size that divides 16492 (1, 2, 4, 7, 14)
    """

    def __init__(self, memory: int, block: int) -> None:
        self.memory, self.block = int(memory), int(block)
        lo = memory // block * block
        self.memories = tuple(m for m in (lo, lo + block) if m >= block)
        self.blocks = tuple(b for b in range(1, block) if memory % b == 0)
        #: the largest power of two among :attr:`blocks` (vLLM's block sizes are powers of 2)
        self.suggested_block = max(b for b in self.blocks if b & (b - 1) == 0)
        super().__init__("block_size", f"{block} does not divide the KV memory M = {memory} "
                         f"tokens; take a memory that is a multiple of {block} ("
                         f"{' or '.join(map(str, self.memories))}) or a block size that "
                         f"divides {memory} ({', '.join(map(str, self.blocks))})")


def _integer(name: str, value: Any, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise UsageError(name, f"must be an integer >= {lo}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class EngineConfig:
    """Preemption mode, blocks, host memory and prefill batching (module docstring).

    Examples
    --------
    >>> EngineConfig().seed_convention
    True
    >>> EngineConfig(preemption="recompute", block_size=16).seed_convention
    False
    >>> EngineConfig(preemption="pause")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid preemption: must be one of restart, recompute, swap, \
got 'pause'
    """

    preemption: PreemptionMode = "restart"
    block_size: int = 1
    host_memory: int | None = None
    batching: str = "mixed"
    chunk_budget: int | None = None

    def __post_init__(self) -> None:
        if self.preemption not in PREEMPTION_MODES:
            raise UsageError("preemption", f"must be one of {', '.join(PREEMPTION_MODES)}, got "
                             f"{self.preemption!r}")
        if self.batching not in BATCHING:
            raise UsageError("batching", f"must be one of {', '.join(BATCHING)}, got "
                             f"{self.batching!r}")
        object.__setattr__(self, "block_size", _integer("block_size", self.block_size, 1))
        if self.host_memory is not None:
            object.__setattr__(self, "host_memory",
                               _integer("host_memory", self.host_memory, 0))
        if self.chunk_budget is not None:
            object.__setattr__(self, "chunk_budget",
                               _integer("chunk_budget", self.chunk_budget, 1))
        if self.batching == "chunked" and self.chunk_budget is None:
            raise UsageError("chunk_budget", "chunked prefill needs a token budget per step")

    @property
    def seed_convention(self) -> bool:
        """Restart, token-exact memory, mixed batching: the schedule is the seed model's."""
        return (self.preemption == "restart" and self.block_size == 1
                and self.batching == "mixed")

    def check(self, memory: int) -> None:
        """Raise :class:`BlockSizeError` (a :class:`UsageError` naming ``block_size``, with
        the nearest fixes) if the block size does not divide ``memory``."""
        if int(memory) % self.block_size:
            raise BlockSizeError(int(memory), self.block_size)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (recorded in the schedule's metadata)."""
        return {"preemption": self.preemption, "block_size": self.block_size,
                "host_memory": self.host_memory, "batching": self.batching,
                "chunk_budget": self.chunk_budget}


def kv_bytes_per_gpu_token(model: Any) -> float | None:
    """KV bytes one token occupies on one GPU of the step-time model's TP group (``None``
    for a model without a transformer config).

    Examples
    --------
    Llama-2-70B keeps 320 KiB of KV per token (K and V, 8 heads x 128, 80 layers, fp16), split
    over the 2 GPUs of its tensor-parallel group:

    >>> from kvopt.sim.steptime import get_step_time
    >>> kv_bytes_per_gpu_token(get_step_time("a100-llama2-70b-tp2"))
    163840.0
    >>> kv_bytes_per_gpu_token(get_step_time("unit")) is None
    True
    """
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "kv_bytes_per_token"):
        return None
    return float(config.kv_bytes_per_token) / float(getattr(model, "tp", 1))


def swap_seconds_per_token(model: Any) -> float:
    """Seconds to move one token's KV between GPU and host (0 without a device).

    Examples
    --------
    >>> from kvopt.sim.steptime import get_step_time
    >>> round(swap_seconds_per_token(get_step_time("a100-llama2-70b-tp2")) * 1e6, 2)  # us
    6.5
    >>> swap_seconds_per_token(get_step_time("unit"))
    0.0
    """
    per = kv_bytes_per_gpu_token(model)
    gpu = getattr(model, "gpu", None)
    if per is None or gpu is None:
        return 0.0
    bw = HOST_LINK_BANDWIDTH.get(getattr(gpu, "family", ""), HOST_LINK_BANDWIDTH["a100"])
    return per / bw


def default_host_memory(model: Any, memory: int) -> int:
    """vLLM's 4 GiB of swap per GPU in tokens of the model's KV, or ``memory`` without one.

    Examples
    --------
    >>> from kvopt.sim.steptime import get_step_time
    >>> default_host_memory(get_step_time("a100-llama2-70b-tp2"), 16492)   # 8 GiB / 320 KiB
    26214
    """
    per = kv_bytes_per_gpu_token(model)
    if per is None:
        return int(memory)
    return int(VLLM_SWAP_BYTES // per)


def block_tokens(tokens: NDArray[np.int64], block: int) -> NDArray[np.int64]:
    """``tokens`` rounded up to whole blocks (in tokens).

    Examples
    --------
    >>> block_tokens(np.array([0, 1, 16, 17]), 16).tolist()
    [0, 16, 16, 32]
    """
    if block == 1:
        return tokens
    return -(-tokens // block) * block


def first_block_overflow(c: NDArray[np.int64], t: int, free: int, block: int) -> int | None:
    """First slot ``tau > t`` at which requests holding ``c_j + tau`` tokens each need more
    than ``free`` tokens in blocks of ``block`` (``None`` if no request runs).

    The total is between ``sum c + k tau`` and that plus ``k (block - 1)`` (``k`` requests),
    so only ``block`` candidate slots need an exact look.

    Examples
    --------
    >>> first_block_overflow(np.array([0, 0]), 0, 64, 16)   # 2 x 16 tokens fit until 32
    33
    >>> first_block_overflow(np.array([5]), 0, 64, 16)      # 5 + tau > 64 from tau = 60
    60
    """
    k = int(c.shape[0])
    if k == 0:
        return None
    C = int(c.sum())
    hi = max((free - C) // k + 1, t + 1)        # the lower bound exceeds from here
    lo = max((free - C - k * (block - 1)) // k + 1, t + 1)  # the upper bound from here
    if lo >= hi:
        return hi
    taus = np.arange(lo, hi, dtype=np.int64)
    tot = (-(-(c[:, None] + taus[None, :]) // block)).sum(axis=0) * block
    over = np.flatnonzero(tot > free)
    return int(taus[over[0]]) if over.size else hi
