"""Run Vidur 0.0.26 (the peer simulator) on one request list; runs in *Vidur's* environment.

Not imported by kvopt or its tests: ``benchmarks/vidur_crosscheck.py`` starts it with the
Python interpreter of a separate virtual environment (``pip install vidur==0.0.26``)::

    VIDUR_PYTHON requests.csv OUT_PREFIX --data DIR [--num-blocks N] [--cache DIR]

Setting: Llama-2-7B, A100, TP 1, one replica, Vidur's vLLM replica scheduler (batch cap 128,
4096 tokens per batch, blocks of 16 tokens, 1 % watermark), its random-forest execution-time
predictor trained locally on the profiles in ``--data`` (``mlp.csv``, ``attention.csv``,
``all_reduce.csv``, ``send_recv.csv``; the cross-check writes them).

Three things Vidur 0.0.26 needs to run offline, handled here:

1. it downloads profiles and trained predictions from a model hub at run time: the profile
   paths are pointed at ``--data`` and the hub download is made to fail, so the predictor
   trains its random forest locally (grid cut to one setting; ~20 s on 2 cores, cached in
   ``--cache`` across runs);
2. ``Request.restart()`` does not reset ``_num_stage_processed_tokens`` /
   ``_is_prefill_stage_complete``, so the re-prefill after the first preemption fails an
   assertion: both are reset after a restart;
3. Vidur's A100 Llama-2-7B ``attention.csv`` (10.7 MB) is not available here: ``--data``
   holds one rebuilt from sampled rows (``kvopt/data/profiles``, see its PROVENANCE.md).

Writes ``OUT_PREFIX_requests.csv`` (per request: e2e, ttft, restarts),
``OUT_PREFIX_summary.json`` and ``OUT_PREFIX_tables.json`` (Vidur's own per-operator
predictions, so kvopt can use Vidur's per-batch time: the non-attention operators summed per
rounded token count, decode attention by batch size and KV bucket, prefill attention by KV
bucket and chunk size), and ``OUT_PREFIX_batches.npy`` (one row per executed batch: prefills,
prefill tokens, decodes, decode KV tokens, seconds, sum of squared prompts).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")

#: non-attention operators Vidur sums per layer (``ExecutionTime``; the KV-cache save is
#: commented out there, ``add`` is counted once per layer)
GENERAL_OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj", "mlp_act",
               "attn_rope", "input_layernorm", "post_attention_layernorm", "add")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("requests", help="CSV: arrived_at (s), num_prefill_tokens, num_decode_tokens")
    p.add_argument("out_prefix")
    p.add_argument("--data", required=True, help="folder with the four profile CSVs")
    p.add_argument("--num-blocks", type=int, default=None,
                   help="KV blocks of 16 tokens (default: Vidur's memory planner)")
    p.add_argument("--cache", default=".vidur-cache", help="Vidur's model/prediction cache")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--decode-check", choices=("one-block", "needed"), default="one-block",
                   help="a running request is scheduled while one block is free (Vidur's "
                        "rule) or while the blocks it needs are free (kvopt's)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    import numpy as np
    import pandas as pd
    from vidur.config import (
        CacheConfig,
        ClusterConfig,
        MetricsConfig,
        RandomForrestExecutionTimePredictorConfig,
        ReplicaConfig,
        SimulationConfig,
        TraceRequestGeneratorConfig,
        VllmSchedulerConfig,
    )
    from vidur.entities.request import Request
    from vidur.execution_time_predictor import sklearn_execution_time_predictor as skl
    from vidur.execution_time_predictor.base_execution_time_predictor import (
        BaseExecutionTimePredictor,
    )
    from vidur.simulator import Simulator
    from vidur.utils.random import set_seeds

    data = args.data

    # work-around 1: local profiles, no hub download
    def local_inputs(self):
        return tuple(f"{data}/{n}.csv" for n in ("mlp", "attention", "all_reduce", "send_recv"))

    def no_hub(self):
        raise RuntimeError("offline: the predictor is trained locally")

    skl.SklearnExecutionTimePredictor._get_input_files = local_inputs
    skl.SklearnExecutionTimePredictor._load_predictions_from_hf = no_hub

    # work-around 2: Request.restart() leaves the stage counters of the previous run
    orig_restart = Request.restart

    def restart(self):
        orig_restart(self)
        self._num_stage_processed_tokens = 0
        self._is_prefill_stage_complete = False

    Request.restart = restart

    if args.decode_check == "needed":  # a diagnostic variant, not Vidur's behaviour
        from vidur.scheduler.replica_scheduler.vllm_replica_scheduler import (
            VLLMReplicaScheduler,
        )

        orig_can = VLLMReplicaScheduler._can_allocate_request

        def can_allocate(self, request):
            if request.id not in self._allocation_map:
                return orig_can(self, request)
            reserved = self._allocation_map[request.id] * self._cache_config.block_size
            need = 1 if request.num_processed_tokens > reserved else 0
            return self._cache_config.num_blocks - self._num_allocated_blocks >= need

        VLLMReplicaScheduler._can_allocate_request = can_allocate

    batches: list[tuple[float, ...]] = []
    predictor: list[BaseExecutionTimePredictor] = []
    orig_et = BaseExecutionTimePredictor.get_execution_time

    def logged(self, batch, pipeline_stage):
        et = orig_et(self, batch, pipeline_stage)
        if not predictor:
            predictor.append(self)
        pre = [q for q in batch.num_q_tokens if q != 1]
        dec = [k for q, k in zip(batch.num_q_tokens, batch.num_kv_tokens, strict=True) if q == 1]
        batches.append((len(pre), sum(pre), len(dec), sum(dec), et.total_time,
                        float(sum(q * q for q in pre))))
        return et

    BaseExecutionTimePredictor.get_execution_time = logged

    # Vidur's trace format (its TraceReplayRequestGenerator): a date, a time in seconds,
    # prompt and completion token counts
    req = pd.read_csv(args.requests)
    trace = f"{args.out_prefix}_trace.csv"
    pd.DataFrame({"Date": "2023-08-21", "Time": req.arrived_at,
                  "PromptTokenCount": req.num_prefill_tokens,
                  "CompletionTokenCount": req.num_decode_tokens}).to_csv(trace, index=False)
    cfg = SimulationConfig(
        seed=args.seed, log_level="warning",
        cluster_config=ClusterConfig(
            num_replicas=1,
            replica_config=ReplicaConfig(model_name="meta-llama/Llama-2-7b-hf", device="a100",
                                         network_device="a100_dgx", tensor_parallel_size=1,
                                         num_pipeline_stages=1),
            cache_config=CacheConfig(block_size=16, num_blocks=args.num_blocks),
            replica_scheduler_config=VllmSchedulerConfig(batch_size_cap=128,
                                                         max_tokens_in_batch=4096),
        ),
        request_generator_config=TraceRequestGeneratorConfig(
            trace_file=trace, date="2023-08-21", prefill_scale_factor=1.0,
            decode_scale_factor=1.0, time_scale_factor=1.0, max_tokens=4096),
        execution_time_predictor_config=RandomForrestExecutionTimePredictorConfig(
            num_estimators=[250], max_depth=[32], min_samples_split=[2], k_fold_cv_splits=2,
            num_training_job_threads=2, prediction_max_tokens_per_request=4096,
            prediction_max_prefill_chunk_size=4096, prediction_max_batch_size=128,
            cache_dir=args.cache),
        metrics_config=MetricsConfig(write_metrics=False, enable_chrome_trace=False,
                                     store_plots=False,
                                     output_dir=f"{args.out_prefix}_vidur_out"),
    )
    set_seeds(cfg.seed)
    t0 = time.time()
    sim = Simulator(cfg)
    t1 = time.time()
    reqs = [ev._request for _, ev in sim._event_queue]
    sim.run()
    t2 = time.time()
    df = pd.DataFrame({
        "id": [r.id for r in reqs], "arrived_at": [r.arrived_at for r in reqs],
        "prefill_completed_at": [r._prefill_completed_at for r in reqs],
        "completed_at": [r._completed_at for r in reqs],
        "restarts": [r.num_restarts for r in reqs]}).sort_values("id")
    df["e2e"] = df.completed_at - df.arrived_at
    df["ttft"] = df.prefill_completed_at - df.arrived_at
    df.to_csv(f"{args.out_prefix}_requests.csv", index=False)
    b = np.array(batches, dtype=float)
    np.save(f"{args.out_prefix}_batches.npy", b)

    pred = predictor[0]._predictions
    general = np.zeros(4097)
    for op in GENERAL_OPS:
        for (nt,), v in pred[op].items():
            if nt <= 4096:
                general[int(nt)] += float(v)
    dec = sorted((int(k[0]), int(k[1]), float(v)) for k, v in pred["attn_decode"].items())
    pre = sorted((int(k[0]), int(k[1]), float(v)) for k, v in pred["attn_prefill"].items())
    pcfg = cfg.execution_time_predictor_config
    tables = {
        "source": "vidur 0.0.26 RandomForrestExecutionTimePredictor predictions (ms per layer)",
        "num_layers": int(predictor[0]._num_layers_per_pipeline_stage),
        "general_ops": list(GENERAL_OPS),
        "general_ms": general.round(6).tolist(),
        # Vidur applies its decode batching overhead to GQA models only (0 for Llama-2-7B)
        "decode_batching_overhead_fraction": float(
            predictor[0]._attention_decode_batching_overhead_fraction),
        "kv_granularity": int(pcfg.kv_cache_prediction_granularity),
        "attn_decode": dec, "attn_prefill": pre,
    }
    with open(f"{args.out_prefix}_tables.json", "w") as f:
        json.dump(tables, f)
    summary = {
        "vidur_version": __import__("vidur").__version__ if hasattr(
            __import__("vidur"), "__version__") else "0.0.26",
        "num_blocks": int(cfg.cluster_config.cache_config.num_blocks),
        "init_s": round(t1 - t0, 1), "sim_s": round(t2 - t1, 1), "n": len(df),
        "batches": len(b), "prefill_batches": int((b[:, 0] > 0).sum()),
        "makespan_s": float(df.completed_at.max()),
        "mean_e2e_s": float(df.e2e.mean()), "p99_e2e_s": float(df.e2e.quantile(0.99)),
        "mean_ttft_s": float(df.ttft.mean()), "preemptions": int(df.restarts.sum()),
        "requests_preempted": int((df.restarts > 0).sum()),
        "decode_check": args.decode_check,
    }
    with open(f"{args.out_prefix}_summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
