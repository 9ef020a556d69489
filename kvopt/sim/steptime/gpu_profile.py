"""Profile your own GPU: time Llama-shaped forward passes and write the CSV ``fit`` reads.

Optional: needs PyTorch >= 2.5 with CUDA (``pip install "kvopt[gpu]"``; SDPA's ``enable_gqa``);
torch is imported only by :func:`profile_gpu`. The grid and CSV logic (:func:`default_grid`,
:func:`write_steps_csv`) do not need it.

What is timed: one full forward pass (embedding, every decoder layer, final RMSNorm, LM
head, greedy argmax) of a Llama-2-shaped model with random bf16 weights -- its timing does not
depend on their values -- on one tensor-parallel shard (heads, KV heads, FFN and vocabulary
divided by ``tp``; no all-reduce, add it from an all-reduce profile). Fused QKV and gate/up
projections, table RoPE, PyTorch SDPA attention: the prompt attends causally to itself, each
decoding sequence attends to its own per-layer KV cache of ``context + 1`` tokens. Each batch
is captured in a CUDA graph and replayed (as vLLM does for decode), so the times are GPU
times without Python launch overhead: ``repeats`` timed replays after warm-up, median and
10/90th percentiles. Same construction as ``kvopt/data/measured/h100_llama_steps.csv``.

Then: ``kvopt steptime fit OUT.csv --base h100-llama2-7b-tp1 --out my-gpu.json`` and
``kvopt simulate ... --step-time my-gpu.json``.
"""

from __future__ import annotations

import csv
import io
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from kvopt.core.errors import UsageError
from kvopt.core.io import atomic_write_text
from kvopt.sim.steptime.models import MODEL_CONFIGS, ModelConfig

CSV_COLUMNS = ("kind", "model", "prefill", "batch", "context", "tokens", "kv", "prefill_sq",
               "ms_median", "ms_p10", "ms_p90")

#: Mixed batches (prompt tokens, decoding sequences, context) of the shipped H100 file.
MIXED_POINTS = ((128, 32, 1024), (512, 32, 1024), (512, 128, 512), (1024, 16, 2048),
                (2048, 64, 512), (256, 256, 256), (4096, 8, 4096), (1024, 64, 1024))


@dataclass(frozen=True)
class GridPoint:
    """One batch: a prompt of ``prefill`` tokens plus ``batch`` decodes at ``context``.

    Examples
    --------
    >>> p = GridPoint("mixed", prefill=512, batch=32, context=1024)
    >>> p.tokens, p.kv          # 512 + 32 tokens; 32 * (1024 + 1) KV tokens read
    (544, 32800)
    """

    kind: str
    prefill: int
    batch: int
    context: int

    @property
    def kv(self) -> int:
        """KV tokens the decodes read: ``batch * (context + 1)``."""
        return self.batch * (self.context + 1)

    @property
    def tokens(self) -> int:
        """Tokens through the linear layers: ``prefill + batch``."""
        return self.prefill + self.batch


def shard_kv_bytes_per_token(config: ModelConfig, tp: int) -> int:
    """KV bytes of one token over all layers on one shard (KV heads divided by ``tp``).

    Examples
    --------
    >>> from kvopt.sim.steptime.models import LLAMA2_70B
    >>> shard_kv_bytes_per_token(LLAMA2_70B, 2)   # 80 layers x K,V x 4 heads x 128 x 2 B
    163840
    """
    return config.kv_bytes_per_token // tp


def point_bytes(p: GridPoint, config: ModelConfig, tp: int = 1) -> int:
    """Device bytes one grid point allocates beside the weights: its per-layer K and V caches
    (``batch * (context + 1)`` tokens, bf16) and a working-set allowance for the activations of
    ``tokens`` tokens (hidden, fused QKV / gate-up and LM-head rows, bf16, four live copies).

    :func:`profile_gpu` skips a point whose bytes exceed the device's free memory after the
    weights are built (a 70B shard's weights take ~64 GiB of an 80 GB H100, so the decode
    batches that fit a 32 GiB KV budget on their own do not fit beside them).

    Examples
    --------
    >>> from kvopt.sim.steptime.models import LLAMA2_70B
    >>> point_bytes(GridPoint("decode", 0, 64, 2048), LLAMA2_70B, 2) // 2**20   # ~20 GiB of KV
    20522
    """
    c = config
    ffn, vocab, d = c.ffn_dim // tp, c.vocab_size // tp, c.n_embd
    act = 4 * p.tokens * (2 * d + (c.n_head // tp + 2 * (c.n_kv_head // tp)) * c.head_dim
                          + 2 * ffn + vocab) * 2
    return p.kv * shard_kv_bytes_per_token(config, tp) + act


def default_grid(config: ModelConfig, tp: int = 1, grid: str = "quick",
                 kv_budget_bytes: float = 32 * 2**30) -> list[GridPoint]:
    """Batches to time. ``full``: prompts 16..8192; decode batches 1..512 at contexts
    128..4096; the mixed batches of :data:`MIXED_POINTS` (the shipped H100 grid).
    ``quick``: a subset (prompts 64..4096 by 4x, batches by 4x). Batches whose KV cache
    exceeds ``kv_budget_bytes`` are left out.

    Examples
    --------
    >>> from kvopt.sim.steptime.models import LLAMA2_7B
    >>> g = default_grid(LLAMA2_7B, 1, "full")
    >>> sum(p.kind == "decode" for p in g), max(p.kv for p in g if p.kind == "decode")
    (36, 66048)
    >>> len(default_grid(LLAMA2_7B, 1, "quick")) < len(g)
    True
    """
    if grid not in ("quick", "full"):
        raise UsageError("--grid", f"must be quick or full, got {grid!r}")
    if tp < 1 or config.n_kv_head % tp or config.n_head % tp:
        raise UsageError("--tp", f"must divide the {config.name} head counts, got {tp}")
    full = grid == "full"
    prompts = [16, 64, 128, 256, 512, 1024, 2048, 4096, 8192] if full else [64, 256, 1024, 4096]
    batches = [2**i for i in range(10)] if full else [1, 4, 16, 64, 256]
    contexts = [128, 512, 1024, 2048, 4096] if full else [128, 1024, 4096]
    per_tok = shard_kv_bytes_per_token(config, tp)
    pts = [GridPoint("prefill", p, 0, 0) for p in prompts]
    pts += [GridPoint("decode", 0, b, c) for c in contexts for b in batches
            if b * c * per_tok <= kv_budget_bytes]
    mixed = MIXED_POINTS if full else MIXED_POINTS[::2]
    pts += [GridPoint("mixed", p, b, c) for p, b, c in mixed
            if b * c * per_tok <= kv_budget_bytes]
    return pts


def write_steps_csv(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> int:
    """Write measured batches (dicts with :data:`CSV_COLUMNS`) as CSV, atomically; returns
    the number of rows. The file is what :func:`kvopt.sim.steptime.measured.read_steps_csv`
    reads (``batch`` and ``ms_median`` are its aliases of ``decode`` and ``ms``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from kvopt.sim.steptime.measured import read_steps_csv
    >>> p = GridPoint("mixed", 512, 32, 1024)
    >>> rec = point_record(p, "llama-2-7b", [10.0, 11.0, 12.0])
    >>> tmp = tempfile.TemporaryDirectory()
    >>> f = pathlib.Path(tmp.name) / "steps.csv"
    >>> write_steps_csv(f, [rec])
    1
    >>> r = read_steps_csv(f)
    >>> r.kind.tolist(), r.decode.tolist(), r.kv.tolist(), r.ms.tolist()
    (['mixed'], [32], [32800.0], [11.0])
    >>> tmp.cleanup()
    """
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    n = 0
    for r in records:
        w.writerow({k: r[k] for k in CSV_COLUMNS})
        n += 1
    atomic_write_text(path, buf.getvalue())
    return n


def point_record(p: GridPoint, model: str, times_ms: Sequence[float]) -> dict[str, Any]:
    """A CSV record for ``p`` from its timed replays (ms): median, 10th and 90th percentile.

    Examples
    --------
    >>> rec = point_record(GridPoint("decode", 0, 8, 1024), "llama-2-7b",
    ...                    [7.0, 7.2, 7.1, 7.4, 9.0])
    >>> rec["kind"], rec["tokens"], rec["kv"], rec["ms_median"], rec["ms_p10"], rec["ms_p90"]
    ('decode', 8, 8200, 7.2, 7.04, 8.36)
    """
    import numpy as np

    t = np.asarray(times_ms, dtype=np.float64)
    return {"kind": p.kind, "model": model, "prefill": p.prefill, "batch": p.batch,
            "context": p.context, "tokens": p.tokens, "kv": p.kv, "prefill_sq": p.prefill**2,
            "ms_median": round(float(np.median(t)), 4),
            "ms_p10": round(float(np.percentile(t, 10)), 4),
            "ms_p90": round(float(np.percentile(t, 90)), 4)}


def _torch() -> Any:
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise UsageError("profile", "needs PyTorch: pip install 'kvopt[gpu]'") from None
    if not torch.cuda.is_available():
        raise UsageError("profile", "needs a CUDA GPU (torch.cuda.is_available() is False)")
    return torch


class _Shard:
    """Random-weight Llama-2 shard in torch (built by :func:`profile_gpu`)."""

    def __init__(self, torch: Any, config: ModelConfig, tp: int, device: str) -> None:
        c = config
        self.torch, self.c, self.dev = torch, c, device
        self.nh, self.nkv, self.hd = c.n_head // tp, c.n_kv_head // tp, c.head_dim
        ffn, vocab, d = c.ffn_dim // tp, c.vocab_size // tp, c.n_embd
        dt = torch.bfloat16

        def w(*shape: int) -> Any:
            return torch.randn(*shape, device=device, dtype=dt) * 0.02

        self.emb = w(vocab, d)
        self.layers = [{"ln1": torch.ones(d, device=device, dtype=dt),
                        "qkv": w(d, (self.nh + 2 * self.nkv) * self.hd),
                        "o": w(self.nh * self.hd, d),
                        "ln2": torch.ones(d, device=device, dtype=dt),
                        "gu": w(d, 2 * ffn), "down": w(ffn, d)} for _ in range(c.n_layers)]
        self.norm = torch.ones(d, device=device, dtype=dt)
        self.head = w(d, vocab)
        inv = 1.0 / (10000.0 ** (torch.arange(0, self.hd, 2, device=device).float() / self.hd))
        ang = torch.outer(torch.arange(16384, device=device).float(), inv)
        self.cos, self.sin = ang.cos().to(dt), ang.sin().to(dt)

    def _rms(self, x: Any, g: Any) -> Any:
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * self.torch.rsqrt(v + 1e-5)).to(x.dtype) * g

    def _rope(self, x: Any, pos: Any) -> Any:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        cos, sin = self.cos[pos].unsqueeze(-2), self.sin[pos].unsqueeze(-2)
        return self.torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)

    def forward(self, ids: Any, pos: Any, P: int, B: int, caches: list[tuple[Any, Any]]) -> Any:
        """One forward pass: ``P`` prompt tokens first, then ``B`` decode tokens."""
        torch = self.torch
        F = torch.nn.functional
        nh, nkv, hd = self.nh, self.nkv, self.hd
        x = self.emb[ids]
        for li, L in enumerate(self.layers):
            h = self._rms(x, L["ln1"]) @ L["qkv"]
            q, k, v = h.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
            q = self._rope(q.view(-1, nh, hd), pos)
            k = self._rope(k.view(-1, nkv, hd), pos)
            v = v.view(-1, nkv, hd)
            outs = []
            if P:
                qp, kp, vp = (t[:P].transpose(0, 1).unsqueeze(0) for t in (q, k, v))
                outs.append(F.scaled_dot_product_attention(
                    qp, kp, vp, is_causal=True, enable_gqa=nkv != nh)[0].transpose(0, 1))
            if B:
                kc, vc = caches[li]
                kc[:, :, -1] = k[P:]
                vc[:, :, -1] = v[P:]
                qd = q[P:].unsqueeze(2)                          # [B, nh, 1, hd]
                outs.append(F.scaled_dot_product_attention(
                    qd, kc, vc, enable_gqa=nkv != nh).squeeze(2))
            a = torch.cat(outs, 0).reshape(-1, nh * hd)
            x = x + a @ L["o"]
            g, u = (self._rms(x, L["ln2"]) @ L["gu"]).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ L["down"]
        return (self._rms(x, self.norm) @ self.head).argmax(-1)


def profile_gpu(model: str = "llama-2-7b", tp: int = 1, grid: str = "quick",
                repeats: int = 30, warmup: int = 5, kv_budget_bytes: float = 32 * 2**30,
                points: Sequence[GridPoint] | None = None,
                log: IO[str] | None = None) -> list[dict[str, Any]]:
    """Time every grid point on this machine's GPU (CUDA graphs); CSV records.

    Examples
    --------
    On a CUDA machine, ``profile_gpu("llama-2-7b", grid="quick")`` times the quick grid. The
    arguments are checked before PyTorch is needed:

    >>> profile_gpu("llama-2-13b")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --model: must be one of ['llama-2-70b', \
'llama-2-7b'], got 'llama-2-13b'
    """
    config = MODEL_CONFIGS.get(model)
    if config is None:
        raise UsageError("--model", f"must be one of {sorted(MODEL_CONFIGS)}, got {model!r}")
    if repeats < 3:
        raise UsageError("--repeats", f"must be >= 3, got {repeats}")
    pts = list(points) if points is not None else default_grid(config, tp, grid,
                                                               kv_budget_bytes)
    torch = _torch()
    name = model if tp == 1 else f"{model}-tp{tp}-shard"
    shard = _Shard(torch, config, tp, "cuda")
    free = int(torch.cuda.mem_get_info()[0])
    out = []
    with torch.inference_mode():
        for p in pts:
            t0 = time.time()
            need = point_bytes(p, config, tp)
            if need > free:
                if log is not None:
                    print(f"{p.kind:>7} prefill {p.prefill:>5} batch {p.batch:>4} context "
                          f"{p.context:>5}: skipped, needs {need / 2**30:.1f} GiB beside the "
                          f"weights, {free / 2**30:.1f} GiB free", file=log)
                continue
            shape = (p.batch, shard.nkv, p.context + 1, shard.hd)   # per-layer K and V
            caches = [(torch.randn(shape, device="cuda", dtype=torch.bfloat16),
                       torch.randn(shape, device="cuda", dtype=torch.bfloat16))
                      for _ in range(config.n_layers)] if p.batch else []
            ids = torch.randint(0, config.vocab_size // tp, (p.tokens,), device="cuda")
            pos = torch.cat([torch.arange(p.prefill, device="cuda"),
                             torch.full((p.batch,), p.context, device="cuda")]).long()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(2):
                    shard.forward(ids, pos, p.prefill, p.batch, caches)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                shard.forward(ids, pos, p.prefill, p.batch, caches)
            for _ in range(warmup):
                graph.replay()
            times = []
            for _ in range(repeats):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                graph.replay()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b))
            rec = point_record(p, name, times)
            out.append(rec)
            if log is not None:
                print(f"{p.kind:>7} prefill {p.prefill:>5} batch {p.batch:>4} context "
                      f"{p.context:>5}: {rec['ms_median']:.3f} ms ({time.time() - t0:.1f} s)",
                      file=log)
            del graph, caches
            torch.cuda.empty_cache()
    return out


def profile_to_csv(path: str | os.PathLike[str], **kwargs: Any) -> int:
    """:func:`profile_gpu` then :func:`write_steps_csv`; returns the number of rows.

    Examples
    --------
    On a CUDA machine, ``profile_to_csv("my-gpu.csv", model="llama-2-7b")`` writes the file
    ``kvopt steptime fit`` reads. Bad arguments fail before anything is timed or written:

    >>> profile_to_csv("my-gpu.csv", model="llama-2-7b", repeats=1)
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --repeats: must be >= 3, got 1
    """
    return write_steps_csv(path, profile_gpu(**kwargs))
