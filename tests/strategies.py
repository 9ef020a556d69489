"""Hypothesis strategies for small instances, shared by the mip, cross and SLO tests."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvopt import Instance


@st.composite
def small_instances(draw, max_n=5, min_memory=3, max_memory=10, max_arrival=3,
                    predictions=False, max_output=None):
    """Instances small enough for the brute-force oracle (``tests/bruteforce.py``): n <= max_n
    requests, memory in [min_memory, max_memory], prompts 0..3, outputs up to ``max_output``
    (default M - s), arrivals 0..max_arrival, and with ``predictions`` an interval
    [lower, upper] around every output length."""
    M = draw(st.integers(min_memory, max_memory))
    n = draw(st.integers(1, max_n))
    s = [draw(st.integers(0, min(3, M - 1))) for _ in range(n)]
    o = [draw(st.integers(1, min(M - si, max_output or M))) for si in s]
    a = [draw(st.integers(0, max_arrival)) for _ in range(n)]
    if not predictions:
        return Instance(memory=M, arrival=a, prompt=s, output=o)
    lo = [draw(st.integers(1, oi)) for oi in o]
    hi = [draw(st.integers(oi, oi + 3)) for oi in o]
    return Instance(memory=M, arrival=a, prompt=s, output=o, pred_lower=lo, pred_upper=hi)


@st.composite
def slo_instances(draw, predictions=False):
    n = draw(st.integers(1, 4))
    M = draw(st.integers(4, 9))
    s = [draw(st.integers(0, 2)) for _ in range(n)]
    o = [draw(st.integers(1, min(3, M - si))) for si in s]
    a = [draw(st.integers(0, 2)) for _ in range(n)]
    kinds = [draw(st.sampled_from(["deadline", "stream", "compound", "none"])) for _ in range(n)]
    dl = [draw(st.integers(1, 6)) if k in ("deadline", "compound") else None for k in kinds]
    for i, k in enumerate(kinds):  # one deadline per compound group (group 0)
        if k == "compound":
            dl[i] = next(dl[j] for j in range(n) if kinds[j] == "compound")
    ttft = [draw(st.integers(1, 4)) if k == "stream" else None for k in kinds]
    tbt = [draw(st.sampled_from([0.5, 1, 2])) if k == "stream" else None for k in kinds]
    value = [draw(st.sampled_from([None, 3, 7])) if k != "none" else None for k in kinds]
    B = draw(st.sampled_from([None, 1, 2]))
    extra = {}
    if predictions:
        extra["pred_lower"] = [draw(st.integers(1, oi)) for oi in o]
        extra["pred_upper"] = [draw(st.integers(oi, oi + 3)) for oi in o]
    return Instance(memory=M, arrival=a, prompt=s, output=o, slo_kind=kinds, deadline=dl,
                    ttft_slo=ttft, tbt_slo=tbt, value=value,
                    group=[0 if k == "compound" else None for k in kinds],
                    stage=[i if k == "compound" else None for i, k in enumerate(kinds)],
                    max_batch=B, **extra)


def engine_options(name, inst):
    """Options a policy needs on a tiny instance: vllm's blocks must divide M."""
    if name == "vllm":
        return {"block_size": next(b for b in (4, 2, 1) if inst.memory % b == 0)}
    return {}


def default_and_slow(body, default, full, full_strategies=None, **strategies):
    """Two Hypothesis tests of one ``body``: ``default`` examples for the default run and
    ``full`` for ``-m slow`` (``@given(**strategies)``, no deadline; ``full_strategies``
    replaces some strategies in the slow one). Assign both to module-level ``test_*`` names."""
    def make(n, strats):
        return settings(max_examples=n, deadline=None,
                        suppress_health_check=[HealthCheck.too_slow])(given(**strats)(body))

    return (make(default, strategies),
            pytest.mark.slow(make(full, {**strategies, **(full_strategies or {})})))
