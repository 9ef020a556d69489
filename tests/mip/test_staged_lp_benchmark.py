"""``benchmarks/mip_staged_lp.py`` (reports/mip/README.md section 10.19): which bound a call of
L seconds returns follows the measured times; one instance measured end to end (both LPs below
its schedule, the interval LP at least the first). Bad input: test_column_lp_benchmark.py, which
shares its options."""

from __future__ import annotations

import pytest

from kvopt.core.generators import model1
from kvopt.sim import simulate
from tests.scripts import load_benchmark

SL = load_benchmark("mip_staged_lp")


def _record(build=1.0, t1=2.0, t2=3.0):
    return {"name": "model1-seed1", "best": 25.0, "combinatorial": 10.0, "build_s": build,
            "tight_cores": {"seconds": t1, "bound": 20.0},
            "intervals": {"seconds": t2, "bound": 21.0}}


@pytest.mark.parametrize("limit, staged, unstaged", [
    (2.0, ("combinatorial", 10.0), ("combinatorial", 10.0)),   # neither LP fits
    (3.5, ("tight+cores", 20.0), ("combinatorial", 10.0)),     # only the first LP fits
    (4.5, ("tight+cores", 20.0), ("intervals", 21.0)),         # the interval LP alone fits
    (6.0, ("intervals", 21.0), ("intervals", 21.0)),           # both fit
])
def test_returned_follows_the_measured_times(limit, staged, unstaged):
    r = _record()
    assert SL.returned(r, limit, True) == staged
    assert SL.returned(r, limit, False) == unstaged
    assert SL.gap(r, 21.0) == pytest.approx(16.0)              # (25 - 21) / 25


def test_an_unsolved_lp_never_counts():
    r = _record()
    r["intervals"]["bound"] = None                             # not solved within --cap
    assert SL.returned(r, 100.0, False) == ("combinatorial", 10.0)
    assert SL.returned(r, 100.0, True) == ("tight+cores", 20.0)


def test_measure_one_instance(tmp_path):
    inst = model1(5, n=10, memory=20)
    inst.save(tmp_path / "model1-seed5.json")
    simulate(inst, "mcsf").schedule.save(tmp_path / "model1-seed5.best.json")
    r = SL.measure(tmp_path / "model1-seed5.json", cap=60.0, check=30.0)
    tc, iv = r["tight_cores"]["bound"], r["intervals"]["bound"]
    assert r["families"] >= 1 and tc is not None and iv is not None
    assert tc - 1e-6 <= iv <= r["best"] + 1e-6 and r["combinatorial"] <= r["best"]
    assert r["check_staged"]["method"] == r["check_unstaged"]["method"] == "LP"
    assert r["check_staged"]["bound"] == pytest.approx(iv, abs=1e-5)
