"""The branch-and-bound with interval-LP nodes (kvopt.mip.bounds.branch): its bound lies
between the root interval LP and the brute-force optimum on 16 fixed and 480 random tiny
instances (with arrivals, identical requests, a loose or a tight ``upper``), node LPs
warm-started or cold; split on every request with no identical ones it proves OPT; split only
on the big requests it stops with a valid bound below OPT somewhere; a warm-started node has
the cold node's value; a stalled warm node is solved from scratch; the deadline holds."""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest

from kvopt import Instance
from kvopt.core.errors import UsageError
from kvopt.core.limits import Deadline
from kvopt.mip.bounds.branch import WarmNodes, branch_bound, cold_node, split_point
from kvopt.mip.bounds.columns import restrict_columns
from kvopt.mip.bounds.intervals import interval_model
from kvopt.mip.bounds.sparse_lp import solve_lp_duals
from tests.bruteforce import brute_force_opt
from tests.mip.test_beam_benchmark import INSTANCES, _opt
from tests.mip.test_intervals import _random_instance


@functools.cache
def _run(k: int, frac: float, warm: bool = True):
    return branch_bound(INSTANCES[k], upper=_opt(k), time_limit=120.0, frac=frac, warm=warm)


@pytest.mark.parametrize("k", range(len(INSTANCES)))
@pytest.mark.parametrize("frac", [0.0, 0.5])
@pytest.mark.parametrize("warm", [True, False])
def test_bound_between_root_and_opt(k, frac, warm):
    r = _run(k, frac, warm)
    assert r.root - 1e-6 <= r.bound <= _opt(k) + 1e-9
    assert r.status in ("optimal", "no split")          # 120 s is never reached here
    if r.status == "optimal":
        assert r.bound > _opt(k) - 1 + 1e-9        # proven: ceil(bound) = OPT


def _distinct(inst: Instance) -> bool:
    """No two requests of ``inst`` are identical (every group is one request)."""
    kinds = set(zip(inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist(),
                    strict=True))
    return len(kinds) == inst.n


DISTINCT = [k for k in range(len(INSTANCES)) if _distinct(INSTANCES[k])]


def test_most_instances_have_no_identical_requests():
    assert len(DISTINCT) >= len(INSTANCES) // 2


@pytest.mark.parametrize("k", DISTINCT)
@pytest.mark.parametrize("warm", [True, False])
def test_splitting_every_request_proves_opt_without_identical_requests(k, warm):
    r = _run(k, 0.0, warm)
    assert r.status == "optimal"
    assert r.bound == pytest.approx(_opt(k), abs=1e-6)


def test_the_search_is_not_vacuous():
    """Somewhere the root LP is below OPT, splitting every request raises it, and splitting
    only the big requests stops below OPT (so the assertions above compare different
    numbers)."""
    gaps = [(k, _run(k, 0.0), _run(k, 0.5)) for k in range(len(INSTANCES))]
    assert any(a.root < _opt(k) - 1 and a.bound > a.root + 1 for k, a, _ in gaps)
    assert any(b.status == "no split" and b.bound < _opt(k) - 1 for k, _, b in gaps)


@pytest.mark.parametrize("chunk", range(8))
def test_bound_below_opt_on_random_tiny_instances(chunk):
    """60 random instances per chunk (n <= 5, arrivals 0-2, identical requests in about a
    third), ``upper`` the optimum or MC-SF's TEL: ``root <= bound <= OPT``, and with no
    identical requests splitting every request proves OPT."""
    from kvopt.core.mcsf import mcsf_starts

    rng = np.random.default_rng([22, chunk])
    split = raised = 0
    for _ in range(60):
        inst = _random_instance(rng, 5)
        opt = float(brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)[0])
        upper = opt if rng.random() < 0.5 else float(inst.tel_of_starts(mcsf_starts(inst)))
        assert upper >= opt
        for frac in (0.0, 0.5):
            r = branch_bound(inst, upper=upper, time_limit=60.0, frac=frac,
                             warm=bool(rng.random() < 0.75))
            assert r.status in ("optimal", "no split"), r
            assert r.root - 1e-6 <= r.bound <= opt + 1e-9, (inst, upper, frac, r)
            split += r.nodes > 1
            raised += r.bound > r.root + 1e-6
            if frac == 0.0 and _distinct(inst):
                assert r.status == "optimal" and r.bound > opt - 1 + 1e-9, (inst, r)
    assert split > 0 and raised > 0                  # the searches branched and gained


def dive(data, seed: int):
    """The column sets of a dive on the interval model ``data``: one group per level, in a
    random order, fixed at one of its starts (``rng`` seeded by ``seed``); each set is the
    previous one with that group's other starts dropped."""
    rng = np.random.default_rng(seed)
    keep = np.ones(data.n_cols, dtype=bool)
    for g in rng.permutation(len(data.groups)):
        starts = np.unique(data.col_start[data.col_group == g])
        keep = keep & ~((data.col_group == g) & (data.col_start != rng.choice(starts)))
        yield keep


@pytest.mark.parametrize("k", range(len(INSTANCES)))
def test_a_warm_node_has_the_cold_nodes_value(k):
    """Down a dive that fixes one request's start per level (each child from its parent's
    basis), every warm-started node LP has the value of the same node solved from scratch; a
    node it finds infeasible (+inf) is infeasible for HiGHS' simplex on the plain model and
    for the cold node too (whose interior point ends some of them in a solve error, retried
    by dual simplex in ``solve_lp_duals``)."""
    data = interval_model(INSTANCES[k], upper=_opt(k))
    w = WarmNodes(data, Deadline(60.0))
    keep = np.ones(data.n_cols, dtype=bool)
    value, x, basis = w.solve(keep, None)
    assert value == pytest.approx(cold_node(data, keep, None)[0], abs=1e-6)
    for keep in dive(data, k):
        value, x, child = w.solve(keep, basis)
        if x is None:
            assert value == np.inf
            plain = solve_lp_duals(restrict_columns(data, keep), form="dense", method="simplex")
            assert plain.status == "infeasible"
            assert cold_node(data, keep, None) == (np.inf, None)
            break
        assert value == pytest.approx(cold_node(data, keep, None)[0], abs=1e-6)
        basis = child


def test_a_stalled_warm_node_is_solved_from_scratch():
    """With no time for the warm simplex (cap 0), each child of the root is solved again from
    scratch (a second, basis-less call), with the cold value."""
    data = interval_model(INSTANCES[0], upper=_opt(0))
    w = WarmNodes(data, Deadline(60.0))
    root = np.ones(data.n_cols, dtype=bool)
    _, x, basis = w.solve(root, None)
    assert x is not None
    w.CAP = w.CAP_FLOOR = 0.0
    calls = []
    solve = w.solve

    def spy(keep, parent):
        calls.append(parent is None)
        return solve(keep, parent)

    w.solve = spy  # type: ignore[method-assign]
    got = split_point(data, x, np.ones(len(data.groups), dtype=bool))
    assert got is not None
    g, m = got
    col = data.col_group == g
    for side in (data.col_start <= m, data.col_start > m):
        calls.clear()
        keep = root & ~(col & ~side)
        value, child_x, child = w.solve(keep, basis)
        assert calls == [False, True]                    # warm, stopped, then from scratch
        assert child_x is not None and child is not None
        assert value == pytest.approx(cold_node(data, keep, None)[0], abs=1e-6)


def test_a_warm_node_past_the_deadline_is_not_solved():
    data = interval_model(INSTANCES[0], upper=_opt(0))
    w = WarmNodes(data, Deadline(60.0))
    keep = np.ones(data.n_cols, dtype=bool)
    _, _, basis = w.solve(keep, None)
    w.deadline = Deadline(0.0)
    assert w.solve(keep, basis)[:2] == (-np.inf, None)


def test_the_limit_holds_and_an_unsolved_root_is_no_bound():
    """A limit too short for the root LP gives no bound (-inf), never a number that is not
    one; a longer one on a paper-like instance stops on time with a bound above the root."""
    from kvopt.core.generators import model1

    inst = model1(7, n=24, memory=34)
    r = branch_bound(inst, upper=3000.0, time_limit=1e-3)
    assert r.root == r.bound == -np.inf and r.status == "time" and r.nodes == 0
    t0 = time.perf_counter()
    r = branch_bound(inst, upper=3000.0, time_limit=6.0)
    assert time.perf_counter() - t0 < 6.0 + 1.0
    assert r.status == "time" and r.nodes > 1 and r.bound >= r.root - 1e-6


def test_bad_frac_is_refused():
    with pytest.raises(UsageError, match="frac"):
        branch_bound(INSTANCES[0], upper=_opt(0), frac=1.5)


def test_a_node_whose_lp_fails_with_time_left_stops_the_search_at_its_parents_value(
        monkeypatch):
    """A child whose LP is not solved (warm and from scratch) while time is left keeps its
    parent's value; when it becomes the smallest open node the search can neither split nor
    close it, and says ``node LP failed`` (not ``time``) with that value as its bound."""
    k = next(k for k in range(len(INSTANCES)) if _run(k, 0.0).nodes > 1)    # it branches
    solve = WarmNodes.solve

    def failing(self, keep, basis):
        if basis is None and self.root_s is None:        # the root: solved
            return solve(self, keep, basis)
        return -np.inf, None, None

    monkeypatch.setattr(WarmNodes, "solve", failing)
    r = branch_bound(INSTANCES[k], upper=_opt(k), time_limit=60.0, frac=0.0)
    assert r.status == "node LP failed" and r.nodes == 1 and r.open == 2
    assert r.bound == r.root


@pytest.mark.parametrize("fail_at", [2, 3, 6])
def test_a_memory_error_stops_the_search_with_a_valid_bound(monkeypatch, fail_at):
    """A ``MemoryError`` in a node's LP (the child process's memory cap in ``kvopt solve``)
    ends the search with ``status="memory"`` and the bound so far, the node being split
    counted as open: never above OPT, never below the root."""
    k = next(k for k in range(len(INSTANCES)) if _run(k, 0.0).nodes > 6)
    calls = []
    solve = WarmNodes.solve

    def short_of_memory(self, keep, basis):
        calls.append(1)
        if len(calls) == fail_at:
            raise MemoryError
        return solve(self, keep, basis)

    monkeypatch.setattr(WarmNodes, "solve", short_of_memory)
    r = branch_bound(INSTANCES[k], upper=_opt(k), time_limit=60.0, frac=0.0)
    assert r.status == "memory" and r.nodes == fail_at - 1
    assert r.root - 1e-9 <= r.bound <= _opt(k) + 1e-9
    if fail_at == 2:                        # the root was being split: the bound is the root's
        assert r.bound == r.root
