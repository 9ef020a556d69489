"""``benchmarks/mip_branch.py`` (reports/mip/README.md sections 10.26, 10.28, 10.29): its
rows, past the frontier rule the search's bound between the root LP and the default's
schedule, the default's own row (``--default-only``), and bad input refused with one error,
exit 2. The search itself (:mod:`kvopt.mip.bounds.branch`) is tested in
``tests/mip/test_branch.py``."""

from __future__ import annotations

import pytest

from tests.scripts import assert_refused, run_script


@pytest.mark.parametrize("argv, field", [
    (["no/such/records.json"], "RECORDS.json"),
    (["reports/mip/frontier_cpu_v2.json", "--seconds", "0"], "--seconds"),
    (["reports/mip/frontier_cpu_v2.json", "--frac", "2"], "--frac"),
    (["reports/mip/frontier_cpu_v2.json", "--n", "3"], "--n/--seeds"),
    (["reports/mip/paper_scale", "--only", "nope"], "--only"),
    (["paper-M2", "--n", "80"], "--n/--seeds"),
    (["paper-M", "--n", "8", "--default-seconds", "0"], "--default-seconds"),
    (["paper-M", "--only", "model1-seed1"], "--only"),
    (["reports/mip/frontier_cpu_v2.json", "--default-only"], "--default-only"),
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


def test_the_default_only_row_says_what_ran_on_the_freed_core():
    """``--default-only``: the default's schedule, bound and gap, the bound that won, and at
    n <= 30 on the portfolio path the branch-and-bound on the bound child's core."""
    r = run_script("benchmarks/mip_branch.py", "paper-M", "--n", "8", "22", "--seeds", "0",
                   "--default-seconds", "15", "--default-only")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {line.split("|")[1].strip(): line.split("|")[1:-1] for line in r.stdout.splitlines()
            if line.startswith("| paper-M n = ")}
    assert set(rows) == {"paper-M n = 8 seed 0", "paper-M n = 22 seed 0"}
    for row in rows.values():
        schedule, bound = float(row[3]), float(row[4])
        assert bound <= schedule and bound == int(bound)
    assert "branch-and-bound:" in rows["paper-M n = 22 seed 0"][7]
