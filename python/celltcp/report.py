"""A self-contained HTML report of a sweep: figures, the paper's findings against celltcp's, the
aggregated results, the files that were run and the versions that ran them.

``report.html`` has no external reference: figures are embedded as base64 PNG, the style sheet
is inline, and the scenario and sweep files are included verbatim, so the file can be mailed,
archived or opened offline years later and still say exactly what was run.

The agreement table is never written by hand: each :class:`Finding` carries the paper's claim
as text and a ``check`` function that reads the results table and returns a :class:`Verdict`
(what celltcp measured, as a sentence with its numbers, and a graded verdict). A verdict is a
:class:`Grade`:

- **agrees in magnitude**: the direction the paper states holds and celltcp's number is within
  the tolerance of the paper's (the tolerance is written beside the verdict);
- **agrees in direction only**: the direction holds but the magnitude is outside the tolerance,
  or the paper gives no number to compare with;
- **does not agree**: the direction does not hold;
- **not evaluated**: the check could not run (a column missing, too few runs) and says why.

Beside the grade, a verdict carries the numbers side by side (:class:`Quantity`: the paper's
figure where the paper gives one, celltcp's, and ns-3 3.37's where the study has an ns-3
counterpart), the tolerance and the setting the verdict rests on (e.g. "loaded cell, RLC UM").
:func:`graded` turns a direction test and a magnitude test into a grade; :func:`within` is
the usual magnitude test (a ratio within a factor of the paper's). The older form
``Verdict(result, agrees)`` still works: ``agrees=True`` is graded *agrees in direction only*
(a bool says nothing about magnitude), ``False`` *does not agree*, ``None`` *not evaluated*;
``Verdict.agrees`` is derived from the grade either way.

The verdicts are also written to ``findings.json`` and, as a markdown table, to
``findings.md`` beside the report.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import platform
import math
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["Finding", "Verdict", "Grade", "Quantity", "Evaluated", "Figure", "evaluate", "graded",
           "within", "versions", "write_report", "findings_markdown", "markdown_from_records"]


class Grade(str, Enum):
    """How far celltcp's result agrees with the paper's finding (best first)."""

    MAGNITUDE = "agrees in magnitude"
    DIRECTION = "agrees in direction only"
    DISAGREES = "does not agree"
    NOT_EVALUATED = "not evaluated"

    @property
    def agrees(self) -> bool | None:
        """True for both kinds of agreement, False for none, None when not evaluated."""
        return {Grade.MAGNITUDE: True, Grade.DIRECTION: True, Grade.DISAGREES: False,
                Grade.NOT_EVALUATED: None}[self]

    @property
    def css(self) -> str:
        return {Grade.MAGNITUDE: "yes", Grade.DIRECTION: "dir", Grade.DISAGREES: "no",
                Grade.NOT_EVALUATED: "na"}[self]

    @classmethod
    def parse(cls, value: str) -> Grade:
        for g in cls:
            if value in (g.value, g.name.lower(), g.name):
                return g
        raise ValueError(f"grade: {value!r} is not one of "
                         + ", ".join(repr(g.value) for g in cls))


Number = float | int | str | None


@dataclass(frozen=True)
class Quantity:
    """One number of a finding, side by side: the paper's, celltcp's and ns-3 3.37's (None
    where there is none: the paper gives no figure, the study has no ns-3 counterpart). A
    string is shown as is (e.g. "0.998 for every control")."""

    name: str
    celltcp: Number
    paper: Number = None
    ns3: Number = None
    unit: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "unit": self.unit, "paper": _jsonable(self.paper),
                "celltcp": _jsonable(self.celltcp), "ns3": _jsonable(self.ns3)}


def _jsonable(v: Number) -> Number:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item"):  # numpy scalar
        return v.item()  # type: ignore[union-attr,no-any-return]
    return v


def fmt_number(v: Number, unit: str = "") -> str:
    """A number as the report shows it (four significant digits; "–" for none)."""
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, str):
        return v
    text = f"{v:.4g}" if isinstance(v, float) else str(v)
    return f"{text} {unit}".rstrip() if unit else text


def within(ours: float, paper: float, factor: float) -> bool:
    """Magnitude test: ``ours`` and ``paper`` have the same sign and their ratio lies within
    [1/factor, factor] (``factor`` > 1, e.g. 2 for "within ×2")."""
    if factor <= 1:
        raise ValueError(f"within: factor = {factor} is not > 1")
    if ours == paper:
        return True
    if ours == 0 or paper == 0 or (ours > 0) != (paper > 0):
        return False
    r = ours / paper
    return 1 / factor <= r <= factor


def graded(direction: bool | None, magnitude: bool | None = None) -> Grade:
    """The grade of a check: ``direction`` is whether the paper's direction holds (None: could
    not be evaluated); ``magnitude`` whether celltcp's number is within the tolerance of the
    paper's (None: the paper gives no number, so at best *direction only*)."""
    if direction is None:
        return Grade.NOT_EVALUATED
    if not direction:
        return Grade.DISAGREES
    return Grade.MAGNITUDE if magnitude else Grade.DIRECTION


@dataclass(frozen=True)
class Verdict:
    """celltcp's side of one row of the agreement table.

    ``Verdict(result, agrees)`` (the older form) or ``Verdict(result, grade=Grade.X,
    numbers=(Quantity(...), ...), tolerance="...", setting="...")``. Give one of ``agrees`` and
    ``grade``; the other is derived."""

    #: what celltcp measured, with the numbers behind the verdict
    result: str
    #: True: agrees with the paper (in magnitude or direction); False: does not; None: could not
    #: be evaluated. Derived from ``grade`` when that is given.
    agrees: bool | None = None
    grade: Grade | None = None
    #: the numbers side by side: the paper's, celltcp's, ns-3 3.37's
    numbers: tuple[Quantity, ...] = field(default_factory=tuple)
    #: the tolerance the magnitude was judged with (e.g. "ratio within ×2 of the paper's")
    tolerance: str = ""
    #: the setting the verdict rests on (e.g. "loaded cell: 14 bulk flows, RLC UM 10 KiB")
    setting: str = ""

    def __post_init__(self) -> None:
        grade = self.grade
        if grade is None:
            grade = {True: Grade.DIRECTION, False: Grade.DISAGREES,
                     None: Grade.NOT_EVALUATED}[None if self.agrees is None else bool(self.agrees)]
        elif not isinstance(grade, Grade):
            grade = Grade.parse(str(grade))
        elif self.agrees is not None and bool(self.agrees) != grade.agrees:
            raise ValueError(f"Verdict: agrees = {self.agrees} contradicts grade = {grade.value!r}")
        object.__setattr__(self, "grade", grade)
        object.__setattr__(self, "agrees", grade.agrees)
        object.__setattr__(self, "numbers", tuple(self.numbers))


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
    #: the magnitude tolerance, when the verdict does not give its own
    tolerance: str = ""


def _tolerance(ev: Evaluated) -> str:
    return ev.verdict.tolerance or ev.finding.tolerance


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
            v = Verdict(f"not evaluated: {type(e).__name__}: {e}", grade=Grade.NOT_EVALUATED)
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
.dir { background: #fdf3d7; color: #6b4e00; font-weight: 600; }
table.nums { margin: 0; font-size: 0.95em; } table.nums th { font-weight: normal; }
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


def _verdict_cell(v: Verdict, tolerance: str = "") -> str:
    assert v.grade is not None
    tol = f'<div class="rule">tolerance: {_e(tolerance)}</div>' if tolerance else ""
    return f'<td class="{v.grade.css}">{_e(v.grade.value)}{tol}</td>'


def _numbers_html(numbers: Sequence[Quantity]) -> str:
    if not numbers:
        return "–"
    ns3 = any(q.ns3 is not None for q in numbers)
    head = "<tr><th></th><th>paper</th><th>celltcp</th>" + ("<th>ns-3 3.37</th>" if ns3 else "")
    rows = []
    for q in numbers:
        cells = [q.paper, q.celltcp] + ([q.ns3] if ns3 else [])
        unit = f" ({_e(q.unit)})" if q.unit else ""
        rows.append(f"<tr><th>{_e(q.name)}{unit}</th>"
                    + "".join(f'<td class="num">{_e(fmt_number(c))}</td>' for c in cells) + "</tr>")
    return f'<table class="nums">{head}</tr>{"".join(rows)}</table>'


def _score(evaluated: Sequence[Evaluated]) -> str:
    """"2 of 5 findings agree in magnitude, 1 in direction only, 1 does not, 1 not evaluated"."""
    return _score_counts({g: sum(1 for ev in evaluated if ev.verdict.grade is g) for g in Grade},
                         len(evaluated))


def _score_counts(n: Mapping[Grade, int], total: int) -> str:
    parts = [f"{n[Grade.MAGNITUDE]} of {total} findings agree in magnitude",
             f"{n[Grade.DIRECTION]} in direction only"]
    if n[Grade.DISAGREES]:
        parts.append(f"{n[Grade.DISAGREES]} do{'es' if n[Grade.DISAGREES] == 1 else ''} not agree")
    if n[Grade.NOT_EVALUATED]:
        parts.append(f"{n[Grade.NOT_EVALUATED]} not evaluated")
    return ", ".join(parts)


def _md(s: object) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def findings_markdown(evaluated: Sequence[Evaluated]) -> str:
    """The agreement table as markdown: finding | paper | celltcp | ns-3 3.37 | verdict
    (tolerance) | setting; then each result sentence."""
    return markdown_from_records(findings_records(evaluated))


def markdown_from_records(records: Sequence[Mapping[str, Any]]) -> str:
    """:func:`findings_markdown` from the records of ``findings.json`` (so a document can be
    regenerated from a finished study without running it again)."""
    counts = {g: sum(1 for r in records if Grade.parse(str(r["grade"])) is g) for g in Grade}
    lines = [_score_counts(counts, len(records)) + ".", "",
             "| # | the paper's finding | paper | celltcp | ns-3 3.37 | verdict (tolerance) | setting |",
             "|---|---|---|---|---|---|---|"]
    for k, r in enumerate(records, 1):
        nums = r.get("numbers") or []

        def col(attr: str) -> str:
            if all(q.get(attr) is None for q in nums):
                return "–"
            return "; ".join(f"{q['name']}: {fmt_number(q.get(attr), q.get('unit') or '')}"
                             for q in nums)

        tol = r.get("tolerance") or ""
        lines.append(f"| {k} | {_md(r['paper'])} | {_md(col('paper'))} | "
                     f"{_md(col('celltcp'))} | {_md(col('ns3'))} | "
                     f"{r['grade']}{f' ({_md(tol)})' if tol else ''} | "
                     f"{_md(r.get('setting') or '–')} |")
    lines.append("")
    for k, r in enumerate(records, 1):
        lines.append(f"{k}. `{r['key']}`: {_md(r['result'])}"
                     + (f" (check: {_md(r['rule'])})" if r.get("rule") else ""))
    return "\n".join(lines) + "\n"


def findings_records(evaluated: Sequence[Evaluated]) -> list[dict[str, Any]]:
    """What ``findings.json`` holds: one record per finding."""
    out = []
    for ev in evaluated:
        v = ev.verdict
        assert v.grade is not None
        out.append({"key": ev.finding.key, "paper": ev.finding.paper, "rule": ev.finding.rule,
                    "result": v.result, "grade": v.grade.value, "agrees": v.agrees,
                    "tolerance": _tolerance(ev), "setting": v.setting,
                    "numbers": [q.as_dict() for q in v.numbers]})
    return out


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
    """Write the report to ``path`` (and the verdicts to ``findings.json`` and ``findings.md``
    beside it).

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
        parts.append('<h2 id="findings">The paper\'s findings and celltcp\'s results</h2>')
        parts.append(f'<p class="score">{_e(_score(evaluated))}. Each verdict is computed from '
                     "the results table by the study's check function; the rule it applies is "
                     "given under each result and the magnitude tolerance under each verdict. "
                     "<i>agrees in magnitude</i>: the paper's direction holds and celltcp's "
                     "number is within the tolerance of the paper's; <i>in direction only</i>: "
                     "the direction holds, the magnitude does not (or the paper gives no "
                     "number).</p>")
        parts.append('<table id="agreement"><thead><tr><th>#</th><th>the paper\'s finding</th>'
                     "<th>numbers</th><th>celltcp's result</th><th>verdict</th></tr></thead><tbody>")
        for k, ev in enumerate(evaluated, 1):
            rule = f'<div class="rule">check: {_e(ev.finding.rule)}</div>' if ev.finding.rule else ""
            setting = (f'<div class="rule">setting: {_e(ev.verdict.setting)}</div>'
                       if ev.verdict.setting else "")
            parts.append(
                f'<tr data-finding="{_e(ev.finding.key)}"><td class="num">{k}</td>'
                f"<td>{_e(ev.finding.paper)}</td><td>{_numbers_html(ev.verdict.numbers)}</td>"
                f"<td>{_e(ev.verdict.result)}{rule}{setting}</td>"
                f"{_verdict_cell(ev.verdict, _tolerance(ev))}</tr>")
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
    (path.parent / "findings.json").write_text(
        json.dumps(findings_records(evaluated), indent=2) + "\n", encoding="utf-8")
    (path.parent / "findings.md").write_text(findings_markdown(evaluated), encoding="utf-8")
    return path
