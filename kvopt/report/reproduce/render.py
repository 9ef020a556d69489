"""Render the reproduction report: ``reproduction.md``, ``reproduction.html``, ``results.json``.

The HTML page is self-contained (figures as ``data:`` URIs, inline CSS, no script, no
network) and laid out as cards that wrap at any width, so it reads on a 390-px phone and on
a laptop; the markdown has the same content with the figures as separate PNG files.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence
from typing import Any

from kvopt.report.reproduce.core import VERDICTS, SeedSection, Target
from kvopt.report.writers import table

__all__ = ["counts", "render_html", "render_json", "render_markdown"]

TITLE = "kvopt: reproduction of the five seed papers"


def counts(sections: Sequence[SeedSection]) -> dict[str, int]:
    """Targets per verdict over all sections.

    Examples
    --------
    >>> from kvopt.report.reproduce.core import SeedSection, Target
    >>> ok = Target("001", "A2", "TEL of App. A.2", "12", "12", "exact", "reproduced", "kvopt ...")
    >>> off = Target("000", "R2", "a ratio", "1.52", "1.48", "0.01", "differs", "kvopt ...",
    ...              reason="another setting")
    >>> counts([SeedSection("001", "Online scheduling", "arXiv 2502.07115", "MC-SF.", [ok]),
    ...         SeedSection("000", "Robust inference", "arXiv 2508.14544", "Amin.", [off])])
    {'reproduced': 1, 'differs': 1, 'erratum': 0, 'not yet implemented': 0}
    """
    return {v: sum(s.counts()[v] for s in sections) for v in VERDICTS}


def _differs(sections: Sequence[SeedSection]) -> list[Target]:
    return [t for s in sections for t in s.targets if t.verdict == "differs"]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(sections: Sequence[SeedSection], *, fast: bool, command: str) -> str:
    """The report as GitHub markdown (figures referenced as PNG files beside it).

    Examples
    --------
    >>> from kvopt.report.reproduce.core import SeedSection, Target
    >>> t = Target("001", "A2", "two big peaks run together", "TEL 12", "12", "exact",
    ...            "reproduced", "kvopt simulate instances/tiny/a2-example.json --policy mcsf")
    >>> sec = SeedSection("001", "Online scheduling", "arXiv 2502.07115", "MC-SF.", [t])
    >>> md = render_markdown([sec], fast=True, command="kvopt report reproduce --fast")
    >>> print(md.splitlines()[6])   # the verdict counts of seed 001
    | 001 | Online scheduling | 1 | 0 | 0 | 0 |
    >>> print(md.splitlines()[15])   # its target
    | A2 | two big peaks run together | TEL 12 | 12 | exact | **reproduced** |
    `kvopt simulate instances/tiny/a2-example.json --policy mcsf` |
    """
    tot = counts(sections)
    out = [f"# {TITLE}", "",
           f"Written by `{command}`{' (fast mode: fewer runs, smaller instances)' if fast else ''}"
           ". Every value in the kvopt column is computed by that command; each target's own "
           "command recomputes it. Verdicts: **reproduced** (within the tolerance), **differs** "
           "(with the reason), **erratum** (the paper is wrong; see the errata), **not yet "
           "implemented** (with what is missing).", "",
           "| seed | paper | " + " | ".join(VERDICTS) + " |",
           "|---|---|" + "---|" * len(VERDICTS)]
    for s in sections:
        c = s.counts()
        out.append(f"| {s.seed} | {_md_cell(s.title)} | " + " | ".join(str(c[v]) for v in VERDICTS)
                   + " |")
    out.append("| all | | " + " | ".join(f"**{tot[v]}**" for v in VERDICTS) + " |")
    diff = _differs(sections)
    if diff:
        out += ["", "## Every `differs`, with its reason", ""]
        out += [f"- **{t.seed}/{t.key}** {t.claim}: paper {t.paper}, kvopt {t.kvopt}. "
                f"*Reason:* {t.reason}" for t in diff]
    for s in sections:
        out += ["", f"## Seed {s.seed}: {s.title}", "", f"*{s.paper}.* {s.intro}", ""]
        out += table(["key", "target", "paper", "kvopt", "tolerance", "verdict", "command"],
                     [[_md_cell(x) for x in (t.key, t.claim, t.paper,
                                             t.kvopt + (f" ({t.reading})" if t.reading else ""),
                                             t.tolerance, f"**{t.verdict}**", f"`{t.command}`")]
                      for t in s.targets]).splitlines()
        reasons = [t for t in s.targets if t.reason and t.verdict != "reproduced"]
        if reasons:
            out += [""] + [f"- {t.key} ({t.verdict}): {t.reason}" for t in reasons]
        out += [""] + [f"- {n}" for n in s.notes] if s.notes else []
        for f in s.figures:
            out += ["", f"![{f.caption}]({f.name})", "", f"*{f.caption}*"]
    out += ["", "## Errata", "",
            "Each error found in the seeds, with what is printed, what is right, and the "
            "evidence kvopt computes (its command).", ""]
    for s in sections:
        for e in s.errata:
            out += [f"### {s.seed}: {e.where}", "", f"- printed: {e.printed}",
                    f"- corrected: {e.corrected}", f"- evidence: {e.evidence}",
                    f"- command: `{e.command}`", ""]
    return "\n".join(out).rstrip("\n") + "\n"


CSS = """
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:0 1rem;
color:#1b1f24;background:#fff;overflow-wrap:anywhere}
main{max-width:62rem;margin:0 auto;padding-bottom:3rem}
h1{font-size:1.6rem;line-height:1.25}h2{font-size:1.3rem;margin-top:2.2rem;
border-bottom:1px solid #d0d7de;padding-bottom:.2rem}h3{font-size:1.05rem;margin:.2rem 0}
code{font:.85em/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f4f6;
padding:.05rem .25rem;border-radius:4px;white-space:pre-wrap;word-break:break-word}
table{border-collapse:collapse;width:100%;table-layout:fixed;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.25rem .35rem;text-align:left;vertical-align:top}
th:first-child,td:first-child{width:22%}
.card{border:1px solid #d0d7de;border-radius:8px;padding:.6rem .8rem;margin:.8rem 0}
.card dl{display:grid;grid-template-columns:7.5rem minmax(0,1fr);gap:.15rem .6rem;margin:.4rem 0 0}
.card dt{font-weight:600;color:#57606a}.card dd{margin:0;min-width:0}
@media (max-width:34rem){.card dl{grid-template-columns:minmax(0,1fr)}.card dd{margin-bottom:.3rem}
th:first-child,td:first-child{width:auto}table{font-size:.8rem}}
.badge{display:inline-block;font-size:.8rem;font-weight:600;padding:.05rem .45rem;
border-radius:999px;margin-right:.4rem}
.reproduced{background:#dafbe1;color:#116329}.differs{background:#fff8c5;color:#7d4e00}
.erratum{background:#ffebe9;color:#a40e26}.not-yet-implemented{background:#eaeef2;color:#424a53}
figure{margin:1rem 0}img{max-width:100%;height:auto;display:block}
figcaption{font-size:.9rem;color:#57606a}
"""


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _badge(verdict: str) -> str:
    return f'<span class="badge {verdict.replace(" ", "-")}">{_e(verdict)}</span>'


def _card(title: str, fields: Sequence[tuple[str, str]], badge: str = "",
          anchor: str = "") -> str:
    dl = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in fields if v)
    ident = f' id="{_e(anchor)}"' if anchor else ""
    return f'<div class="card"{ident}><h3>{badge}{_e(title)}</h3><dl>{dl}</dl></div>'


def _target_card(t: Target) -> str:
    fields = [("paper", _e(t.paper)), ("kvopt", _e(t.kvopt)), ("reading", _e(t.reading)),
              ("tolerance", _e(t.tolerance)), ("reason", _e(t.reason)),
              ("command", f"<code>{_e(t.command)}</code>")]
    return _card(f"{t.key}: {t.claim}", fields, _badge(t.verdict), f"t-{t.seed}-{t.key}")


def render_html(sections: Sequence[SeedSection], *, fast: bool, command: str) -> str:
    """The report as one self-contained HTML page.

    Examples
    --------
    >>> from kvopt.report.reproduce.core import SeedSection, Target
    >>> t = Target("001", "A2", "two big peaks run together", "TEL 12", "12", "exact",
    ...            "reproduced", "kvopt simulate instances/tiny/a2-example.json --policy mcsf")
    >>> sec = SeedSection("001", "Online scheduling", "arXiv 2502.07115", "MC-SF.", [t])
    >>> page = render_html([sec], fast=False, command="kvopt report reproduce")
    >>> page.startswith("<!doctype html>"), page.count('class="card"'), "<script" in page
    (True, 1, False)
    """
    tot = counts(sections)
    head = "".join(f"<th>{_e(v)}</th>" for v in VERDICTS)
    body = []
    for s in sections:
        c = s.counts()
        body.append(f'<tr><td><a href="#seed-{s.seed}">{_e(s.seed)}</a></td>'
                    + "".join(f"<td>{c[v]}</td>" for v in VERDICTS) + "</tr>")
    body.append("<tr><td><strong>all</strong></td>"
                + "".join(f"<td><strong>{tot[v]}</strong></td>" for v in VERDICTS) + "</tr>")
    parts = [f"<h1>{_e(TITLE)}</h1>",
             f"<p>Written by <code>{_e(command)}</code>"
             f"{' (fast mode: fewer runs, smaller instances)' if fast else ''}. Every kvopt "
             "value is computed by that command; each target's command recomputes it. "
             "Verdicts: " + " ".join(_badge(v) for v in VERDICTS) + "</p>",
             f"<table><thead><tr><th>seed</th>{head}</tr></thead><tbody>{''.join(body)}"
             "</tbody></table>"]
    diff = _differs(sections)
    if diff:
        parts.append("<h2>Every <em>differs</em>, with its reason</h2><ul>" + "".join(
            f'<li><a href="#t-{_e(t.seed)}-{_e(t.key)}">{_e(t.seed)}/{_e(t.key)}</a>: '
            f"{_e(t.reason)}</li>" for t in diff) + "</ul>")
    for s in sections:
        parts.append(f'<h2 id="seed-{_e(s.seed)}">Seed {_e(s.seed)}: {_e(s.title)}</h2>'
                     f"<p><em>{_e(s.paper)}.</em> {_e(s.intro)}</p>")
        parts += [_target_card(t) for t in s.targets]
        parts += [f"<p>{_e(n)}</p>" for n in s.notes]
        for f in s.figures:
            uri = "data:image/png;base64," + base64.b64encode(f.png).decode("ascii")
            parts.append(f'<figure><img src="{uri}" alt="{_e(f.caption)}">'
                         f"<figcaption>{_e(f.caption)}</figcaption></figure>")
    parts.append('<h2 id="errata">Errata</h2><p>Each error found in the seeds: what is '
                 "printed, what is right, and the evidence kvopt computes.</p>")
    for s in sections:
        for e in s.errata:
            parts.append(_card(f"{s.seed}: {e.where}", [
                ("printed", _e(e.printed)), ("corrected", _e(e.corrected)),
                ("evidence", _e(e.evidence)), ("command", f"<code>{_e(e.command)}</code>")]))
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(TITLE)}</title><style>{CSS}</style></head><body><main>"
            + "\n".join(parts) + "</main></body></html>\n")


def render_json(sections: Sequence[SeedSection], *, fast: bool, command: str,
                seed: int) -> str:
    """Every target and erratum as JSON (no timestamps: same seed, same bytes).

    Examples
    --------
    >>> import json
    >>> from kvopt.report.reproduce.core import SeedSection, Target
    >>> t = Target("001", "A2", "two big peaks run together", "TEL 12", "12", "exact",
    ...            "reproduced", "kvopt simulate instances/tiny/a2-example.json --policy mcsf")
    >>> sec = SeedSection("001", "Online scheduling", "arXiv 2502.07115", "MC-SF.", [t])
    >>> doc = json.loads(render_json([sec], fast=False, command="kvopt report reproduce",
    ...                              seed=0))
    >>> doc["schema"], doc["counts"]["reproduced"], doc["seeds"][0]["targets"][0]["kvopt"]
    ('kvopt.reproduction', 1, '12')
    """
    doc: dict[str, Any] = {
        "schema": "kvopt.reproduction", "schema_version": 1, "command": command,
        "fast": fast, "seed": seed, "verdicts": list(VERDICTS), "counts": counts(sections),
        "seeds": [{"seed": s.seed, "title": s.title, "paper": s.paper, "counts": s.counts(),
                   "targets": [t.to_dict() for t in s.targets],
                   "errata": [e.to_dict() for e in s.errata],
                   "figures": [{"file": f.name, "caption": f.caption} for f in s.figures],
                   "notes": s.notes} for s in sections]}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
