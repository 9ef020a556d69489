"""Deprecated names kept for one release after issue 20's moves: each still works and warns."""

from __future__ import annotations

import importlib

import pytest

from kvopt import Instance

#: deprecated module path -> (one public name read through it, the module that holds it now)
MOVED = {
    "kvopt.mip.bounds": ("core_bound", "kvopt.mip.bounds.combinatorial"),
    "kvopt.mip.data": ("MILPData", "kvopt.mip.model.data"),
    "kvopt.mip.builder": ("build_milp", "kvopt.mip.model.builder"),
    "kvopt.mip.sizing": ("estimate", "kvopt.mip.model.sizing"),
    "kvopt.mip.discretize": ("discretize", "kvopt.mip.model.discretize"),
    "kvopt.mip.cpmodel": ("pair_lags", "kvopt.mip.model.cpmodel"),
    "kvopt.mip.relaxations": ("lp_bound", "kvopt.mip.bounds.relaxations"),
    "kvopt.mip.sparse_lp": ("solve_lp_duals", "kvopt.mip.bounds.sparse_lp"),
    "kvopt.mip.colgen": ("colgen_bound", "kvopt.mip.bounds.colgen"),
    "kvopt.mip.intervals": ("interval_bound", "kvopt.mip.bounds.intervals"),
    "kvopt.mip.fixing": ("reduced_cost_domains", "kvopt.mip.bounds.fixing"),
    "kvopt.mip.improve": ("improve", "kvopt.mip.search.improve"),
}


def test_every_moved_module_is_tested():
    """Every module of kvopt/mip whose ``__getattr__`` is a moved-module alias is in MOVED."""
    import pathlib

    import kvopt.mip

    root = pathlib.Path(kvopt.mip.__file__).parent
    aliased = {("kvopt." + str(f.relative_to(root.parent).with_suffix("")).replace("/", "."))
               .removesuffix(".__init__")
               for f in root.rglob("*.py") if "__getattr__ = moved_module(" in f.read_text()}
    assert aliased == set(MOVED)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_path_warns_and_gives_the_same_object(old):
    name, new = MOVED[old]
    mod = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        value = getattr(mod, name)
    assert value is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError), pytest.warns(DeprecationWarning):
        mod.no_such_name  # noqa: B018  (kvopt.core.deprecation warns before the look-up)


def test_from_import_of_an_old_path_warns():
    with pytest.warns(DeprecationWarning, match="kvopt.mip.search.improve"):
        from kvopt.mip.improve import improve
    from kvopt.mip.search.improve import improve as new

    assert improve is new


def test_moved_lagrangian_helpers_resolve_through_the_old_paths():
    from kvopt.mip.bounds import lagrangian

    with pytest.warns(DeprecationWarning):
        from kvopt.mip.intervals import lagrangian_value
    with pytest.warns(DeprecationWarning):
        from kvopt.mip.fixing import lagrangian_reduced_costs
    assert lagrangian_value is lagrangian.lagrangian_value
    assert lagrangian_reduced_costs is lagrangian.lagrangian_reduced_costs


def test_discretize_stays_callable_after_its_old_module_is_imported():
    import kvopt.mip
    import kvopt.mip.discretize  # binds the module as the attribute kvopt.mip.discretize

    inst = Instance(memory=100, arrival=[0.0, 0.12], prompt=[5, 5], output=[3, 3],
                    time_unit="second")
    assert kvopt.mip.discretize(inst, 0.1).arrival.tolist() == [0, 2]


def test_memory_budget_renamed():
    from kvopt.core import limits

    with pytest.warns(DeprecationWarning, match="resolve_memory_budget"):
        assert limits.memory_budget("2G") == limits.resolve_memory_budget("2G") == 2**31


def test_solve_result_memory_renamed_ram():
    from kvopt.mip import solve

    res = solve(Instance(memory=4, arrival=[0, 0], prompt=[1, 1], output=[1, 1]),
                solver="highs", time_limit=10)
    assert res.ram["budget_bytes"] > 0 and "ram" in res.to_dict()
    with pytest.warns(DeprecationWarning, match="SolveResult.ram"):
        assert res.memory is res.ram


def test_status_types_have_one_home():
    from kvopt.mip import SolveResult, SolveStatus
    from kvopt.mip.backends import SolveStatus as BackendsStatus
    from kvopt.mip.result import SolveResult as R
    from kvopt.mip.solving import SolveResult as S

    assert BackendsStatus is SolveStatus and SolveResult is R is S


def test_generators_moved_to_core():
    from kvopt.core.generators import GENERATORS
    from kvopt.sweep import GENERATORS as SWEEP
    from kvopt.sweep.run import GENERATORS as RUN

    assert SWEEP is GENERATORS is RUN and {"model1", "model2"} <= set(GENERATORS)


def test_goodput_warm_start_renamed():
    import kvopt.mip.goodput as gp

    with pytest.warns(DeprecationWarning, match="serial_edf_starts"):
        assert gp.serial_deadline_starts is gp.serial_edf_starts


@pytest.mark.parametrize("call", ["solve", "lp_bound", "interval_bound", "bound_report"])
def test_memory_budget_argument_renamed_ram(call):
    from kvopt.core.errors import UsageError
    from kvopt.mip import lp_bound, solve
    from kvopt.mip.bounds.intervals import interval_bound
    from kvopt.mip.certify import bound_report

    inst = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 2])
    f = {"solve": lambda **kw: solve(inst, solver="highs", time_limit=10, **kw),
         "lp_bound": lambda **kw: lp_bound(inst, **kw),
         "interval_bound": lambda **kw: interval_bound(inst, time_limit=10, **kw),
         "bound_report": lambda **kw: bound_report(inst, **kw)}[call]
    with pytest.warns(DeprecationWarning, match="ram="):
        f(memory_budget="1G")
    with pytest.raises(UsageError):
        f(memory_budget="1G", ram="1G")
