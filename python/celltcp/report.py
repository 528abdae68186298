"""A self-contained HTML report of a sweep: figures, the paper's findings against celltcp's, the
aggregated results, the files that were run and the versions that ran them.

``report.html`` has no external reference: figures are embedded as base64 PNG, the style sheet
is inline, and the scenario and sweep files are included verbatim, so the file can be mailed,
archived or opened offline years later and still say exactly what was run.

The agreement table is never written by hand: each :class:`Finding` carries the paper's claim
as text and a ``check`` function that reads the results table and returns a :class:`Verdict`
(what celltcp measured, as a sentence with its numbers, and whether that agrees). A check that
cannot be evaluated (a column missing, too few runs) gives ``agrees = None`` and says why,
rather than a verdict. The verdicts are also written to ``findings.json`` beside the report.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import platform
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["Finding", "Verdict", "Evaluated", "Figure", "evaluate", "versions", "write_report"]


@dataclass(frozen=True)
class Verdict:
    """celltcp's side of one row of the agreement table."""

    #: what celltcp measured, with the numbers behind the verdict
    result: str
    #: True: agrees with the paper; False: does not; None: could not be evaluated
    agrees: bool | None


@dataclass(frozen=True)
class Finding:
    """One claim of the paper and the function that checks it against the results table."""

    key: str
    #: the paper's finding, in words, with where it is in the paper
    paper: str
    #: reads the results table (one row per run and flow) and returns the verdict
    check: Callable[[pd.DataFrame], Verdict]
    #: how the check decides (shown in the report, so a reader can judge the threshold)
    rule: str = ""


@dataclass(frozen=True)
class Evaluated:
    finding: Finding
    verdict: Verdict


def evaluate(findings: Sequence[Finding], df: pd.DataFrame) -> list[Evaluated]:
    """Run every check on ``df``. A check that raises ``KeyError``, ``ValueError`` or
    ``ZeroDivisionError`` (missing column or group, no runs) is reported as not evaluated."""
    out = []
    for f in findings:
        try:
            v = f.check(df)
        except (KeyError, ValueError, ZeroDivisionError, IndexError) as e:
            v = Verdict(f"not evaluated: {type(e).__name__}: {e}", None)
        out.append(Evaluated(f, v))
    return out


@dataclass(frozen=True)
class Figure:
    """A figure of the report: a PNG file (embedded) and its caption."""

    png: Path
    caption: str
    #: the SVG beside it, linked for download when it exists
    svg: Path | None = None
    title: str = ""


def _git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=here,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and commit else None


def versions() -> dict[str, str]:
    """The versions that produced a report: celltcp, Python, the libraries, the git commit of
    the source tree (when celltcp runs from a checkout) and the date (UTC)."""
    import matplotlib
    import numpy
    import pyarrow

    from . import __version__

    v = {
        "celltcp": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "pandas": pd.__version__,
        "matplotlib": matplotlib.__version__,
        "pyarrow": pyarrow.__version__,
        "platform": platform.platform(),
        "date (UTC)": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
    }
    commit = _git_commit()
    if commit:
        v["git commit"] = commit
    return v


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto;
       max-width: 1100px; padding: 1.5em 2em 4em; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #d0d0d0; padding: 0.35em 0.6em; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.yes { background: #e3f4e3; color: #145214; font-weight: 600; }
.no { background: #fbe3e1; color: #7d1a12; font-weight: 600; }
.na { background: #f1f1f1; color: #555; font-weight: 600; }
.rule { color: #666; font-size: 0.88em; }
figure { margin: 1.2em 0; } figure img { width: 100%; max-width: 820px; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: 0.92em; }
pre { background: #f7f7f7; border: 1px solid #e2e2e2; padding: 0.8em; overflow-x: auto;
      font-size: 0.85em; }
.score { font-size: 1.1em; }
"""


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def _verdict_cell(v: Verdict) -> str:
    if v.agrees is True:
        return '<td class="yes">agrees</td>'
    if v.agrees is False:
        return '<td class="no">does not agree</td>'
    return '<td class="na">not evaluated</td>'


def _fmt_cell(v: Any) -> tuple[str, bool]:
    if isinstance(v, bool):
        return str(v).lower(), False
    if isinstance(v, int):
        return str(v), True
    if isinstance(v, float):
        if v != v:  # NaN
            return "–", True
        a = abs(v)
        if a != 0 and (a >= 1e6 or a < 1e-3):
            return f"{v:.4g}", True
        return f"{v:.4g}" if a < 1000 else f"{v:.1f}", True
    return str(v), False


def table_html(df: pd.DataFrame, max_rows: int = 500) -> str:
    """An HTML table of a DataFrame (numbers right-aligned, four significant digits)."""
    head = "".join(f"<th>{_e(c)}</th>" for c in df.columns)
    rows = []
    for rec in df.head(max_rows).itertuples(index=False):
        cells = []
        for v in rec:
            if hasattr(v, "item"):
                v = v.item()
            text, num = _fmt_cell(v)
            cells.append(f'<td class="num">{_e(text)}</td>' if num else f"<td>{_e(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = (f"<p class='rule'>… {len(df) - max_rows} more rows in results.parquet</p>"
            if len(df) > max_rows else "")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"


def write_report(
    path: str | Path,
    *,
    title: str,
    subtitle: str = "",
    intro_html: str = "",
    evaluated: Sequence[Evaluated] = (),
    figures: Sequence[Figure] = (),
    aggregated: pd.DataFrame | None = None,
    files: Mapping[str, str] | None = None,
    run_counts: Mapping[str, int] | None = None,
    notes: Sequence[str] = (),
    version_info: Mapping[str, str] | None = None,
) -> Path:
    """Write the report to ``path`` (and the verdicts to ``findings.json`` beside it).

    ``intro_html`` is trusted HTML written by the study (what it reproduces); every other text is
    escaped. ``files`` maps a file name to its text, included verbatim (scenario, sweep file).
    """
    path = Path(path)
    info = dict(version_info) if version_info is not None else versions()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]
    if subtitle:
        parts.append(f'<p class="sub">{_e(subtitle)}</p>')
    if intro_html:
        parts.append(intro_html)
    if run_counts:
        counts = ", ".join(f"{_e(k)}: {int(v)}" for k, v in run_counts.items())
        parts.append(f"<p>Runs — {counts}.</p>")
    for n in notes:
        parts.append(f'<p class="rule">{_e(n)}</p>')

    if evaluated:
        yes = sum(1 for ev in evaluated if ev.verdict.agrees is True)
        no = sum(1 for ev in evaluated if ev.verdict.agrees is False)
        na = len(evaluated) - yes - no
        parts.append('<h2 id="findings">The paper\'s findings and celltcp\'s results</h2>')
        parts.append(f'<p class="score">{yes} of {len(evaluated)} findings agree'
                     + (f", {no} do not" if no else "") + (f", {na} not evaluated" if na else "")
                     + ". Each verdict is computed from the results table by the study's check "
                     "function; the rule it applies is given under each result.</p>")
        parts.append('<table id="agreement"><thead><tr><th>#</th><th>the paper\'s finding</th>'
                     "<th>celltcp's result</th><th>verdict</th></tr></thead><tbody>")
        for k, ev in enumerate(evaluated, 1):
            rule = f'<div class="rule">check: {_e(ev.finding.rule)}</div>' if ev.finding.rule else ""
            parts.append(
                f'<tr data-finding="{_e(ev.finding.key)}"><td class="num">{k}</td>'
                f"<td>{_e(ev.finding.paper)}</td><td>{_e(ev.verdict.result)}{rule}</td>"
                f"{_verdict_cell(ev.verdict)}</tr>")
        parts.append("</tbody></table>")

    if figures:
        parts.append('<h2 id="figures">Figures</h2>')
        for k, f in enumerate(figures, 1):
            data = base64.b64encode(Path(f.png).read_bytes()).decode("ascii")
            svg = (f' <span class="rule">(vector: {_e(Path(f.svg).name)} beside the report '
                   "in figures/)</span>" if f.svg is not None and Path(f.svg).is_file() else "")
            heading = f"<h3>{_e(f.title)}</h3>" if f.title else ""
            parts.append(
                f'<figure id="fig-{k}">{heading}<img alt="{_e(f.title or f.caption)}" '
                f'src="data:image/png;base64,{data}">'
                f"<figcaption>Figure {k}. {_e(f.caption)}{svg}</figcaption></figure>")

    if aggregated is not None and len(aggregated):
        parts.append('<h2 id="results">Aggregated results</h2>')
        parts.append("<p class='rule'>Mean over seeds with the 95 % Student t-interval "
                     "(ci_low, ci_high); n is the number of runs. The full table, one row per "
                     "run and flow, is results.parquet in the sweep directory.</p>")
        parts.append(table_html(aggregated))

    if files:
        parts.append('<h2 id="files">Files run</h2>')
        for name, text in files.items():
            parts.append(f"<h3>{_e(name)}</h3><pre>{_e(text)}</pre>")

    parts.append('<h2 id="versions">Versions</h2><table><tbody>')
    for key, value in info.items():
        parts.append(f"<tr><th>{_e(key)}</th><td>{_e(value)}</td></tr>")
    parts.append("</tbody></table></body></html>")

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(parts) + "\n", encoding="utf-8")
    tmp.replace(path)
    findings = [{"key": ev.finding.key, "paper": ev.finding.paper, "rule": ev.finding.rule,
                 "result": ev.verdict.result, "agrees": ev.verdict.agrees} for ev in evaluated]
    (path.parent / "findings.json").write_text(json.dumps(findings, indent=2) + "\n",
                                                encoding="utf-8")
    return path
