"""Execute every notebook (jupytext percent scripts) with a real kernel, in fast mode."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path, monkeypatch):
    jupytext = pytest.importorskip("jupytext")
    from nbclient import NotebookClient

    monkeypatch.setenv("KVOPT_FAST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "no output at all"
