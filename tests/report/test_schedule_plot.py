"""The schedule picture: API figure and ``kvopt plot``, checked on the image itself."""

import json

import matplotlib.image as mpimg
import numpy as np
import pytest

import kvopt
from kvopt.cli.main import main
from kvopt.report.schedule_plot import plot_schedule, save_schedule_plot
from kvopt.sim import simulate

WORST = "instances/adversarial/worst-amin.json"


def _pixels(path):
    img = mpimg.imread(path)  # float RGBA in [0, 1]
    return img[..., :3]


def test_api_figure_shows_runs_evictions_and_memory():
    inst = kvopt.load_instance(WORST)
    res = simulate(inst, "amin")
    assert res.schedule.num_evictions > 0
    fig = plot_schedule(inst, res.schedule)
    gantt, mem = fig.axes
    # one line segment per run, split into completed (blue) and evicted (red) collections
    segs = [len(c.get_segments()) for c in gantt.collections if hasattr(c, "get_segments")]
    assert sorted(segs) == sorted([int(res.schedule.run_completed.sum()),
                                   res.schedule.num_evictions])
    # the memory axis carries the profile and the capacity line at M
    ys = [line.get_ydata() for line in mem.get_lines()]
    assert any(np.all(np.asarray(y) == inst.memory) for y in ys)
    assert max(float(np.max(y)) for y in ys) == inst.memory  # this schedule fills M
    assert "feasible" in fig._suptitle.get_text()


def test_png_dimensions_and_not_blank(tmp_path):
    inst = kvopt.load_instance(WORST)
    out = tmp_path / "s.png"
    save_schedule_plot(inst, simulate(inst, "amin").schedule, out, dpi=80)
    px = _pixels(out)
    assert px.shape[:2] == (440, 720)  # 5.5 x 9 inches at 80 dpi
    assert (px < 0.9).mean() > 0.01          # ink on the page
    red = (px[..., 0] > 0.7) & (px[..., 1] < 0.35) & (px[..., 2] < 0.35)
    assert red.sum() > 50                    # evicted runs are drawn in red
    assert [p.name for p in tmp_path.iterdir()] == ["s.png"]


def test_cli_plot_on_trace_schedule(tmp_path, capsys):
    sched = tmp_path / "s.json"
    inst_path = tmp_path / "trace.json"
    kvopt.load_instance("instances/traces/azure_code_2023.csv").take(range(200)).save(inst_path)
    assert main(["simulate", str(inst_path), "--policy", "fcfs", "--step-time",
                 "a100-llama2-7b-tp1", "--schedule-out", str(sched)]) == 0
    out = tmp_path / "s.png"
    assert main(["plot", str(inst_path), str(sched), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    px = _pixels(out)
    assert px.shape[:2] == (550, 900) and (px < 0.9).mean() > 0.01


def test_plot_rejects_schedule_of_another_instance(tmp_path, capsys):
    inst = kvopt.load_instance("instances/tiny/a2-example.json")
    other = tmp_path / "o.json"
    kvopt.Schedule.from_starts(inst, [0, 0]).save(other)
    with pytest.raises(kvopt.KvoptError, match="another instance"):
        plot_schedule(kvopt.load_instance(WORST), kvopt.load_schedule(other))
    assert main(["plot", WORST, str(other), "--out", str(tmp_path / "x.png"), "--json"]) == 2
    assert "SCHEDULE" in json.loads(capsys.readouterr().out)["message"]
    assert not (tmp_path / "x.png").exists()
