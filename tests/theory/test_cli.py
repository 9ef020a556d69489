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


def test_ratio_amin_two_point_with_prompt(capsys):
    """Issue 23: ``--s S`` > 0 prints Lemma 2's two-point sup, not Theorem 6's (3 - alpha)/2."""
    code, out, _ = run(capsys, "ratio", "amin", "--l", "1", "--u", "4", "--s", "3", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["two_point"] == pytest.approx(1.4702, abs=5e-5)
    assert doc["theorem6_s0"] == 1.375 and "s = 0" in doc["two_point_kind"]
    code, out, _ = run(capsys, "ratio", "amin", "--alpha", "0.125", "--l", "5", "--s", "10",
                       "--json")
    assert json.loads(out)["two_point"] == pytest.approx(1.6246, abs=5e-5)
    code, out, _ = run(capsys, "ratio", "amin", "--alpha", "0.25", "--json")
    doc = json.loads(out)
    assert doc["two_point"] == 1.375 and doc["theorem6_s0"] is None


def test_ratio_negative_prompt_with_alpha_only(capsys):
    """Issue 23: ``--alpha 0.25 --s -1`` is a usage error naming ``--s``, not a traceback."""
    code, out, err = run(capsys, "ratio", "amin", "--alpha", "0.25", "--s", "-1")
    assert code == 2 and "--s" in err and "Traceback" not in err and out == ""
