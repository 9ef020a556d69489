"""``benchmarks/mip_beam.py`` (reports/mip/README.md section 10.25): every schedule the beam
returns passes the independent checker at the TEL it claims, with arrivals or without; an
unbounded beam is the exact dynamic programme (the brute-force optimum); a narrow one is
never worse than its first rollout; bad input is refused with one error, exit 2."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from kvopt import Instance
from tests.bruteforce import brute_force_opt
from tests.mip.test_window_lp_benchmark import _instance
from tests.scripts import assert_refused, load_benchmark

BM = load_benchmark("mip_beam")


def _with_arrivals(seed: int) -> Instance:
    """A tiny instance of :func:`_instance` with arrivals in slots 0-3."""
    inst = _instance(seed)
    a = np.random.default_rng([seed, 77]).integers(0, 4, size=inst.n)
    return Instance(memory=inst.memory, arrival=a.tolist(), prompt=inst.prompt.tolist(),
                    output=inst.output.tolist())


INSTANCES = [_instance(s) for s in range(8)] + [_with_arrivals(s) for s in range(8)]


@functools.cache
def _opt(k: int) -> float:
    """The brute-force optimum of ``INSTANCES[k]`` (once per instance for the whole module)."""
    inst = INSTANCES[k]
    return brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)[0]


@pytest.mark.parametrize("k", range(len(INSTANCES)))
def test_unbounded_beam_is_the_optimum(k):
    inst = INSTANCES[k]
    r = BM.beam_search(inst, 10**6, 10**6)
    assert BM.checked_tel(inst, r["starts"], r["tel"]) == _opt(k)


@pytest.mark.parametrize("k", range(len(INSTANCES)))
def test_narrow_beam_is_feasible_and_no_worse_than_its_rollout(k):
    inst = INSTANCES[k]
    first = BM.beam_search(inst, 1, 1)
    for width, cap in ((1, 1), (1, 3), (2, 10)):
        r = first if (width, cap) == (1, 1) else BM.beam_search(inst, width, cap)
        tel = BM.checked_tel(inst, r["starts"], r["tel"])
        assert _opt(k) <= tel <= r["first_rollout"]
        if width > 1:
            assert tel <= first["tel"]


def test_narrow_beam_misses_the_optimum_somewhere():
    """The tests above are not vacuous: a beam of one state with one start set per state
    is above the optimum on some tiny instance (so the unbounded beam's equality is work of
    its width)."""
    above = 0
    for k, inst in enumerate(INSTANCES):
        r = BM.beam_search(inst, 1, 1)
        above += r["tel"] > _opt(k)
    assert above >= 1


def test_checked_tel_refuses_a_wrong_claim():
    inst = INSTANCES[0]
    r = BM.beam_search(inst, 2, 10)
    with pytest.raises(RuntimeError):
        BM.checked_tel(inst, r["starts"], r["tel"] + 1)


@pytest.mark.parametrize("argv, field", [
    (["no/such/records.json"], "RECORDS.json"),
    (["reports/mip/frontier_cpu_v2.json", "--width", "0"], "--width"),
    (["reports/mip/frontier_cpu_v2.json", "--cap", "x"], "--cap"),
    (["reports/mip/frontier_cpu_v2.json", "--improve", "0"], "--improve"),
    (["reports/mip/frontier_cpu_v2.json", "--n", "7"], "--n"),
    (["tests"], "RECORDS.json"),                          # a folder without instances
    (["reports/mip/paper_scale", "--only", "nope"], "--only"),
])
def test_refuses_bad_input(argv, field):
    assert_refused("benchmarks/mip_beam.py", argv, field)
