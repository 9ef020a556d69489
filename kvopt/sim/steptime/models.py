"""Step-time models: the protocol, hardware and model shapes, the unit and affine models."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass
from importlib.abc import Traversable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray


def read_csv_rows(path: Traversable | Path) -> list[dict[str, str]]:
    """All rows of a CSV file (shipped data or a user's file) as dicts of strings.

    Examples
    --------
    >>> from kvopt.core.io import data_file
    >>> rows = read_csv_rows(data_file("profiles", "a100_llama-2-7b_attention_samples.csv"))
    >>> len(rows), rows[0]["kind"], rows[0]["batch_size"], rows[0]["attn_ms_median"]
    (442, 'decode', '1', '0.009')
    """
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

    Examples
    --------
    >>> GPUSpec().name, H100.family
    ('a100-80gb-sxm', 'h100')

    The roofline ridge points (FLOPs per HBM byte above which a kernel is compute-bound):

    >>> round(A100.peak_flops / A100.hbm_bandwidth), round(H100.peak_flops / H100.hbm_bandwidth)
    (153, 295)
    """

    name: str = "a100-80gb-sxm"
    peak_flops: float = 312e12
    hbm_bandwidth: float = 2.039e12
    nvlink_bandwidth: float = 600e9
    memory_bytes: float = 80 * 2**30
    family: str = "a100"


@dataclass(frozen=True)
class ModelConfig:
    """Transformer shape (Llama-2 family, bf16 weights and KV cache).

    Examples
    --------
    >>> LLAMA2_70B.head_dim, LLAMA2_70B.kv_bytes_per_token_layer, LLAMA2_70B.kv_bytes_per_token
    (128, 4096, 327680)
    >>> LLAMA2_7B.kv_bytes_per_token            # no grouped-query attention: 32 KV heads
    524288
    """

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
    """Duration (seconds, or slots for ``unit``) of batches described by their statistics.

    Examples
    --------
    Any object with these members is a step-time model, e.g. the shipped ones:

    >>> for m in (UnitStepTime(), AffineStepTime()):     # an empty batch, then 8 decodes
    ...     print(m.name, batch_time(m, decode=[0, 8], kv=[0, 8000]).round(4).tolist())
    unit [1.0, 1.0]
    affine [0.0, 0.041]
    """

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
