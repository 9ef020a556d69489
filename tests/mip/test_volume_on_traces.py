"""Issue 25: ``kvopt bound`` printed negative volume bounds on discretised traces (-7.67e7).
Cause: seed 001's volume LP ignores arrivals and subtracts ``sum a``; on a trace spread over a
long horizon the relaxed completions, counted from slot 0, sum to less than ``sum a``. The LP
is now applied per block of arrivals and never below the trivial bound ``sum o``
(:func:`kvopt.mip.bounds.combinatorial.volume_bound`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kvopt import load_instance
from kvopt.cli.main import main
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip.bounds.combinatorial import trivial_bound, volume_bound, volumes
from kvopt.mip.model.discretize import discretize

CODE = "instances/traces/azure_code_2023.csv"


def _seed_volume_lp(inst) -> float:
    """The seed's form as printed before: the greedy LP from slot 0 (completions at the
    cumulative volume in increasing order over M), minus ``sum a``."""
    c = np.cumsum(np.sort(volumes(inst))) / float(inst.memory)
    return float(c.sum() - inst.arrival.sum())


@pytest.mark.parametrize("n", [2000, None])
def test_volume_bound_on_the_code_trace_at_50ms_is_valid_and_above_trivial(n):
    trace = load_instance(CODE)
    inst = discretize(trace if n is None else trace.take(np.arange(n)), 0.05)
    assert _seed_volume_lp(inst) < 0  # the premise: the seed's form is negative here
    v = volume_bound(inst)
    assert v >= trivial_bound(inst) > 0
    assert v <= inst.tel_of_starts(mcsf_starts(inst))  # a lower bound on a feasible schedule


def test_kvopt_bound_prints_no_negative_bound(capsys):
    assert main(["bound", CODE, "--slot-seconds", "0.05", "--first", "2000", "--lp", "none",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(v is None or v >= 0 for v in doc["bounds"].values()), doc["bounds"]
    assert doc["bounds"]["volume"] >= doc["bounds"]["trivial"]
