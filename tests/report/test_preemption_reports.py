"""Reports and sweeps under recompute / swap: ratios against a bound valid for the mode (or
labelled 'vs non-preemptive OPT'), seeds with standard errors, option errors."""

import pytest

from kvopt.core.errors import UsageError
from kvopt.report.predictions import experiment_rows, table_md
from kvopt.report.price import price_rows, price_table_md
from kvopt.sweep.summary import summarize, summary_table, with_ratios


def test_price_under_recompute_uses_the_preemptive_optimum():
    rows = price_rows(errors=[0.0, 0.5], instances=3, n=4, policies=["sprpt", "ssjf"], large=1,
                      large_n=30, preemption="recompute")
    assert {r["preemption"] for r in rows} == {"recompute"}
    # the preemptive optimum / bound bounds every schedule in every mode: ratios >= 1
    assert all(r["ratio_mean"] >= 1 - 1e-12 for r in rows)
    assert "preemptive OPT" in price_table_md(rows)


def test_price_refuses_a_policy_without_the_mode():
    with pytest.raises(UsageError, match="invalid policies: mcsf does not support"):
        price_rows(errors=[0.0], instances=1, n=3, policies=["mcsf"], preemption="recompute")


def test_experiment_seeds_give_mean_and_standard_error():
    rows = experiment_rows(n=30, rate=0.8, seed=0, seeds=2, workloads=["heavy-tailed"],
                           preemption="recompute")
    fcfs = next(r for r in rows if r["policy"] == "FCFS")
    assert fcfs["seeds"] == 2 and fcfs["fcfs_ratio"] == 1.0 and fcfs["fcfs_ratio_se"] == 0.0
    labels = [r["policy"] for r in rows]
    assert {"TRAIL C=0.2", "TRAIL C=0.8", "TRAIL C=1", "TRAIL C=inf", "SPRPT (point)",
            "SRPT (oracle)", "SPJF (oracle)", "SSJF (point)", "TIE"} <= set(labels)
    assert all(r["mean_latency_s_se"] is not None for r in rows)
    assert " ± " in table_md(rows)


def test_sweep_ratios_of_token_keeping_policies_are_labelled():
    base = {"entry": "e", "instance_params": {}, "seed": 0}
    rows = [{**base, "evaluator": "opt:highs", "kind": "solver", "status": "optimal",
             "total_latency": 10.0, "valid": True, "params": {}},
            {**base, "evaluator": "sprpt[preemption=recompute]", "kind": "policy",
             "status": "simulated", "total_latency": 9.0, "valid": True,
             "params": {"preemption": "recompute"}}]
    s = summarize(with_ratios(rows))
    assert s[1]["ratio_mean"] == 0.9 and s[1]["ratio_basis"] == "non-preemptive OPT"
    _, cells = summary_table(s)
    assert "0.9 vs non-preemptive OPT" in cells[1]
    assert s[0]["ratio_basis"] == "OPT"


@pytest.mark.parametrize(("argv", "flag"), [
    (["predictions", "price", "--preemption", "recompute", "--policies", "mcsf"], "--policies"),
    (["sweep", "--generator", "random-small", "--seeds", "0:2", "--policies", "amin",
      "--preemption", "swap"], "--preemption"),
])
def test_cli_mode_errors_exit_2_naming_the_flag(tmp_path, capsys, argv, flag):
    from kvopt.cli.main import main

    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    assert f"invalid {flag}" in capsys.readouterr().err
    assert not out.exists()
