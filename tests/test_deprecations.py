"""Deprecated aliases (issue 20): each old path still gives the same object, with a
:class:`DeprecationWarning`, and nothing inside ``kvopt`` uses an old path."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import kvopt
from kvopt.core.deprecation import moved_module

ROOT = Path(kvopt.__file__).parent

#: old module -> (a name read through it, the module that now holds that name)
MOVED = {
    "kvopt.sim.step_time": [("get_step_time", "kvopt.sim.steptime"),
                            ("ProfiledStepTime", "kvopt.sim.steptime.profiled"),
                            ("_interp_extrap", "kvopt.sim.steptime.profiled"),
                            ("data_file", "kvopt.core.io")],
    "kvopt.sim.steptime_fit": [("validate", "kvopt.sim.steptime.fit"),
                               ("read_steps_csv", "kvopt.sim.steptime.measured"),
                               ("MEASUREMENT_SETS", "kvopt.sim.steptime.measured")],
    "kvopt.sim.gpu_profile": [("default_grid", "kvopt.sim.steptime.gpu_profile"),
                              ("_Shard", "kvopt.sim.steptime.gpu_profile")],
    "kvopt.sim.predictions": [("resolve_predictions", "kvopt.sim.predicted_lengths"),
                              ("Predictions", "kvopt.sim.predicted_lengths")],
    "kvopt.queueing.simulate": [("simulate_jobs", "kvopt.queueing.simulator"),
                                ("batch_means", "kvopt.queueing.simulator")],
}

#: module -> {old name: new name} (names renamed in place, issue 20's clashes)
RENAMED = {
    "kvopt.queueing": {"simulate": "simulate_queue", "SimResult": "QueueResult",
                       "POLICIES": "SOAP_POLICIES"},
    "kvopt.queueing.simulate": {"simulate": "simulate_queue", "SimResult": "QueueResult"},
    "kvopt.queueing.soap": {"POLICIES": "SOAP_POLICIES"},
    "kvopt.report.price": {"POLICIES": "PRICE_POLICIES"},
    "kvopt.theory.values": {"POLICIES": "RATIO_POLICIES"},
    "kvopt.core.slo": {"absolute_deadline": "due_time"},
    "kvopt.sim.policies": {"deadline_rank": "due_rank"},
    "kvopt.sim.policies.base": {"deadline_rank": "due_rank"},
}

#: kvopt modules that still import a deprecated path (none now; sim/engine.py moved over).
STILL_OLD: set[str] = set()


@pytest.mark.parametrize("old", sorted(MOVED))
def test_moved_module_gives_the_new_objects_with_a_warning(old: str) -> None:
    mod = importlib.import_module(old)
    for name, new in MOVED[old]:
        with pytest.warns(DeprecationWarning, match=f"{old} is deprecated; import from"):
            got = getattr(mod, name)
        assert got is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize("module", sorted(RENAMED))
def test_renamed_names_give_the_new_objects_with_a_warning(
        module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = importlib.import_module(module)
    new_home = "kvopt.queueing.simulator" if module == "kvopt.queueing.simulate" else module
    # the deprecated module kvopt.queueing.simulate, once imported, is the package's attribute
    if module == "kvopt.queueing" and "simulate" in vars(mod):
        monkeypatch.delattr(mod, "simulate")
    for old, new in RENAMED[module].items():
        with pytest.warns(DeprecationWarning, match=f"deprecated.*{new}"):
            got = getattr(mod, old)
        assert got is getattr(importlib.import_module(new_home), new)
        assert old not in getattr(mod, "__all__", ())


def test_the_old_queueing_module_stays_callable_as_the_function() -> None:
    """Importing the deprecated ``kvopt.queueing.simulate`` module makes it the package's
    attribute ``simulate``, which callers used as the function."""
    import kvopt.queueing
    import kvopt.queueing.simulate
    from kvopt.queueing import Exponential, simulate_queue

    assert kvopt.queueing.simulate is sys.modules["kvopt.queueing.simulate"]
    with pytest.warns(DeprecationWarning, match="simulate_queue"):
        r = kvopt.queueing.simulate("fcfs", 0.5, Exponential(1.0), n_jobs=1000, seed=1)
    assert r.mean_response == simulate_queue("fcfs", 0.5, Exponential(1.0), n_jobs=1000,
                                             seed=1).mean_response


def test_from_import_warns_at_the_importing_line() -> None:
    code = compile("from kvopt.sim.step_time import batch_time", "user_code.py", "exec")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        exec(code, {"__name__": "user_code"})
    assert [(w.category, w.filename) for w in seen] == [(DeprecationWarning, "user_code.py")]


def test_unknown_name_is_an_attribute_error() -> None:
    mod = importlib.import_module("kvopt.sim.step_time")
    with pytest.raises(AttributeError, match="has no attribute 'nope'"), \
            pytest.warns(DeprecationWarning):
        mod.nope  # noqa: B018


def test_moved_module_serves_dunder_lookups_without_a_warning() -> None:
    getattr_ = moved_module("old.mod", ["kvopt.core.io"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            getattr_("__path__")


def _old_imports(path: Path, root: Path = ROOT.parent) -> list[str]:
    """Imports of a deprecated module, or of a renamed name by its old name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        out += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names
                if n in MOVED]
        if isinstance(node, ast.ImportFrom) and node.module in RENAMED:
            out += [f"{path.relative_to(root)}:{node.lineno} {node.module}.{a.name}"
                    for a in node.names if a.name in RENAMED[node.module]]
    return out


def test_kvopt_does_not_use_the_old_paths() -> None:
    """Neither the package nor its tests, benchmarks, notebooks and report scripts."""
    shims = {ROOT.parent / (m.replace(".", "/") + ".py") for m in MOVED}
    files = [p for d in ("kvopt", "tests", "benchmarks", "notebooks", "reports")
             for p in sorted((ROOT.parent / d).rglob("*.py"))
             if p not in shims and p != Path(__file__).resolve()]
    found = [hit for p in files for hit in _old_imports(p)]
    bad = [h for h in found if h.split(":")[0] not in STILL_OLD]
    assert not bad, "old import paths:\n" + "\n".join(bad)


def test_the_old_path_check_finds_an_old_import(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("import os\n\n\ndef f():\n"
                                   "    from kvopt.sim.step_time import batch_time\n")
    assert _old_imports(tmp_path / "x.py", tmp_path) == ["x.py:5 kvopt.sim.step_time"]
    (tmp_path / "y.py").write_text("from kvopt.queueing import SoapModel, simulate\n")
    assert _old_imports(tmp_path / "y.py", tmp_path) == ["y.py:1 kvopt.queueing.simulate"]


def test_kvopt_runs_with_deprecation_warnings_as_errors() -> None:
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c",
                        "import kvopt, kvopt.sim, kvopt.cli.main, kvopt.report.steptime, "
                        "kvopt.queueing, kvopt.report.price, kvopt.theory.values"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr



#: Commands whose ``--time-limit`` limited each MIP solve (it is ``--solve-time-limit`` now),
#: with the arguments each one requires.
PER_SOLVE = {"report search": ["mcsf", "--out", "x.json"], "sweep": [],
             "hardness knapsack": ["--weights", "2", "--values", "1", "--capacity", "3"],
             "hardness report": ["--out", "x"], "predictions price": ["--out", "x"]}


@pytest.mark.parametrize("command", sorted(PER_SOLVE))
def test_the_old_per_solve_time_limit_sets_the_new_one_and_says_so(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from kvopt.cli.main import build_parser, main
    from tests.test_cli_battery import _leaf_parser

    parser = build_parser()
    argv = [*command.split(), *PER_SOLVE[command]]
    new = parser.parse_args([*argv, "--solve-time-limit", "7"])
    assert new.solve_time_limit == 7.0 and capsys.readouterr().err == ""
    old = parser.parse_args([*argv, "--time-limit", "7"])
    err = capsys.readouterr().err
    assert old.solve_time_limit == 7.0
    assert "--time-limit is deprecated here" in err and "use --solve-time-limit" in err
    assert main([*argv, "--time-limit", "0"]) == 2
    assert "argument --time-limit: must be" in capsys.readouterr().err
    shown = _leaf_parser(parser, command).format_help()
    assert "--solve-time-limit" in shown
    assert "--time-limit" not in shown.replace("-solve-time-limit", "").replace(
        "-task-time-limit", "")
