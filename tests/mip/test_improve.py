"""Primal improvement search (kvopt.mip.search.improve): feasible, never worse than MC-SF, never
below the brute-force optimum, and ``kvopt solve --improve`` on the command line."""

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt import Instance, check_schedule
from kvopt.cli.main import main
from kvopt.core.generators import model1, model2
from kvopt.core.limits import Deadline
from kvopt.core.mcsf import mcsf_starts
from kvopt.core.schedule import Schedule
from kvopt.core.validate import memory_profile
from kvopt.mip.search.improve import (
    _IncrementalSGS,
    _move,
    improve,
    list_search,
    lns_step,
    sgs_decode,
)
from tests.bruteforce import brute_force_opt
from tests.strategies import small_instances as instances


@settings(max_examples=200, deadline=None)
@given(inst=instances(max_n=7), perm_seed=st.integers(0, 2**16))
def test_every_sgs_decode_is_feasible_and_earliest(inst, perm_seed):
    order = np.random.default_rng(perm_seed).permutation(inst.n)
    starts = sgs_decode(inst, order)
    assert check_schedule(inst, Schedule.from_starts(inst, starts)).ok
    # each request is at its earliest feasible slot given those placed before it
    for p, i in enumerate(order):
        placed = order[:p]
        if starts[i] == inst.arrival[i]:
            continue
        sub = Instance(memory=inst.memory, arrival=[*inst.arrival[placed].tolist(), 0],
                       prompt=[*inst.prompt[placed].tolist(), int(inst.prompt[i])],
                       output=[*inst.output[placed].tolist(), int(inst.output[i])])
        for k in range(int(inst.arrival[i]), int(starts[i])):
            trial = np.append(starts[placed], k)
            H = int(trial.max() + sub.output.max() + 2)
            assert memory_profile(sub.prompt, trial, sub.output, H).max() > inst.memory


@settings(max_examples=100, deadline=None)
@given(inst=instances(max_n=8), seed=st.integers(0, 2**16))
def test_incremental_decode_equals_sgs_decode(inst, seed):
    """Re-decoding from the first changed position gives exactly sgs_decode's starts, along
    a random walk of moves (accepted or not); every move is a permutation that keeps the
    list before its reported position."""
    rng = np.random.default_rng(seed)
    dec = _IncrementalSGS(inst, rng.permutation(inst.n))
    assert (dec.current_starts == sgs_decode(inst, dec.order)).all()
    for _ in range(30):
        rel = None
        if rng.random() < 0.3:  # a delay move: one request's release changes
            p = int(rng.integers(inst.n))
            rel = dec.release.copy()
            rel[dec.order[p]] = int(rng.integers(0, 2 * int(inst.output.sum()) + 2))
            rel = np.maximum(np.minimum(rel, dec.release_cap), inst.arrival)
            cand = dec.order
        else:
            mv = _move(dec.order, rng) if inst.n >= 2 else None
            if mv is None:
                continue
            cand, p = mv
            assert sorted(cand.tolist()) == list(range(inst.n))
            assert (cand[:p] == dec.order[:p]).all()
        v = dec.evaluate(cand, p, rel)
        ref = sgs_decode(inst, cand, dec.release if rel is None else rel)
        assert check_schedule(inst, Schedule.from_starts(inst, ref)).ok
        assert v == inst.tel_of_starts(ref)
        if rng.random() < 0.5:
            dec.accept(v)
            assert (dec.current_starts == ref).all() and dec.value == v


def test_checkpointed_decode_equals_sgs_decode(monkeypatch):
    """Profiles stored after every 8th prefix only (long rows; forced here on short ones):
    re-decoding from the last stored prefix before the first change gives sgs_decode's
    starts along random walks of moves and delays, accepted or not."""
    import kvopt.mip.search.lists as lists_mod

    monkeypatch.setattr(lists_mod, "SHORT_ROWS", 0)
    rng = np.random.default_rng(8)
    for _ in range(150):
        n = int(rng.integers(2, 30))
        M = int(rng.integers(6, 14))
        s = rng.integers(0, 3, n)
        inst = Instance(memory=M, arrival=rng.integers(0, 6, n), prompt=s,
                        output=[int(rng.integers(1, M - si + 1)) for si in s])
        dec = _IncrementalSGS(inst, rng.permutation(n))
        assert dec.every == 8 and dec.free[0].shape[0] == n // 8 + 1
        for _ in range(40):
            rel = None
            if rng.random() < 0.3:
                p = int(rng.integers(n))
                rel = dec.release.copy()
                rel[dec.order[p]] = int(dec.starts[dec.cur][dec.order[p]]) + int(rng.integers(1, 4))
                rel = np.minimum(rel, dec.release_cap)   # as list_search caps them
                cand = dec.order
            else:
                mv = _move(dec.order, rng)
                if mv is None:
                    continue
                cand, p = mv
            v = dec.evaluate(cand, p, rel)
            ref = sgs_decode(inst, cand, dec.release if rel is None else rel)
            assert v == inst.tel_of_starts(ref)
            if rng.random() < 0.5:
                dec.accept(v)
                assert (dec.current_starts == ref).all()


@settings(max_examples=100, deadline=None)
@given(inst=instances(max_n=8), seed=st.integers(0, 2**16))
def test_short_tables_reject_only_lists_that_may_not_fit(inst, seed):
    """Tables shorter than the serial bound (the list search sizes them by its start's
    makespan): a list evaluates to sgs_decode's TEL, or to ``inf`` when its decode could
    run past the rows (never accepted); a first list that does not fit gets full rows."""
    rng = np.random.default_rng(seed)
    o_max = int(inst.output.max())
    slots = int(rng.integers(o_max + 2, o_max + 3 + int(inst.output.sum())))
    dec = _IncrementalSGS(inst, rng.permutation(inst.n), slots=slots)
    assert (dec.current_starts == sgs_decode(inst, dec.order)).all()
    for _ in range(30):
        mv = _move(dec.order, rng) if inst.n >= 2 else None
        if mv is None:
            break
        cand, p = mv
        v = dec.evaluate(cand, p)
        ref = sgs_decode(inst, cand, dec.release)
        if v == float("inf"):  # only if some request's start or busy end + o reaches the end
            assert int((ref + inst.output).max()) + 1 > dec.slot.size - o_max - 1
            continue
        assert v == inst.tel_of_starts(ref)
        dec.accept(v)
        assert (dec.current_starts == ref).all()


def test_list_search_fits_a_thousand_trace_requests():
    """1000 Azure requests in 0.05 s slots: tables sized by the serial bound needed 8 GB
    (the portfolio skipped the list search); rows of the start's makespan, every eighth
    prefix, take ~65 MB."""
    from kvopt.core.instance import load_instance
    from kvopt.mip.model.discretize import discretize
    from kvopt.mip.search.lists import list_table_bytes, list_table_slots

    inst = discretize(load_instance("instances/traces/azure_conv_2023.csv")
                      .take(np.arange(1000)), 0.05)
    start = mcsf_starts(inst, order="volume")
    H = list_table_slots(inst, start)
    full = 16 * (inst.n + 1) * (inst.horizon + inst.output.sum())
    assert list_table_bytes(inst, start) < 2**27 < 2**32 < full
    assert list_table_bytes(inst, start) == 8 * (2 * (1000 // 8 + 1) + 2) * H
    best, evals = list_search(inst, start, rng=np.random.default_rng(0),
                              deadline=Deadline(None), max_evals=30)
    assert evals == 30 and inst.tel_of_starts(best) <= inst.tel_of_starts(start)
    assert check_schedule(inst, Schedule.from_starts(inst, best)).ok


@settings(max_examples=100, deadline=None)
@given(inst=instances(max_n=6))
def test_every_optimum_is_a_decode_with_releases(inst):
    """Plain lists miss some optima (a request may have to start after its earliest fit);
    with releases = the schedule's starts, the start-ordered list decodes to the optimum."""
    opt, st0 = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    st0 = np.asarray(st0, dtype=np.int64)
    order = np.lexsort((np.arange(inst.n), st0))
    assert (sgs_decode(inst, order, st0) == st0).all()
    dec = _IncrementalSGS(inst, order)
    assert dec.evaluate(order, 0, st0) == opt


def test_plain_lists_can_miss_the_optimum():
    """The instance behind the note in sgs_decode: no permutation reaches OPT = 53."""
    import itertools

    inst = Instance(memory=11, arrival=[0] * 5, prompt=[1, 1, 1, 0, 3], output=[9, 3, 6, 10, 4])
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    best = min(inst.tel_of_starts(sgs_decode(inst, p)) for p in itertools.permutations(range(5)))
    assert opt == 53 and best == 55


@settings(max_examples=100, deadline=None)
@given(inst=instances(max_n=6))
def test_every_starting_point_is_feasible_and_above_opt(inst):
    """MC-SF in its three scan orders and every priority-rule decode: checked by the one
    validator, never below the brute-force optimum, and MC-SF in volume order scans the
    waiting requests by ``o s + o (o + 1) / 2`` (ties by arrival, then index)."""
    from kvopt.mip.search.starts import starting_points

    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    points = starting_points(inst)
    assert {"mcsf", "mc-benchmark", "mcsf:volume"} <= set(points)
    for name, starts in points.items():
        rep = check_schedule(inst, Schedule.from_starts(inst, starts))
        assert rep.ok, (name, str(rep))
        assert rep.objective >= opt, name
    vol = inst.output * inst.prompt + inst.output * (inst.output + 1) // 2
    assert np.array_equal(points["mcsf:volume"], mcsf_starts(inst, order="volume"))
    first = points["mcsf:volume"] == points["mcsf:volume"].min()
    # the requests started first include the smallest volume among those arrived by then
    arrived = inst.arrival <= points["mcsf:volume"].min()
    assert vol[first].min() == vol[arrived].min()


def test_mcsf_order_is_checked():
    from kvopt.core.errors import UsageError

    with pytest.raises(UsageError, match="order"):
        mcsf_starts(model1(0, n=4), order="longest")


@settings(max_examples=40, deadline=None)
@given(inst=instances(max_n=6), seed=st.integers(0, 100))
def test_opt_below_improve_below_mcsf(inst, seed):
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    res = improve(inst, time_limit=20, seed=seed, max_steps=3)
    rep = check_schedule(inst, res.schedule)
    assert rep.ok and rep.objective == res.objective
    assert opt <= res.objective <= inst.tel_of_starts(mcsf_starts(inst))
    assert res.bound <= opt + 1e-9
    if res.status == "optimal":
        assert res.objective == opt


@pytest.mark.parametrize("pairs", [False, True])
def test_lns_step_only_returns_strict_feasible_improvements(pairs):
    rng = np.random.default_rng(5)
    inst = model2(3, horizon=10)
    st0 = mcsf_starts(inst)
    for _ in range(10):
        free = rng.choice(inst.n, size=min(5, inst.n), replace=False)
        new = lns_step(inst, st0, free, time_limit=5, seed=1, pairs=pairs)
        if new is None:
            continue
        assert inst.tel_of_starts(new) < inst.tel_of_starts(st0)
        fixed = np.setdiff1d(np.arange(inst.n), free)
        assert (new[fixed] == st0[fixed]).all()
        assert check_schedule(inst, Schedule.from_starts(inst, new)).ok


def test_lns_pairs_find_the_optimum_the_plain_neighbourhood_misses():
    """model1(1002, n=10): OPT 511 (cp+pairs); the list search stalls at 515."""
    inst = model1(1002, n=10)
    stuck = np.array([14, 0, 0, 84, 0, 25, 51, 115, 0, 7])
    assert inst.tel_of_starts(stuck) == 515
    new = lns_step(inst, stuck, np.arange(10), time_limit=60, pairs=True)
    assert new is not None and inst.tel_of_starts(new) == 511
    assert check_schedule(inst, Schedule.from_starts(inst, new)).ok


def test_improve_beats_mcsf_on_a_model1_instance():
    inst = model1(1, n=20, memory=30)
    res = improve(inst, time_limit=4, seed=0)
    assert res.report.ok and res.status in ("time_limit", "optimal")
    assert res.objective < res.model["start_objective"]
    assert res.schedule.meta["solver"] == "improve"


def test_list_search_stops_at_its_target_and_traces_each_new_best():
    inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    trace: list[tuple[float, float]] = []
    best, evals = list_search(inst, np.array([0, 3, 4]), rng=np.random.default_rng(0),
                              deadline=Deadline(None), max_evals=10**6, target=9.0,
                              trace=trace)
    assert inst.tel_of_starts(best) == 9.0 and evals < 1000  # stopped at the optimum
    values = [v for _, v in trace]
    assert values[-1] == 9.0 and values == sorted(set(values), reverse=True)
    times = [w for w, _ in trace]
    assert times == sorted(times)


def test_improve_history_is_every_new_best_and_a_known_optimum_stops_the_search():
    inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    res = improve(inst, time_limit=60, seed=0, lower=9.0)
    assert res.objective == 9 and res.status == "optimal"
    assert res.model["list_decodes"] < 1000 and res.model["lns_steps"] == 0
    inst = model1(1002, n=8)
    res = improve(inst, time_limit=2, seed=0, clock="cpu")
    hist = res.model["history"]
    assert [h[1] for h in hist] == sorted((h[1] for h in hist), reverse=True)
    assert hist[-1][1] == res.objective and len({h[1] for h in hist}) == len(hist)
    assert [h[0] for h in hist] == sorted(h[0] for h in hist)


def test_improve_rejects_a_nonpositive_budget():
    from kvopt.core.errors import UsageError

    with pytest.raises(UsageError):
        improve(model1(1, n=5), time_limit=0)


def test_cli_solve_improve(tmp_path, capsys):
    out = tmp_path / "s.json"
    code = main(["solve", "instances/tiny/mcsf-suboptimal-distinct.json", "--improve",
                 "--time-limit", "3", "--json", "--schedule-out", str(out)])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert code in (0, 1)
    assert doc["solver"] == "improve" and doc["objective"] == 9.0 and doc["seed"] == 0
    assert "\r" not in captured.err
    assert main(["validate", "instances/tiny/mcsf-suboptimal-distinct.json", str(out)]) == 0


def test_cli_solve_improve_progress_has_no_carriage_return_off_a_terminal(capsys):
    main(["solve", "instances/synthetic/model2-seed2.json", "--improve", "--time-limit", "2"])
    captured = capsys.readouterr()
    assert "\r" not in captured.err
    # the whole call against its limit, as the default path says it
    assert re.search(r"\n  time: \d+\.\d\d s of a 2 s limit", captured.out), captured.out


def test_bound_report_uses_the_improved_schedule():
    from kvopt import load_instance
    from kvopt.mip.certify import bound_report

    inst = load_instance("instances/synthetic/model2-seed2.json")
    base = bound_report(inst, lp="none")
    doc = bound_report(inst, lp="none", improve_time=3)
    assert doc["best_schedule"]["source"].startswith("improve")
    assert doc["best_schedule"]["objective"] < base["best_schedule"]["objective"]
    assert doc["best_bound"] <= doc["best_schedule"]["objective"]
    assert doc["gap"] < base["gap"]


def test_bound_report_seeds_the_interval_lp_with_the_best_schedule(monkeypatch):
    """The interval bound's first restricted LP gets the starts of the schedule the report
    calls best (here the improved one, not MC-SF's)."""
    import kvopt.mip.bounds.intervals as intervals
    from kvopt import load_instance
    from kvopt.mip.certify import bound_report

    seen = []
    real = intervals.interval_bound

    def spy(instance, **kw):
        seen.append((kw["upper"], None if kw["starts"] is None else kw["starts"].copy()))
        return real(instance, **kw)

    monkeypatch.setattr(intervals, "interval_bound", spy)
    inst = load_instance("instances/synthetic/model2-seed2.json")
    doc = bound_report(inst, lp="none", improve_time=3, intervals_time=30)
    assert doc["best_schedule"]["source"].startswith("improve")
    (upper, starts), = seen
    assert upper == doc["best_schedule"]["objective"]
    assert inst.tel_of_starts(starts) == upper            # the improved schedule's starts
    assert doc["interval_status"] == "optimal"
