"""``kvopt ratio``."""

import json

import pytest

from kvopt.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ratio_amin_u(capsys):
    code, out, _ = run(capsys, "ratio", "amin", "--u", "1000", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["ratio"] == pytest.approx(2.923922, abs=1e-6)
    assert doc["log_bound"] == pytest.approx(7.485471, abs=1e-6)


def test_ratio_amax_alpha(capsys):
    code, out, _ = run(capsys, "ratio", "amax", "--alpha", "0.25", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["ratio"] == doc["upper"] == 10.0
    assert doc["lower_claimed"] == 6.0
    assert doc["construction"] == pytest.approx(4.5298, abs=1e-4)


@pytest.mark.parametrize("policy", ["amin", "amax", "arandom", "a-l", "mcsf", "hsf"])
def test_ratio_text(capsys, policy):
    code, out, _ = run(capsys, "ratio", policy, "--alpha", "0.5")
    assert code == 0 and "ratio =" in out


def test_ratio_bad_input(capsys):
    assert run(capsys, "ratio", "amin", "--alpha", "0")[0] == 2
    assert run(capsys, "ratio", "amin", "--u", "0")[0] == 2
    assert run(capsys, "ratio", "nope")[0] == 2
    assert run(capsys, "ratio", "amin", "--alpha", "0.5", "--u", "3")[0] == 2
