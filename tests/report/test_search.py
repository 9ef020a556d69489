"""Counterexample search and the shipped instances under instances/adversarial/."""

import json
from pathlib import Path

import numpy as np
import pytest

from kvopt.cli.main import main
from kvopt.core.instance import load_instance
from kvopt.report.measure import policy_tel
from kvopt.report.search import SearchSpace, search
from tests.bruteforce import brute_force_opt

# (the search's files; the goodput constructions there are checked in tests/sim/test_gmax.py)
SHIPPED = [p for p in sorted(Path("instances/adversarial").glob("*.json"))
           if "opt_total_latency" in json.loads(p.read_text()).get("expected", {})]


def test_search_is_deterministic_and_verified():
    space = SearchSpace(n=(2, 4), memory=(4, 6), prompt=(0, 2), output=(1, 4))
    r1 = search("mcsf", space=space, restarts=3, steps=8, rng_seed=1)
    r2 = search("mcsf", space=space, restarts=3, steps=8, rng_seed=1)
    assert r1.instance.sha256() == r2.instance.sha256() and r1.ratio == r2.ratio
    inst = r1.instance
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    assert r1.opt == opt
    assert r1.tel == policy_tel(inst, "mcsf")
    assert r1.ratio >= max(r1.history) - 1e-12 >= 1.0
    assert space.n[0] <= inst.n <= space.n[1] and space.memory[0] <= inst.memory <= 6


def test_search_respects_interval_and_same_prompt():
    space = SearchSpace(n=(2, 3), memory=(5, 7), prompt=(0, 1), output=(1, 4),
                        same_prompt=True, interval=(1, 4))
    r = search("amin", space=space, restarts=2, steps=5, seeds=(0, 1), rng_seed=0)
    inst = r.instance
    assert len(set(inst.prompt.tolist())) == 1
    assert inst.pred_lower.tolist() == [1] * inst.n and (inst.output <= 4).all()


def test_cli_search(tmp_path, capsys):
    out = tmp_path / "w.json"
    code = main(["report", "search", "mcsf", "--out", str(out), "--restarts", "2", "--steps",
                 "4", "--n", "2", "3", "--memory", "4", "5", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and out.exists() and doc["ratio"] >= 1.0
    assert load_instance(out).expected["opt_total_latency"] == doc["opt"]
    assert main(["report", "search", "mcsf", "--out", str(out), "--n", "3", "2"]) == 2


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_adversarial_instances(path):
    inst = load_instance(path)
    exp = inst.expected
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    assert opt == exp["opt_total_latency"]
    policy = next(k[: -len("_total_latency_mean")] for k in exp if k.endswith("_mean"))
    seeds = exp.get("policy_seeds") or [None]
    name = {"amin_redraw": "amin/redraw"}.get(policy, policy)
    tel = np.mean([policy_tel(inst, name, seed=s) for s in seeds])
    assert tel == pytest.approx(exp[f"{policy}_total_latency_mean"])
    assert tel / opt == pytest.approx(exp["ratio_to_opt"])
