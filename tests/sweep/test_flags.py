import csv
import json

import pytest

from kvopt.cli.main import main
from kvopt.sweep import SweepSpec, run_sweep
from kvopt.sweep.store import VOLATILE


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def test_dask_and_inprocess_sweeps_agree():
    spec = SweepSpec("random-small", seeds=range(5), policies=("mcsf", "fcfs"), solver="highs",
                     time_limit=20)
    serial = run_sweep(spec, workers=0)
    dask = run_sweep(spec, workers=2)
    assert _strip(serial) == _strip(dask)
    assert len(serial) == 5 * 3
    for r in serial:
        assert r["valid"]
        assert r["ratio_to_opt"] is not None and r["ratio_to_opt"] >= 1.0


def test_sweep_cli_writes_files(tmp_path, capsys):
    out = tmp_path / "sw"
    code = main(["sweep", "--generator", "model1", "--param", "n=8", "--seeds", "0,1",
                 "--policies", "mcsf,mc-benchmark", "--workers", "0", "--out", str(out),
                 "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["evaluator"] for s in doc["summary"]] == ["mcsf", "mc-benchmark"]
    rows = list(csv.DictReader((out / "rows.csv").open()))
    assert len(rows) == 4 and all(r["valid"] == "True" for r in rows)
    assert json.loads((out / "manifest.json").read_text())["spec"]["seeds"] == [0, 1]


def test_sweep_bad_seeds_exit_2(tmp_path, capsys):
    assert main(["sweep", "--seeds", "a:b", "--out", str(tmp_path / "x")]) == 2
    assert "--seeds" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("gen", ["model1", "model2"])
def test_generators_registered(gen):
    from kvopt.sweep import GENERATORS

    assert GENERATORS[gen](0).n > 0
