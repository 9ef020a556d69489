"""``benchmarks/mip_branch.py`` (reports/mip/README.md sections 10.26, 10.28): the
branch-and-bound's bound lies between the root interval LP and the brute-force optimum on tiny
instances, with arrivals or without, its node LPs warm-started or cold; split on every request
with no identical ones it proves OPT; split only on the big requests it stops with a valid
bound below OPT somewhere; a warm-started node has the cold node's value; bad input is refused
with one error, exit 2."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.mip.test_beam_benchmark import INSTANCES, _opt
from tests.scripts import assert_refused, load_benchmark, run_script

BB = load_benchmark("mip_branch")


@functools.cache
def _run(k: int, frac: float, warm: bool = True) -> dict:
    return BB.branch_and_bound(INSTANCES[k], _opt(k), 120.0, frac, warm)


@pytest.mark.parametrize("k", range(len(INSTANCES)))
@pytest.mark.parametrize("frac", [0.0, 0.5])
@pytest.mark.parametrize("warm", [True, False])
def test_bound_between_root_and_opt(k, frac, warm):
    r = _run(k, frac, warm)
    assert r["root"] - 1e-6 <= r["bound"] <= _opt(k) + 1e-9
    assert r["status"] in ("optimal", "no split")          # 120 s is never reached here
    if r["status"] == "optimal":
        assert r["bound"] > _opt(k) - 1 + 1e-9        # proven: ceil(bound) = OPT


def _distinct(k: int) -> bool:
    """No two requests of ``INSTANCES[k]`` are identical (every group is one request)."""
    inst = INSTANCES[k]
    kinds = set(zip(inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist(), strict=True))
    return len(kinds) == inst.n


DISTINCT = [k for k in range(len(INSTANCES)) if _distinct(k)]


def test_most_instances_have_no_identical_requests():
    assert len(DISTINCT) >= len(INSTANCES) // 2


@pytest.mark.parametrize("k", DISTINCT)
@pytest.mark.parametrize("warm", [True, False])
def test_splitting_every_request_proves_opt_without_identical_requests(k, warm):
    r = _run(k, 0.0, warm)
    assert r["status"] == "optimal"
    assert r["bound"] == pytest.approx(_opt(k), abs=1e-6)


def test_the_search_is_not_vacuous():
    """Somewhere the root LP is below OPT, splitting every request raises it, and splitting
    only the big requests stops below OPT (so the assertions above compare different
    numbers)."""
    gaps = [(k, _run(k, 0.0), _run(k, 0.5)) for k in range(len(INSTANCES))]
    assert any(a["root"] < _opt(k) - 1 and a["bound"] > a["root"] + 1 for k, a, _ in gaps)
    assert any(b["status"] == "no split" and b["bound"] < _opt(k) - 1 for k, _, b in gaps)


@pytest.mark.parametrize("k", range(len(INSTANCES)))
def test_a_warm_node_has_the_cold_nodes_value(k):
    """Down a dive that fixes one request's start per level (each child from its parent's
    basis), every warm-started node LP has the value of the same node solved from scratch; a
    node it finds infeasible (+inf) is infeasible for HiGHS' simplex on the plain model too
    (interior point on the differenced form, the cold nodes' solver, says "error" there)."""
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.columns import restrict_columns
    from kvopt.mip.bounds.intervals import interval_model
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    data = interval_model(INSTANCES[k], upper=_opt(k))
    w = BB.WarmNodes(data, Deadline(60.0))
    keep = np.ones(data.n_cols, dtype=bool)
    value, x, basis = w.solve(keep, None)
    assert value == pytest.approx(BB._node_lp(data, keep, None)[0], abs=1e-6)
    rng = np.random.default_rng(k)
    for g in rng.permutation(len(data.groups)):
        starts = np.unique(data.col_start[data.col_group == g])
        keep = keep & ~((data.col_group == g) & (data.col_start != rng.choice(starts)))
        value, x, child = w.solve(keep, basis)
        if x is None:
            assert value == np.inf
            plain = solve_lp_duals(restrict_columns(data, keep), form="dense", method="simplex")
            assert plain.status == "infeasible"
            break
        assert value == pytest.approx(BB._node_lp(data, keep, None)[0], abs=1e-6)
        basis = child


def test_a_stalled_warm_node_is_solved_from_scratch():
    """With no time for the warm simplex (cap 0), each child of the root is solved again from
    scratch (a second, basis-less call), with the cold value."""
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.intervals import interval_model

    data = interval_model(INSTANCES[0], upper=_opt(0))
    w = BB.WarmNodes(data, Deadline(60.0))
    root = np.ones(data.n_cols, dtype=bool)
    _, x, basis = w.solve(root, None)
    w.CAP = w.CAP_FLOOR = 0.0
    calls = []
    solve = w.solve

    def spy(keep, parent):
        calls.append(parent is None)
        return solve(keep, parent)

    w.solve = spy
    g, m = BB._split(data, x, np.ones(len(data.groups), dtype=bool))
    col = data.col_group == g
    for side in (data.col_start <= m, data.col_start > m):
        calls.clear()
        keep = root & ~(col & ~side)
        value, child_x, child = w.solve(keep, basis)
        assert calls == [False, True]                    # warm, stopped, then from scratch
        assert child_x is not None and child is not None
        assert value == pytest.approx(BB._node_lp(data, keep, None)[0], abs=1e-6)


def test_a_warm_node_past_the_deadline_is_not_solved():
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.intervals import interval_model

    data = interval_model(INSTANCES[0], upper=_opt(0))
    dl = Deadline(60.0)
    w = BB.WarmNodes(data, dl)
    keep = np.ones(data.n_cols, dtype=bool)
    _, _, basis = w.solve(keep, None)
    w.deadline = Deadline(0.0)
    assert w.solve(keep, basis)[:2] == (-np.inf, None)


@pytest.mark.parametrize("argv, field", [
    (["no/such/records.json"], "RECORDS.json"),
    (["reports/mip/frontier_cpu_v2.json", "--seconds", "0"], "--seconds"),
    (["reports/mip/frontier_cpu_v2.json", "--frac", "2"], "--frac"),
    (["reports/mip/frontier_cpu_v2.json", "--n", "3"], "--n/--seeds"),
    (["reports/mip/paper_scale", "--only", "nope"], "--only"),
    (["paper-M2", "--n", "80"], "--n/--seeds"),
    (["paper-M", "--n", "8", "--default-seconds", "0"], "--default-seconds"),
    (["paper-M", "--only", "model1-seed1"], "--only"),
])
def test_bad_input_is_refused(argv, field):
    assert_refused("benchmarks/mip_branch.py", argv, field)


def test_a_root_not_solved_in_time_is_said_not_printed_as_a_bound():
    r = run_script("benchmarks/mip_branch.py", "reports/mip/paper_scale", "--only",
                   "model2-seed2", "--seconds", "0.5")
    assert r.returncode == 0, r.stderr[-2000:]
    row = r.stdout.strip().splitlines()[-1]
    assert "root LP not solved in 0.5 s" in row and "nan" not in row and "inf" not in row


def test_past_the_frontier_rule_the_search_bounds_the_default_schedule():
    """With a family name for RECORDS.json: per instance the default's schedule and bound,
    then the search's bound (rounded up) between the root LP and that schedule."""
    r = run_script("benchmarks/mip_branch.py", "paper-M", "--n", "8", "--seeds", "0", "1",
                   "--default-seconds", "5", "--seconds", "5")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [line.split("|")[1:-1] for line in r.stdout.splitlines()
            if line.startswith("| paper-M n = 8")]
    assert len(rows) == 2
    for row in rows:
        schedule, bound, root, searched = (float(row[i]) for i in (3, 4, 6, 7))
        assert bound <= schedule and root - 1e-6 <= searched <= schedule
        assert searched == int(searched)                  # rounded up: TEL is an integer
