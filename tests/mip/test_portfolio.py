"""The default path of ``kvopt solve`` (kvopt.mip.portfolio): the best schedule and the best
bound within the limit, honest status, and the record of what won and where the time went."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import strategies as st

from kvopt import Instance
from kvopt.cli.main import main
from kvopt.core.generators import model1
from kvopt.core.instance import load_instance
from kvopt.core.isolate import KILLED_AT_DEADLINE
from kvopt.core.limits import Deadline
from kvopt.mip import portfolio, solve
from kvopt.mip.certify import bound_report
from tests.bruteforce import brute_force_opt
from tests.strategies import default_and_slow, small_instances

SEED1 = "instances/synthetic/model1-seed1.json"


def _opt(inst: Instance) -> float:
    return float(brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)[0])


def _default_solve_is_optimal_on_small_instances(inst):
    res = solve(inst, time_limit=30)
    assert res.solver == "auto" and res.report is not None and res.report.ok
    assert res.status == "optimal" and res.objective == _opt(inst)
    _no_deadline_kill_reported(res)


def _no_deadline_kill_reported(res) -> None:
    """A call that proved the optimum says why a child was stopped: the proof, not the
    deadline (no wall-clock threshold here, so a slow host cannot fail it)."""
    assert res.status == "optimal"
    for name, b in res.bounds.items():
        assert b.get("reason") != KILLED_AT_DEADLINE, (name, b)


def test_exact_path_says_why_a_child_was_stopped():
    """``kvopt solve`` on a tiny instance proved optimal in about a second had printed
    "intervals skipped (killed at the deadline)": the bound's child was stopped because CP-SAT
    proved the optimum first. The child that lost the race now says so."""
    res = solve(load_instance("instances/tiny/mcsf-suboptimal-distinct.json"),
                time_limit=60)
    assert res.status == "optimal" and res.model["path"] == "exact"
    _no_deadline_kill_reported(res)
    reasons = {name: res.bounds[name].get("reason") for name in ("intervals", "cp")
               if res.bounds.get(name, {}).get("status") == "skipped"}
    assert set(reasons.values()) <= {portfolio.CP_PROVED, portfolio.SEARCH_PROVED}, reasons
    if reasons.get("intervals") == portfolio.CP_PROVED:
        assert res.bounds["cp:solver"]["value"] == pytest.approx(res.objective)
    if reasons.get("cp") == portfolio.SEARCH_PROVED:
        assert res.bounds["search"]["solver_status"] == "optimal"


def _portfolio_bound_below_opt_below_schedule(inst, limit_s):
    """The portfolio path forced on small instances: bound <= OPT <= its schedule. Where the
    interval LP stays below OPT (about one instance in ten) the path's search cannot prove
    its schedule and runs to ``limit_s``."""
    res = portfolio.solve_auto(inst, deadline=Deadline(limit_s), ram_bytes=2**30,
                               path="portfolio")
    opt = _opt(inst)
    assert res.bound is not None and res.objective is not None
    assert res.bound <= opt + 1e-6 <= res.objective + 1e-6
    assert res.report is not None and res.report.ok
    assert res.model["path"] in ("incumbents", "portfolio")
    assert (res.status == "optimal") == (res.objective <= res.bound)
    _bound_is_the_best_record_rounded_up(res)


# 10 examples each in the default run (~0.35 s, ~0.6 s each), 25 with -m slow
test_default_solve_is_optimal_on_small_instances, test_default_solve_is_optimal_25 = (
    default_and_slow(_default_solve_is_optimal_on_small_instances, 10, 25,
                     inst=small_instances(max_n=5)))
# a 6 s limit in the default run (the interval LP's child answers in ~1 s), 20 s with -m slow
test_portfolio_bound_below_opt_below_schedule, test_portfolio_bound_below_opt_25 = (
    default_and_slow(_portfolio_bound_below_opt_below_schedule, 10, 25,
                     inst=small_instances(max_n=5), limit_s=st.just(6),
                     full_strategies={"limit_s": st.just(20)}))


def _bound_is_the_best_record_rounded_up(res) -> None:
    """The reported bound is the largest computed bound of the record, rounded up to an
    integer (TEL is one): the figure ``kvopt bound`` prints for the same bounds."""
    raw = max(b["value"] for b in res.bounds.values()
              if b.get("status") == "computed" and b.get("value") is not None)
    _is_rounded_up(res.bound, raw)


def _is_rounded_up(bound: float, raw: float) -> None:
    """``bound`` is ``raw`` rounded up to an integer (or ``raw``'s integer when ``raw`` is
    one up to the solver's rounding)."""
    assert bound == int(bound) and raw - 1e-5 <= bound < raw + 1, (bound, raw)


def test_calls_end_early_once_the_gap_closes(interval_proves):
    """model1(1002, n=10) (OPT 511, interval LP below it): the exact path's proof ends the
    call early; on an instance whose interval LP meets the best schedule the portfolio stops
    as soon as the bound arrives."""
    res = solve(model1(1002, n=10), time_limit=60)
    assert res.status == "optimal" and res.objective == 511.0
    assert res.runtime_s < 50 and res.model["path"] == "exact"
    easy = interval_proves
    res = portfolio.solve_auto(easy, deadline=Deadline(60), ram_bytes=2**30, path="portfolio")
    assert res.status == "optimal" and res.runtime_s < 30, res.model


def test_portfolio_records_the_winners_and_the_time_split():
    inst = model1(3, n=20)
    res = solve(inst, time_limit=8)
    assert res.model["path"] == "portfolio"
    assert res.model["bound_source"] in res.bounds
    _is_rounded_up(res.bound, res.bounds[res.model["bound_source"]]["value"])
    _bound_is_the_best_record_rounded_up(res)
    assert res.schedule is not None and res.objective == res.report.objective
    assert {"incumbents_s", "portfolio_s", "validate_s"} <= set(res.steps)
    assert [p["phase"] for p in res.model["phases"]] == ["incumbents", "portfolio"]
    assert res.runtime_s <= 8 + 2.0


def test_second_search_runs_on_the_core_the_bound_frees(monkeypatch):
    """Above BRANCH_MAX_N, once the bound's child has finished, a second improvement search
    (seed + 1) runs in a child process; its schedule is validated with the rest and kept
    only if better."""
    monkeypatch.setattr(portfolio, "SECOND_SEARCH_MIN_S", 1.0)
    monkeypatch.setattr(portfolio, "BRANCH_MAX_N", 15)
    # n = 16 (portfolio path by the frontier rule): its interval LP arrives in ~1.3 s of the
    # 8 s. (On model1(3, n=20) it took ~5 s, and on a slower host the second search once had
    # less than SECOND_SEARCH_MIN_S left to start.)
    inst = model1(3, n=16)
    res = solve(inst, time_limit=8, seed=4)
    assert res.model["path"] == "portfolio"
    second = res.model["phases"][-1]["second_search"]
    assert second["seed"] == 5 and second["status"] == "done", second
    assert 0 < second["started_s"] < 8
    assert res.bound <= second["objective"] and res.objective <= second["objective"]
    assert res.report is not None and res.report.ok
    assert res.runtime_s <= 8 + 2.0
    assert "branch" not in res.model["phases"][-1] and "branch" not in res.bounds


def test_branch_and_bound_runs_on_the_core_the_bound_frees(monkeypatch):
    """At n <= BRANCH_MAX_N the branch-and-bound takes the bound child's core instead: its
    root is the interval LP over every start column, so its bound is at least the bound
    child's; it runs until the limit here, so the second search does not start."""
    monkeypatch.setattr(portfolio, "SECOND_SEARCH_MIN_S", 1.0)
    inst = model1(3, n=16)
    assert inst.n <= portfolio.BRANCH_MAX_N
    res = solve(inst, time_limit=8, seed=4)
    assert res.model["path"] == "portfolio"
    br = res.model["phases"][-1]["branch"]
    assert br["status"] == "done" and br["solver_status"] == "time" and br["nodes"] > 1, br
    assert 0 < br["started_s"] < 8 and br["frac"] == portfolio.BRANCH_FRAC
    got, lp = res.bounds["branch"], res.bounds["intervals"]
    assert got["status"] == "computed" and got["value"] >= lp["value"] - 1e-6 * lp["value"]
    assert got["root"] <= got["value"] <= res.objective
    assert res.model["phases"][-1]["second_search"]["status"] == "not started"
    _bound_is_the_best_record_rounded_up(res)
    assert res.report is not None and res.report.ok
    assert res.runtime_s <= 8 + 2.0


def test_second_search_is_stopped_when_the_gap_closes(interval_proves):
    easy = interval_proves
    res = portfolio.solve_auto(easy, deadline=Deadline(60), ram_bytes=2**30, path="portfolio")
    assert res.status == "optimal" and res.runtime_s < 30, res.model
    second = res.model["phases"][-1]["second_search"]
    assert second["status"] in ("not started", "stopped"), second


def test_lagrangian_when_the_interval_lp_does_not_fit():
    inst = model1(3, n=20)
    res = solve(inst, time_limit=6, ram=2 * 2**20)
    assert res.bounds["intervals"]["status"] == "skipped"
    assert "memory budget" in res.bounds["intervals"]["reason"]
    assert res.bounds["lagrangian"]["status"] in ("computed", "skipped")
    assert res.ram["bound"] == "lagrangian"


def test_the_first_lp_stands_when_the_interval_lp_runs_out_of_time(interval_lp_unsolved):
    """The bound's child solves the tight+cores LP first (kvopt.mip.bounds.intervals, staged);
    when the interval LP is not solved (made to fail here, as at a deadline between the two),
    the record says which LP the bound came from and the text says the interval LP ran out
    of time."""
    from kvopt.cli.mip_cmds import _bound_text

    interval_lp_unsolved()
    inst = model1(3, n=24)
    res = solve(inst, time_limit=8)
    rec = res.bounds["intervals"]
    assert res.model["path"] == "portfolio" and rec["status"] == "computed"
    assert (rec["solver_status"], rec["method"]) == ("time_limit", "tight+cores LP")
    assert rec["value"] > max(v["value"] for k, v in res.bounds.items()
                              if k in ("fluid", "volume", "core1"))
    assert res.bound <= res.objective
    assert "(tight+cores LP: the interval LP not solved in time)" in _bound_text("intervals", rec)
    # and how: the first LP solved, the interval LP's status (here the fake's)
    assert rec["first_lp"]["status"] == "optimal" and "value" not in rec["first_lp"]
    assert rec["lp_status"] == "Time limit reached" and "subgradient" not in rec
    assert _bound_text("intervals", {**rec, "method": "LP"}).endswith(f"{rec['value']:.6g}")


def test_cli_default_says_what_won(capsys):
    rc = main(["solve", SEED1, "--time-limit", "6", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["solver"] == "auto" and doc["seed"] == 0
    assert doc["model"]["schedule_source"] and doc["model"]["bound_source"]
    main(["solve", SEED1, "--time-limit", "4"])
    out = capsys.readouterr().out
    assert "won: schedule" in out and "time split:" in out


def test_bound_and_solve_agree():
    """The same instance: every bound of one is below every schedule of the other, and
    ``kvopt bound --solve S`` carries the default solve's bound and schedule."""
    inst = model1(5, n=14)
    res = solve(inst, time_limit=4)
    doc = bound_report(inst, solve_time=4)
    assert doc["best_bound"] <= res.objective and res.bound <= doc["best_schedule"]["objective"]
    assert doc["bounds"]["solver"] is not None
    _bound_is_the_best_record_rounded_up(res)
    _is_rounded_up(doc["best_bound"], max(v for v in doc["bounds"].values()
                                          if v is not None and math.isfinite(v)))


def test_cli_default_on_a_trace_prefix(capsys):
    rc = main(["solve", "instances/traces/azure_conv_2023.csv", "--first", "40",
               "--slot-seconds", "0.05", "--time-limit", "5", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc in (0, 1) and doc["n"] == 40 and doc["objective"] is not None
    assert doc["bound"] <= doc["objective"]


def _slow_checker(monkeypatch, seconds: float) -> None:
    """Every validation of the default path takes ``seconds`` more (as on a large trace:
    one check of the whole Azure trace at 0.5 s slots takes ~0.15-0.25 s)."""
    import time

    from kvopt.core import validate
    from kvopt.mip.search import improve as improve_mod
    from kvopt.mip.search import starts

    real = validate.check_schedule

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return real(*args, **kwargs)

    for mod in (portfolio, improve_mod, starts):
        monkeypatch.setattr(mod, "check_schedule", slow)


def test_the_limit_holds_when_validation_is_slow(monkeypatch):
    """The default path keeps time at the end for its validations in proportion to what one
    took on the starting points: a fixed 0.5 s let ``kvopt solve`` on the Azure trace at
    0.5 s slots with ``--time-limit 5`` overrun by up to 0.6 s. Here each check takes 0.4 s,
    and the two after the search (the search's own and the result's) took the call 0.3 s past
    a 6 s limit before."""
    _slow_checker(monkeypatch, 0.4)
    res = solve(model1(3, n=30), time_limit=6)
    assert res.model["path"] == "portfolio"
    assert res.model["reserve_s"] >= portfolio.COLLECT_RESERVE_S + 3 * 0.4
    assert res.overrun_s == 0 and res.runtime_s <= 6, (res.runtime_s, res.steps)
    assert res.report is not None and res.report.ok


def test_improve_keeps_time_for_its_final_check(monkeypatch):
    """``improve`` stops its search early enough for its own final check and the caller's
    output (twice the measured check): with 0.4 s checks and a 3 s limit it had ended at
    ~3.4 s."""
    from kvopt.mip.search.improve import improve
    from kvopt.mip.search.starts import starting_points

    inst = model1(3, n=30)
    points = {"mcsf": starting_points(inst)["mcsf"]}   # one check before the search
    _slow_checker(monkeypatch, 0.4)
    dl = Deadline(3)
    res = improve(inst, deadline=dl, seed=0, points=points)
    assert dl.elapsed() <= 3 - 0.3, dl.elapsed()
    assert res.report is not None and res.report.ok


def test_starting_points_are_valued_and_validated_once(monkeypatch):
    """``solve_auto`` values and validates its starting points once and hands them to the
    search with the measured cost (:class:`~kvopt.mip.search.starts.ValuedPoints`): the search
    checked the one or two it was handed again (0.15 s each on the whole Azure trace). Counted
    in this process (the second search's child is not)."""
    import numpy as np

    from kvopt.mip.search import starts
    from kvopt.mip.search.starts import ValuedPoints, best_start, value_points

    calls = []
    real = starts.check_schedule

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(starts, "check_schedule", counted)
    inst = model1(3, n=30)
    points = starts.starting_points(inst)
    vp = value_points(inst, points)
    assert len(calls) == len(points) and vp.valid == frozenset(points)
    assert best_start(inst, None, vp)[1:] == best_start(inst, None, points)[1:]
    calls.clear()
    got = best_start(inst, None, vp)
    assert not calls and np.array_equal(got[0], best_start(inst, None, points)[0])
    calls.clear()
    best_start(inst, points["mcsf"], vp)  # an extra initial point: only it is checked
    assert len(calls) == 1
    calls.clear()
    res = solve(inst, time_limit=4)
    assert res.model["path"] == "portfolio" and res.report is not None and res.report.ok
    assert len(calls) == len(points), len(calls)   # before: + 1 or 2 in the search
    assert isinstance(portfolio._search_points({"source": "mcsf", "starts": points["mcsf"],
                                                "points": vp}), ValuedPoints)


def test_a_branch_and_bound_that_ends_early_hands_its_core_to_the_second_search(monkeypatch):
    """On a tiny instance whose interval LP stays below OPT even with every big request's
    start integral (OPT 31, root 28.0, the search's 29.1: ``no split``), the branch-and-bound
    ends in well under a second and the second search takes the core; neither closes the
    gap, so the call runs to its limit with the branch-and-bound's bound."""
    from tests.mip.test_beam_benchmark import INSTANCES

    monkeypatch.setattr(portfolio, "SECOND_SEARCH_MIN_S", 1.0)
    inst = INSTANCES[0]
    assert _opt(inst) == 31.0
    res = portfolio.solve_auto(inst, deadline=Deadline(4), ram_bytes=2**30, path="portfolio")
    phase = res.model["phases"][-1]
    br, second = phase["branch"], phase["second_search"]
    assert br["status"] == "done" and br["solver_status"] == "no split", br
    assert second["status"] == "done" and second["started_s"] >= br["started_s"], second
    assert res.model["bound_source"] == "branch" and res.bound == 30.0
    assert res.status == "time_limit" and res.objective == 31.0
