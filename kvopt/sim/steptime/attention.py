"""Measured attention-kernel costs (Vidur's A100 Llama-2-7B attention profile, sampled).

The operator profiles (``*_mlp.csv``) hold every layer operator except attention. Where an
attention profile exists, :class:`~kvopt.sim.steptime.profiled.ProfiledStepTime` takes decode
and prefill attention from it instead of the analytic roofline terms; elsewhere the analytic
terms use the efficiencies this profile implies (:data:`PROFILE_BW_EFF`, :data:`PROFILE_MFU`).

Shipped: ``kvopt/data/profiles/a100_llama-2-7b_attention_samples.csv`` (436 decode rows, 6
prefill rows of Vidur's ``attention.csv``, TP 1, FlashAttention; provenance in that folder's
``PROVENANCE.md``). Per layer, in milliseconds:

- decode: ``f(B, c)`` for ``B`` sequences of ``c`` context tokens each, measured at
  ``c`` = 32, 256, 1024, 2048, 4032 (1984 and 3968 at large batches only: joined to 2048 and
  4032, scaled by the context ratio). Within a level, linear in ``B`` between measured
  batches; above the largest measured batch, the straight line through the level's top 26
  points; linear in ``c`` between levels, proportional above the top one, the lowest level's
  value below it; proportional in ``B`` above 128.
- prefill: one prompt of ``s`` tokens, ``a s^2 + b s`` (least squares through the 6 measured
  prompts, 80-2752 tokens); a batch of prompts costs ``a sum s^2 + b sum s``.

Examples
--------
>>> p = attention_profile("a100", "llama-2-7b", 1)
>>> round(float(p.decode_ms(64, 64 * 2048)[0]), 3)     # measured: 1.186 ms per layer
1.186
>>> attention_profile("h100", "llama-2-7b", 1) is None
True
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.io import data_file
from kvopt.sim.steptime.models import read_csv_rows

#: Achieved fraction of HBM bandwidth of the profiled decode kernel at batches >= 64 (KV bytes
#: read / time, proportional least squares on relative errors over the 153 samples; 0.78 over
#: all batches, the kernel has a per-call floor). The analytic decode attention's default.
PROFILE_BW_EFF = 0.88
#: Fraction of peak FLOP rate of the profiled prefill kernel: ``2 * n_embd * s^2`` causal
#: FLOPs per layer against the ``s^2`` coefficient of the profile's ``a s^2 + b s`` fit
#: (0.21 on an A100). The analytic prefill attention's default.
PROFILE_MFU = 0.21


@dataclass(frozen=True)
class AttentionProfile:
    """Decode and prefill attention of one (GPU, model, TP) from measured samples (ms/layer).

    ``levels`` are the measured context lengths, ``table[i, B - 1]`` the decode time of ``B``
    sequences at ``levels[i]`` (``B`` = 1..128); ``prefill_a``, ``prefill_b`` the coefficients
    of ``a s^2 + b s``.

    Examples
    --------
    >>> p = attention_profile("a100", "llama-2-7b", 1)
    >>> p.levels.tolist(), p.max_batch
    ([32.0, 256.0, 1024.0, 2048.0, 4032.0], 128)
    >>> [round(float(t), 3) for t in p.decode_ms([1, 64, 256], [1024, 64 * 1024, 256 * 1024])]
    [0.02, 0.593, 2.18]
    >>> round(float(p.prefill_ms(2048, 2048**2)), 3)       # one 2048-token prompt, ms/layer
    0.793
    """

    levels: NDArray[np.float64]
    table: NDArray[np.float64]
    prefill_a: float
    prefill_b: float

    @property
    def max_batch(self) -> int:
        """Largest tabulated batch (128)."""
        return int(self.table.shape[1])

    def decode_ms(self, decode: ArrayLike, kv: ArrayLike) -> NDArray[np.float64]:
        """Decode attention (ms per layer) of ``decode`` sequences reading ``kv`` KV tokens in
        all (so ``kv / decode`` each); 0 where ``decode`` is 0. Vectorized."""
        D = np.atleast_1d(np.asarray(decode, dtype=np.int64))
        K = np.atleast_1d(np.asarray(kv, dtype=np.float64))
        D, K = np.broadcast_arrays(D, K)
        bmax = self.max_batch
        col = self.table[:, np.clip(D, 1, bmax) - 1]            # (levels, n)
        c = K / np.maximum(D, 1)
        lv = self.levels
        j = np.clip(np.searchsorted(lv, c, side="right") - 1, 0, lv.shape[0] - 2)
        w = np.clip((c - lv[j]) / (lv[j + 1] - lv[j]), 0.0, None)
        idx = np.arange(D.shape[0])
        y0, y1 = col[j, idx], col[j + 1, idx]
        t = np.where(c >= lv[-1], col[-1, idx] * c / lv[-1], y0 + w * (y1 - y0))
        t = t * np.where(bmax < D, D / bmax, 1.0)
        return np.where(D > 0, t, 0.0)

    def decode_ms_one(self, decode: int, kv: float) -> float:
        """Scalar :meth:`decode_ms` (the engine's per-decision fast path)."""
        if decode <= 0:
            return 0.0
        bmax = self.max_batch
        b = min(decode, bmax) - 1
        c = kv / decode
        lv = self.levels
        if c >= lv[-1]:
            t = float(self.table[-1, b]) * c / float(lv[-1])
        else:
            j = min(max(bisect.bisect_right(lv.tolist(), c) - 1, 0), lv.shape[0] - 2)
            y0, y1 = float(self.table[j, b]), float(self.table[j + 1, b])
            w = max((c - float(lv[j])) / float(lv[j + 1] - lv[j]), 0.0)
            t = y0 + w * (y1 - y0)
        return t * decode / bmax if decode > bmax else t

    def prefill_ms(self, prefill: ArrayLike, prefill_sq: ArrayLike) -> NDArray[np.float64]:
        """Prefill attention (ms per layer) of prompts with ``sum s = prefill`` and
        ``sum s^2 = prefill_sq``."""
        return (self.prefill_a * np.asarray(prefill_sq, dtype=np.float64)
                + self.prefill_b * np.asarray(prefill, dtype=np.float64))


def decode_levels(samples: list[tuple[int, int, float]], bmax: int = 128) -> tuple[
        NDArray[np.float64], NDArray[np.float64]]:
    """``(levels, table)`` of :class:`AttentionProfile` from ``(batch, context, ms)`` samples
    (interpolation rules in the module docstring).

    Examples
    --------
    >>> levels, table = decode_levels([(1, 32, 0.02), (2, 32, 0.03), (1, 1024, 0.05),
    ...                                (2, 1024, 0.09)], bmax=4)
    >>> levels.tolist()
    [32.0, 1024.0]
    >>> table.round(4).tolist()       # batches 3 and 4 extrapolated along each level's line
    [[0.02, 0.03, 0.04, 0.05], [0.05, 0.09, 0.13, 0.17]]
    """
    by: dict[int, dict[int, float]] = {}
    for batch, kv, ms in samples:
        by.setdefault(int(kv), {})[int(batch)] = float(ms)
    full = sorted(k for k, v in by.items() if 1 in v)
    for k in sorted(set(by) - set(full)):
        tgt = min(full, key=lambda f: abs(f - k))
        for batch, ms in by[k].items():
            by[tgt].setdefault(batch, ms * tgt / k)
    grid = np.arange(1, bmax + 1, dtype=np.float64)
    rows = []
    for k in full:
        b = np.array(sorted(by[k]), dtype=np.float64)
        y = np.array([by[k][int(x)] for x in b])
        row = np.interp(grid, b, y)
        hi = grid > b[-1]
        if hi.any():
            slope, icpt = np.polyfit(b[-26:], y[-26:], 1)
            row[hi] = slope * grid[hi] + icpt
        rows.append(row)
    return np.array(full, dtype=np.float64), np.array(rows)


def prefill_coefficients(samples: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares ``a s^2 + b s`` (ms per layer) through ``(s, ms)`` prefill samples.

    Examples
    --------
    >>> a, b = prefill_coefficients([(s, 1e-6 * s * s + 1e-3 * s) for s in (128, 512, 2048)])
    >>> round(a * 1e6, 6), round(b * 1e3, 6)
    (1.0, 1.0)
    """
    s = np.array([x for x, _ in samples], dtype=np.float64)
    y = np.array([v for _, v in samples])
    coef, *_ = np.linalg.lstsq(np.stack([s * s, s], 1), y, rcond=None)
    return float(coef[0]), float(coef[1])


def attention_samples(family: str, model: str) -> dict[str, list[tuple[float, ...]]] | None:
    """The shipped samples ``{"decode": [(batch, context, ms)], "prefill": [(s, ms)]}`` of
    ``<family>_<model>_attention_samples.csv``, or ``None`` if there is no such file.

    Examples
    --------
    >>> s = attention_samples("a100", "llama-2-7b")
    >>> len(s["decode"]), len(s["prefill"]), s["decode"][0], s["prefill"][0]
    (436, 6, (1, 32, 0.009), (80, 0.015))
    >>> attention_samples("h100", "llama-2-7b") is None
    True
    """
    path = data_file("profiles", f"{family}_{model}_attention_samples.csv")
    if not path.is_file():
        return None
    rows = read_csv_rows(path)
    return {"decode": [(int(r["batch_size"]), int(r["kv_cache_size"]), float(r["attn_ms_median"]))
                       for r in rows if r["kind"] == "decode"],
            "prefill": [(int(r["prefill_chunk_size"]), float(r["attn_ms_median"]))
                        for r in rows if r["kind"] == "prefill"]}


@lru_cache(maxsize=8)
def attention_profile(family: str, model: str, tp: int) -> AttentionProfile | None:
    """The attention profile of a GPU family, model and TP degree, ``None`` where none is
    shipped (profiles are measured at TP 1 only)."""
    s = attention_samples(family, model) if tp == 1 else None
    if s is None:
        return None
    levels, table = decode_levels(s["decode"])  # type: ignore[arg-type]
    a, b = prefill_coefficients(s["prefill"])  # type: ignore[arg-type]
    return AttentionProfile(levels, table, a, b)
