"""``benchmarks/mip_branch.py`` (reports/mip/README.md section 10.26): the branch-and-bound's
bound lies between the root interval LP and the brute-force optimum on tiny instances, with
arrivals or without; split on every request with no identical ones it proves OPT; split only on
the big requests it stops with a valid bound below OPT somewhere; bad input is refused with
one error, exit 2."""

from __future__ import annotations

import functools

import pytest

from tests.mip.test_beam_benchmark import INSTANCES, _opt
from tests.scripts import assert_refused, load_benchmark, run_script

BB = load_benchmark("mip_branch")


@functools.cache
def _run(k: int, frac: float) -> dict:
    return BB.branch_and_bound(INSTANCES[k], _opt(k), 120.0, frac)


@pytest.mark.parametrize("k", range(len(INSTANCES)))
@pytest.mark.parametrize("frac", [0.0, 0.5])
def test_bound_between_root_and_opt(k, frac):
    r = _run(k, frac)
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
def test_splitting_every_request_proves_opt_without_identical_requests(k):
    r = _run(k, 0.0)
    assert r["status"] == "optimal"
    assert r["bound"] == pytest.approx(_opt(k), abs=1e-6)


def test_the_search_is_not_vacuous():
    """Somewhere the root LP is below OPT, splitting every request raises it, and splitting
    only the big requests stops below OPT (so the assertions above compare different
    numbers)."""
    gaps = [(k, _run(k, 0.0), _run(k, 0.5)) for k in range(len(INSTANCES))]
    assert any(a["root"] < _opt(k) - 1 and a["bound"] > a["root"] + 1 for k, a, _ in gaps)
    assert any(b["status"] == "no split" and b["bound"] < _opt(k) - 1 for k, _, b in gaps)


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
