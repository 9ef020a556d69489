"""Sweep spec files: parsing, errors naming the key, expansion into stable task keys."""

from pathlib import Path

import pytest

from kvopt.sweep import SpecError, check_spec, expand_tasks, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]
BASE = '[[instances]]\ngenerator = "random-small"\n'


def test_shipped_specs_parse_and_check():
    for path in sorted((ROOT / "instances" / "sweeps").glob("*.toml")):
        spec = load_spec(path)
        check_spec(spec)
        assert expand_tasks(spec)


def test_smoke_spec_contents():
    spec = load_spec(ROOT / "instances" / "sweeps" / "smoke.toml")
    tasks = expand_tasks(spec)
    entries = {t.source.entry for t in tasks}
    assert entries == {"small", "model1", "tiny"}
    # the solver runs only where it is restricted to; every key is unique
    assert not [t for t in tasks if t.source.entry == "model1" and t.evaluator.kind == "solver"]
    assert len({t.key for t in tasks}) == len(tasks)


@pytest.mark.parametrize("text,key", [
    ('seeds = "x"\n' + BASE + '[[policies]]\nname = "mcsf"', "seeds"),
    ('seeds = []\n' + BASE + '[[policies]]\nname = "mcsf"', "seeds"),
    ('seeds = [1, 1]\n' + BASE + '[[policies]]\nname = "mcsf"', "seeds"),
    ('bogus = 1\n' + BASE + '[[policies]]\nname = "mcsf"', "bogus"),
    ('[[policies]]\nname = "mcsf"', "instances"),
    (BASE, "policies"),
    (BASE + '[[policies]]\nparams = {}', "policies[0].name"),
    (BASE + '[[policies]]\nname = "mcsf"\ncolour = 1', "policies[0].colour"),
    (BASE + '[[solvers]]\nname = "highs"', "solvers[0].time_limit"),
    (BASE + '[[solvers]]\nname = "highs"\ntime_limit = -1', "solvers[0].time_limit"),
    (BASE + '[[solvers]]\nname = "highs"\ntime_limit = 1\ninstances = ["x"]',
     "solvers[0].instances"),
    ('[[instances]]\ngenerator = "nope"\n[[policies]]\nname = "mcsf"',
     "instances[0].generator"),
    ('[[instances]]\nfiles = ["nothing-*.json"]\n[[policies]]\nname = "mcsf"',
     "instances[0].files[0]"),
    ('[[instances]]\ngenerator = "model1"\nfiles = ["a"]\n[[policies]]\nname = "mcsf"',
     "instances[0]"),
    ('[[instances]]\ngenerator = "model1"\nparams = { n = [] }\n[[policies]]\nname = "mcsf"',
     "instances[0].params.n"),
    ('metrics = ["colour"]\n' + BASE + '[[policies]]\nname = "mcsf"', "metrics[0]"),
    (BASE + '[[policies]]\nname = "mcsf"\n[[policies]]\nname = "mcsf"', "policies"),
    ("= broken", "(toml)"),
])
def test_bad_spec_names_the_key(text, key):
    with pytest.raises(SpecError) as err:
        parse_spec(text, base=ROOT)
    assert err.value.field == key, str(err.value)
    assert repr(key) in str(err.value)


@pytest.mark.parametrize("text,key", [
    (BASE + '[[policies]]\nname = "mc-sf"', "policies[0].name"),
    (BASE + '[[policies]]\nname = "mcsf"\nparams = { bogus = 1 }', "policies[0].params.bogus"),
    (BASE + '[[policies]]\nname = "amax"', "policies[0].name"),
    (BASE + '[[policies]]\nname = "mcsf"\nstep_time = "warp"', "policies[0].step_time"),
    (BASE + '[[solvers]]\nname = "gurobi"\ntime_limit = 1', "solvers[0].name"),
    (BASE + '[[solvers]]\nname = "highs"\ntime_limit = 1\nformulation = "x"',
     "solvers[0].formulation"),
    ('[[instances]]\ngenerator = "model1"\nparams = { bogus = 3 }\n[[policies]]\nname = "mcsf"',
     "instances[0].params.bogus"),
    ('[[instances]]\nfiles = ["instances/traces/azure_code_2023.csv"]\n'
     '[[solvers]]\nname = "highs"\ntime_limit = 1', "solvers[0].instances"),
])
def test_check_spec_names_the_key(text, key):
    spec = parse_spec(text, base=ROOT)
    with pytest.raises(SpecError) as err:
        check_spec(spec)
    assert err.value.field.startswith(key), str(err.value)


def test_task_keys_are_stable_and_order_free():
    a = parse_spec('seeds = "0:3"\n' + BASE + '[[policies]]\nname = "mcsf"\n'
                   '[[policies]]\nname = "alpha-protection"\nparams = { alpha = [0.2, 0.3] }')
    b = parse_spec('name = "other"\nseeds = [2, 0, 1]\n' + BASE +
                   '[[policies]]\nname = "alpha-protection"\nparams = { alpha = [0.3, 0.2] }\n'
                   '[[policies]]\nname = "mcsf"')
    ka = {t.key for t in expand_tasks(a)}
    assert len(ka) == 3 * 3
    assert ka == {t.key for t in expand_tasks(b)}
    assert [t.key for t in expand_tasks(a)] == [t.key for t in expand_tasks(a)]
    c = parse_spec('seeds = "0:3"\n' + BASE + '[[policies]]\nname = "mcsf"\nstep_time = "x"')
    assert not {t.key for t in expand_tasks(c)} & ka  # another evaluator, other keys


def test_grid_expansion_and_file_sources():
    spec = parse_spec('seeds = "0:2"\n[[instances]]\nname = "m"\ngenerator = "model1"\n'
                      'params = { n = [5, 6], memory = 30 }\n'
                      '[[instances]]\nfiles = ["instances/tiny/a2-*.json"]\n'
                      '[[policies]]\nname = "mcsf"\n'
                      '[[solvers]]\nname = "highs"\ntime_limit = 5\ninstances = ["files1"]',
                      base=ROOT)
    labels = [t.label for t in expand_tasks(spec)]
    assert labels == ["m[n=5,memory=30]/mcsf/seed0", "m[n=5,memory=30]/mcsf/seed1",
                      "m[n=6,memory=30]/mcsf/seed0", "m[n=6,memory=30]/mcsf/seed1",
                      "files1:a2-example.json/mcsf/seed0",
                      "files1:a2-example.json/opt:highs/seed0"]
