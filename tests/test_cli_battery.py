"""Bad-argument battery: every ``kvopt`` sub-command, fed user mistakes, must answer with one
message naming the argument, exit 2, no traceback, and no file written; with ``--json`` stdout
is one JSON error object.

The table :data:`BATTERY` is keyed by sub-command path (``"report search"``). A sub-command
registered in :mod:`kvopt.cli.main` without an entry here fails
:func:`test_every_subcommand_has_cases`: adding a command means adding its bad arguments.

Placeholders in the argument lists: ``{out}`` is an empty folder that must stay empty (the
place a command would write to), ``{fx}`` a folder of fixture files (``afile``: a plain
file; ``bad-schedule.json``, ``notjson.json``, ``bad-instance.json``, ``other-schedule.json``:
a valid schedule of another instance, ``a2-schedule.json``: a valid schedule of ``A2``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvopt.cli.main import build_parser, main

A2 = "instances/tiny/a2-example.json"
EX1 = "instances/tiny/seed000-example1.json"
CSV = "instances/traces/azure_code_2023.csv"
SMOKE = "instances/sweeps/smoke.toml"
STEPS = "kvopt/data/measured/h100_llama_steps.csv"

#: sub-command -> [(argv after the sub-command, text the error message must contain)]
BATTERY: dict[str, list[tuple[list[str], str]]] = {
    "validate": [
        (["missing.json"], "path"),
        (["{fx}/bad-instance.json"], "requests.output[0]"),
        ([A2, "{fx}/bad-schedule.json"], "runs"),
        ([A2, "{fx}/notjson.json"], "path"),
        ([A2, "--memory", "0"], "--memory"),
    ],
    "info": [
        (["missing.json"], "path"),
        ([CSV, "--memory", "-5"], "--memory"),
        ([A2, "--bogus"], "--bogus"),
    ],
    "solve": [
        ([A2, "--solver", "highs", "--formulation", "cp"], "--formulation"),
        ([A2, "--solver", "scipy", "--formulation", "cp+exact"], "--formulation"),
        ([A2, "--formulation", "cp+exactly"], "--formulation"),
        ([A2, "--solver", "nope"], "--solver"),
        ([A2, "--threads", "0"], "--threads"),
        ([A2, "--objective", "makespan"], "--objective"),
        ([A2, "--objective", "goodput"], "requests.slo_kind"),
        ([A2, "--schedule-out", "{out}"], "--schedule-out"),
        ([A2, "--schedule-out", "{fx}/afile/s.json"], "--schedule-out"),
        (["{fx}/a2.json", "--schedule-out", "{fx}/a2.json"], "--schedule-out"),  # the input
        ([A2, "--improve", "--seed", "-1"], "--seed"),
    ],
    "bound": [
        ([A2, "--first", "0"], "--first"),
        ([A2, "--lp", "bogus"], "--lp"),
        ([A2, "--slot-seconds", "-1"], "--slot-seconds"),
        ([A2, "--solve", "0"], "--solve"),
        ([A2, "--iterations", "0"], "--iterations"),
        ([A2, "--intervals", "0"], "--intervals"),
        ([A2, "--intervals", "-3"], "--intervals"),
        ([A2, "--intervals", "soon"], "--intervals"),
        ([CSV], "--slot-seconds"),
        ([A2, "--improve", "1", "--seed", "-1"], "--seed"),
    ],
    "solvers": [
        (["--bogus"], "--bogus"),
    ],
    "hardness report": [
        (["--out", "{fx}/afile"], "--out"),
        (["--out", "{out}/r", "--seeds", "5:2"], "--seeds"),
        (["--out", "{out}/r", "--seeds", "x"], "--seeds"),
        (["--out", "{out}/r", "--seeds=-3:2"], "--seeds"),
        (["--out", "{out}/r", "--seeds", "0:9223372036854775809"], "--seeds"),
        (["--out", "{out}/r", "--n", "0"], "--n"),
        (["--out", "{out}/r", "--max-batch", "0"], "--max-batch"),
        (["--out", "{out}/r", "--solve-time-limit", "-1"], "--solve-time-limit"),
        (["--seeds", "0:2"], "--out"),
    ],
    "hardness knapsack": [
        (["--weights", "2,x", "--values", "1,1", "--capacity", "3"], "--weights"),
        (["--weights", "2,0", "--values", "1,1", "--capacity", "3"], "--weights"),
        (["--weights", "2,3", "--values", "1", "--capacity", "3"], "--values"),
        (["--weights", "2,3", "--values", "1,-1", "--capacity", "3"], "--values"),
        (["--weights", "2,3", "--values", "1,1", "--capacity", "0"], "--capacity"),
        (["--weights", "2,3", "--values", "1,1", "--capacity", "3", "--knapsacks", "0"],
         "--knapsacks"),
        (["--weights", "2,3", "--values", "1,1"], "--capacity"),
        (["--weights", "2,3", "--values", "1,1", "--capacity", "3", "--solve-time-limit",
          "0"], "--solve-time-limit"),
        (["--weights", "2,3", "--values", "1,1", "--capacity", "3", "--instance-out", "{out}"],
         "--instance-out"),
    ],
    "simulate": [
        ([A2, "--policy", "mc-sf"], "--policy"),
        # an output that is the input (the trace was overwritten), or both outputs one file
        (["{fx}/a2.json", "--policy", "mcsf", "--requests-out", "{fx}/a2.json"],
         "--requests-out"),
        ([A2, "--policy", "mcsf", "--requests-out", "{out}/x.csv", "--schedule-out",
          "{out}/./x.csv"], "--requests-out"),
        ([A2, "--policy", "amax"], "--noise"),
        ([A2, "--policy", "mcsf", "--option", "bogus=1"], "--option bogus"),
        ([A2, "--policy", "alpha-protection", "--option", "alpha=x"], "--option alpha"),
        ([A2, "--policy", "alpha-protection", "--option", "alpha=1.5"], "--option alpha"),
        ([A2, "--policy", "mcsf", "--option", "noequals"], "--option"),
        ([A2, "--policy", "amin", "--option", "lower=0"], "--option lower"),
        ([A2, "--policy", "mcsf", "--option", "promote=3"], "--option promote"),
        ([A2, "--policy", "fcfs", "--option", "stall=maybe"], "--option stall"),
        ([A2, "--policy", "mcsf-margin", "--option", "alpha=2"], "--option alpha"),
        ([A2, "--policy", "a-l", "--option", "ell=2", "--option", "u=1"], "--option u"),
        ([A2, "--policy", "mcsf", "--noise", "gauss:1"], "--noise"),
        ([A2, "--policy", "mcsf", "--noise", "uniform:x"], "--noise"),
        ([A2, "--policy", "replay"], "--replay"),
        ([A2, "--policy", "mcsf", "--replay", "{fx}/other-schedule.json"], "--replay"),
        ([A2, "--policy", "replay", "--replay", "{fx}/other-schedule.json"], "--replay"),
        ([A2, "--policy", "replay", "--replay", "{fx}/bad-schedule.json"], "runs"),
        ([A2, "--policy", "mcsf", "--schedule-out", "{out}"], "--schedule-out"),
        ([A2, "--policy", "mcsf", "--requests-out", "{fx}/afile/r.csv"], "--requests-out"),
        ([A2, "--policy", "mcsf", "--step-time", "bogus"], "--step-time"),
        ([A2, "--policy", "mcsf", "--seed", "x"], "--seed"),
        ([A2, "--policy", "mcsf", "--seed", "-1"], "--seed"),
        ([A2, "--policy", "mcsf", "--seed", str(2**63)], "--seed"),
    ],
    "ratio": [
        (["amin", "--alpha", "0.25", "--s", "-1"], "--s"),
        (["amin", "--alpha", "0"], "--alpha"),
        (["amin", "--u", "0"], "--u"),
        (["amax", "--u", "3", "--l", "5"], "--u"),
        (["mcsf", "--memory", "0"], "--memory"),
        (["nope"], "POLICY"),
    ],
    "report ratios": [
        (["--out", "{fx}/afile"], "--out"),
        (["--out", "{out}/r", "--n", "5"], "--n"),
        (["--out", "{out}/r", "--alphas", "2"], "--alphas"),
        (["--out", "{out}/r", "--max-u", "0"], "--max-u"),
        (["--out", "{out}/r", "--seeds", "1", "-1"], "--seeds"),
    ],
    "report reproduce": [
        (["--fast"], "--out"),
        (["--out", "{fx}/afile"], "--out"),
        (["--only", "009/T1"], "--only"),
        (["--only", "000/nope"], "--only"),
        (["--only", "000"], "--only"),
        (["--out", "{out}/r", "--seed", "-1"], "--seed"),
        (["--out", "{out}/r", "--root", "{fx}/afile"], "--root"),
    ],
    "report table1": [
        (["--out", "{fx}/afile"], "--out"),
        (["--seeds", "0", "--out", "{out}/t"], "--seeds"),
        (["--rate", "-1", "--out", "{out}/t"], "--rate"),
        (["--step-time", "nope", "--out", "{out}/t"], "--step-time"),
        (["--workloads", "lmsys", "--out", "{out}/t"], "--workloads"),
        (["--noise", "0.2,1.5", "--out", "{out}/t"], "--noise"),
    ],
    "report agreement": [
        (["{out}"], "OUT.md"),
        (["{out}/a.md", "--n", "10"], "--n"),
        (["{out}/a.md", "--seed", "-1"], "--seed"),
        (["{out}/a.md", "--seed", "x"], "--seed"),
    ],
    "report search": [
        (["mc-sf", "--out", "{out}/x.json"], "POLICY"),
        (["amax", "--out", "{out}/x.json"], "--interval"),
        (["mcsf", "--out", "{out}"], "--out"),
        (["mcsf", "--out", "{out}/x.json", "--n", "5", "2"], "--n"),
        (["mcsf", "--out", "{out}/x.json", "--memory", "1", "2", "--output", "4", "5"],
         "--memory"),
        (["amin", "--out", "{out}/x.json", "--interval", "3", "2"], "--interval"),
        (["mcsf", "--out", "{out}/x.json", "--solver", "nope"], "--solver"),
        (["mcsf", "--out", "{out}/x.json", "--solve-time-limit", "-1"], "--solve-time-limit"),
        (["mcsf", "--out", "{out}/x.json", "--restarts", "0"], "--restarts"),
        (["mcsf", "--out", "{out}/x.json", "--rng-seed", "-1"], "--rng-seed"),
        (["mcsf", "--out", "{out}/x.json", "--seeds", "0", "-1"], "--seeds"),
    ],
    "queueing": [
        (["srpt", "--load", "1.2", "--sizes", "exp:1"], "--load"),
        (["srpt", "--sizes", "exp:1"], "--load"),
        (["srpt", "--load", "0.5", "--sizes", "exp:zero"], "--sizes"),
        (["trail", "--load", "0.5", "--sizes", "exp:1"], "--C"),
        (["lifo", "--load", "0.5", "--sizes", "exp:1"], "POLICY"),
        (["srpt", "--load", "0.5", "--sizes", "exp:1", "--predictions", "gauss"],
         "--predictions"),
        (["srpt", "--load", "0.5", "--sizes", "exp:1", "--simulate", "10"], "--simulate"),
        (["srpt", "--load", "0.5", "--sizes", "exp:1", "--given", "1"], "--given"),
        (["trail-printed", "--C", "1", "--load", "0.5", "--sizes", "exp:1", "--simulate",
          "1000"], "POLICY"),
        (["--plot-fig8", "{out}"], "--plot-fig8"),
        (["--plot-fig8", "{out}/f.json"], "--plot-fig8"),  # no figure format (a traceback)
        (["--plot-fig8", "{out}/f.png", "--lams", "1.5"], "--lams"),
        (["--errata", "{fx}/afile/e.md"], "--errata"),
        (["srpt", "--load", "0.5", "--sizes", "exp:1", "--simulate", "1000", "--seed", "-1"],
         "--seed"),
    ],
    "report sweep": [
        (["--db", "{fx}/afile", "--group-by", "entry,nope"], "--group-by"),
        (["--db", "{fx}/missing.sqlite"], "--db"),
        (["--db", "{fx}/afile"], "--db"),
        (["--db", "{fx}/afile", "--metric", "bogus"], "--metric"),
        (["--db", "{fx}/afile", "--format", "xls"], "--format"),
    ],
    "sweep": [
        (["--policies", "mc-sf", "--out", "{out}/sw"], "--policies"),
        (["--param", "bogus=3", "--out", "{out}/sw"], "--param"),
        (["--param", "n=-3", "--out", "{out}/sw"], "--param n"),
        (["--param", "n=x", "--out", "{out}/sw"], "--param"),
        (["--policies", "amax", "--out", "{out}/sw"], "--policies"),
        (["--seeds", "a", "--out", "{out}/sw"], "--seeds"),
        (["--seeds", "0:99999999999999999999", "--out", "{out}/sw"], "--seeds"),
        (["--seeds", "0:2000000", "--out", "{out}/sw"], "--seeds"),
        (["--task-time-limit", "0", "--out", "{out}/sw"], "--task-time-limit"),
        (["--seeds", "5:2", "--out", "{out}/sw"], "--seeds"),
        (["--out", "{fx}/afile"], "--out"),
        (["--workers", "-1", "--out", "{out}/sw"], "--workers"),
        (["--solver", "nope", "--out", "{out}/sw"], "--solver"),
        (["--solve-time-limit", "0", "--out", "{out}/sw"], "--solve-time-limit"),
        ([SMOKE], "--db"),
        (["{fx}/missing.toml", "--db", "{out}/r.sqlite"], "SPEC"),
        (["{fx}/bad-policy.toml", "--db", "{out}/r.sqlite"], "policies[0].name"),
        (["{fx}/bad-key.toml", "--db", "{out}/r.sqlite"], "instances[0].bogus"),
        (["{fx}/bad-option.toml", "--db", "{out}/r.sqlite"], "policies[0].params.alpha"),
        (["{fx}/notjson.json", "--db", "{out}/r.sqlite"], "(toml)"),
        ([SMOKE, "--db", "{out}"], "--db"),
        ([SMOKE, "--db", "{fx}/afile/r.sqlite"], "--db"),
        ([SMOKE, "--db", "{out}/r.sqlite", "--scheduler", "nohost"], "--scheduler"),
        ([SMOKE, "--db", "{out}/r.sqlite", "--scheduler", "tcp://127.0.0.1:1", "--workers",
          "2"], "--workers"),
        ([SMOKE, "--db", "{out}/r.sqlite", "--generator", "model1"], "--generator"),
        ([SMOKE, "--db", "{out}/r.sqlite", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler"),
        ([SMOKE, "--db", "{out}/r.sqlite", "--csv", "{out}/x.csv"], "--csv"),
        (["export", "--db", "{fx}/missing.sqlite", "--csv", "{out}/x.csv"], "--db"),
        (["export", "--db", "{fx}/afile", "--csv", "{out}/x.csv"], "--db"),
        (["export", "--db", "{fx}/sweep.sqlite", "--csv", "{fx}/sweep.sqlite"], "--csv"),
        (["export", "--db", "{fx}/afile"], "--csv"),
        (["export", "--csv", "{out}/x.csv"], "--db"),
    ],
    "steptime list": [
        (["--bogus"], "--bogus"),
    ],
    "steptime validate": [
        (["--set", "nope"], "--set"),
        (["--folds", "1"], "--folds"),
        (["--out", "{fx}/afile"], "--out"),
        (["--fit", "--seed", "-1"], "--seed"),
    ],
    "steptime fit": [
        (["missing.csv", "--base", "h100-llama2-7b-tp1"], "MEASUREMENTS"),
        (["{fx}/afile", "--base", "h100-llama2-7b-tp1"], "column"),
        (["{fx}/steps.csv", "--base", "h100-llama2-7b-tp1", "--out", "{fx}/steps.csv"], "--out"),
        ([STEPS, "--base", "nope"], "--base"),
        ([STEPS, "--base", "unit"], "--base"),
        ([STEPS, "--base", "h100-llama2-7b-tp1",
          "--holdout", "1"], "--holdout"),
        ([STEPS, "--base", "h100-llama2-7b-tp1",
          "--where", "gpu=x", "--out", "{out}/f.json"], "--where"),
        ([STEPS, "--base", "h100-llama2-7b-tp1",
          "--out", "{out}"], "--out"),
        ([STEPS, "--base", "roofline-h100-llama2-7b-tp1",
          "--interconnect", "none"], "--interconnect"),
    ],
    "steptime calibrate-engine": [
        (["--set", "h100-steps"], "--set"),
        (["--family", "nope"], "--family"),
        (["--out", "{out}"], "--out"),
        (["--out", "{fx}/afile/c.json"], "--out"),
    ],
    "steptime profile": [
        (["--out", "{out}/p.csv", "--tp", "3"], "--tp"),
        (["--out", "{out}/p.csv", "--repeats", "1"], "--repeats"),
        (["--out", "{out}"], "--out"),
        (["--out", "{out}/p.csv", "--model", "gpt"], "--model"),
    ],
    "plot": [
        ([A2, "{fx}/other-schedule.json", "--out", "{out}/p.png"], "SCHEDULE"),
        ([A2, "{fx}/bad-schedule.json", "--out", "{out}/p.png"], "runs"),
        ([A2, "{fx}/missing.json", "--out", "{out}/p.png"], "SCHEDULE"),
        ([A2, "{fx}/a2-schedule.json", "--out", "{out}/p.pdf"], "--out"),
        ([A2, "{fx}/a2-schedule.json", "--out", "{out}"], "--out"),
        ([A2, "{fx}/a2-schedule.json", "--out", "{out}/p.png", "--seconds"], "--seconds"),
        ([A2, "{fx}/a2-schedule.json", "--out", "{out}/p.png", "--dpi", "0"], "--dpi"),
    ],
    "predictions price": [
        (["--out", "{out}/p", "--errors", "-1"], "--errors"),
        (["--out", "{out}/p", "--policies", "nope"], "--policies"),
        (["--out", "{out}/p", "--instances", "0"], "--instances"),
        (["--out", "{fx}/afile"], "--out"),
        (["--out", "{out}/p", "--solve-time-limit", "0"], "--solve-time-limit"),
        (["--out", "{out}/p", "--seed", "-1"], "--seed"),
    ],
    "predictions experiment": [
        (["--out", "{out}/e", "--n", "3"], "--n"),
        (["--out", "{out}/e", "--rate", "0"], "--rate"),
        (["--out", "{out}/e", "--workloads", "lmsys"], "--workloads"),
        (["--out", "{fx}/afile"], "--out"),
        (["--out", "{out}/e", "--seed", "-1"], "--seed"),
    ],
}


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    """Leaf sub-command paths of ``parser`` (``"report search"``, ``"solve"``, ...)."""
    out: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix} {name}".strip()
                out += _subcommands(sub, path) or [path]
    return out


def test_every_subcommand_has_cases():
    commands = _subcommands(build_parser())
    missing = [c for c in commands if not BATTERY.get(c)]
    assert not missing, f"add bad-argument cases to tests/test_cli_battery.py for {missing}"
    stale = sorted(set(BATTERY) - set(commands))
    assert not stale, f"battery cases for commands that do not exist: {stale}"


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    from kvopt import Schedule, load_instance

    fx = tmp_path_factory.mktemp("fixtures")
    (fx / "afile").write_text("x\n")
    spec = '[[instances]]\ngenerator = "random-small"\n[[policies]]\n'
    (fx / "bad-policy.toml").write_text(spec + 'name = "mc-sf"\n')
    (fx / "bad-option.toml").write_text(spec + 'name = "alpha-protection"\n'
                                        'params = { alpha = [0.3, 7] }\n')
    (fx / "bad-key.toml").write_text('[[instances]]\ngenerator = "model1"\nbogus = 1\n')
    (fx / "notjson.json").write_text("{not json\n")
    (fx / "bad-schedule.json").write_text(json.dumps(
        {"schema": "kvopt.schedule", "schema_version": 1, "instance_sha256": "0" * 64}))
    (fx / "bad-instance.json").write_text(json.dumps(
        {"schema": "kvopt.instance", "schema_version": 1, "memory": 4,
         "requests": {"arrival": [0], "prompt": [3], "output": [2]}}))
    a2 = load_instance(A2)
    Schedule.from_starts(a2, [0, 0]).save(fx / "a2-schedule.json")
    # inputs a command must not overwrite (an output named as one of its inputs)
    (fx / "a2.json").write_bytes(Path(A2).read_bytes())
    (fx / "steps.csv").write_bytes(Path(STEPS).read_bytes())
    ex1 = load_instance(EX1)
    Schedule.from_starts(ex1, [0] * ex1.n).save(fx / "other-schedule.json")
    from kvopt.sweep import parse_spec, run_spec

    run_spec(parse_spec('seeds = "0:2"\n[[instances]]\ngenerator = "random-small"\n'
                        '[[policies]]\nname = "fcfs"'), str(fx / "sweep.sqlite"), workers=0)
    return fx


def _listing(folder: Path) -> list[str]:
    """Every path under ``folder`` with its content's digest (a rejected command must neither
    add a file nor change one: an output named as an input had overwritten the input)."""
    return sorted(str(p.relative_to(folder))
                  + (" " + hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "")
                  for p in folder.rglob("*"))


CASES = [(cmd, argv, needle) for cmd, cases in BATTERY.items() for argv, needle in cases]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("cmd,argv,needle", CASES,
                         ids=[f"{c}:{' '.join(a)}"[:80] for c, a, _ in CASES])
def test_bad_argument(cmd, argv, needle, as_json, fixtures, tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    before = _listing(fixtures)
    full = [*cmd.split(), *(a.format(out=out_dir, fx=fixtures) for a in argv)]
    if as_json:
        full.append("--json")
    code = main(full)
    cap = capsys.readouterr()
    assert code == 2, (full, cap.err)
    assert "Traceback" not in cap.err
    assert needle in cap.err, (full, cap.err)
    lines = cap.err.strip().splitlines()
    assert len(lines) <= 2 and sum("error:" in x for x in lines) == 1, cap.err  # one message
    if as_json:
        doc = json.loads(cap.out)  # exactly one JSON document
        assert doc["ok"] is False and needle in doc["message"]
    else:
        assert cap.out == ""
    assert _listing(out_dir) == [], "a rejected command wrote files"
    assert _listing(fixtures) == before


@pytest.mark.parametrize("argv,needle", [
    (["ratio", "amin", "--alpha", "0.25", "--s", "-1"], "--s"),
    (["solve", A2, "--solver", "highs", "--formulation", "cp"], "--formulation"),
    (["report", "search", "amax", "--out", "{out}/x.json"], "--interval"),
    (["sweep", "--policies", "mc-sf", "--out", "{out}/sw"], "--policies"),
])
def test_bad_argument_subprocess(argv, needle, tmp_path):
    """The real console: exit status 2 and stderr without a traceback."""
    full = [a.format(out=tmp_path) for a in argv]
    r = subprocess.run([sys.executable, "-m", "kvopt", *full], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""
    assert _listing(tmp_path) == []


def test_validate_json_error_object(fixtures):
    r = subprocess.run([sys.executable, "-m", "kvopt", "validate",
                        str(fixtures / "bad-instance.json"), "--json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 2
    doc = json.loads(r.stdout)
    assert doc == {"ok": False, "error": "instance", "field": "requests.output[0]",
                   "message": doc["message"]}
    assert "requests.output[0]" in doc["message"]


# --------------------------------------------------------------------------------------------
# The generated battery: every option with a ``type=`` of every sub-command, read from the
# parsers themselves, gets a negative, zero, huge, nan and non-numeric value. Each case runs
# the real command (a cheap valid command line, :data:`BASE`, with that one option changed) in
# a fresh child process with an address-space cap and a wall-clock limit, and must end in
# exit 2 with one message naming the option, or -- where the value is valid, listed in
# :data:`ACCEPTED` -- in a normal exit 0 or 1; never a traceback, a kill or a hang.
# --------------------------------------------------------------------------------------------

#: A cheap valid command line of each sub-command (``{out}``: an empty folder, ``{fx}``: the
#: fixtures). A sub-command with a typed option and no entry fails test_every_typed_option_...
BASE: dict[str, list[str]] = {
    "validate": [A2, "{fx}/a2-schedule.json"],
    "info": [A2],
    "solve": [A2, "--time-limit", "5"],
    "bound": [A2],
    "simulate": [A2, "--policy", "mcsf"],
    "ratio": ["amin", "--alpha", "0.25"],
    "report ratios": ["--out", "{out}/r", "--n", "10", "--max-u", "2", "--alphas", "0.5",
                      "--seeds", "0", "--no-convergence"],
    "report search": ["mcsf", "--out", "{out}/x.json", "--restarts", "1", "--steps", "1",
                      "--seeds", "0"],
    "report table1": ["--out", "{out}/t", "--seeds", "1", "--n", "20", "--workloads", "azure"],
    "report agreement": ["{out}/a.md", "--n", "1000"],
    "report sweep": ["--db", "{fx}/sweep.sqlite"],
    "report reproduce": ["--only", "000/R5", "--fast"],
    "queueing": ["trail", "--load", "0.5", "--sizes", "exp:1", "--C", "1"],
    "sweep": ["--generator", "random-small", "--seeds", "0:1", "--policies", "mcsf", "--out",
              "{out}/sw", "--workers", "0"],
    "steptime validate": [],
    "steptime fit": [STEPS, "--base", "h100-llama2-7b-tp1",
                     "--out", "{out}/f.json"],
    "steptime profile": ["--out", "{out}/p.csv"],
    "hardness knapsack": ["--weights", "2,3", "--values", "1,1", "--capacity", "3"],
    "hardness report": ["--out", "{out}/hr", "--seeds", "0:1", "--n", "3"],
    "plot": [A2, "{fx}/a2-schedule.json", "--out", "{out}/p.png"],
    "predictions price": ["--out", "{out}/p", "--errors", "0.5", "--policies", "mcsf",
                          "--instances", "1", "--n", "4", "--large", "0"],
    "predictions experiment": ["--out", "{out}/e", "--n", "10", "--azure-n", "10",
                               "--workloads", "heavy-tailed"],
}

#: The values every typed option is given.
KINDS = {"negative": "-1", "zero": "0", "huge": "1" + "0" * 30, "nan": "nan", "text": "x1"}

#: (sub-command, option, kind) whose value is valid: the command runs (exit 0 or 1). Each is
#: what the option's help documents: seed 0; a time limit or a memory budget as large as one
#: likes (1e30 s, 1e30 bytes); zero steps, workers (in-process), noise, prompt, arrivals,
#: larger instances, host memory or simulated jobs; --slot-seconds on an instance already in
#: slots (not needed); amin's prompt size s 0 or 1e30; TRAIL's C 1e30 (always preemptible).
ACCEPTED: set[tuple[str, str, str]] = {
    *((cmd, opt, "zero") for cmd, opt in [
        ("solve", "--seed"), ("bound", "--seed"), ("simulate", "--seed"),
        ("report ratios", "--seeds"), ("report search", "--rng-seed"),
        ("report search", "--seeds"), ("report search", "--steps"),
        ("report search", "--prompt"), ("report search", "--max-arrival"),
        ("report agreement", "--seed"), ("report reproduce", "--seed"),
        ("queueing", "--seed"), ("queueing", "--simulate"),
        ("steptime validate", "--seed"), ("steptime fit", "--seed"),
        ("predictions price", "--seed"), ("predictions price", "--errors"),
        ("predictions price", "--large"), ("predictions experiment", "--seed"),
        ("report table1", "--noise"), ("sweep", "--workers"), ("ratio", "--s"),
        ("simulate", "--host-memory")]),
    *((cmd, opt, "huge") for cmd, opt in [
        ("solve", "--time-limit"), ("solve", "--memory-budget"), ("solve", "--slot-seconds"),
        ("bound", "--slot-seconds"), ("bound", "--solve"),
        ("bound", "--improve"), ("bound", "--intervals"), ("bound", "--memory-budget"),
        *((cmd, opt) for cmd in ("report search", "sweep", "hardness knapsack", "hardness report",
                                 "predictions price")
          for opt in ("--solve-time-limit", "--time-limit")),  # the second: its old spelling
        ("sweep", "--task-time-limit"),
        ("queueing", "--C"), ("ratio", "--s")]),
}


def _typed_options(parser: argparse.ArgumentParser) -> list[tuple[str, str, int]]:
    """(sub-command, option, number of values) of every optional argument with a ``type=``."""
    out = []
    for path in _subcommands(parser):
        sub = _leaf_parser(parser, path)
        for action in sub._actions:
            if action.option_strings and action.type is not None:
                n = action.nargs if isinstance(action.nargs, int) else 1
                out.append((path, action.option_strings[0], n))
    return out


def _leaf_parser(parser: argparse.ArgumentParser, path: str) -> argparse.ArgumentParser:
    for name in path.split():
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _with_option(base: list[str], option: str, values: list[str]) -> list[str]:
    """``base`` with ``option`` set to ``values`` (replacing its values in ``base``)."""
    if option in base:
        i = base.index(option) + 1
        j = i
        while j < len(base) and not base[j].startswith("--"):
            j += 1
        return [*base[:i], *values, *base[j:]]
    return [*base, option, *values]


PARSER = build_parser()
GENERATED = [(cmd, opt, kind, n) for cmd, opt, n in _typed_options(PARSER) for kind in KINDS]


def test_every_typed_option_has_a_base_command():
    missing = sorted({cmd for cmd, *_ in GENERATED} - set(BASE))
    assert not missing, f"add a cheap valid command line to BASE for {missing}"


def test_every_numeric_default_has_a_type():
    """An option taking a number has a ``type=`` parser, so the generated battery sees it."""
    untyped = []
    for path in _subcommands(PARSER):
        for a in _leaf_parser(PARSER, path)._actions:
            numeric = isinstance(a.default, (int, float)) and not isinstance(a.default, bool)
            if a.option_strings and a.type is None and numeric and a.nargs != 0:
                untyped.append(f"{path} {a.option_strings[0]}")
    assert not untyped, untyped


def test_every_option_says_what_it_does():
    """``kvopt CMD --help`` explains every flag and argument (a bare ``--steps STEPS`` does not
    say what it counts, nor a ``--time-limit`` whether it is per solve or for the call)."""
    silent = [f"{path} {a.option_strings[0] if a.option_strings else a.dest}"
              for path in _subcommands(PARSER) for a in _leaf_parser(PARSER, path)._actions
              if a.help is None and not isinstance(a, argparse._HelpAction)]
    assert not silent, silent


def _run_case(argv: list[str], folder: str) -> None:  # pragma: no cover - runs in a child
    """Child process: cap the address space, send fds 1/2 to files, exit with main()'s code."""
    import os
    import resource

    from kvopt.core.limits import _vm_size

    cap = (_vm_size() or 0) + 3 * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    for fd, name in ((1, "stdout"), (2, "stderr")):
        f = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
    try:
        code = main(argv)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _child_context():
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tests.test_cli_battery"])  # every parser built once
    return ctx


def _parser_accepts(argv: list[str]) -> bool:
    """Whether argparse (the ``type=`` checks) accepts ``argv``; nothing runs."""
    from kvopt.cli.main import _ArgumentError

    try:
        PARSER.parse_args(argv)
    except (_ArgumentError, SystemExit):
        return False
    return True


#: Seconds a generated case may run.
CASE_LIMIT_S = 60.0


@pytest.mark.parametrize("cmd,option,kind,nargs", GENERATED,
                         ids=[f"{c}:{o}:{k}" for c, o, k, _ in GENERATED])
def test_generated_bad_value(cmd, option, kind, nargs, fixtures, tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    argv = [*cmd.split(), *(a.format(out=out_dir, fx=fixtures) for a in
                            _with_option(BASE[cmd], option, [KINDS[kind]] * nargs))]
    if not _parser_accepts(argv):  # refused by the option's type: in-process, nothing runs
        code = main(argv)
        err = capsys.readouterr().err
    else:  # the command runs: in a child with a memory cap and a time limit
        proc = _child_context().Process(target=_run_case, args=(argv, str(tmp_path)))
        proc.start()
        proc.join(CASE_LIMIT_S)
        if proc.is_alive():
            proc.kill()
            proc.join()
            pytest.fail(f"{' '.join(argv)} ran past {CASE_LIMIT_S:g} s")
        err = (tmp_path / "stderr").read_text()
        code = proc.exitcode
    assert "Traceback" not in err, (argv, err)
    assert code in (0, 1, 2), (argv, code, err)
    if (cmd, option, kind) in ACCEPTED:
        assert code in (0, 1), (argv, "listed in ACCEPTED but refused", err)
        return
    assert code == 2, (argv, f"exit {code}: refuse {KINDS[kind]} naming {option}, or list it "
                       "in ACCEPTED if it is a documented valid value", err)
    assert option in err, (argv, err)
    lines = err.strip().splitlines()
    assert sum("error:" in x for x in lines) == 1, err
