"""Progress helpers: plain lines (never a carriage return) when stderr is not a terminal."""

import io
import time

from kvopt.core.progress import Heartbeat, Progress


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_plain_lines_off_a_terminal():
    out = io.StringIO()
    with Progress(5, "work", stream=out, every=0, unit="req") as bar:
        for _ in range(5):
            bar.update()
    text = out.getvalue()
    assert "\r" not in text
    assert text.splitlines()[-1].startswith("work: 5/5 req (100%)")


def test_progress_disabled_prints_nothing():
    out = io.StringIO()
    with Progress(5, "work", stream=out, enabled=False, every=0) as bar:
        bar.update(5)
    assert out.getvalue() == ""


def test_heartbeat_plain_lines_off_a_terminal_and_rewritten_line_on_one():
    out = io.StringIO()
    with Heartbeat("solve", 10, stream=out, every=0.05):
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert lines and "\r" not in out.getvalue() and all(x.startswith("solve: ") for x in lines)
    tty = FakeTTY()
    with Heartbeat("solve", 10, stream=tty, tick=0.05):
        time.sleep(0.3)
    assert tty.getvalue().startswith("\rsolve: ") and tty.getvalue().endswith("\n")


def test_cli_bound_progress_goes_to_stderr_without_carriage_returns(capsys):
    from kvopt.cli.main import main

    assert main(["bound", "instances/tiny/a2-example.json"]) == 0
    cap = capsys.readouterr()
    assert "bound: combinatorial bounds" in cap.err and "\r" not in cap.err
    assert "bound:" not in cap.out
    assert main(["bound", "instances/tiny/a2-example.json", "--json"]) == 0
    assert capsys.readouterr().err == ""
