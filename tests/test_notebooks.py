"""Execute every notebook (jupytext percent scripts) with a real kernel, in fast mode, from a
working directory outside the repository, with the backend Jupyter chooses (inline), and
check that each one displays the figures it draws."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))

#: image/png outputs each notebook must display (one per figure it draws).
EXPECTED_IMAGES = {
    "00_quickstart": 2,   # memory profile + lengths; trace arrivals
    "01_mip": 1,          # MC-SF / OPT ratios
    "02_simulate": 2,     # step-time model; MC-SF memory over time
    "03_ratios": 1,       # lambda_max residuals against the paper's fit
    "04_queueing": 1,     # E[T] vs C, printed and corrected Lemma 1
    # one notebook per seed paper (issue 23)
    "11_paper_jaillet_online_scheduling_kv_cache": 2,   # A.2 schedule; MC-SF/OPT brackets
    "12_paper_chen_adaptively_robust_inference": 2,     # lambda_max fit; two-point readings
    "13_paper_trail_dont_stop_me_now": 2,               # Lemma 1; LLM-simulator latencies
    "14_paper_tie_uncertainty_aware_lengths": 1,        # LLM-simulator per-token latencies
    "15_paper_jitserve_slo_goodput": 1,                 # counterexample and Eq. 43
}


def test_every_notebook_has_an_expected_image_count():
    assert sorted(EXPECTED_IMAGES) == [p.stem for p in NOTEBOOKS]


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path, monkeypatch, tmp_path):
    import jupytext
    from nbclient import NotebookClient

    monkeypatch.setenv("KVOPT_FAST", "1")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # Jupyter's own (inline) backend
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    assert outputs, "no output at all"
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == EXPECTED_IMAGES[path.stem], (
        f"{path.stem} displayed {len(images)} figures, expected {EXPECTED_IMAGES[path.stem]}")
    assert list(tmp_path.iterdir()) == [], "a notebook wrote files into the working directory"
