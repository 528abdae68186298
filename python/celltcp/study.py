"""``celltcp study NAME -o DIR``: run a study's sweep, draw its figures, check its findings, and
write ``DIR/report.html``.

::

    celltcp study --list
    celltcp study iperf-lte -o out/iperf-lte [--quick] [--jobs N] [--executor local|ray] [--address A]

``DIR`` is the sweep directory (``DIR/runs/<run_id>/``, ``DIR/results.parquet``; a study's
further parts, e.g. a second scenario of the paper, are sweeps in ``DIR/<part>/``) and receives
``DIR/figures/*.png|svg``, ``DIR/report.html``, ``DIR/findings.json`` (and ``findings.md``) and
``DIR/study.json`` (the study's name, quick or full, the run counts and the versions). Running the same
command again resumes the sweep (finished runs are not run again) and redraws the report.
The studies themselves live in :mod:`celltcp.studies`.

Exit status: 0 when every run succeeded and the report is written; 1 when some runs failed (the
report is still written, from the runs that finished, and says how many failed); 2 for bad input
(an unknown study, a missing or invalid sweep file).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from html import unescape as html_unescape
from pathlib import Path
from typing import Any

import pandas as pd

from . import sweep_plots
from .report import Evaluated, Figure, Grade, _score, evaluate, fmt_number, write_report
from .studies import MAIN, PART, Study, UnknownStudy, get, part_dir, registry

__all__ = ["run", "run_study", "StudyOutcome", "list_studies", "summary_text", "score"]

PROG = "celltcp study"


@dataclass(frozen=True)
class StudyOutcome:
    report: Path
    evaluated: list[Evaluated]
    done: int
    skipped: int
    failed: int


def list_studies() -> list[tuple[str, str]]:
    """(name, one-line description) of every study."""
    return [(s.name, s.summary) for s in registry().values()]


def _aggregated(study: Study, df: pd.DataFrame) -> pd.DataFrame:
    """The study's aggregated table (:func:`celltcp.sweep_plots.display_table`) over its rows:
    ``table_rows``, else the ``table_flows``, else the whole results table."""
    if study.table_rows is not None:
        sel = study.table_rows(df)
    elif study.table_flows:
        sel = df[df["flow"].isin(list(study.table_flows))]
    else:
        sel = df
    return sweep_plots.display_table(sel, study.aggregate_by, study.metrics)


def _files(sweep_file: Path, prefix: str = "") -> dict[str, str]:
    """The sweep file and the scenario it names, verbatim (names prefixed with ``prefix``)."""
    text = sweep_file.read_text(encoding="utf-8")
    files = {}
    m = re.search(r'^\s*base\s*=\s*["\']([^"\']+)["\']', text, re.M)
    base = m.group(1) if m else None
    if base is not None and (sweep_file.parent / base).is_file():
        files[prefix + base] = (sweep_file.parent / base).read_text(encoding="utf-8")
    files[prefix + sweep_file.name] = text
    return files


def run_study(study: Study, out: str | Path, *, quick: bool = False, jobs: int | None = None,
              executor: str = "local", address: str | None = None,
              progress: bool = False, progress_stream: Any = None) -> StudyOutcome:
    """Run ``study``'s sweeps (the quick ones with ``quick``; its parts into ``out/<part>``) into
    ``out`` and write the report. ``progress`` draws the progress line of each sweep (runs done,
    failed, time left) on ``progress_stream`` (default stderr), named after the study and part,
    then says when the figures and the report are being made."""
    from .sweep import load_sweep, run_sweep

    out = Path(out)
    # Every sweep of the study is read and checked before the first run starts.
    sweeps = []
    for part in (MAIN, *study.parts):
        sweep_file = study.sweep_file(quick, part)
        if not sweep_file.is_file():
            raise FileNotFoundError(f"study {study.name!r}: sweep file {sweep_file} is missing")
        sweeps.append((part, sweep_file, load_sweep(sweep_file)))
    tables, files = [], {}
    counts = {"done": 0, "skipped": 0, "failed": 0}
    for n, (part, sweep_file, sweep) in enumerate(sweeps, 1):
        label = f"study {study.name}" + (f" [{part}, sweep {n}/{len(sweeps)}]"
                                         if len(sweeps) > 1 else "")
        res = run_sweep(sweep, part_dir(out, part), jobs=jobs, executor=executor,
                        address=address, progress=progress, progress_stream=progress_stream,
                        progress_label=label)
        tables.append(res.table.assign(**{PART: part}))
        files.update(_files(sweep_file, "" if part == MAIN else f"{part}/"))
        for k in counts:
            counts[k] += getattr(res, k)
    table = pd.concat(tables, ignore_index=True, sort=False) if len(tables) > 1 else tables[0]
    if study.enrich is not None:
        table = study.enrich(table, out)
    df = study.prepare(table)

    if progress:
        stream = progress_stream if progress_stream is not None else sys.stderr
        stream.write(f"study {study.name}: {sum(len(s.runs) for *_, s in sweeps)} runs finished, "
                     "making the figures and the report\n")
        stream.flush()
    figdir = out / "figures"
    figures = []
    for f in study.figures(df, out):
        png, svg = sweep_plots.save(f.figure, figdir, f.name, ("png", "svg"))
        figures.append(Figure(png=png, svg=svg, caption=f.caption, title=f.title))
    evaluated = evaluate(study.findings, df)
    notes = []
    if counts["failed"]:
        notes.append(f"{counts['failed']} run(s) failed: their errors are in the sweep directory; the "
                     "figures and checks use the runs that finished.")
    if quick:
        notes.append("Quick variant (--quick): fewer points, one seed and shorter runs than the "
                     "full study; intervals are missing where a point has a single run.")
    report = write_report(
        out / "report.html",
        title=f"celltcp study {study.name}" + (" (quick)" if quick else ""),
        subtitle=f"Paper {study.paper_id}: {study.paper}",
        intro_html=study.intro_html,
        evaluated=evaluated,
        figures=figures,
        aggregated=_aggregated(study, df),
        files=files,
        run_counts={"done": counts["done"], "skipped (already done)": counts["skipped"],
                    "failed": counts["failed"]},
        notes=notes,
    )
    # what the findings came from, for scripts that quote them (celltcp.studies.docnumbers)
    meta = {"study": study.name, "paper_id": study.paper_id, "quick": bool(quick),
            "runs": dict(counts), "versions": _report_versions(report)}
    (out / "study.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return StudyOutcome(report, evaluated, counts["done"], counts["skipped"], counts["failed"])


def _report_versions(report: Path) -> dict[str, str]:
    """The versions table of a written report (so study.json and report.html agree)."""
    html = report.read_text(encoding="utf-8")
    sec = html.split('<h2 id="versions">', 1)[-1]
    return {html_unescape(k): html_unescape(v)
            for k, v in re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", sec)}


def summary_text(evaluated: Sequence[Evaluated]) -> str:
    """The terminal summary of the findings: per finding its grade (shouted when it does not
    agree), the paper's claim, the numbers side by side (paper / celltcp / ns-3 3.37), the
    tolerance, the setting and celltcp's result sentence."""
    lines = []
    for k, ev in enumerate(evaluated, 1):
        v = ev.verdict
        assert v.grade is not None
        mark = v.grade.value.upper() if v.grade is Grade.DISAGREES else v.grade.value
        lines.append(f"{k}. [{mark}] {ev.finding.paper}")
        for q in v.numbers:
            side = [f"paper {fmt_number(q.paper)}", f"celltcp {fmt_number(q.celltcp)}"]
            if q.ns3 is not None:
                side.append(f"ns-3 {fmt_number(q.ns3)}")
            lines.append(f"   {q.name}{f' ({q.unit})' if q.unit else ''}: " + ", ".join(side))
        tol = v.tolerance or ev.finding.tolerance
        if tol:
            lines.append(f"   tolerance: {tol}")
        if v.setting:
            lines.append(f"   setting: {v.setting}")
        lines.append(f"   celltcp: {v.result}")
    return "\n".join(lines)


def score(evaluated: Sequence[Evaluated]) -> str:
    """"N of M findings agree in magnitude, K in direction only, ..."."""
    return _score(evaluated)


def _error(msg: object) -> int:
    sys.stderr.write(f"celltcp: error: {msg}\n")
    return 2


def run(args: argparse.Namespace) -> int:
    """The ``celltcp study`` command (``args``: name, list, out, quick, jobs, executor, address)."""
    if getattr(args, "list", False):
        studies = list_studies()
        width = max(len(n) for n, _ in studies)
        for name, summary in studies:
            print(f"{name.ljust(width)}  {summary}")
        return 0
    if not args.name:
        return _error("give a study name (celltcp study --list shows them)")
    try:
        study = get(args.name)
    except UnknownStudy as e:
        return _error(e)
    if not args.out:
        return _error(f"celltcp study {args.name}: -o DIR is required")
    from .sweep import SweepError

    try:
        outcome = run_study(study, args.out, quick=bool(args.quick), jobs=args.jobs,
                            executor=args.executor or "local", address=args.address,
                            progress=not getattr(args, "quiet", False)
                            and (getattr(args, "progress", False) or sys.stderr.isatty()))
    except (SweepError, FileNotFoundError) as e:
        return _error(e)
    print(summary_text(outcome.evaluated))
    print(f"{score(outcome.evaluated)}; runs done {outcome.done}, "
          f"skipped {outcome.skipped}, failed {outcome.failed}")
    print(f"report: {outcome.report}")
    return 1 if outcome.failed else 0


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - for `python -m`
    p = argparse.ArgumentParser(prog=PROG)
    p.add_argument("name", nargs="?")
    p.add_argument("--list", action="store_true")
    p.add_argument("-o", "--out")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--jobs", type=int)
    p.add_argument("--executor", default="local", choices=["local", "ray"])
    p.add_argument("--address")
    return run(p.parse_args(argv))
