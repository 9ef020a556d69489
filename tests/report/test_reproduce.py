"""``kvopt report reproduce``: the fast report runs, every verdict is backed, the HTML is
self-contained and renders in headless Chromium at phone and laptop widths."""

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kvopt.cli.main import main
from kvopt.report.reproduce import SEEDS, VERDICTS, run
from kvopt.report.reproduce.core import Target, compare
from tests.conftest import once_per_run

ROOT = Path(__file__).resolve().parents[2]


def _build(out: Path) -> Path:
    assert main(["report", "reproduce", "--out", str(out), "--fast", "--json"]) == 0
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The fast report's folder, computed once per run (not once per xdist worker)."""
    return once_per_run(tmp_path_factory, "reproduction", _build)


def test_fast_report_files_and_verdicts(report, capsys):
    doc = json.loads((report / "results.json").read_text())
    assert [s["seed"] for s in doc["seeds"]] == list(SEEDS)
    targets = [t for s in doc["seeds"] for t in s["targets"]]
    assert sum(doc["counts"].values()) == len(targets) >= 40
    assert set(doc["counts"]) == set(VERDICTS)
    for t in targets:
        assert t["verdict"] in VERDICTS and t["command"] and t["paper"] and t["claim"]
        if t["verdict"] in ("differs", "not yet implemented"):
            assert t["reason"], t
    keys = [f"{t['seed']}/{t['key']}" for t in targets]
    assert len(keys) == len(set(keys))
    errata = [e for s in doc["seeds"] for e in s["errata"]]
    assert len(errata) >= 12 and all(e["evidence"] and e["corrected"] for e in errata)
    # the findings show up as computed, not typed in
    by = {f"{t['seed']}/{t['key']}": t for t in targets}
    assert by["003/Eq43"]["verdict"] == "erratum" and "8.224" in by["003/Eq43"]["kvopt"]
    assert by["000/Thm2"]["verdict"] == "erratum"
    assert by["004/C1"]["verdict"] == "reproduced"
    assert by["001/T1"]["verdict"] == "differs" and "20/20" in by["001/T1"]["kvopt"]
    md = (report / "reproduction.md").read_text()
    for k in keys:
        assert f"| {k.split('/')[1]} |" in md
    for s in doc["seeds"]:
        for f in s["figures"]:
            assert (report / f["file"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert f"]({f['file']})" in md
    assert "## Every `differs`, with its reason" in md and "## Errata" in md


def test_html_is_self_contained(report):
    page = (report / "reproduction.html").read_text()
    doc = json.loads((report / "results.json").read_text())
    figures = sum(len(s["figures"]) for s in doc["seeds"])
    srcs = re.findall(r'<img src="([^"]+)"', page)
    assert len(srcs) == figures >= 6
    assert all(s.startswith("data:image/png;base64,") for s in srcs)
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<script" not in page and 'name="viewport"' in page


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


PROBE = """<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="f" style="border:0;width:WIDTHpx;height:900px" srcdoc="SRCDOC"></iframe>
<script>window.addEventListener('load', function () {
  var d = document.getElementById('f').contentDocument, w = d.defaultView;
  var W = d.documentElement.clientWidth, over = [];
  var imgs = Array.prototype.slice.call(d.images);
  var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); });
  var walk = d.createTreeWalker(d.body, w.NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    var n = walk.currentNode;
    if (!n.textContent.trim()) continue;
    var r = d.createRange(); r.selectNodeContents(n);
    var rs = r.getClientRects();
    for (var k = 0; k < rs.length; k++) {
      if (rs[k].width > 0 && (rs[k].right > W + 0.5 || rs[k].left < -0.5)) {
        over.push(n.textContent.trim().slice(0, 60)); break; }
    }
  }
  imgs.forEach(function (i) { var b = i.getBoundingClientRect();
    if (b.right > W + 0.5) over.push('img ' + i.alt.slice(0, 40)); });
  var pre = document.createElement('pre'); pre.id = 'kvopt-check';
  pre.textContent = JSON.stringify({width: W, scroll: d.documentElement.scrollWidth,
    images: imgs.length, broken: broken.length, overflow: over});
  document.body.appendChild(pre);
});</script></body></html>"""


@pytest.mark.parametrize("width", [390, 1280])
def test_html_renders_in_headless_chromium(report, tmp_path, width):
    """Every figure loads and no text runs past a phone-width (390 px) or laptop viewport.
    The page is shown in an iframe of that width (headless Chromium's window is at least
    500 px wide); the probe reads the iframe's layout."""
    exe = _chromium()
    if exe is None:
        if os.environ.get("KVOPT_REQUIRE_CHROMIUM") == "1":
            pytest.fail("KVOPT_REQUIRE_CHROMIUM=1 but no chromium on PATH")
        pytest.skip("headless Chromium is not installed (Debian: apt-get install -y chromium); "
                    "CI installs it")
    page = (report / "reproduction.html").read_text()
    probe = tmp_path / "probe.html"
    probe.write_text(PROBE.replace("WIDTH", str(width)).replace(
        "SRCDOC", html.escape(page, quote=True)))
    profile = tmp_path / "profile"
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
           "--window-size=1400,1000", "--virtual-time-budget=15000", "--dump-dom",
           probe.as_uri()]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    m = re.search(r'<pre id="kvopt-check">(.*?)</pre>', res.stdout, re.S)
    assert m, f"no result from chromium (rc {res.returncode}): {res.stderr[-2000:]}"
    got = json.loads(html.unescape(m.group(1)))
    doc = json.loads((report / "results.json").read_text())
    assert got["images"] == sum(len(s["figures"]) for s in doc["seeds"])
    assert got["broken"] == 0, got
    assert got["width"] == width
    assert got["scroll"] <= width and got["overflow"] == [], got


def test_one_target_and_bad_input(capsys, tmp_path):
    assert main(["report", "reproduce", "--only", "000/R6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {t["key"] for t in doc["targets"]} == {"R6a", "R6b", "R9a", "R9b"}
    assert doc["files"] == []
    assert main(["report", "reproduce", "--only", "009/X"]) == 2
    assert "--only" in capsys.readouterr().err
    assert main(["report", "reproduce", "--only", "000/nope"]) == 2
    assert "--only" in capsys.readouterr().err
    assert main(["report", "reproduce", "--fast"]) == 2
    assert "--out" in capsys.readouterr().err
    afile = tmp_path / "f"
    afile.write_text("x")
    assert main(["report", "reproduce", "--fast", "--out", str(afile / "o")]) == 2
    assert not (afile / "o").exists()


def test_every_target_command_names_a_real_key():
    """``--only SEED/KEY`` commands point at targets that exist (aliases included)."""
    sections = run(only="003/Eq43")
    assert [t.key for t in sections[0].targets] == ["Eq43", "Eq51"]
    with pytest.raises(ValueError):
        Target("000", "x", "c", "p", "k", "t", "maybe", "cmd")
    with pytest.raises(ValueError, match="reason"):
        Target("000", "x", "c", "p", "k", "t", "differs", "cmd")
    assert compare(1.0, 1.05, 0.1) == "reproduced" and compare(1.0, 1.2, 0.1) == "differs"


def test_committed_copy_is_complete():
    """reports/reproduction/ is a generated copy: its results.json parses, its figures exist
    and its counts match its targets."""
    base = ROOT / "reports" / "reproduction"
    doc = json.loads((base / "results.json").read_text())
    assert doc["fast"] is False
    targets = [t for s in doc["seeds"] for t in s["targets"]]
    assert sum(doc["counts"].values()) == len(targets)
    for s in doc["seeds"]:
        for f in s["figures"]:
            assert (base / f["file"]).is_file()
