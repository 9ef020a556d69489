"""Bad input to the older MIP benchmarks that read the frontier records
(``mip_count_cuts``, ``mip_frontier_dual``, ``mip_window_lp``, ``mip_partial_int``) is refused
with one error naming the argument, exit 2, nothing on stdout (rule 5)."""

from __future__ import annotations

import pytest

from tests.scripts import assert_refused

FRONTIER = "reports/mip/frontier_cpu_v2.json"


@pytest.mark.parametrize("script, argv, field", [
    ("mip_count_cuts", ["no/such/records.json"], "records"),
    ("mip_count_cuts", ["tests"], "records"),                   # a folder, not records
    ("mip_count_cuts", [FRONTIER, "--n", "0"], "--n"),
    ("mip_count_cuts", [FRONTIER, "--seeds", "x"], "--seeds"),
    ("mip_frontier_dual", ["no/such/records.json"], "RECORDS.json"),
    ("mip_window_lp", ["no/such/records.json"], "RECORDS.json"),
    ("mip_partial_int", ["--frontier", "no/such/records.json"], "--frontier"),
    ("mip_partial_int", ["--split", "tests"], "--split"),
    ("mip_partial_int", ["--paper", "reports/mip/paper_scale", "--only", "nope"],
     "--paper/--only"),
    ("mip_partial_int", ["--frontier", FRONTIER, "--seconds", "nan"], "--seconds"),
    ("mip_partial_int", ["--frontier", FRONTIER, "--frac", "1"], "--frac"),
])
def test_refuses_bad_input(script, argv, field):
    assert_refused(f"benchmarks/{script}.py", argv, field)
