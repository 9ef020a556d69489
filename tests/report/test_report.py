"""``kvopt report ratios``: files, determinism, table values."""

import csv
import json

import pytest

from kvopt.cli.main import main
from kvopt.report.ratios import COLUMNS, MeasureConfig, ratio_rows, write_report

FILES = {"table.md", "table.csv", "table.tex", "ratios_amax.png", "ratios_amin.png",
         "lambda_fit.png", "manifest.json"}


def test_theory_rows_by_hand():
    rows = {r["alpha"]: r for r in ratio_rows([1.0, 0.5, 0.25, 0.1, 0.75], measured=False)}
    # alpha^-1 (1 + alpha^-1)/2 and alpha^-1 (1 + alpha^-1/2)/2 by hand
    assert rows[0.25]["amax_upper"] == 10.0 and rows[0.25]["amax_lower_claimed"] == 6.0
    assert rows[0.1]["amax_upper"] == pytest.approx(55.0)
    assert rows[0.5]["amin_rayleigh"] == pytest.approx(1.25)      # lambda_max(A_2, B_2)
    assert rows[0.1]["amin_rayleigh"] == pytest.approx(1.724924, abs=1e-6)
    assert rows[0.1]["amin_log_bound"] == pytest.approx(7381 / 2520)  # H_10
    assert (rows[0.75]["l"], rows[0.75]["u"]) == (3, 4)
    assert rows[0.75]["amin_log_bound"] is None
    assert rows[1.0]["amin_rayleigh"] == pytest.approx(1.0)
    for r in rows.values():
        assert r["amin_two_point"] <= r["amin_rayleigh"] + 1e-12
        assert r["amax_construction"] <= r["amax_lower_claimed"] <= r["amax_upper"]
        assert all(r[k] is None for k, _, kind in COLUMNS if kind == "measured")


def test_report_files_and_determinism(tmp_path):
    cfg = MeasureConfig(seeds=(0,), n=120, max_u=16, opt=True, opt_n=4, opt_max_u=4,
                        time_limit=10)
    kw = dict(alphas=[1.0, 0.5, 0.25], config=cfg, convergence=False, command=["x"])
    m1 = write_report(tmp_path / "a", **kw)
    m2 = write_report(tmp_path / "b", **kw)
    names = {p.name for p in (tmp_path / "a").iterdir()}
    assert names >= FILES
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert m1["files"] == m2["files"]
    man = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert man["seeds"] == [0] and man["command"] == ["x"] and "numpy" in man["versions"]
    with open(tmp_path / "a" / "table.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["alpha"]) for r in rows] == [1.0, 0.5, 0.25]
    assert float(rows[2]["amax_upper"]) == 10.0
    # measured columns are filled where the sizes allow
    assert rows[1]["amin_adv_hsf"] and rows[1]["amin_adv_opt"] and rows[1]["amax_thm2_hsf"]
    assert float(rows[0]["amin_adv_hsf"]) == pytest.approx(1.0)  # alpha = 1: no evictions
    assert (tmp_path / "a" / "ratios_amin.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "a" / "table.md").read_text()
    assert md.startswith("| alpha |") and "| 1/4 |" in md


def test_cli_report_theory_only(tmp_path, capsys):
    code = main(["report", "ratios", "--alphas", "1", "1/2", "0.1", "--theory-only",
                 "--out", str(tmp_path / "r"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(doc["files"]) >= FILES - {"manifest.json"}
    man = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert man["command"][:3] == ["kvopt", "report", "ratios"] and "--theory-only" in man["command"]
    assert [r["alpha"] for r in doc["rows"]] == [1.0, 0.5, 0.1]


def test_cli_report_bad_input(tmp_path, capsys):
    assert main(["report", "ratios", "--alphas", "2", "--out", str(tmp_path)]) == 2
    assert main(["report", "ratios", "--alphas", "x", "--out", str(tmp_path)]) == 2
    assert main(["report", "ratios", "--out", str(tmp_path), "--n", "3", "--theory-only"]) == 2
    assert main(["report"]) == 2


def test_adversarial_rows():
    from kvopt.report.ratios import adversarial_markdown, adversarial_rows

    rows = adversarial_rows(seeds=(0,), small_runs=200)  # the report's 2000: 17 s more
    by = {(r["construction"], r["policy"]): r for r in rows}
    assert by[("seed000 Example 1", "amax")]["vs_hsf"] == pytest.approx(9 / 5)
    assert by[("seed001 Thm 4.1 (m=3)", "mcsf")]["vs_opt"] == pytest.approx(89 / 80)
    thm2 = by[("seed000 Thm 2 (l=4,u=64,a=2,b=8)", "amax")]
    # large-a,b latencies: 51200 / (ul(a^2 + b^2)/2 + ab l^2) = 51200 / 8960 = 40/7
    assert thm2["theory"] == pytest.approx(40 / 7)
    assert thm2["vs_hsf"] < thm2["theory"] < 40
    assert all(r["vs_hsf"] > 0 for r in rows)
    assert adversarial_markdown(rows).count("\n") == len(rows) + 2
