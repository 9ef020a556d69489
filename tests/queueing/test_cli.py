import argparse
import json

import pytest

from kvopt.cli.queueing_cmds import add_parser, run
from kvopt.queueing import SoapModel, parse_predictions, parse_sizes

assert callable(run)


def _run(argv, capsys):
    parser = argparse.ArgumentParser(prog="kvopt")
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    args = parser.parse_args(["queueing", *argv])
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_mean_response(capsys):
    code, out, _ = _run(["trail", "--C", "0.8", "--load", "0.9", "--sizes", "exp:1",
                         "--predictions", "exp", "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    ref = SoapModel(parse_sizes("exp:1"), parse_predictions("exp"), 0.9).mean_response("trail", 0.8)
    assert doc["mean_response"] == pytest.approx(ref, rel=1e-12)
    assert doc["C"] == 0.8 and doc["policy"] == "trail"


def test_load_is_rho_not_lambda(capsys):
    code, out, _ = _run(["fcfs", "--load", "0.5", "--sizes", "exp:2", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0
    assert doc["lam"] == pytest.approx(0.25)
    assert doc["mean_response"] == pytest.approx(2 / (1 - 0.5))  # M/M/1 with mean 2


def test_simulate_prints_both(capsys):
    code, out, _ = _run(["srpt", "--load", "0.5", "--sizes", "uniform:0,2", "--simulate", "20000",
                         "--seed", "3", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and "simulation" in doc
    assert abs(doc["simulation"]["mean_response"] - doc["mean_response"]) < 5 * doc[
        "simulation"]["se"]
    code, out, _ = _run(["srpt", "--load", "0.5", "--sizes", "uniform:0,2", "--simulate", "5000"],
                        capsys)
    assert "formula" in out and "simulated" in out


def test_given(capsys):
    code, out, _ = _run(["trail", "--C", "0.5", "--load", "0.5", "--sizes", "exp:1",
                         "--predictions", "exp", "--given", "0.3,1", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0
    m = SoapModel(parse_sizes("exp:1"), parse_predictions("exp"), 0.5)
    assert doc["given"]["mean_response"] == pytest.approx(
        float(m.response_given(0.3, 1.0, "trail", 0.5)[0]))


@pytest.mark.parametrize("argv,field", [
    (["srpt", "--load", "1.2", "--sizes", "exp:1"], "--load"),
    (["srpt", "--sizes", "exp:1"], "--load"),
    (["srpt", "--load", "0.5", "--sizes", "exp:zero"], "--sizes"),
    (["srpt", "--load", "0.5"], "--sizes"),
    (["trail", "--load", "0.5", "--sizes", "exp:1"], "--C"),
    (["trail", "--load", "0.5", "--sizes", "exp:1", "--C", "-1"], "--C"),
    (["lifo", "--load", "0.5", "--sizes", "exp:1"], "POLICY"),
    (["srpt", "--load", "0.5", "--sizes", "exp:1", "--predictions", "gauss"], "--predictions"),
    (["srpt", "--load", "0.5", "--sizes", "exp:1", "--simulate", "10"], "--simulate"),
    ([], "POLICY"),
])
def test_bad_input_exit_2(argv, field, capsys):
    from kvopt.cli.main import main

    code = main(["queueing", *argv])
    out, err = capsys.readouterr()
    assert code == 2
    assert field in err and out == ""


def test_plot_fig8(tmp_path, capsys):
    out_png = tmp_path / "fig8.png"
    code, out, _ = _run(["--plot-fig8", str(out_png), "--simulate", "2000", "--lams", "0.5",
                         "--Cs", "0.5,1"], capsys)
    assert code == 0 and "wrote" in out and out_png.stat().st_size > 1000
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["fig8.png"]  # no temp files left


def test_plot_fig8_in_another_format(tmp_path, capsys):
    out_svg = tmp_path / "fig8.svg"
    code, _, _ = _run(["--plot-fig8", str(out_svg), "--simulate", "2000", "--lams", "0.5",
                       "--Cs", "1"], capsys)
    assert code == 0 and b"<svg" in out_svg.read_bytes()[:1000]


def test_errata_table(tmp_path, capsys):
    md = tmp_path / "errata.md"
    code, out, _ = _run(["--errata", str(md), "--simulate", "0"], capsys)
    assert code == 0 and "printed" in md.read_text() and "corrected" in out


def test_per_size(capsys):
    code, out, _ = _run(["srpt", "--load", "0.5", "--sizes", "exp:1", "--per-size", "0.5,2",
                         "--json"], capsys)
    doc = json.loads(out)
    assert code == 0
    from kvopt.queueing import classical_given_size

    ref = classical_given_size("srpt", 0.5, parse_sizes("exp:1"), [0.5, 2.0])
    assert [d["mean_response"] for d in doc["per_size"]] == pytest.approx(list(ref), rel=1e-7)
    from kvopt.cli.main import main

    code = main(["queueing", "srpt", "--load", "0.5", "--sizes", "exp:1", "--per-size", "a"])
    assert code == 2 and "--per-size" in capsys.readouterr().err
