"""Exactness: every backend and formulation against the independent brute-force oracle."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kvopt import Instance, Schedule, check_schedule, load_instance
from kvopt.core.generators import random_small
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip import solve
from kvopt.mip.backends import backend_names, get_backend, solver_availability
from kvopt.mip.bounds.combinatorial import (
    core_bound,
    fluid_bound,
    trivial_bound,
    volume_bound,
)
from kvopt.mip.bounds.relaxations import lagrangian_bound, lp_bound
from tests.bruteforce import brute_force_opt

TINY = sorted(Path("instances/tiny").glob("*.json"))
AVAILABLE = [r["name"] for r in solver_availability() if r["available"]]
COMBOS = [(s, f) for s in AVAILABLE for f in ("naive", "tight", "tight+cuts", "tight+cores")] + (
    [("cpsat", "cp"), ("cpsat", "cp+cores"), ("cpsat", "cp+pairs"), ("cpsat", "cp+exact")]
    if "cpsat" in AVAILABLE
    else [])


def _tel(inst, starts):
    return int((np.asarray(starts) + inst.output - inst.arrival).sum())


def test_all_four_backends_available():
    assert set(AVAILABLE) == {"highs", "cbc", "cpsat", "scipy"}


def test_all_four_backends_load_and_solve_in_one_process():
    # a fresh interpreter, so the import order of this test session cannot hide a clash
    code = (
        "import highspy, ortools, pulp, scipy\n"
        "from kvopt import Instance\nfrom kvopt.mip import solve\n"
        "inst = Instance(memory=4, arrival=[0,0,0], prompt=[1,1,2], output=[3,1,2])\n"
        "print([solve(inst, solver=s, time_limit=20).objective "
        "for s in ('cpsat', 'highs', 'cbc', 'scipy', 'cpsat')])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[9.0, 9.0, 9.0, 9.0, 9.0]"


def test_registry_error_lists_valid_names():
    from kvopt import SolverNotAvailableError

    with pytest.raises(SolverNotAvailableError) as err:
        get_backend("gurobi")
    for name in backend_names():
        assert name in str(err.value)


@pytest.mark.parametrize("path", TINY, ids=lambda p: p.stem)
@pytest.mark.parametrize("solver,formulation", COMBOS, ids=lambda x: str(x))
def test_tiny_instances_match_brute_force(path, solver, formulation):
    inst = load_instance(path)
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    assert opt == inst.expected["opt_total_latency"]  # the shipped value agrees with the oracle
    res = solve(inst, solver=solver, formulation=formulation, time_limit=30, warm_start=False)
    assert res.status == "optimal"
    assert res.objective == opt
    assert res.bound <= opt + 1e-6
    rep = check_schedule(inst, res.schedule)
    assert rep.ok and rep.objective == opt
    # the schedule is the solver's own, not the warm start (which is off)
    assert res.incumbent_source == "solver"


@pytest.mark.parametrize("seed", range(12))
def test_random_small_opt_bounds_and_mcsf(seed):
    inst = random_small(1000 + seed)
    opt, starts = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    assert check_schedule(inst, Schedule.from_starts(inst, starts)).objective == opt
    mcsf = _tel(inst, mcsf_starts(inst))
    assert opt <= mcsf
    for solver, formulation in (("highs", "tight+cuts"), ("cpsat", "cp"), ("highs", "tight+cores"),
                                ("cpsat", "cp+cores")):
        res = solve(inst, solver=solver, formulation=formulation, time_limit=30)
        assert res.status == "optimal" and res.objective == opt, (solver, formulation)
        assert check_schedule(inst, res.schedule).ok
    for b in (trivial_bound(inst), volume_bound(inst), fluid_bound(inst),
              lp_bound(inst, "naive"), lp_bound(inst, "tight+cuts"),
              lp_bound(inst, "tight+cores"), core_bound(inst, 1), core_bound(inst, 2),
              lagrangian_bound(inst, iterations=60)[0]):
        assert b <= opt + 1e-6


def test_bound_cannot_pass_when_wrong():
    # sanity of the oracle direction: a request set whose OPT is known by hand
    inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    assert brute_force_opt(4, [0, 0, 0], [1, 2, 1], [1, 1, 1])[0] == 4
    assert fluid_bound(inst) <= 4 < _tel(inst, mcsf_starts(inst))


def test_decoded_schedule_file_roundtrip(tmp_path):
    inst = load_instance("instances/tiny/tiny-online.json")
    res = solve(inst, solver="highs", time_limit=30)
    out = tmp_path / "s.json"
    res.schedule.save(out)
    doc = json.loads(out.read_text())
    assert doc["source"] == "mip:highs" and doc["meta"]["status"] == "optimal"
