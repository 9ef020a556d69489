"""Shipped instances: the brute-force oracle agrees with every `expected` value."""

from pathlib import Path

import pytest

from kvopt import Schedule, check_schedule, load_instance
from kvopt.sim.admission import mcsf_schedule
from tests.bruteforce import brute_force_opt

ROOT = Path(__file__).resolve().parents[2]
TINY = sorted((ROOT / "instances" / "tiny").glob("*.json"))
ALL_JSON = sorted((ROOT / "instances").rglob("*.json"))


def test_there_are_tiny_instances():
    assert len(TINY) >= 6


@pytest.mark.parametrize("path", TINY, ids=lambda p: p.stem)
def test_bruteforce_matches_expected_opt(path):
    inst = load_instance(path)
    opt, starts = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    assert opt == inst.expected["opt_total_latency"]
    rep = check_schedule(inst, Schedule.from_starts(inst, starts))
    assert rep.ok and rep.objective == opt


@pytest.mark.parametrize("path", ALL_JSON, ids=lambda p: p.stem)
def test_mcsf_expected_values(path):
    inst = load_instance(path)
    if "mcsf_total_latency" not in inst.expected:
        pytest.skip("no MC-SF value recorded")
    rep = check_schedule(inst, mcsf_schedule(inst))
    assert rep.ok
    assert rep.objective == inst.expected["mcsf_total_latency"]
