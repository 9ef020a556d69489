"""Price of prediction and the TRAIL/TIE experiment (kvopt.report.price / .predictions)."""

import numpy as np

from kvopt.cli.main import main
from kvopt.report.predictions import (
    azure_case,
    experiment_rows,
    heavy_tailed_case,
    policy_runs,
    table_md,
)
from kvopt.report.price import price_csv, price_rows, price_table_md, write_price_report


def test_price_rows_are_at_least_one_against_proven_opt(tmp_path):
    rows = price_rows(errors=[0.0, 0.75], instances=3, n=5, policies=["amax", "trail", "tie"],
                      large=1, large_n=40, seed=3)
    assert {r["scale"] for r in rows} == {"opt", "bound"}
    for r in rows:
        assert r["ratio_mean"] is not None and r["ratio_mean"] >= 1 - 1e-12
        assert r["ratio_max"] >= r["ratio_mean"] - 1e-12
    # Amax with exact intervals is H-SF-like; with wide intervals it gets worse
    amax = {r["error"]: r["ratio_mean"] for r in rows if r["policy"] == "amax"
            and r["scale"] == "opt"}
    assert amax[0.75] >= amax[0.0]
    files = write_price_report(tmp_path, rows, "kvopt predictions price ...")
    assert all(f.stat().st_size > 0 for f in files)
    assert "| amax |" in price_table_md(rows)
    assert price_csv(rows).count("\n") == len(rows) + 1


def test_price_report_says_when_no_small_instance_was_proven(tmp_path, monkeypatch):
    """A limit too short to prove any optimum kept no "opt" row, so the report left the 2
    small instances out without a word; now the table stays, empty, with the count."""
    rows = price_rows(errors=[0.0, 0.5], instances=2, n=4, policies=["amax", "sprpt"],
                      large=0, time_limit=1e-9, seed=3)
    assert {r["scale"] for r in rows} == {"opt"} and len(rows) == 4
    assert all(r["instances"] == 0 and r["dropped_unproven"] == 2 and r["ratio_mean"] is None
               for r in rows)
    md = price_table_md(rows)
    assert "(0 instances, 2 unproven dropped)" in md and "| amax | - | - |" in md
    files = write_price_report(tmp_path, rows, "kvopt predictions price ...")
    assert all(f.stat().st_size > 0 for f in files)
    # the figure's panel says why it is empty (it drew bare axes with an empty legend)
    fig = _figure_of(monkeypatch, rows, tmp_path)
    ax = fig.axes[0]
    assert not ax.lines and ax.get_legend() is None
    assert [t.get_text() for t in ax.texts] == [
        "no instance with a ratio to show\n(2 unproven dropped: raise --solve-time-limit)"]


def _figure_of(monkeypatch, rows, tmp_path):
    """The figure ``price_plot`` draws for ``rows``."""
    import kvopt.report.price as price

    saved = []
    monkeypatch.setattr(price, "save_figure", lambda fig, path, **kw: saved.append(fig))
    price.price_plot(rows, tmp_path / "p.png")
    return saved[0]


def test_experiment_runs_every_policy_small():
    rows = experiment_rows(n=60, rate=0.5, azure_n=60, time_scale=0.25, seed=1)
    labels = [lab for lab, *_ in policy_runs(heavy_tailed_case(60, 0.5, 1))]
    assert [r["policy"] for r in rows] == labels * 2
    for r in rows:
        assert r["mean_latency_s"] > 0 and r["p90_latency_s"] >= 0
        assert np.isfinite(r["ptla_s_per_token"]) and r["throughput_tok_s"] > 0
    assert "### azure-conv" in table_md(rows)


def test_azure_case_predictions_are_calibrated_logt():
    c = azure_case(400, 1.0, 0)
    assert c.instance.n == 400 and c.mu_hat.shape == (400,)
    assert np.allclose(c.sigma_hat, 0.8)


def test_cli_price_writes_files(tmp_path, capsys):
    out = tmp_path / "p"
    code = main(["predictions", "price", "--out", str(out), "--errors", "0", "0.5",
                 "--policies", "mcsf", "sprpt", "--instances", "2", "--n", "4", "--large", "0",
                 "--json"])
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["price.csv", "price.md", "price.png"]
    assert "kvopt predictions price" in (out / "price.md").read_text()
