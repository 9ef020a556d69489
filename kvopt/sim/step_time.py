"""Step-time models: how long one batch (iteration) takes.

The engine describes each batch by five numbers (all vectorized over a run of slots):

``prefill``
    prompt tokens of the requests started in this batch (``sum s_i``);
``prefill_sq``
    ``sum s_i**2`` of those prompts (causal prefill attention is quadratic);
``decode``
    number of running requests that generate one token from their KV cache;
``kv``
    KV tokens those decode steps read (``sum_j (s_j + progress_j)``);
``tokens``
    ``prefill + decode``, the token count the linear layers process.

Models (see :data:`STEP_TIME_MODELS`):

- ``unit``: every batch takes 1 (the theory model; MIP-comparable slots).
- ``a100-llama2-70b-tp{2,4,8}``, ``a100-llama2-7b-tp{1,2}``, ``h100-llama2-7b-tp1``,
  ``h100-llama2-70b-tp{2,4,8}``: :class:`ProfiledStepTime`, Vidur's measured A100 / H100
  operator profiles + measured all-reduce + analytic attention. Interconnect: a TP-2 pair
  uses the pairwise-NVLink table, TP 4 and 8 the single-node NVSwitch (DGX/HGX) table;
  ``a100-llama2-70b-tp4-pairwise`` keeps the pairwise-NVLink table as an explicit option.
- ``roofline-<same names>``: :class:`RooflineStepTime`, a first-principles roofline
  parameterised by GPU and model config.
- Llama-2-70B names (``<gpu>-llama2-70b-tp<N>``, ``roofline-...``) are *serving-engine*
  models: the GPU-time model plus :class:`EngineCosts` (per step, per decoding sequence, per
  all-reduce and extra rank) calibrated on Splitwise's H100 serving runs
  (:data:`ENGINE_CALIBRATION`, ``kvopt/data/engine``); the same names with ``-gpu`` are the
  GPU-time models (operator profiles / roofline only: what a CUDA-graph GPU timing measures).
  The 7B names have no engine calibration and are GPU-time models (``-gpu`` is an alias).
- a path to a fitted-model JSON file (``kvopt steptime fit``; :func:`load_step_time`).
- ``affine``: :class:`AffineStepTime`, the digest's surrogate ``c0 + c_p P + c_d D + c_kv K``.

Every model exposes ``coefficients()`` (a JSON-ready dict) so the numbers are inspectable.
Empty batches (no request running) take 0 seconds in the real-time models, 1 in ``unit``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib.abc import Traversable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError
from kvopt.core.io import data_file


def read_csv_rows(path: Traversable | Path) -> list[dict[str, str]]:
    """All rows of a CSV file (shipped data or a user's file) as dicts of strings."""
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def isotonic_increasing(y: ArrayLike) -> NDArray[np.float64]:
    """Least-squares non-decreasing fit of ``y`` (pool-adjacent-violators algorithm).

    Profile noise at tiny sizes (1-2 tokens, a few KB) makes measured curves dip; the
    isotonic fit replaces each violating run by its mean, so a noisy spike is averaged
    with its neighbours instead of being carried forward (as a cumulative max would).

    Examples
    --------
    >>> isotonic_increasing([1.0, 3.0, 2.0, 4.0]).tolist()
    [1.0, 2.5, 2.5, 4.0]
    """
    vals: list[float] = []
    cnt: list[int] = []
    for v in np.asarray(y, dtype=np.float64).tolist():
        vals.append(v)
        cnt.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            n = cnt[-2] + cnt[-1]
            vals[-2] = (vals[-2] * cnt[-2] + vals[-1] * cnt[-1]) / n
            cnt[-2] = n
            vals.pop()
            cnt.pop()
    return np.repeat(np.array(vals, dtype=np.float64), cnt)

#: Vidur per-layer non-attention operators; ``add`` runs twice per layer (two residuals).
NON_ATTENTION_OPS = (
    "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
    "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add", "add",
)


@dataclass(frozen=True)
class GPUSpec:
    """Physical limits of one GPU (notes/anchors-peers.md §4).

    A100 80GB SXM4: 312 TFLOPS dense BF16/FP16, 2,039 GB/s HBM2e, NVLink 600 GB/s.
    H100 80GB SXM5 (:data:`H100`): 989 TFLOPS dense BF16, 3,350 GB/s HBM3, NVLink 900 GB/s.
    ``family`` names the operator / all-reduce profiles to read (``a100`` or ``h100``).
    """

    name: str = "a100-80gb-sxm"
    peak_flops: float = 312e12
    hbm_bandwidth: float = 2.039e12
    nvlink_bandwidth: float = 600e9
    memory_bytes: float = 80 * 2**30
    family: str = "a100"


@dataclass(frozen=True)
class ModelConfig:
    """Transformer shape (Llama-2 family, bf16 weights and KV cache)."""

    name: str
    n_layers: int
    n_embd: int
    n_head: int
    n_kv_head: int
    ffn_dim: int
    vocab_size: int
    params: float  # total parameters
    dtype_bytes: int = 2

    @property
    def head_dim(self) -> int:
        """``n_embd / n_head``."""
        return self.n_embd // self.n_head

    @property
    def kv_bytes_per_token_layer(self) -> int:
        """K and V of one token in one layer: ``2 * n_kv_head * head_dim * dtype_bytes``."""
        return 2 * self.n_kv_head * self.head_dim * self.dtype_bytes

    @property
    def kv_bytes_per_token(self) -> int:
        """KV bytes of one token over all layers (70B: 327,680 = 320 KiB)."""
        return self.n_layers * self.kv_bytes_per_token_layer


LLAMA2_70B = ModelConfig("llama-2-70b", 80, 8192, 64, 8, 28672, 32000, 68.98e9)
LLAMA2_7B = ModelConfig("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 6.74e9)
A100 = GPUSpec()
H100 = GPUSpec("h100-80gb-sxm", 989e12, 3.35e12, 900e9, 80 * 2**30, "h100")
GPUS = {"a100": A100, "h100": H100}
MODEL_CONFIGS = {c.name: c for c in (LLAMA2_70B, LLAMA2_7B)}


class StepTimeModel(Protocol):
    """Duration (seconds, or slots for ``unit``) of batches described by their statistics."""

    @property
    def name(self) -> str:
        """The model's name (a registry name for the shipped ones)."""
        ...

    def durations(self, tokens: NDArray[np.int64], decode: NDArray[np.int64],
                  kv: NDArray[np.int64], prefill: NDArray[np.int64],
                  prefill_sq: NDArray[np.float64]) -> NDArray[np.float64]:
        """Vectorized batch durations."""
        ...

    def coefficients(self) -> dict[str, Any]:
        """The model's parameters, JSON-ready."""
        ...


def batch_time(model: StepTimeModel, *, prefill: ArrayLike = 0, prefill_sq: ArrayLike | None = None,
               decode: ArrayLike = 0, kv: ArrayLike = 0) -> NDArray[np.float64]:
    """Convenience wrapper: durations of batches given prefill/decode statistics.

    Examples
    --------
    >>> float(batch_time(UnitStepTime(), decode=3, kv=30)[0])
    1.0
    """
    p = np.atleast_1d(np.asarray(prefill, dtype=np.int64))
    d = np.atleast_1d(np.asarray(decode, dtype=np.int64))
    k = np.atleast_1d(np.asarray(kv, dtype=np.int64))
    p, d, k = np.broadcast_arrays(p, d, k)
    psq = p.astype(np.float64) ** 2 if prefill_sq is None else np.broadcast_to(
        np.asarray(prefill_sq, dtype=np.float64), p.shape)
    return model.durations(p + d, d, k, p, psq)


class UnitStepTime:
    """Every non-empty batch takes exactly 1 (the theory model of seeds 000/001).

    Examples
    --------
    >>> UnitStepTime().durations(np.array([0, 5]), np.array([0, 5]), np.array([0, 9]),
    ...                          np.array([0, 0]), np.array([0.0, 0.0])).tolist()
    [1.0, 1.0]
    """

    name = "unit"

    def durations(self, tokens: NDArray[np.int64], decode: NDArray[np.int64],
                  kv: NDArray[np.int64], prefill: NDArray[np.int64],
                  prefill_sq: NDArray[np.float64]) -> NDArray[np.float64]:
        """All ones (empty slots too, so slot ``k`` is at time ``k``)."""
        shape = np.broadcast_shapes(np.shape(tokens), np.shape(kv))
        return np.ones(shape, dtype=np.float64)

    def coefficients(self) -> dict[str, Any]:
        """No parameters."""
        return {"model": "unit", "step": 1.0}


@dataclass(frozen=True)
class AffineStepTime:
    """``t = c0 + c_p * P + c_d * D + c_kv * K`` seconds for a non-empty batch.

    The surrogate of notes/seed-001-jaillet.md §8 (the paper gives no formula); default
    coefficients are that note's Llama-2-70B / 2xA100 magnitudes: ``c0`` the weight-read
    floor, ``c_p`` per prefill token, ``c_d`` per decode sequence, ``c_kv`` per KV token read.

    Examples
    --------
    >>> m = AffineStepTime()
    >>> round(float(batch_time(m, decode=10, kv=10_000)[0]), 4)
    0.0412
    """

    c0: float = 0.040
    c_p: float = 3e-4
    c_d: float = 2e-5
    c_kv: float = 1e-7
    name: str = "affine"

    def durations(self, tokens: NDArray[np.int64], decode: NDArray[np.int64],
                  kv: NDArray[np.int64], prefill: NDArray[np.int64],
                  prefill_sq: NDArray[np.float64]) -> NDArray[np.float64]:
        """Affine in the batch statistics; 0 for empty batches."""
        t = self.c0 + self.c_p * prefill + self.c_d * decode + self.c_kv * kv
        return np.where(tokens > 0, t, 0.0)

    def decode_run(self, count: int, kv0: int, length: int) -> NDArray[np.float64]:
        """Durations of ``length`` decode-only batches (see ``ProfiledStepTime``)."""
        if count <= 0:
            return np.zeros(length)
        a = self.c0 + self.c_d * count + self.c_kv * kv0
        return a + (self.c_kv * count) * np.arange(length, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """The model as a JSON document (:func:`model_from_dict` rebuilds it)."""
        return {"type": "affine", "name": self.name,
                "params": {k: getattr(self, k) for k in ("c0", "c_p", "c_d", "c_kv")}}

    def coefficients(self) -> dict[str, Any]:
        """``c0, c_p, c_d, c_kv``."""
        return asdict(self)


@lru_cache(maxsize=16)
def load_operator_profile(model: str, tp: int, family: str = "a100") -> tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Vidur's operator profile: ``(num_tokens, per-layer non-attention ms, emb ms)``.

    Sums the *median* times of :data:`NON_ATTENTION_OPS` per ``num_tokens`` for the given
    tensor-parallel degree (file ``kvopt/data/profiles/<family>_<model>_mlp.csv``), then makes
    both curves non-decreasing in ``num_tokens`` (:func:`isotonic_increasing`: the profile
    dips between 1 and 2 tokens, which would make a batch of 2 decodes cheaper than 1).
    """
    path = data_file("profiles", f"{family}_{model}_mlp.csv")
    if not path.is_file():
        raise UsageError("profile", f"no operator profile {path.name} (GPU family {family!r}, "
                                    f"model {model!r})")
    rows = [r for r in read_csv_rows(path) if int(r["num_tensor_parallel_workers"]) == tp]
    if not rows:
        raise UsageError("tp", f"no profile rows for {model} at TP={tp} in {path.name}")
    acc: dict[int, list[tuple[float, float]]] = {}
    for r in rows:
        layer = sum(float(r[f"time_stats.{op}.median"]) for op in NON_ATTENTION_OPS)
        acc.setdefault(int(r["num_tokens"]), []).append((layer, float(r["time_stats.emb.median"])))
    nt = np.array(sorted(acc), dtype=np.float64)
    layer_ms = np.array([np.mean([v[0] for v in acc[int(k)]]) for k in nt])
    emb_ms = np.array([np.mean([v[1] for v in acc[int(k)]]) for k in nt])
    return nt, isotonic_increasing(layer_ms), isotonic_increasing(emb_ms)


#: All-reduce profile tables: ``nvswitch`` = single-node rows of the DGX/HGX (NVSwitch) table
#: (``devices_per_node == num_workers``), ``pairwise`` = GPU pairs joined by NVLink bridges
#: (the other pairs over PCIe).
INTERCONNECTS = ("auto", "nvswitch", "pairwise", "none")


@lru_cache(maxsize=16)
def load_all_reduce_profile(num_workers: int, family: str = "a100",
                            interconnect: str = "pairwise") -> tuple[NDArray[np.float64],
                                                                     NDArray[np.float64]]:
    """All-reduce median time (ms) by message size (bytes), Vidur profile.

    ``interconnect="nvswitch"`` reads ``<family>_dgx_all_reduce.csv`` rows with
    ``devices_per_node == num_workers`` (one NVSwitch node: an SXM A100/H100 server);
    ``"pairwise"`` reads ``<family>_pairwise_nvlink_all_reduce.csv``. Several rows per size
    are reduced to their median, then the curve is made non-decreasing in size
    (:func:`isotonic_increasing`; profile noise at a few KB).

    Examples
    --------
    >>> size, ms = load_all_reduce_profile(4, "a100", "nvswitch")     # a DGX A100 at TP 4
    >>> psize, pms = load_all_reduce_profile(4, "a100", "pairwise")   # NVLink pairs + PCIe
    >>> x = 8 * 2**20                                                 # 8 MiB
    >>> float(np.interp(x, size, ms)) < 0.15 < 0.5 < float(np.interp(x, psize, pms))
    True
    """
    if interconnect == "nvswitch":
        name = f"{family}_dgx_all_reduce.csv"
    elif interconnect == "pairwise":
        name = f"{family}_pairwise_nvlink_all_reduce.csv"
    else:
        raise UsageError("interconnect", f"no all-reduce table for {interconnect!r}")
    path = data_file("profiles", name)
    if not path.is_file():
        raise UsageError("interconnect", f"no all-reduce profile {name}")
    rows = [r for r in read_csv_rows(path) if int(r["num_workers"]) == num_workers
            and int(r["devices_per_node"]) == num_workers]
    if not rows:
        raise UsageError("tp", f"no single-node all-reduce rows for {num_workers} workers "
                               f"in {name}")
    acc: dict[int, list[float]] = {}
    for r in rows:
        acc.setdefault(int(r["size"]), []).append(float(r["time_stats.all_reduce.median"]))
    size = np.array(sorted(acc), dtype=np.float64)
    ms = np.array([np.median(acc[int(k)]) for k in size])
    return size, isotonic_increasing(ms)


def resolve_interconnect(interconnect: str, tp: int) -> str:
    """``auto`` -> ``none`` at TP 1, ``pairwise`` at TP 2 (an NVLink pair, the seed-001
    setting), ``nvswitch`` at TP >= 4 (inside one SXM server every GPU reaches every other
    through the NVSwitch).

    Examples
    --------
    >>> [resolve_interconnect("auto", t) for t in (1, 2, 4, 8)]
    ['none', 'pairwise', 'nvswitch', 'nvswitch']
    """
    if interconnect not in INTERCONNECTS:
        raise UsageError("interconnect", f"must be one of {list(INTERCONNECTS)}, "
                                         f"got {interconnect!r}")
    if tp == 1:
        return "none"
    if interconnect == "auto":
        return "pairwise" if tp == 2 else "nvswitch"
    return interconnect


def _interp_extrap(x: NDArray[np.float64], xp: NDArray[np.float64],
                   fp: NDArray[np.float64]) -> NDArray[np.float64]:
    """Piecewise-linear interpolation; proportional (``fp[-1] * x / xp[-1]``) beyond the
    last profiled point, i.e. constant cost per token / per byte at large sizes."""
    y = np.interp(x, xp, fp)
    hi = x > xp[-1]
    if np.any(hi):
        y = np.where(hi, fp[-1] * x / xp[-1], y)
    return y


@dataclass
class ProfiledStepTime:
    """Step time from measured operator profiles (Vidur, A100 or H100) plus analytic attention.

    For a non-empty batch with ``T`` tokens (``prefill + decode``) and ``D`` decodes::

        t = overhead + c_seq * D + profile_scale * prof(T) + L * [ attn_decode + attn_prefill ]
            + 2 * L * (tp - 1) * ar_rank_latency                  (with an all-reduce)
        prof(T) = emb(T) + L * [ nonattn_tp(T) + 2 * allreduce_tp(T * n_embd * 2 B) ]
        attn_decode  = kv * kv_bytes_per_token_layer / tp / (hbm_bw * bw_eff)
        attn_prefill = 2 * n_head * head_dim * sum(s_i**2) / tp / (peak_flops * mfu)

    - ``nonattn_tp(T)``: sum of the median per-layer times of :data:`NON_ATTENTION_OPS`
      (layer norms, QKV/O projections, RoPE, gated MLP, residual adds) measured by Vidur on one
      GPU of ``gpu.family`` at tensor-parallel degree ``tp``, made non-decreasing in ``T``
      (:func:`isotonic_increasing`) and interpolated piecewise-linearly (profiled ``T`` =
      1..4096; proportional extrapolation above).
    - ``allreduce_tp``: measured all-reduce (median ms by message size), two per layer (after
      attention and after the MLP), none at ``tp = 1``. ``interconnect="auto"`` uses the
      pairwise-NVLink table at TP 2 and the single-node NVSwitch table at TP 4 and 8
      (:func:`resolve_interconnect`); ``"pairwise"``/``"nvswitch"`` force one, ``"none"``
      leaves the all-reduce out (one measured shard).
    - attention is not in the shipped profiles: decode attention is memory bound (KV bytes
      read over HBM bandwidth), causal prefill attention compute bound (``2 * d * s^2`` FLOPs
      per head). GPU constants in :class:`GPUSpec`; ``bw_eff`` and ``mfu`` are assumptions.
    - ``overhead``: per-iteration CPU cost (scheduling, sampling, input preparation), not in
      the profiles; an assumption (default 2 ms). ``c_seq`` (per decoding sequence, default 0)
      and ``profile_scale`` (default 1) are free constants for ``kvopt steptime fit``.
    - ``ar_rank_latency`` (default 0): latency each all-reduce adds per additional rank in a
      serving engine (NCCL launch and synchronisation, not in the all-reduce table). With
      ``overhead`` and ``c_seq`` it is set by :class:`EngineCosts` (``engine`` then names the
      calibration); the models without it are GPU-time models.

    Sources: microsoft/vidur ``data/profiling/compute/{a100,h100}/meta-llama/*/mlp.csv`` and
    ``data/profiling/network/{a100,h100}_{pairwise_nvlink,dgx}/all_reduce.csv`` (MIT; copied
    under ``kvopt/data/profiles``, see its PROVENANCE.md).

    Examples
    --------
    >>> m = ProfiledStepTime(LLAMA2_70B, tp=2)
    >>> dec = float(batch_time(m, decode=12, kv=12 * 1400)[0])   # 12 decodes
    >>> pre = float(batch_time(m, prefill=1000)[0])             # one 1000-token prompt
    >>> 0.02 < dec < 0.08 and pre > dec
    True
    >>> ProfiledStepTime(LLAMA2_70B, tp=4, gpu=H100).name
    'h100-llama2-70b-tp4'
    """

    config: ModelConfig = LLAMA2_70B
    tp: int = 2
    gpu: GPUSpec = A100
    bw_eff: float = 0.7
    mfu: float = 0.5
    overhead: float = 2e-3
    profile_model: str | None = None
    name: str = ""
    interconnect: str = "auto"
    profile_scale: float = 1.0
    c_seq: float = 0.0
    ar_rank_latency: float = 0.0
    engine: str = ""
    _tables: dict[str, NDArray[np.float64]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        key = self.profile_model or self.config.name
        nt, layer_ms, emb_ms = load_operator_profile(key, self.tp, self.gpu.family)
        self._tables = {"num_tokens": nt, "layer_ms": layer_ms, "emb_ms": emb_ms}
        self._link = resolve_interconnect(self.interconnect, self.tp)
        if self._link != "none":
            size, ar = load_all_reduce_profile(self.tp, self.gpu.family, self._link)
            self._tables.update(ar_bytes=size, ar_ms=ar)
        if not self.name:
            suffix = "" if self.interconnect == "auto" else f"-{self.interconnect}"
            self.name = f"{self.gpu.family}-{key.replace('-2-', '2-')}-tp{self.tp}{suffix}"
        self._kv_coef = self.kv_coef
        self._psq_coef = self.prefill_sq_coef
        self._ar_extra = self.ar_extra

    @property
    def ar_extra(self) -> float:
        """Seconds the engine's all-reduce latency adds to a step:
        ``2 * n_layers * (tp - 1) * ar_rank_latency`` (0 without an all-reduce)."""
        if self._link == "none" or self.tp <= 1:
            return 0.0
        return 2.0 * self.config.n_layers * (self.tp - 1) * self.ar_rank_latency

    def nonattention_ms(self, tokens: ArrayLike) -> NDArray[np.float64]:
        """Interpolated per-layer non-attention time (ms) at ``tokens`` tokens."""
        x = np.asarray(tokens, dtype=np.float64)
        return _interp_extrap(x, self._tables["num_tokens"], self._tables["layer_ms"])

    def all_reduce_ms(self, tokens: ArrayLike) -> NDArray[np.float64]:
        """One all-reduce of ``tokens * n_embd`` bf16 activations (ms); 0 without one."""
        x = np.asarray(tokens, dtype=np.float64)
        if self._link == "none":
            return np.zeros_like(x)
        size = x * self.config.n_embd * self.config.dtype_bytes
        return _interp_extrap(size, self._tables["ar_bytes"], self._tables["ar_ms"])

    def token_time(self, tokens: ArrayLike) -> NDArray[np.float64]:
        """The part that depends on the token count only (seconds)::

            overhead + profile_scale * (emb(T) + L * (nonattn_tp(T) + 2 * allreduce_tp(T)))

        and 0 at ``T = 0``.
        """
        T = np.asarray(tokens, dtype=np.float64)
        layer = (self.nonattention_ms(T) + 2.0 * self.all_reduce_ms(T)) * 1e-3
        emb = _interp_extrap(T, self._tables["num_tokens"], self._tables["emb_ms"]) * 1e-3
        prof = self.profile_scale * (emb + self.config.n_layers * layer)
        return np.where(T > 0, self.overhead + prof, 0.0)

    @property
    def kv_coef(self) -> float:
        """Seconds per KV token read by decode attention (all layers)."""
        c = self.config
        return c.n_layers * c.kv_bytes_per_token_layer / self.tp / (
            self.gpu.hbm_bandwidth * self.bw_eff)

    @property
    def prefill_sq_coef(self) -> float:
        """Seconds per unit of ``sum s_i**2`` (causal prefill attention, all layers)."""
        c = self.config
        return c.n_layers * 2.0 * c.n_head * c.head_dim / (
            self.tp * self.gpu.peak_flops * self.mfu)

    def _table(self, tmax: int) -> NDArray[np.float64]:
        tab = self._tables.get("token_time_s")
        if tab is None or tab.shape[0] <= tmax:
            size = max(2 * tmax + 1, 4097)
            tab = self.token_time(np.arange(size))
            self._tables["token_time_s"] = tab
        return tab

    def durations(self, tokens: NDArray[np.int64], decode: NDArray[np.int64],
                  kv: NDArray[np.int64], prefill: NDArray[np.int64],
                  prefill_sq: NDArray[np.float64]) -> NDArray[np.float64]:
        """Seconds per batch (formula in the class docstring); 0 for empty batches.

        The token-count part is tabulated per integer token count on first use.
        """
        T = np.asarray(tokens, dtype=np.int64)
        tab = self._table(int(T.max(initial=0)))
        t = tab[T] + self._kv_coef * np.asarray(kv, dtype=np.float64) + (
            self._psq_coef * np.asarray(prefill_sq, dtype=np.float64))
        if self.c_seq:
            t = t + self.c_seq * np.asarray(decode, dtype=np.float64)
        return np.where(T > 0, t + self._ar_extra, 0.0)

    def first_batch(self, prefill: int, decode: int, kv: int, prefill_sq: float) -> float:
        """Scalar duration of one batch (fast path used by the engine)."""
        T = prefill + decode
        if T <= 0:
            return 0.0
        tab = self._tables.get("token_time_s")
        if tab is None or tab.shape[0] <= T:
            tab = self._table(T)
        return (float(tab[T]) + self._kv_coef * kv + self._psq_coef * prefill_sq
                + self.c_seq * decode + self._ar_extra)

    def decode_run(self, count: int, kv0: int, length: int) -> NDArray[np.float64]:
        """Durations of ``length`` decode-only batches of ``count`` requests whose KV read
        starts at ``kv0`` and grows by ``count`` per batch (fast path used by the engine)."""
        if count <= 0:
            return np.zeros(length)
        a = self.first_batch(0, count, kv0, 0.0)
        return a + (self._kv_coef * count) * np.arange(length, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """The model as a JSON document (:func:`model_from_dict` rebuilds it)."""
        return {"type": "profiled", "name": self.name, "config": asdict(self.config),
                "gpu": asdict(self.gpu), "tp": self.tp, "interconnect": self.interconnect,
                "profile_model": self.profile_model or self.config.name, "engine": self.engine,
                "params": {k: getattr(self, k) for k in
                           ("overhead", "profile_scale", "bw_eff", "mfu", "c_seq",
                            "ar_rank_latency")}}

    def coefficients(self) -> dict[str, Any]:
        """Constants and the interpolation tables (ms), JSON-ready."""
        return {
            "model": self.name, "config": asdict(self.config), "tp": self.tp,
            "gpu": asdict(self.gpu), "interconnect": self._link, "bw_eff": self.bw_eff,
            "mfu": self.mfu, "overhead_s": self.overhead, "profile_scale": self.profile_scale,
            "c_seq_s": self.c_seq, "ar_rank_latency_s": self.ar_rank_latency,
            "engine": self.engine, "kv_coef_s_per_token": self.kv_coef,
            "prefill_sq_coef_s": self.prefill_sq_coef,
            "tables": {k: v.tolist() for k, v in self._tables.items() if k != "token_time_s"},
        }


@dataclass(frozen=True)
class RooflineStepTime:
    """Generic roofline step time parameterised by GPU and model config.

    For a non-empty batch with ``D`` decodes (notes/anchors-peers.md §4, the "suggested
    kvopt default")::

        t = t0 + c_seq * D + L * t_layer + 2 * L * t_ar + 2 * L * (tp - 1) * ar_rank_latency
            + max( FLOPs / (tp * peak_flops * mfu), bytes / (tp * hbm_bw * bw_eff) )
        FLOPs = 2 * params * tokens + 4 * L * n_head * head_dim * kv
                + 2 * L * n_head * head_dim * sum(s_i**2)
        bytes = params * dtype_bytes + (kv + prefill) * kv_bytes_per_token
        t_ar  = ar_latency + 2 (tp-1)/tp * tokens * n_embd * dtype_bytes / nvlink_bw   (tp > 1)

    Defaults ``t0 = 0.5 ms``, ``t_layer = 20 us`` (BLIS overheads), ``mfu = 0.65``,
    ``bw_eff = 0.7`` and ``ar_latency = 20 us`` are assumptions taken from that note;
    ``c_seq = 0`` (a free constant for ``kvopt steptime fit``); ``ar_rank_latency = 0`` and
    ``engine = ""`` unless :class:`EngineCosts` made it a serving-engine model (see
    :class:`ProfiledStepTime`). ``all_reduce=False`` leaves
    the all-reduce out (one measured shard).

    Examples
    --------
    >>> m = RooflineStepTime(LLAMA2_70B, tp=2)
    >>> 0.03 < float(batch_time(m, decode=1, kv=100)[0]) < 0.06   # ~weights / (2 x 2 TB/s)
    True
    """

    config: ModelConfig = LLAMA2_70B
    tp: int = 2
    gpu: GPUSpec = A100
    mfu: float = 0.65
    bw_eff: float = 0.7
    t0: float = 0.5e-3
    t_layer: float = 20e-6
    ar_latency: float = 20e-6
    name: str = "roofline"
    all_reduce: bool = True
    c_seq: float = 0.0
    ar_rank_latency: float = 0.0
    engine: str = ""

    def durations(self, tokens: NDArray[np.int64], decode: NDArray[np.int64],
                  kv: NDArray[np.int64], prefill: NDArray[np.int64],
                  prefill_sq: NDArray[np.float64]) -> NDArray[np.float64]:
        """Seconds per batch (formula in the class docstring); 0 for empty batches."""
        c, g = self.config, self.gpu
        T = np.asarray(tokens, dtype=np.float64)
        K = np.asarray(kv, dtype=np.float64)
        hd = c.n_layers * c.n_head * c.head_dim
        flops = 2 * c.params * T + 4 * hd * K + 2 * hd * np.asarray(prefill_sq, dtype=np.float64)
        byts = c.params * c.dtype_bytes + (K + np.asarray(prefill, dtype=np.float64)) * (
            c.kv_bytes_per_token)
        compute = flops / (self.tp * g.peak_flops * self.mfu)
        memory = byts / (self.tp * g.hbm_bandwidth * self.bw_eff)
        if self.tp > 1 and self.all_reduce:
            t_ar = self.ar_latency + (self.tp - 1) * self.ar_rank_latency + 2 * (
                self.tp - 1) / self.tp * T * c.n_embd * c.dtype_bytes / g.nvlink_bandwidth
        else:
            t_ar = np.zeros_like(T)
        t = (self.t0 + c.n_layers * self.t_layer + 2 * c.n_layers * t_ar
             + self.c_seq * np.asarray(decode, dtype=np.float64) + np.maximum(compute, memory))
        return np.where(T > 0, t, 0.0)

    def to_dict(self) -> dict[str, Any]:
        """The model as a JSON document (:func:`model_from_dict` rebuilds it)."""
        d = asdict(self)
        params = {k: d.pop(k) for k in ("t0", "t_layer", "ar_latency", "bw_eff", "mfu",
                                         "c_seq", "ar_rank_latency")}
        return {"type": "roofline", **d, "params": params}

    def coefficients(self) -> dict[str, Any]:
        """All constants, JSON-ready."""
        d = asdict(self)
        d["kv_bytes_per_token"] = self.config.kv_bytes_per_token
        return d


ENGINE_COSTS_SCHEMA = "kvopt.engine_costs"
_GpuModel = TypeVar("_GpuModel", "ProfiledStepTime", "RooflineStepTime")
#: Calibration the engine-inclusive registry models use (``kvopt/data/engine/<name>.json``).
ENGINE_CALIBRATION = "splitwise-h100"


@dataclass(frozen=True)
class EngineCosts:
    """Per-step costs of a serving engine that GPU-time models (operator profiles, roofline)
    do not contain, shared across GPUs and TP degrees. For a non-empty batch with ``D``
    decoding sequences at tensor-parallel degree ``tp`` (``L`` layers)::

        t_engine = t_gpu + step + seq * D + 2 * L * (tp - 1) * ar_rank_latency

    ``step``: host work once per iteration (scheduling, input preparation, launching the
    sampler); ``seq``: per decoding sequence (logits processing, sampling, block tables,
    detokenisation); ``ar_rank_latency``: latency each of the ``2 L`` all-reduces per step
    adds per additional rank (ring latency grows with ``tp - 1``; launch and synchronisation
    of NCCL without CUDA graphs, which the small-message all-reduce tables do not show).
    Calibrated by :func:`kvopt.sim.steptime_fit.calibrate_engine` (``kvopt steptime
    calibrate-engine``) on one measurement set and applied unchanged to other GPUs.

    Examples
    --------
    >>> c = EngineCosts(step=4e-3, seq=2e-4, ar_rank_latency=1e-5, calibration="demo")
    >>> gpu = ProfiledStepTime(LLAMA2_70B, tp=4)
    >>> eng = c.apply(gpu)
    >>> extra = batch_time(eng, decode=8, kv=8000) - batch_time(gpu, decode=8, kv=8000)
    >>> round(float(extra[0]) * 1e3, 3), eng.engine            # 4 + 8 * 0.2 + 160 * 3 * 0.01
    (10.4, 'demo')
    """

    step: float = 0.0
    seq: float = 0.0
    ar_rank_latency: float = 0.0
    calibration: str = ""

    def apply(self, model: _GpuModel, name: str | None = None) -> _GpuModel:
        """``model`` (a GPU-time model) with these costs added; ``engine`` names the
        calibration."""
        if model.engine:
            raise UsageError("model", f"{model.name} already includes engine costs "
                                      f"({model.engine})")
        first = "overhead" if isinstance(model, ProfiledStepTime) else "t0"
        kw: dict[str, Any] = {first: getattr(model, first) + self.step,
                              "c_seq": model.c_seq + self.seq,
                              "ar_rank_latency": model.ar_rank_latency + self.ar_rank_latency,
                              "engine": self.calibration or "engine"}
        if name is not None:
            kw["name"] = name
        return dataclasses.replace(model, **kw)

    def to_dict(self) -> dict[str, float]:
        """The three constants (seconds)."""
        return {"step": self.step, "seq": self.seq, "ar_rank_latency": self.ar_rank_latency}


@lru_cache(maxsize=8)
def load_engine_costs(calibration: str = ENGINE_CALIBRATION,
                      family: str = "profiled") -> EngineCosts:
    """Engine costs shipped in ``kvopt/data/engine/<calibration>.json`` (written by
    ``kvopt steptime calibrate-engine``) for the ``profiled`` or ``roofline`` GPU-time models.

    Examples
    --------
    >>> c = load_engine_costs()
    >>> c.calibration, 0 < c.step < 0.05 and 0 < c.seq < 1e-3
    ('splitwise-h100', True)
    """
    path = data_file("engine", f"{calibration}.json")
    if not path.is_file():
        raise UsageError("calibration", f"no shipped engine calibration {calibration!r}")
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("schema") != ENGINE_COSTS_SCHEMA or family not in doc.get("families", {}):
        raise UsageError("calibration", f"{path.name}: not a {ENGINE_COSTS_SCHEMA} file with "
                                        f"family {family!r}")
    c = doc["families"][family]["costs"]
    return EngineCosts(float(c["step"]), float(c["seq"]), float(c["ar_rank_latency"]),
                       calibration)


def _profiled(config: ModelConfig, tp: int, gpu: GPUSpec = A100, interconnect: str = "auto",
              name: str = "", engine: bool = False) -> Any:
    def make() -> ProfiledStepTime:
        m = ProfiledStepTime(config, tp=tp, gpu=gpu, interconnect=interconnect, name=name)
        return load_engine_costs(ENGINE_CALIBRATION, "profiled").apply(m) if engine else m
    return make


def _roofline(config: ModelConfig, tp: int, gpu: GPUSpec, name: str,
              engine: bool = False) -> Any:
    def make() -> RooflineStepTime:
        m = RooflineStepTime(config, tp=tp, gpu=gpu, name=name)
        return load_engine_costs(ENGINE_CALIBRATION, "roofline").apply(m) if engine else m
    return make


#: (GPU, model, TP) combinations with a registry entry: ``<gpu>-llama2-<size>-tp<N>``
#: (profiled) and ``roofline-<gpu>-llama2-<size>-tp<N>``.
REGISTERED_SETUPS = (
    (A100, LLAMA2_70B, 2), (A100, LLAMA2_70B, 4), (A100, LLAMA2_70B, 8),
    (A100, LLAMA2_7B, 1), (A100, LLAMA2_7B, 2),
    (H100, LLAMA2_7B, 1), (H100, LLAMA2_70B, 2), (H100, LLAMA2_70B, 4), (H100, LLAMA2_70B, 8),
)
#: Setups whose unsuffixed names are serving-engine models (:class:`EngineCosts` calibrated
#: on Llama-2-70B serving runs); ``-gpu`` names are always the GPU-time models.
ENGINE_SETUPS = frozenset((LLAMA2_70B.name,))


def setup_name(gpu: GPUSpec, config: ModelConfig, tp: int) -> str:
    """Registry name of a profiled setup, e.g. ``a100-llama2-70b-tp2``.

    Examples
    --------
    >>> setup_name(H100, LLAMA2_7B, 1)
    'h100-llama2-7b-tp1'
    """
    return f"{gpu.family}-{config.name.replace('-2-', '2-')}-tp{tp}"


#: Registry of named step-time models (factories; CLI ``--step-time`` choices). For
#: Llama-2-70B, ``<gpu>-llama2-70b-tp<N>`` and ``roofline-...`` include the serving-engine
#: costs (:data:`ENGINE_CALIBRATION`), ``...-gpu`` are the GPU-time models; the 7B names (no
#: engine calibration) are GPU-time models under both names. :data:`STEP_TIME_DESCRIPTIONS`
#: says which is which.
STEP_TIME_MODELS: dict[str, Any] = {"unit": UnitStepTime, "affine": AffineStepTime}
STEP_TIME_DESCRIPTIONS: dict[str, str] = {"unit": "every batch takes 1 slot (theory)",
                                          "affine": "affine surrogate c0 + c_p P + c_d D + c_kv K"}
_ENGINE_NOTE = f" + serving-engine costs (calibration {ENGINE_CALIBRATION})"
for _gpu, _cfg, _tp in REGISTERED_SETUPS:
    _name = setup_name(_gpu, _cfg, _tp)
    _eng = _cfg.name in ENGINE_SETUPS
    STEP_TIME_MODELS[_name] = _profiled(_cfg, _tp, _gpu, name=_name, engine=_eng)
    STEP_TIME_MODELS[f"{_name}-gpu"] = _profiled(_cfg, _tp, _gpu, name=f"{_name}-gpu")
    STEP_TIME_MODELS[f"roofline-{_name}"] = _roofline(_cfg, _tp, _gpu, f"roofline-{_name}",
                                                      engine=_eng)
    STEP_TIME_MODELS[f"roofline-{_name}-gpu"] = _roofline(_cfg, _tp, _gpu,
                                                          f"roofline-{_name}-gpu")
    for _fam, _pre in (("profiled", ""), ("roofline", "roofline-")):
        STEP_TIME_DESCRIPTIONS[f"{_pre}{_name}"] = f"{_fam} GPU time" + (
            _ENGINE_NOTE if _eng else "")
        STEP_TIME_DESCRIPTIONS[f"{_pre}{_name}-gpu"] = f"{_fam} GPU time"
STEP_TIME_MODELS["a100-llama2-70b-tp4-pairwise"] = _profiled(
    LLAMA2_70B, 4, A100, "pairwise", name="a100-llama2-70b-tp4-pairwise")
STEP_TIME_DESCRIPTIONS["a100-llama2-70b-tp4-pairwise"] = (
    "profiled GPU time, pairwise-NVLink all-reduce")


STEP_TIME_SCHEMA = "kvopt.steptime"


def model_from_dict(doc: dict[str, Any]) -> StepTimeModel:
    """Rebuild a model from :meth:`ProfiledStepTime.to_dict` / :meth:`RooflineStepTime.to_dict`
    (or ``{"type": "affine", ...}``); raises :class:`UsageError` naming the bad key.

    Examples
    --------
    >>> m = get_step_time("h100-llama2-70b-tp4")
    >>> m2 = model_from_dict(json.loads(json.dumps(m.to_dict())))
    >>> bool(np.allclose(batch_time(m, decode=[1, 64], kv=[500, 32000]),
    ...                  batch_time(m2, decode=[1, 64], kv=[500, 32000])))
    True
    """
    try:
        kind = doc["type"]
        params: dict[str, Any] = {k: float(v) for k, v in doc.get("params", {}).items()}
        if kind == "affine":
            return AffineStepTime(**params, name=str(doc.get("name", "affine")))
        config = ModelConfig(**doc["config"])
        gpu = GPUSpec(**doc["gpu"])
        tp = int(doc["tp"])
        if kind == "profiled":
            return ProfiledStepTime(config, tp=tp, gpu=gpu, name=str(doc.get("name", "")),
                                    interconnect=str(doc.get("interconnect", "auto")),
                                    profile_model=doc.get("profile_model"),
                                    engine=str(doc.get("engine", "")), **params)
        if kind == "roofline":
            return RooflineStepTime(config, tp=tp, gpu=gpu, name=str(doc.get("name", "roofline")),
                                    all_reduce=bool(doc.get("all_reduce", True)),
                                    engine=str(doc.get("engine", "")), **params)
    except KeyError as exc:
        raise UsageError("step_time", f"model document lacks key {exc}") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError("step_time", f"bad model document: {exc}") from None
    raise UsageError("step_time", f"unknown model type {kind!r} (profiled, roofline, affine)")


def save_step_time(model: StepTimeModel, path: str | os.PathLike[str],
                   extra: dict[str, Any] | None = None) -> None:
    """Write ``model`` as a ``kvopt.steptime`` JSON file (atomically); ``extra`` (e.g. the fit
    report) is stored beside it under ``"fit"``."""
    from kvopt.core.io import write_json

    to_dict = getattr(model, "to_dict", None)
    if to_dict is None:
        raise UsageError("model", f"{type(model).__name__} cannot be saved")
    doc = {"schema": STEP_TIME_SCHEMA, "schema_version": 1, "model": to_dict()}
    if extra is not None:
        doc["fit"] = extra
    write_json(path, doc)


def load_step_time(path: str | os.PathLike[str]) -> StepTimeModel:
    """Read a model written by :func:`save_step_time` (``kvopt steptime fit --out``)."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as exc:
        raise UsageError("step_time", f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError("step_time", f"{path} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != STEP_TIME_SCHEMA:
        raise UsageError("step_time", f"{path} is not a {STEP_TIME_SCHEMA} file")
    if doc.get("schema_version") != 1:
        raise UsageError("step_time", f"{path}: unsupported schema_version "
                                      f"{doc.get('schema_version')!r}")
    if not isinstance(doc.get("model"), dict):
        raise UsageError("step_time", f"{path} has no model object")
    return model_from_dict(doc["model"])


def get_step_time(spec: str | os.PathLike[str] | StepTimeModel) -> StepTimeModel:
    """A step-time model from a registry name, a fitted-model JSON path, or ``spec`` itself
    if it is a model.

    Examples
    --------
    >>> get_step_time("unit").name
    'unit'
    >>> get_step_time("a100-llama2-70b-tp2").name
    'a100-llama2-70b-tp2'
    """
    if isinstance(spec, str) and spec in STEP_TIME_MODELS:
        return STEP_TIME_MODELS[spec]()  # type: ignore[no-any-return]
    if isinstance(spec, (str, os.PathLike)):
        if str(spec).endswith(".json") or Path(spec).is_file():
            return load_step_time(spec)
        raise UsageError("step_time", f"unknown step-time model {str(spec)!r}; choose from "
                                      f"{sorted(STEP_TIME_MODELS)} or give a fitted-model "
                                      f"JSON file")
    if not hasattr(spec, "durations"):
        raise TypeError("a step-time model needs a durations(...) method")
    return spec
