"""The queueing reports (Fig. 8, Lemma 1 errata, formula-vs-simulation agreement)."""

import numpy as np
import pytest

from kvopt.cli.main import main
from kvopt.queueing import SoapModel, parse_predictions, parse_sizes
from kvopt.report.agreement import agreement_markdown, agreement_rows


def test_agreement_rows_small():
    rows = list(agreement_rows(4000, 0, loads=(0.5,), dists=("exp:1",),
                               cases=(("srpt", "perfect", None),)))
    assert len(rows) == 1 and np.isfinite(rows[0][-1])
    assert rows[0][5] == pytest.approx(SoapModel(parse_sizes("exp:1"), parse_predictions(
        "perfect"), 0.5).mean_response("srpt"))
    text = agreement_markdown(rows, n=4000, seed=0, wall_s=0.0, out="x.md")
    assert "| exp:1 | srpt | perfect |  | 0.5 |" in text


def test_fig8_png_has_no_software_tag(tmp_path):
    out = tmp_path / "f.png"
    assert main(["queueing", "--plot-fig8", str(out), "--simulate", "2000", "--lams", "0.5",
                 "--Cs", "0.5"]) == 0
    data = out.read_bytes()
    assert data[:4] == b"\x89PNG" and b"Software" not in data and b"atplotlib" not in data
