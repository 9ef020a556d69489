import json
import subprocess
import sys

from kvopt.cli.main import main


def test_validate_instance_ok(capsys):
    assert main(["validate", "instances/tiny/a2-example.json", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["n"] == 2


def test_validate_rejects_broken_instance_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "kvopt.instance", "schema_version": 1, "memory": 4,
                               "requests": {"arrival": [0], "prompt": [3], "output": [2]}}))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "requests.output[0]" in err and "impossible request" in err


def test_validate_schedule_exit_codes(tmp_path, capsys):
    from kvopt import Schedule, load_instance

    inst = load_instance("instances/tiny/a2-example.json")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    Schedule.from_starts(inst, [0, 0]).save(good)
    Schedule.from_starts(inst, [1, 0]).save(bad)
    assert main(["validate", "instances/tiny/a2-example.json", str(good), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["objective"] == 12.0
    assert main(["validate", "instances/tiny/a2-example.json", str(bad), "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] is False and rep["violations"][0]["kind"] == "memory"


def test_info_on_trace(capsys):
    assert main(["info", "instances/traces/azure_code_2023.csv", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["n"] == 8819 and st["time_unit"] == "second" and st["memory"] == 16492


def test_usage_error_exits_2():
    assert main(["no-such-command"]) == 2


def test_console_script_runs():
    r = subprocess.run([sys.executable, "-m", "kvopt", "info", "instances/tiny/a2-example.json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert "n = 2" in r.stdout
