"""vLLM itself on the cross-check's requests, against kvopt and Vidur (issue 21, item 7).

Needs a GPU and ``pip install vllm`` (not a kvopt dependency; imported only by ``run``).
The model is Llama-2-7B with random weights (``load_format="dummy"``): timing does not depend
on weight values, so no checkpoint is downloaded. The model folder holds one hand-written
``config.json`` (the Llama-2-7B shape of ``kvopt.sim.steptime.LLAMA2_7B``); there is no
tokenizer (``skip_tokenizer_init``): prompts are token ids, generation ignores EOS and produces
exactly the trace's output length. Nothing here needs the network.

Two sub-commands::

    # on the GPU machine, one configuration (A-F of benchmarks/vidur_crosscheck.py) per run
    python benchmarks/vllm_crosscheck.py run --config F --out vllm-results
    # anywhere: vLLM's figures against kvopt's and Vidur's (a cross-check JSON)
    python benchmarks/vllm_crosscheck.py compare vllm-results/vllm_F_summary.json \\
        --crosscheck reports/sim/vidur/after.json

``run`` replays the requests open-loop in real time through vLLM's asynchronous engine
(arrival ``t`` is submitted ``t`` seconds after the clock starts, after a warm-up), and
records per request the time to the first generated token (TTFT) and to the last (end to end),
plus vLLM's preemption counter. The KV cache is set to the configuration's size in blocks of
16 tokens (``num_gpu_blocks_override``); batch cap 128 sequences, 4096 tokens per step, as
Vidur's and kvopt's vLLM settings. ``--dry-run`` writes the model folder and prints the engine
arguments without importing vLLM.

What differs from Vidur's vLLM (v0) scheduler, and so is stated with every result: vLLM v1
(the default engine of current vLLM) always chunks prefills (a token budget per step, decodes
first) and has no admission watermark; its preemption is recompute. Results carry
``vllm_version`` and the engine arguments used.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vidur_crosscheck import BLOCK, CONFIGS, MAX_BATCH, MAX_TOKENS, requests

from kvopt.sim.steptime import LLAMA2_7B


def llama2_7b_config() -> dict[str, Any]:
    """A Hugging Face ``config.json`` for Llama-2-7B (shape from kvopt's ``LLAMA2_7B``)."""
    c = LLAMA2_7B
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": c.n_embd, "intermediate_size": c.ffn_dim,
        "num_hidden_layers": c.n_layers, "num_attention_heads": c.n_head,
        "num_key_value_heads": c.n_kv_head, "vocab_size": c.vocab_size,
        "max_position_embeddings": MAX_TOKENS, "hidden_act": "silu", "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "rope_scaling": None, "attention_bias": False,
        "tie_word_embeddings": False, "torch_dtype": "float16", "bos_token_id": 1,
        "eos_token_id": 2, "pad_token_id": 0, "initializer_range": 0.02, "pretraining_tp": 1,
        "use_cache": True,
    }


def write_model_dir(folder: Path) -> Path:
    """The model folder vLLM loads with dummy weights: only ``config.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(llama2_7b_config(), indent=1) + "\n")
    return folder


def engine_args(args: argparse.Namespace, model_dir: Path) -> dict[str, Any]:
    """Keyword arguments of vLLM's ``AsyncEngineArgs`` for a run."""
    blocks = args.kv_blocks or CONFIGS[args.config][1] // BLOCK
    return {
        "model": str(model_dir), "load_format": "dummy", "skip_tokenizer_init": True,
        "dtype": "float16", "max_model_len": MAX_TOKENS, "block_size": BLOCK,
        "num_gpu_blocks_override": blocks, "max_num_seqs": MAX_BATCH,
        "max_num_batched_tokens": MAX_TOKENS, "enable_prefix_caching": False,
        "gpu_memory_utilization": args.gpu_memory_utilization, "seed": args.seed,
        "disable_log_stats": False, "enforce_eager": args.enforce_eager,
    }


def token_ids(prompt: np.ndarray, seed: int) -> list[list[int]]:
    """Random prompt token ids (3 .. vocab-1; the values do not matter with dummy weights)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(3, LLAMA2_7B.vocab_size, size=int(p)).tolist() for p in prompt]


def preemptions_from_registry() -> int | None:
    """vLLM's preemption counter from the Prometheus registry (``None`` if not exposed)."""
    try:
        from prometheus_client import REGISTRY
    except ImportError:
        return None
    total, seen = 0.0, False
    for fam in REGISTRY.collect():
        for s in fam.samples:
            if "num_preemptions" in s.name and not s.name.endswith("_created"):
                total += s.value
                seen = True
    return int(total) if seen else None


async def _replay(args: argparse.Namespace, model_dir: Path) -> dict[str, Any]:
    import asyncio

    import vllm
    from vllm import AsyncEngineArgs, AsyncLLMEngine, SamplingParams

    req = requests(args.n, CONFIGS[args.config][0])
    ids = token_ids(req["prompt"], args.seed)
    kw = engine_args(args, model_dir)
    engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**kw))

    async def one(rid: str, prompt: list[int], out: int) -> tuple[float, float, int]:
        sp = SamplingParams(max_tokens=out, min_tokens=out, ignore_eos=True, temperature=0.0,
                            detokenize=False)
        t_first = math.nan
        n_tok = 0
        async for o in engine.generate({"prompt_token_ids": prompt}, sp, rid):
            n_tok = len(o.outputs[0].token_ids)
            if n_tok and math.isnan(t_first):
                t_first = time.perf_counter()
        return t_first, time.perf_counter(), n_tok

    # warm-up (CUDA graphs, allocator): a few requests before the clock starts
    await asyncio.gather(*(one(f"warm{i}", ids[i], 8) for i in range(min(4, len(ids)))))
    pre0 = preemptions_from_registry()
    t0 = time.perf_counter()

    async def timed(i: int) -> tuple[float, float, int]:
        await asyncio.sleep(max(0.0, t0 + float(req["arrival"][i]) - time.perf_counter()))
        return await one(str(i), ids[i], int(req["output"][i]))

    res = await asyncio.gather(*(timed(i) for i in range(len(ids))))
    pre1 = preemptions_from_registry()
    if hasattr(engine, "shutdown"):
        engine.shutdown()
    wall = time.perf_counter() - t0
    first = np.array([r[0] for r in res]) - t0
    done = np.array([r[1] for r in res]) - t0
    ntok = np.array([r[2] for r in res])
    rows = {"id": np.arange(len(ids)), "arrived_at": req["arrival"], "prompt": req["prompt"],
            "output": req["output"], "generated": ntok,
            "ttft": first - req["arrival"], "e2e": done - req["arrival"]}
    gpu = None
    try:
        import torch

        gpu = torch.cuda.get_device_name(0)
    except Exception:
        gpu = None
    return {"rows": rows, "wall_s": wall, "gpu": gpu, "vllm_version": vllm.__version__,
            "engine_args": kw,
            "preemptions": None if pre0 is None or pre1 is None else pre1 - pre0}


def summarize(config: str, rows: dict[str, np.ndarray], extra: dict[str, Any]) -> dict[str, Any]:
    """The figures compared with kvopt and Vidur (same names as the cross-check's)."""
    e2e = np.asarray(rows["e2e"], dtype=np.float64)
    ttft = np.asarray(rows["ttft"], dtype=np.float64)
    return {"config": config, "n": len(e2e), "mean_e2e_s": float(e2e.mean()),
            "p99_e2e_s": float(np.percentile(e2e, 99)), "mean_ttft_s": float(ttft.mean()),
            "makespan_s": float((np.asarray(rows["arrived_at"]) + e2e).max()),
            "short_outputs": int((np.asarray(rows["generated"]) < np.asarray(
                rows["output"])).sum()), **extra}


def cmd_run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model_dir = write_model_dir(out / "llama-2-7b-dummy")
    if args.dry_run:
        print(json.dumps({"config": args.config, "n": args.n,
                          "engine_args": engine_args(args, model_dir)}, indent=1))
        return 0
    import asyncio

    r = asyncio.run(_replay(args, model_dir))
    rows = r.pop("rows")
    prefix = out / f"vllm_{args.config}"
    with open(f"{prefix}_requests.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(list(rows))
        w.writerows(zip(*(np.asarray(v).tolist() for v in rows.values()), strict=True))
    summ = summarize(args.config, rows, r)
    Path(f"{prefix}_summary.json").write_text(json.dumps(summ, indent=1) + "\n")
    print(json.dumps({k: v for k, v in summ.items() if k != "engine_args"}))
    return 0


FIELDS = ("mean_e2e_s", "p99_e2e_s", "mean_ttft_s", "preemptions")


def compare(vllm: list[dict[str, Any]], cross: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (configuration, simulator, variant, step time): the simulator's figures
    and their ratios to vLLM's (``None`` where vLLM's figure is 0 or unknown)."""
    out = []
    for v in vllm:
        c = v["config"]
        sims: list[tuple[str, str, str, dict[str, Any]]] = []
        vid = next((r["vidur"] for r in cross["rows"] if r["config"] == c), None)
        if vid is not None:
            sims.append(("vidur", "vllm", "vidur-0.0.26", vid))
        sims += [("kvopt", r["variant"], r["step_time"], r["kvopt"])
                 for r in cross["rows"] if r["config"] == c]
        for sim, variant, st, fig in sims:
            ratio = {f: (fig[f] / v[f] if v.get(f) not in (None, 0) and fig.get(f) is not None
                         else None) for f in FIELDS}
            out.append({"config": c, "simulator": sim, "variant": variant, "step_time": st,
                        "figures": {f: fig.get(f) for f in FIELDS}, "ratio_to_vllm": ratio,
                        "vllm": {f: v.get(f) for f in FIELDS}})
    return out


def _fmt(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def compare_markdown(rows: list[dict[str, Any]]) -> str:
    """The comparison as a Markdown table."""
    lines = ["| cfg | simulator | variant | step time | mean e2e (s) / vLLM | p99 e2e / vLLM | "
             "mean TTFT / vLLM | preemptions / vLLM |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f, q = r["figures"], r["ratio_to_vllm"]
        lines.append(
            f"| {r['config']} | {r['simulator']} | {r['variant']} | {r['step_time']} | "
            f"{_fmt(f['mean_e2e_s'])} ({_fmt(q['mean_e2e_s'])}) | "
            f"{_fmt(f['p99_e2e_s'], 1)} ({_fmt(q['p99_e2e_s'])}) | "
            f"{_fmt(f['mean_ttft_s'], 3)} ({_fmt(q['mean_ttft_s'])}) | "
            f"{f['preemptions']} ({_fmt(q['preemptions'])}) |")
    return "\n".join(lines)


def _read_json(path: str, flag: str, parser: argparse.ArgumentParser) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except OSError as exc:
        parser.error(f"{flag}: cannot read {path}: {exc.strerror}")
    except json.JSONDecodeError as exc:
        parser.error(f"{flag}: {path} is not JSON: {exc}")


def cmd_compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    vllm = [_read_json(p, "RESULT", parser) for p in args.results]
    for p, v in zip(args.results, vllm, strict=True):
        if not isinstance(v, dict) or v.get("config") not in CONFIGS or any(
                f not in v for f in FIELDS[:3]):
            parser.error(f"RESULT: {p} is not a vllm_crosscheck summary (config, "
                         f"{', '.join(FIELDS[:3])})")
    cross = _read_json(args.crosscheck, "--crosscheck", parser)
    if not isinstance(cross, dict) or "rows" not in cross:
        parser.error(f"--crosscheck: {args.crosscheck} is not a vidur_crosscheck JSON")
    rows = compare(vllm, cross)
    text = compare_markdown(rows)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="replay one configuration through vLLM (GPU)")
    r.add_argument("--config", required=True, choices=sorted(CONFIGS))
    r.add_argument("--out", default="vllm-results")
    r.add_argument("--n", type=int, default=2000)
    r.add_argument("--kv-blocks", type=int, default=None,
                   help="KV blocks of 16 tokens (default: the configuration's KV size)")
    r.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    r.add_argument("--enforce-eager", action="store_true",
                   help="no CUDA graphs (slower decode; for debugging)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--dry-run", action="store_true",
                   help="write the model folder, print the engine arguments, import nothing")
    c = sub.add_parser("compare", help="vLLM results against kvopt and Vidur")
    c.add_argument("results", nargs="+", metavar="RESULT", help="vllm_<cfg>_summary.json")
    c.add_argument("--crosscheck", required=True,
                   help="a benchmarks/vidur_crosscheck.py JSON (e.g. reports/sim/vidur/after.json)")
    c.add_argument("--out", default=None, help="also write the table here")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmd == "run":
        if args.n < 1:
            parser.error("--n: must be at least 1")
        if not 0.0 < args.gpu_memory_utilization <= 1.0:
            parser.error("--gpu-memory-utilization: must be in (0, 1]")
        if args.kv_blocks is not None and args.kv_blocks < 1:
            parser.error("--kv-blocks: must be at least 1")
        return cmd_run(args)
    return cmd_compare(args, parser)


if __name__ == "__main__":
    sys.exit(main())
