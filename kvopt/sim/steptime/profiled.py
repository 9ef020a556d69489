"""GPU-time models: measured operator profiles (Vidur) and a first-principles roofline."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError
from kvopt.core.io import data_file
from kvopt.sim.steptime.attention import PROFILE_BW_EFF, PROFILE_MFU, attention_profile
from kvopt.sim.steptime.models import (
    A100,
    LLAMA2_70B,
    NON_ATTENTION_OPS,
    GPUSpec,
    ModelConfig,
    isotonic_increasing,
    read_csv_rows,
)


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
Interconnect = Literal["auto", "nvswitch", "pairwise", "none"]
INTERCONNECTS: tuple[Interconnect, ...] = get_args(Interconnect)


@lru_cache(maxsize=16)
def load_all_reduce_profile(num_workers: int, family: str = "a100",
                            interconnect: Interconnect = "pairwise") -> tuple[NDArray[np.float64],
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


def resolve_interconnect(interconnect: Interconnect, tp: int) -> Interconnect:
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


#: Where a :class:`ProfiledStepTime` takes its attention costs from (``auto``: the measured
#: kernel profile where one is shipped, else analytic).
ATTENTION_MODES = ("auto", "profile", "analytic")
#: Per-iteration cost outside the operator profiles, seconds, by model (GPU time: LM head,
#: sampling, gaps between kernels). Llama-2-7B: least squares on relative errors over the 36
#: decode rows of ``h100-steps`` (CUDA-graph forward passes), the other constants at their
#: defaults: 1.51 ms (prefill and mixed rows, held out: median error 3.2 %, 7.0 % at 2 ms).
GPU_TIME_OVERHEAD: dict[str, float] = {"llama-2-7b": 1.5e-3}
#: :data:`GPU_TIME_OVERHEAD` of the models without a measured value (an assumption).
DEFAULT_OVERHEAD = 2e-3


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
    """Step time from measured operator profiles (Vidur, A100 or H100) plus attention, taken
    from a measured attention-kernel profile where one exists, analytic elsewhere.

    For a non-empty batch with ``T`` tokens (``prefill + decode``) and ``D`` decodes::

        t = overhead + c_seq * D + profile_scale * prof(T) + L * [ attn_decode + attn_prefill ]
            + 2 * L * (tp - 1) * ar_rank_latency                  (with an all-reduce)
        prof(T) = emb(T) + L * [ nonattn_tp(T) + 2 * allreduce_tp(T * n_embd * 2 B) ]

    attention, ``attention="analytic"``::

        attn_decode  = kv * kv_bytes_per_token_layer / tp / (hbm_bw * bw_eff)
        attn_prefill = 2 * n_head * head_dim * sum(s_i**2) / tp / (peak_flops * mfu)

    ``attention="profile"`` (:mod:`~kvopt.sim.steptime.attention`; the A100 Llama-2-7B TP-1
    kernels)::

        attn_decode  = f_decode(D, kv / D) * PROFILE_BW_EFF / bw_eff
        attn_prefill = (a * sum(s_i**2) + b * sum(s_i)) * PROFILE_MFU / mfu

    so at the default ``bw_eff`` and ``mfu`` the measured kernel times are used as they are,
    and ``kvopt steptime fit`` scales them like the analytic terms. ``"auto"`` (default): the
    profile where one is shipped for the GPU family, model and TP degree, else analytic.

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
    - analytic attention: decode attention is memory bound (KV bytes read over HBM
      bandwidth), causal prefill attention compute bound (``2 * d * s^2`` FLOPs per head).
      GPU constants in :class:`GPUSpec`; the defaults ``bw_eff = 0.88`` and ``mfu = 0.21`` are
      what the measured A100 7B kernels achieve (:data:`~kvopt.sim.steptime.attention.
      PROFILE_BW_EFF`, ``PROFILE_MFU``: the decode kernel at batches >= 64, the ``s^2`` term
      of the prefill kernel); before, 0.7 and 0.5 were assumptions.
    - ``overhead``: per-iteration cost the operator profiles do not contain (LM head,
      sampling, gaps between kernels; in a serving engine also scheduling, which
      :class:`EngineCosts` adds). Default ``None``: :data:`GPU_TIME_OVERHEAD` of the model
      (Llama-2-7B 1.5 ms: fitted on the 36 CUDA-graph decode steps of ``h100-steps``, its
      prefill and mixed rows held out), 2 ms for the others (an assumption; the Llama-2-70B
      engine calibration sits on top of it). ``c_seq`` (per decoding sequence, default 0)
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
    >>> from kvopt.sim.steptime.models import H100, batch_time
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
    bw_eff: float = PROFILE_BW_EFF
    mfu: float = PROFILE_MFU
    overhead: float = None  # type: ignore[assignment]  # None: GPU_TIME_OVERHEAD
    profile_model: str | None = None
    name: str = ""
    interconnect: Interconnect = "auto"
    profile_scale: float = 1.0
    c_seq: float = 0.0
    ar_rank_latency: float = 0.0
    engine: str = ""
    attention: str = "auto"
    _tables: dict[str, NDArray[np.float64]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        key = self.profile_model or self.config.name
        if self.overhead is None:
            self.overhead = GPU_TIME_OVERHEAD.get(key, DEFAULT_OVERHEAD)
        if self.attention not in ATTENTION_MODES:
            raise UsageError("attention", f"must be one of {list(ATTENTION_MODES)}, got "
                                          f"{self.attention!r}")
        prof = attention_profile(self.gpu.family, key, self.tp)
        if self.attention == "profile" and prof is None:
            raise UsageError("attention", f"no attention profile for {self.gpu.family} {key} "
                                          f"at TP {self.tp}")
        self._attn = prof if self.attention != "analytic" else None
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
        L = self.config.n_layers * 1e-3  # ms per layer -> s per step
        self._dec_scale = L * PROFILE_BW_EFF / self.bw_eff
        self._pre_scale = L * PROFILE_MFU / self.mfu

    @property
    def attention_source(self) -> str:
        """``"profile"`` or ``"analytic"``: where this model's attention costs come from."""
        return "analytic" if self._attn is None else "profile"

    def decode_attention(self, decode: ArrayLike, kv: ArrayLike) -> NDArray[np.float64]:
        """Decode attention of batches (seconds, all layers): ``decode`` sequences reading
        ``kv`` KV tokens."""
        k = np.asarray(kv, dtype=np.float64)
        if self._attn is None:
            return self._kv_coef * k
        return self._dec_scale * self._attn.decode_ms(decode, k)

    def prefill_attention(self, prefill: ArrayLike, prefill_sq: ArrayLike
                          ) -> NDArray[np.float64]:
        """Prefill attention of batches (seconds, all layers) with ``sum s = prefill`` and
        ``sum s^2 = prefill_sq``."""
        if self._attn is None:
            return self._psq_coef * np.asarray(prefill_sq, dtype=np.float64)
        return self._pre_scale * self._attn.prefill_ms(prefill, prefill_sq)

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
        """Seconds per KV token read by the analytic decode attention (all layers)."""
        c = self.config
        return c.n_layers * c.kv_bytes_per_token_layer / self.tp / (
            self.gpu.hbm_bandwidth * self.bw_eff)

    @property
    def prefill_sq_coef(self) -> float:
        """Seconds per unit of ``sum s_i**2`` (analytic causal prefill attention, all
        layers)."""
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
        t = tab[T] + self.decode_attention(decode, kv) + self.prefill_attention(prefill,
                                                                                prefill_sq)
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
        if self._attn is None:
            attn = self._kv_coef * kv + self._psq_coef * prefill_sq
        else:
            attn = (self._dec_scale * self._attn.decode_ms_one(decode, kv)
                    + self._pre_scale * (self._attn.prefill_a * prefill_sq
                                         + self._attn.prefill_b * prefill))
        return float(tab[T]) + attn + self.c_seq * decode + self._ar_extra

    def decode_run(self, count: int, kv0: int, length: int) -> NDArray[np.float64]:
        """Durations of ``length`` decode-only batches of ``count`` requests whose KV read
        starts at ``kv0`` and grows by ``count`` per batch (fast path used by the engine)."""
        if count <= 0:
            return np.zeros(length)
        if self._attn is not None:
            kv = kv0 + count * np.arange(length, dtype=np.float64)
            a = float(self._table(count)[count]) + self.c_seq * count + self._ar_extra
            return a + self._dec_scale * self._attn.decode_ms(np.full(length, count), kv)
        a = self.first_batch(0, count, kv0, 0.0)
        return a + (self._kv_coef * count) * np.arange(length, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """The model as a JSON document (:func:`model_from_dict` rebuilds it)."""
        return {"type": "profiled", "name": self.name, "config": asdict(self.config),
                "gpu": asdict(self.gpu), "tp": self.tp, "interconnect": self.interconnect,
                "profile_model": self.profile_model or self.config.name, "engine": self.engine,
                "attention": self.attention,
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
            "engine": self.engine, "attention": self.attention_source,
            "kv_coef_s_per_token": self.kv_coef, "prefill_sq_coef_s": self.prefill_sq_coef,
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
    >>> from kvopt.sim.steptime.models import batch_time
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
