"""kvopt's simulator against Vidur 0.0.26 on the same requests (issue 21, item 5).

Six configurations (the first 2000 requests of ``instances/traces/azure_conv_2023.csv``,
Llama-2-7B on one A100, prompts clipped so prompt + output <= 4096 as Vidur's trace reader
does, arrival times shifted to 0 and multiplied by the scale):

====  =====  ==========  =====================================================
name  scale  req/s       KV cache
====  =====  ==========  =====================================================
A     x4     1.18        Vidur's own size, 7424 blocks of 16 = 118,784 tokens
B     x2     2.36        118,784 tokens
C     x1     4.71        118,784 tokens
D     x4     1.18        16,384 tokens (the cache saturates)
E     x2     2.36        32,768 tokens
F     x2     2.36        16,384 tokens
====  =====  ==========  =====================================================

Vidur runs in its own virtual environment (``python3 -m venv V && V/bin/pip install
vidur==0.0.26``), given by ``--vidur-python V/bin/python`` or ``KVOPT_VIDUR_PYTHON``; it is
started as a subprocess on ``benchmarks/vidur_peer.py`` and never imported here. Without it,
the Vidur results committed under ``--out``/vidur (per-configuration summaries and Vidur's
own per-operator predictions) are used, so the kvopt side reruns anywhere.

kvopt runs every configuration with each policy variant (``--variant``) twice: with kvopt's
step time (``--step-time``, default ``a100-llama2-7b-tp1``) and with Vidur's per-batch time
(:class:`VidurStepTime`, built from Vidur's own predictions), so the schedulers can be compared
on one cost model. Printed per configuration and variant: mean and p99 end-to-end latency,
mean TTFT, preemptions, and kvopt / Vidur ratios.

Example (the committed report, ``reports/sim/vidur/README.md``; the default variants are
vLLM's scheduler as kvopt's ``vllm`` policy with Vidur's batch cap, the same with mixed
prefill + decode steps, and ``fcfs`` with vLLM's 1 % watermark)::

    python benchmarks/vidur_crosscheck.py --vidur-python /work/venvs/vidur-peer/bin/python \\
        --out reports/sim/vidur --name after
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import kvopt
from kvopt.core.io import data_file
from kvopt.sim import get_step_time, simulate
from kvopt.sim.steptime.attention import attention_profile

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "instances" / "traces" / "azure_conv_2023.csv"
MAX_TOKENS = 4096  # Vidur's max tokens per request (its trace reader clips the prompt)
BLOCK = 16
VIDUR_BLOCKS = 7424  # what Vidur's memory planner gives Llama-2-7B on an A100

#: name -> (arrival-time scale, KV tokens)
CONFIGS: dict[str, tuple[float, int]] = {
    "A": (4.0, VIDUR_BLOCKS * BLOCK), "B": (2.0, VIDUR_BLOCKS * BLOCK),
    "C": (1.0, VIDUR_BLOCKS * BLOCK), "D": (4.0, 16384), "E": (2.0, 32768),
    "F": (2.0, 16384),
}
#: default kvopt variants: label -> (policy, options)
DEFAULT_VARIANTS = ("vllm=vllm:max_num_seqs=128",
                    "vllm-mixed=vllm:max_num_seqs=128,batching=mixed",
                    "fcfs-a0.01=fcfs:alpha=0.01")
MAX_BATCH = 128


# ---------------------------------------------------------------- requests


def requests(n: int, scale: float, trace: Path = TRACE) -> dict[str, np.ndarray]:
    """First ``n`` requests of the trace: arrivals from 0 times ``scale`` (seconds), prompts
    clipped so ``prompt + output <= 4096`` (both at least 1)."""
    with open(trace, newline="") as f:
        rows = [r for _, r in zip(range(n), csv.DictReader(f), strict=False)]
    t = np.array([float(r["arrived_at"]) for r in rows])
    p = np.maximum(np.array([int(float(r["num_prefill_tokens"])) for r in rows]), 1)
    o = np.maximum(np.array([int(float(r["num_decode_tokens"])) for r in rows]), 1)
    p = p - np.maximum(p + o - MAX_TOKENS, 0)
    return {"arrival": np.round((t - t[0]) * scale, 6), "prompt": p, "output": o}


def write_requests(path: Path, req: dict[str, np.ndarray]) -> None:
    """The request CSV ``vidur_peer.py`` reads."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["arrived_at", "num_prefill_tokens", "num_decode_tokens"])
        w.writerows(zip(req["arrival"].tolist(), req["prompt"].tolist(),
                        req["output"].tolist(), strict=True))


# ---------------------------------------------------------------- Vidur's inputs


def write_vidur_data(folder: Path) -> None:
    """The four profile CSVs Vidur reads: kvopt's shipped operator and network profiles, and
    an attention table in Vidur's format built from the shipped attention samples."""
    folder.mkdir(parents=True, exist_ok=True)
    for src, dst in (("a100_llama-2-7b_mlp.csv", "mlp.csv"),
                     ("a100_dgx_all_reduce.csv", "all_reduce.csv"),
                     ("a100_pairwise_nvlink_send_recv.csv", "send_recv.csv")):
        (folder / dst).write_text(data_file("profiles", src).read_text())
    prof = attention_profile("a100", "llama-2-7b", 1)
    assert prof is not None
    a, b = prof.prefill_a, prof.prefill_b
    head = ["n_embd", "n_q_head", "n_kv_head", "block_size", "num_tensor_parallel_workers",
            "max_model_len", "time_stats.attn_kv_cache_save.median", "batch_size",
            "prefill_chunk_size", "kv_cache_size", "time_stats.attn_decode.median",
            "time_stats.attn_prefill.median"]
    base = [4096, 32, 32, BLOCK, 1, MAX_TOKENS, 0.0]
    with open(folder / "attention.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for kv in [*range(32, 1025, 32), *range(1088, MAX_TOKENS + 1, 64)]:
            for bb in range(1, MAX_BATCH + 1):
                w.writerow([*base, bb, 0, kv, round(prof.decode_ms_one(bb, bb * kv), 6), ""])
        for ch in range(32, MAX_TOKENS + 1, 32):
            for kv in sorted({0, -(-ch // 256) * 256}):
                w.writerow([*base, 1, ch, kv, "", round(a * ch * ch + b * ch, 6)])


# ---------------------------------------------------------------- Vidur's step time


@dataclass
class VidurStepTime:
    """Vidur 0.0.26's per-batch execution time, from its own random-forest predictions
    (``*_tables.json`` written by ``vidur_peer.py``), for kvopt's batch statistics::

        t = L * ( general[ceil8(T)]
                  + attn_decode[D, ceil256(kv / D)] * (1 + 0.1 [D > 1])
                  + a * prefill_sq + b * prefill ) ms

    ``general``: the non-attention operators Vidur sums per layer; the decode attention
    and its batching overhead fraction as Vidur's predictor computes them; prefill attention
    Vidur predicts per prompt (``attn_prefill[ceil256(s), ceil32(s)]``), and kvopt's batch
    statistics give only ``sum s`` and ``sum s^2``, so the prediction is replaced by its
    least-squares fit ``a s^2 + b s``. No CPU overhead (Vidur adds none).
    """

    tables: dict[str, Any]
    name: str = "vidur-0.0.26"

    def __post_init__(self) -> None:
        t = self.tables
        self.L = int(t["num_layers"])
        self.general = np.asarray(t["general_ms"], dtype=np.float64)
        g = int(t["kv_granularity"])
        self.g = g
        dec = np.asarray(t["attn_decode"], dtype=np.float64)
        bmax, kmax = int(dec[:, 0].max()), int(dec[:, 1].max()) // g
        self.dec = np.zeros((bmax + 1, kmax + 1))
        self.dec[dec[:, 0].astype(int), (dec[:, 1] // g).astype(int)] = dec[:, 2]
        self.frac = float(t["decode_batching_overhead_fraction"])
        pre = np.asarray(t["attn_prefill"], dtype=np.float64)
        own = pre[pre[:, 0] == np.ceil(pre[:, 1] / g) * g]  # the KV bucket Vidur queries
        c, y = own[:, 1], own[:, 2]
        w = 1.0 / y  # relative least squares
        coef, *_ = np.linalg.lstsq(np.stack([c * c, c], 1) * w[:, None], y * w, rcond=None)
        self.pa, self.pb = float(coef[0]), float(coef[1])

    def durations(self, tokens: Any, decode: Any, kv: Any, prefill: Any,
                  prefill_sq: Any) -> np.ndarray:
        T = np.asarray(tokens, dtype=np.int64)
        D = np.asarray(decode, dtype=np.int64)
        K = np.asarray(kv, dtype=np.float64)
        Tr = (T + 7) // 8 * 8
        top = self.general.shape[0] - 1
        gen = np.where(Tr <= top, self.general[np.minimum(Tr, top)],
                       self.general[top] * Tr / top)
        mean = np.floor(K / np.maximum(D, 1))
        kb = np.ceil(mean / self.g).astype(np.int64)
        kmax = self.dec.shape[1] - 1
        bmax = self.dec.shape[0] - 1
        Dc = np.clip(D, 0, bmax)
        dec = self.dec[Dc, np.clip(kb, 0, kmax)] * np.where(kb > kmax, kb / kmax, 1.0)
        dec = dec * np.where(bmax < D, D / bmax, 1.0) * (1.0 + self.frac * (D > 1))
        dec = np.where(D > 0, dec, 0.0)
        pre = self.pa * np.asarray(prefill_sq, dtype=np.float64) + self.pb * np.asarray(
            prefill, dtype=np.float64)
        return np.where(T > 0, self.L * (gen + dec + pre) * 1e-3, 0.0)

    def coefficients(self) -> dict[str, Any]:
        return {"model": self.name, "prefill_attention_ms_per_layer": [self.pa, self.pb],
                "decode_batching_overhead_fraction": self.frac}


def step_check(model: VidurStepTime, batches: np.ndarray) -> dict[str, float]:
    """:class:`VidurStepTime` on Vidur's own executed batches (rows of ``_batches.npy``):
    median and worst relative error of the per-batch time, and of the total."""
    _, p, d, kv, sec, psq = (batches[:, i] for i in range(6))
    pred = model.durations((p + d).astype(np.int64), d.astype(np.int64), kv, p, psq)
    rel = pred / sec - 1.0
    worst = float(rel[np.argmax(np.abs(rel))])
    return {"batches": len(sec), "median_abs": float(np.median(np.abs(rel))),
            "worst": worst, "total": float(pred.sum() / sec.sum() - 1.0)}


#: batch classes of :func:`step_compare`: (label, prefill?, lower, upper) on the decode count
#: (decode-only batches) or on the prefill tokens (batches with a prefill)
BATCH_CLASSES = (("decode D<=8", False, 1, 8), ("decode 9<=D<=63", False, 9, 63),
                 ("decode D>=64", False, 64, 10**9), ("prefill <512 tok", True, 1, 511),
                 ("prefill 512-2047 tok", True, 512, 2047), ("prefill >=2048 tok", True, 2048,
                                                                 10**9))


def step_compare(model: Any, batches: np.ndarray) -> dict[str, dict[str, float]]:
    """``model``'s time / Vidur's time on Vidur's executed batches, per batch class: count,
    median ratio, and the ratio of the class totals (how much of the run each class moves)."""
    n_pre, p, d, kv, sec, psq = (batches[:, i] for i in range(6))
    pred = model.durations((p + d).astype(np.int64), d.astype(np.int64), kv.astype(np.int64),
                           p.astype(np.int64), psq)
    out: dict[str, dict[str, float]] = {}
    for label, pre, lo, hi in BATCH_CLASSES:
        x = p if pre else d
        m = (n_pre > 0) == pre
        m &= (x >= lo) & (x <= hi)
        if m.any():
            out[label] = {"batches": int(m.sum()), "share_of_time": float(sec[m].sum() / sec.sum()),
                          "median_ratio": float(np.median(pred[m] / sec[m])),
                          "total_ratio": float(pred[m].sum() / sec[m].sum())}
    out["all"] = {"batches": len(sec), "share_of_time": 1.0,
                  "median_ratio": float(np.median(pred / sec)),
                  "total_ratio": float(pred.sum() / sec.sum())}
    return out


# ---------------------------------------------------------------- runs


def run_vidur(python: str, name: str, req_csv: Path, work: Path, data: Path,
              blocks: int) -> Path:
    """Vidur on one configuration in its own interpreter; returns the output prefix."""
    prefix = work / f"vidur_{name}"
    cmd = [python, str(ROOT / "benchmarks" / "vidur_peer.py"), str(req_csv), str(prefix),
           "--data", str(data), "--num-blocks", str(blocks), "--cache", str(work / "cache")]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    (work / f"vidur_{name}.log").write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        sys.exit(f"Vidur failed on {name} (exit {r.returncode}); log: "
                 f"{work / f'vidur_{name}.log'}\n{r.stderr[-2000:]}")
    summ = json.loads(Path(f"{prefix}_summary.json").read_text())
    summ["wall_s"] = round(wall, 1)
    Path(f"{prefix}_summary.json").write_text(json.dumps(summ, indent=1) + "\n")
    return prefix


def parse_variant(spec: str) -> tuple[str, str, dict[str, Any]]:
    """``LABEL=POLICY[:key=value,...]`` -> ``(label, policy, options)`` (numbers parsed).

    Examples
    --------
    >>> parse_variant("fcfs-a0.01=fcfs:alpha=0.01")
    ('fcfs-a0.01', 'fcfs', {'alpha': 0.01})
    """
    label, _, rest = spec.partition("=")
    policy, _, opts = rest.partition(":")
    if not label or not policy:
        raise argparse.ArgumentTypeError(f"--variant {spec!r}: expected LABEL=POLICY[:k=v,...]")
    options: dict[str, Any] = {}
    for item in filter(None, opts.split(",")):
        k, _, v = item.partition("=")
        try:
            options[k] = int(v)
        except ValueError:
            try:
                options[k] = float(v)
            except ValueError:
                options[k] = v
    return label, policy, options


def run_kvopt(req: dict[str, np.ndarray], memory: int, policy: str, options: dict[str, Any],
              step_time: Any) -> dict[str, Any]:
    """kvopt on the same requests; the figures compared with Vidur's."""
    inst = kvopt.Instance(memory=memory, arrival=req["arrival"], prompt=req["prompt"],
                          output=req["output"], time_unit="second", max_batch=MAX_BATCH,
                          name="azure-conv-crosscheck")
    t0 = time.perf_counter()
    res = simulate(inst, policy, step_time=step_time, **options)
    wall = time.perf_counter() - t0
    m = res.metrics
    return {"mean_e2e_s": m.mean_latency_s, "p99_e2e_s": m.p99_latency_s,
            "mean_ttft_s": m.ttft_mean_s, "preemptions": int(m.evictions),
            "makespan_s": m.makespan_s, "sim_wall_s": round(wall, 2)}


FIELDS = ("mean_e2e_s", "p99_e2e_s", "mean_ttft_s", "preemptions")


def ratios(k: dict[str, Any], v: dict[str, Any]) -> dict[str, float | None]:
    """kvopt / Vidur per compared figure (``None`` where Vidur's is 0)."""
    return {f: (k[f] / v[f] if v[f] else None) for f in FIELDS}


def _r(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def markdown(res: dict[str, Any]) -> str:
    """Tables of a run (one per step-time model)."""
    out = [f"Command: `{res['command']}`", "",
           f"Load (uptime) before / after: {res['load_before']} / {res['load_after']}; "
           f"kvopt wall {res['kvopt_wall_s']} s, Vidur wall {res['vidur_wall_s']} s "
           f"({res['vidur_source']}).", ""]
    sc = res.get("vidur_step_check")
    if sc:
        out += ["Vidur's step time as kvopt evaluates it (`VidurStepTime`) on Vidur's own "
                "executed batches: " + ", ".join(
                    f"{k} median {100 * v['median_abs']:.1f}% / worst {100 * v['worst']:+.1f}%"
                    f" / total {100 * v['total']:+.2f}%" for k, v in sc.items()), ""]
    cmp = res.get("step_compare")
    if cmp:
        labels = [lab for lab, *_ in BATCH_CLASSES] + ["all"]
        out += [f"kvopt's step time `{res['step_times'][0]}` / Vidur's on Vidur's executed "
                "batches, median ratio per batch class (total ratio; share of Vidur's time):",
                "", "| cfg | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
        for c, d in cmp.items():
            out.append(f"| {c} | " + " | ".join(
                f"{d[lab]['median_ratio']:.2f} ({d[lab]['total_ratio']:.2f}; "
                f"{100 * d[lab]['share_of_time']:.0f}%)" if lab in d else "-"
                for lab in labels) + " |")
        out.append("")
    for st in res["step_times"]:
        out += [f"### kvopt step time: `{st}`", "",
                "| cfg | req/s | KV tokens | variant | Vidur mean / p99 e2e (s) | kvopt mean / "
                "p99 e2e (s) | ratio mean / p99 | TTFT Vidur / kvopt (s) | ratio TTFT | "
                "preemptions Vidur / kvopt | ratio |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for row in res["rows"]:
            if row["step_time"] != st:
                continue
            v, k, r = row["vidur"], row["kvopt"], row["ratio"]
            out.append(
                f"| {row['config']} | {row['rate']:.2f} | {row['memory']} | {row['variant']} | "
                f"{v['mean_e2e_s']:.2f} / {v['p99_e2e_s']:.1f} | "
                f"{k['mean_e2e_s']:.2f} / {k['p99_e2e_s']:.1f} | "
                f"{_r(r['mean_e2e_s'])} / {_r(r['p99_e2e_s'])} | "
                f"{v['mean_ttft_s']:.3f} / {k['mean_ttft_s']:.3f} | {_r(r['mean_ttft_s'])} | "
                f"{v['preemptions']} / {k['preemptions']} | {_r(r['preemptions'])} |")
        out.append("")
    return "\n".join(out)


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--vidur-python", default=os.environ.get("KVOPT_VIDUR_PYTHON"),
                   help="Python of Vidur's own environment (default $KVOPT_VIDUR_PYTHON); "
                        "without it the committed Vidur results in OUT/vidur are used")
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "sim" / "vidur")
    p.add_argument("--vidur-results", type=Path, default=None,
                   help="folder of Vidur's results (default OUT/vidur; written there when Vidur "
                        "runs)")
    p.add_argument("--name", default="crosscheck", help="OUT/NAME.md and OUT/NAME.json")
    p.add_argument("--work", type=Path, default=Path(".vidur-crosscheck"),
                   help="scratch folder for Vidur's inputs, logs and batches")
    p.add_argument("--configs", default="ABCDEF")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--variant", action="append", type=parse_variant,
                   help="LABEL=POLICY[:k=v,...] (repeatable; default: "
                        + ", ".join(DEFAULT_VARIANTS) + ")")
    p.add_argument("--step-time", default="a100-llama2-7b-tp1",
                   help="kvopt's step-time model (Vidur's is always run too)")
    args = p.parse_args(argv)
    variants = args.variant or [parse_variant(v) for v in DEFAULT_VARIANTS]
    bad = set(args.configs) - set(CONFIGS)
    if bad:
        p.error(f"--configs: unknown {''.join(sorted(bad))} (choose from ABCDEF)")
    vdir = args.vidur_results or args.out / "vidur"
    load_before = load_avg()
    reqs = {c: requests(args.n, CONFIGS[c][0]) for c in args.configs}
    vidur: dict[str, dict[str, Any]] = {}
    vidur_wall = 0.0
    step_check_doc: dict[str, Any] = {}
    if args.vidur_python:
        args.work.mkdir(parents=True, exist_ok=True)
        vdir.mkdir(parents=True, exist_ok=True)
        data = args.work / "data"
        write_vidur_data(data)
        for c in args.configs:
            mem = CONFIGS[c][1]
            csv_path = args.work / f"requests_{c}.csv"
            write_requests(csv_path, reqs[c])
            print(f"Vidur {c} ...", flush=True)
            prefix = run_vidur(args.vidur_python, c, csv_path, args.work, data, mem // BLOCK)
            summ = json.loads(Path(f"{prefix}_summary.json").read_text())
            vidur_wall += summ["wall_s"]
            (vdir / f"{c}_summary.json").write_text(json.dumps(summ, indent=1) + "\n")
            tables = Path(f"{prefix}_tables.json").read_text()
            if c == args.configs[0]:
                (vdir / "tables.json").write_text(tables)
            elif json.loads(tables) != json.loads((vdir / "tables.json").read_text()):
                sys.exit(f"Vidur's predictions differ between configurations ({c})")
            model = VidurStepTime(json.loads(tables))
            step_check_doc[c] = step_check(model, np.load(f"{prefix}_batches.npy"))
        (vdir / "step_check.json").write_text(json.dumps(step_check_doc, indent=1) + "\n")
        source = f"run now: {args.vidur_python}"
    else:
        if not (vdir / "tables.json").is_file():
            p.error(f"no Vidur results in {vdir}: give --vidur-python (or KVOPT_VIDUR_PYTHON)")
        source = f"committed results in {vdir}"
        if (vdir / "step_check.json").is_file():
            step_check_doc = json.loads((vdir / "step_check.json").read_text())
    for c in args.configs:
        vidur[c] = json.loads((vdir / f"{c}_summary.json").read_text())
    if not args.vidur_python:
        vidur_wall = sum(v.get("wall_s", 0.0) for v in vidur.values())
    vmodel = VidurStepTime(json.loads((vdir / "tables.json").read_text()))
    # kvopt's step time on Vidur's executed batches (where this run or an earlier one left them)
    compare: dict[str, Any] = {}
    kmodel = get_step_time(args.step_time)
    for c in args.configs:
        bpath = args.work / f"vidur_{c}_batches.npy"
        if bpath.is_file():
            compare[c] = step_compare(kmodel, np.load(bpath))
    rows = []
    t0 = time.perf_counter()
    for st_name, st in ((args.step_time, args.step_time), (vmodel.name, vmodel)):
        for c in args.configs:
            mem = CONFIGS[c][1]
            for label, policy, options in variants:
                k = run_kvopt(reqs[c], mem, policy, options, st)
                v = vidur[c]
                row = {"config": c, "rate": args.n / (float(reqs[c]["arrival"][-1]) or 1.0),
                       "memory": mem, "variant": label, "policy": policy, "options": options,
                       "step_time": st_name, "kvopt": k,
                       "vidur": {f: v[f] for f in (*FIELDS, "makespan_s")},
                       "ratio": ratios(k, v)}
                rows.append(row)
                r = row["ratio"]
                print(f"{c} {label:12s} {st_name:20s} e2e {k['mean_e2e_s']:8.2f}/"
                      f"{v['mean_e2e_s']:8.2f} ({_r(r['mean_e2e_s'])})  p99 "
                      f"{_r(r['p99_e2e_s'])}  ttft {_r(r['mean_ttft_s'])}  preempt "
                      f"{k['preemptions']}/{v['preemptions']}", flush=True)
    kv_wall = round(time.perf_counter() - t0, 1)
    cmd = "python benchmarks/vidur_crosscheck.py " + " ".join(
        a if " " not in a else repr(a) for a in (argv if argv is not None else sys.argv[1:]))
    res = {"command": cmd, "n": args.n, "configs": args.configs,
           "step_times": [args.step_time, vmodel.name], "vidur_source": source,
           "vidur_wall_s": round(vidur_wall, 1), "kvopt_wall_s": kv_wall,
           "load_before": load_before, "load_after": load_avg(),
           "vidur_step_check": step_check_doc, "step_compare": compare, "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(res, indent=1) + "\n")
    (args.out / f"{args.name}.md").write_text(markdown(res) + "\n")
    print(f"wrote {args.out / args.name}.md / .json (kvopt {kv_wall} s, Vidur "
          f"{res['vidur_wall_s']} s, load {load_before} -> {res['load_after']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
