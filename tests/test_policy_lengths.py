"""What a user sees of the output lengths a policy used (issue 25): SSJF, SPRPT, SPJF and TIE
silently fell back on the true lengths without predictions, and TRAIL ignored ``--noise``;
the README's ``--noise uniform:0.5`` MC-SF example livelocked on the Azure trace."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kvopt.cli.main import main
from kvopt.sim import POLICIES, simulate
from kvopt.sim.predicted_lengths import LENGTH_SOURCES, NOISE_FIELDS

A2 = "instances/tiny/a2-example.json"
ROOT = Path(__file__).resolve().parents[1]


def test_every_policy_declares_its_length_source():
    assert set(POLICIES) <= set(LENGTH_SOURCES), sorted(set(POLICIES) - set(LENGTH_SOURCES))


@pytest.mark.parametrize("policy", ["ssjf", "sprpt", "spjf", "tie"])
def test_prediction_policies_say_they_used_the_true_lengths(policy, capsys):
    assert main(["simulate", A2, "--policy", policy]) == 0
    assert "output lengths: the true output lengths (an oracle)" in capsys.readouterr().out
    assert main(["simulate", A2, "--policy", policy, "--noise", "uniform:0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lengths"] == "uniform(eps=0.5) point predictions"


def test_trail_refuses_noise_it_would_ignore_unless_refine_is_off(capsys):
    assert main(["simulate", A2, "--policy", "trail", "--noise", "uniform:0.5"]) == 2
    assert "invalid --noise: trail does not read uniform" in capsys.readouterr().err
    assert main(["simulate", A2, "--policy", "trail", "--noise", "uniform:0.5",
                 "--option", "refine=false"]) == 0
    assert "uniform(eps=0.5) point predictions" in capsys.readouterr().out


#: The noise models of ``simulate --noise`` (the others are Python-only).
CLI_NOISE = {"uniform": "0.5", "interval": "0.5", "buckets": "100"}


@pytest.mark.parametrize("policy", sorted(set(LENGTH_SOURCES) - {"replay"}))
@pytest.mark.parametrize("kind", sorted(CLI_NOISE))
def test_noise_applies_or_is_refused_for_every_policy(policy, kind, capsys):
    """A noise model is either read by the policy (its output says so) or refused naming
    --noise; never drawn and then silently ignored."""
    assert set(CLI_NOISE) <= set(NOISE_FIELDS)
    code = main(["simulate", A2, "--policy", policy, "--noise", f"{kind}:{CLI_NOISE[kind]}",
                 "--json"])
    cap = capsys.readouterr()
    if code == 2:
        assert "invalid --noise" in cap.err and "Traceback" not in cap.err, cap.err
        return
    doc = json.loads(cap.out)
    assert doc.get("error") == "livelock" or doc["lengths"].startswith(f"{kind}("), doc


def test_simulate_result_names_the_lengths_in_python_too():
    from kvopt import Instance

    inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    assert simulate(inst, "ssjf").stats["lengths"] == "the true output lengths (an oracle)"
    assert simulate(inst, "fcfs").stats["lengths"] == "no output lengths"


def test_livelock_message_names_the_option_that_avoids_it():
    r = subprocess.run([sys.executable, "-m", "kvopt", "simulate",
                        "instances/traces/azure_conv_2023.csv", "--policy", "mcsf", "--noise",
                        "uniform:0.5", "--no-progress"], capture_output=True, text=True,
                       cwd=ROOT, timeout=600, check=False)
    assert r.returncode == 1 and "livelock" in r.stdout
    assert "--option overflow=evict-smallest" in r.stdout


def test_the_readme_noise_example_runs():
    text = (ROOT / "README.md").read_text()
    cmd = next(m for m in re.findall(r"^kvopt simulate .*$", text, re.M) if "--noise" in m)
    argv = shlex.split(cmd)[1:]
    r = subprocess.run([sys.executable, "-m", "kvopt", *argv, "--no-progress"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "output lengths: uniform(eps=0.5) point predictions" in r.stdout
