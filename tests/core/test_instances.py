"""Shipped instances: the brute-force oracle agrees with every `expected` value."""

import json
from pathlib import Path

import pytest

from kvopt import Schedule, check_schedule, load_instance
from kvopt.core.mcsf import mcsf_schedule
from tests.bruteforce import brute_force_opt

ROOT = Path(__file__).resolve().parents[2]
TINY = sorted((ROOT / "instances" / "tiny").glob("*.json"))
ALL_JSON = sorted((ROOT / "instances").rglob("*.json"))
WITH_MCSF = [p for p in ALL_JSON if "mcsf_total_latency" in json.loads(p.read_text()).get(
    "expected", {})]


def test_there_are_tiny_instances():
    assert len(TINY) >= 6


@pytest.mark.parametrize("path", TINY, ids=lambda p: p.stem)
def test_bruteforce_matches_expected_opt(path):
    inst = load_instance(path)
    opt, starts = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    assert opt == inst.expected["opt_total_latency"]
    rep = check_schedule(inst, Schedule.from_starts(inst, starts))
    assert rep.ok and rep.objective == opt


def test_every_shipped_instance_loads():
    for path in ALL_JSON:
        assert load_instance(path).n >= 1


@pytest.mark.parametrize("path", WITH_MCSF, ids=lambda p: p.stem)
def test_mcsf_expected_values(path):
    inst = load_instance(path)
    rep = check_schedule(inst, mcsf_schedule(inst))
    assert rep.ok
    assert rep.objective == inst.expected["mcsf_total_latency"]
