"""``benchmarks/mip_short_bound.py`` (reports/mip/README.md section 10.23): the certified gap
and the summary from records, one instance end to end against the same revision, and bad
input refused (exit 2, the flag named)."""

from __future__ import annotations

import json

import pytest

from tests.scripts import assert_refused, load_benchmark, run_script

SB = load_benchmark("mip_short_bound")


def _side(bound, best=100.0):
    return {"best": best, "bound": bound, "method": "LP", "seconds": 1.0}


def test_gap_rounds_the_bound_up():
    assert SB.gap(_side(89.2)) == pytest.approx(0.10)              # ceil 90
    assert SB.gap(_side(90.0 - 1e-10)) == pytest.approx(0.10)      # a rounding error: 90


def test_summary_counts_wins_per_family(capsys):
    recs = [{"name": "model1-seed1", "baseline": _side(80.0), "tree": _side(84.0)},
            {"name": "model1-seed2", "baseline": _side(80.0), "tree": _side(80.3)},
            {"name": "model2-seed1", "baseline": _side(90.0), "tree": _side(70.0)}]
    SB.summarise(recs)
    out = capsys.readouterr().out
    assert "| model1 | 2 | 20.0 % | 17.5 % | 0 / 1 / 1 | 1.027 |" in out   # 16 %, 19 %
    assert "| model2 | 1 | 10.0 % | 30.0 % | 1 / 0 / 0 | 0.778 |" in out


def test_one_instance_end_to_end(tmp_path):
    """The same revision on both sides: the same kind of answer, each below the certificate
    (the script checks that and would fail otherwise), and the records readable again."""
    out = tmp_path / "r.json"
    r = run_script("benchmarks/mip_short_bound.py", "--only", "model1-seed1", "--limit", "2",
                   "--baseline", "HEAD", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    rec = json.loads(out.read_text())["records"][0]
    assert rec["name"] == "model1-seed1"
    for side in ("baseline", "tree"):
        assert rec[side]["bound"] <= rec[side]["best"] and rec[side]["seconds"] < 4
    assert "| model1 | 1 |" in r.stdout


@pytest.mark.parametrize("argv, field", [
    ([], "--baseline"),
    (["--baseline", "no-such-revision"], "--baseline"),
    (["--baseline", "HEAD", "--limit", "0"], "--limit"),
    (["--baseline", "HEAD", "--only", "model9-seed1"], "model9-seed1"),
    (["--summarise", "no/such.json"], "--summarise"),
])
def test_bad_input_is_refused(argv, field):
    assert_refused("benchmarks/mip_short_bound.py", argv, field)
