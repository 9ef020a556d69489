"""``benchmarks/mip_column_lp.py`` (reports/mip/README.md section 10.20): which bound a call of
L seconds returns follows the measured rounds; one instance measured end to end (the same LP
values whole and by columns, below its schedule); bad input is refused with one error,
exit 2, here and by benchmarks/mip_staged_lp.py (the same options)."""

from __future__ import annotations

import pytest

from kvopt.core.generators import model1
from kvopt.sim import simulate
from tests.scripts import assert_refused, load_benchmark

CL = load_benchmark("mip_column_lp")


def _record():
    """Build 1 s; whole LPs 4 + 6 s; by columns, first LP rounds of 1 and 1.5 s (bounds 15,
    20), interval LP rounds of 2 and 1 s (bounds 20.5, 21)."""
    return {"name": "model1-seed1", "best": 25.0, "combinatorial": 10.0, "build_s": 1.0,
            "whole_tc": {"status": "optimal", "seconds": 4.0, "bound": 20.0},
            "whole_iv": {"status": "optimal", "seconds": 6.0, "bound": 21.0},
            "cols_tc": {"status": "optimal", "rounds": [{"seconds": 1.0, "bound": 15.0},
                                                        {"seconds": 1.5, "bound": 20.0}]},
            "cols_iv": {"status": "optimal", "rounds": [{"seconds": 2.0, "bound": 20.5},
                                                        {"seconds": 1.0, "bound": 21.0}]}}


@pytest.mark.parametrize("limit, whole, columns", [
    (1.5, ("combinatorial", 10.0), ("combinatorial", 10.0)),    # build only
    (2.5, ("combinatorial", 10.0), ("restricted LP", 15.0)),    # one restricted round
    (4.0, ("combinatorial", 10.0), ("tight+cores LP", 20.0)),   # the first LP by columns
    (5.5, ("tight+cores LP", 20.0), ("tight+cores LP", 20.5)),  # an interval round more
    (6.5, ("tight+cores LP", 20.0), ("interval LP", 21.0)),
    (11.0, ("interval LP", 21.0), ("interval LP", 21.0)),        # everything fits
])
def test_returned_follows_the_measured_rounds(limit, whole, columns):
    r = _record()
    assert CL.returned(r, limit, False) == whole
    assert CL.returned(r, limit, True) == columns


def test_measure_one_instance(tmp_path):
    inst = model1(5, n=10, memory=20)
    inst.save(tmp_path / "model1-seed5.json")
    simulate(inst, "mcsf").schedule.save(tmp_path / "model1-seed5.best.json")
    r = CL.measure(tmp_path / "model1-seed5.json", cap=60.0)
    for a, b in (("whole_tc", "cols_tc"), ("whole_iv", "cols_iv")):
        assert r[a]["status"] == r[b]["status"] == "optimal"
        assert r[a]["bound"] == pytest.approx(r[b]["bound"], rel=1e-6)
    assert r["cols_tc"]["bound"] - 1e-6 <= r["cols_iv"]["bound"] <= r["best"] + 1e-6
    assert r["cols_iv"]["columns"] <= r["cols"]


@pytest.mark.parametrize("script", ["mip_column_lp", "mip_staged_lp"])  # the same options
@pytest.mark.parametrize("argv, field", [
    (["--only", "no-such-instance"], "--only"),
    (["--cap", "0"], "--cap"),
    (["--limits", "5", "nan"], "--limits"),
    (["--summarise", "no/such/records.json"], "--summarise"),
])
def test_bad_input_is_refused(script, argv, field):
    assert_refused(f"benchmarks/{script}.py", argv, field)
