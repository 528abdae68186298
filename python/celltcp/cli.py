"""The ``celltcp`` command: a thin layer over :mod:`celltcp.api` and :mod:`celltcp.plots`.

::

    celltcp run SCENARIO.toml -o DIR [--seed N] [--set key.path=value ...] [--overwrite] [--plot]
    celltcp demo [-o DIR] [--seed N] [--set key.path=value ...] [--overwrite]
    celltcp plot DIR [--format png,svg]
    celltcp validate SCENARIO.toml [--seed N] [--set key.path=value ...]
    celltcp list cc
    celltcp sweep SWEEP.toml -o DIR [--jobs N] [--executor local|ray] [--address ADDR] [--progress]
    celltcp query DIR "SQL" [--csv | --json] [--unsafe]
    celltcp study NAME -o DIR [--quick] [--jobs N] [--executor local|ray] [--address ADDR]
    celltcp study --list
    celltcp emu SCENARIO.toml -o DIR [--exec NODE -- CMD ARGS...] [--shell NODE] [--set ...]
    celltcp emu --cleanup
    celltcp --version

Exit status: 0 on success, 2 for bad input (an invalid scenario or sweep, a missing file, an
existing DIR, a Ray address that does not answer), 1 when some runs of a sweep failed, 130 when
interrupted. A failed or interrupted run leaves no DIR behind; an interrupted sweep continues
where it stopped when run again.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from typing import TYPE_CHECKING

from . import __version__
from ._core import DEMO_SCENARIO, ScenarioError
from ._lazy import lazy

if TYPE_CHECKING:
    from . import api
else:
    # loaded when a command runs, not for `--help` or a usage error (see _lazy)
    api = lazy("celltcp.api")

PROG = "celltcp"


class _Terminated(Exception):
    """SIGTERM, turned into an exception so that the temporary run directory is removed."""


def _on_sigterm(signum: int, frame: Any) -> NoReturn:
    raise _Terminated()


def _formats(s: str) -> list[str]:
    fmts = [f.strip().lower() for f in s.split(",") if f.strip()]
    bad = [f for f in fmts if f not in ("png", "svg", "pdf")]
    if bad or not fmts:
        raise argparse.ArgumentTypeError(f"{s!r}: expected a comma-separated list of png, svg, pdf")
    return fmts


def _names(s: str) -> list[str]:
    names = [n.strip() for n in s.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{s!r}: expected a comma-separated list of names")
    return names


def _seed(s: str) -> int:
    try:
        n = int(s, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_one_line(s)!r}: expected an integer 0 .. 2^64-1") from None
    if not 0 <= n < 2**64:
        raise argparse.ArgumentTypeError(f"{_one_line(s)}: expected an integer 0 .. 2^64-1")
    return n


def _utf8(s: str) -> str:
    """An argument as given, refused if it is not valid UTF-8 (the shell passed other bytes)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        shown = s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise argparse.ArgumentTypeError(f"{_one_line(shown)!r}: not valid UTF-8") from None
    return s


def _one_line(s: str, limit: int = 200) -> str:
    """``s`` on one line, cut to ``limit`` characters (a message never echoes a megabyte)."""
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line, like every other refusal: the message, then
    where to read the usage (argparse prints the whole usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="celltcp: a fast, validated simulator of TCP over cellular networks.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  celltcp demo                      # run the built-in demo into ./celltcp-demo\n"
            "  celltcp run s.toml -o out --set link.0.rate=20Mbps --seed 2 --plot\n"
            "  celltcp plot out --format png,svg,pdf\n"
            "  celltcp sweep examples/sweep-dumbbell.toml -o sw --jobs 2\n"
            "  celltcp query sw 'SELECT \"flow.cubic.cc\", avg(goodput_bps) FROM results GROUP BY 1'\n"
            "\n"
            "exit status: 0 success, 2 bad input (invalid scenario or sweep, missing file, existing\n"
            "DIR, unreachable Ray address), 1 some sweep runs failed, 130 interrupted. A failed or\n"
            "interrupted run leaves no DIR behind; a sweep continues where it stopped."
        ),
    )
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def scenario_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--seed", type=_seed, help="run seed (overrides the scenario's)")
        sp.add_argument(
            "--set",
            dest="sets",
            action="append",
            type=_utf8,
            default=[],
            metavar="KEY.PATH=VALUE",
            help="override one scenario value, e.g. --set link.0.rate=20Mbps (repeatable)",
        )

    r = sub.add_parser("run", help="run one scenario into a run directory")
    r.add_argument("scenario", metavar="SCENARIO.toml", help="scenario file")
    r.add_argument("-o", "--out", required=True, metavar="DIR", help="run directory to write")
    scenario_opts(r)
    r.add_argument("--overwrite", action="store_true", help="replace DIR if it holds an earlier run")
    r.add_argument("--plot", action="store_true", help="also draw the figures into DIR/figures")
    r.add_argument("--format", type=_formats, default=["png", "svg"], help="figure formats (png,svg)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no result table")
    iv = r.add_mutually_exclusive_group()
    iv.add_argument("--intervals", dest="intervals", action="store_true", default=None,
                    help="print each iperf flow's interval lines as they complete, as iperf3 "
                         "does (the default when stdout is a terminal)")
    iv.add_argument("--no-intervals", dest="intervals", action="store_false",
                    help="no live interval lines (the progress bar instead)")

    em = sub.add_parser(
        "emu",
        help="run a scenario in real time with real hosts (Linux network namespaces; root)",
        description="Run SCENARIO in real time: the hosts that run commands ([[exec]], --exec, "
        "--shell) become network namespaces with TUN devices, where the kernel's TCP and real "
        "programs run; the rest is simulated. See docs/emulation.md.",
    )
    em.add_argument("scenario", nargs="?", metavar="SCENARIO.toml", help="scenario file")
    em.add_argument("-o", "--out", metavar="DIR", help="run directory to write")
    scenario_opts(em)
    em.add_argument("--overwrite", action="store_true", help="replace DIR if it holds an earlier run")
    em.add_argument("--exec", dest="exec_node", metavar="NODE",
                    help="run the command after -- on NODE (a foreground command)")
    em.add_argument("--shell", metavar="NODE", help="an interactive shell on NODE; the run ends when it exits")
    em.add_argument("--cleanup", action="store_true",
                    help="remove what dead emulation runs left (namespaces, devices, processes) and exit")
    em.add_argument("-q", "--quiet", action="store_true", help="no result table")

    d = sub.add_parser("demo", help="run the built-in demo scenario and draw its figures")
    d.add_argument("-o", "--out", default="celltcp-demo", metavar="DIR",
                   help="run directory (default: celltcp-demo)")
    scenario_opts(d)
    d.add_argument("--overwrite", action="store_true", help="replace DIR if it holds an earlier run")
    d.add_argument("--format", type=_formats, default=["png", "svg"], help="figure formats (png,svg)")
    d.add_argument("--show-scenario", action="store_true",
                   help="print the demo scenario (TOML) and exit")
    d.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no result table")

    pl = sub.add_parser("plot", help="draw the figures of a finished run")
    pl.add_argument("dir", metavar="DIR")
    pl.add_argument("--format", type=_formats, default=["png", "svg"],
                    help="comma-separated figure formats: png, svg, pdf (default png,svg)")
    pl.add_argument("--only", type=_names, metavar="NAMES",
                    help="comma-separated figures to draw, e.g. cwnd,throughput (default: all "
                         "the run has data for)")
    pl.add_argument("--flows", type=_names, metavar="PATTERNS",
                    help="comma-separated flow names or glob patterns the per-flow figures draw, "
                         "e.g. 'dl-ue1,dl-ue1?'")
    pl.add_argument("--font-scale", type=float, default=1.0, metavar="X",
                    help="multiply every font size by X (e.g. 1.4 for slides)")
    pl.add_argument("--width", type=float, metavar="INCHES",
                    help="width of single-panel figures in inches (default 6; height follows)")

    v = sub.add_parser("validate", help="check a scenario and print the configuration as run")
    v.add_argument("scenario", metavar="SCENARIO.toml", help="scenario file")
    scenario_opts(v)

    ls = sub.add_parser("list", help="list what is available")
    ls.add_argument("what", choices=["cc"], help="cc: congestion controls")

    def executor_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-j", "--jobs", type=_positive, metavar="N",
                        help=f"runs at a time (default: the number of cores, {os.cpu_count()}); "
                             "with --address, the cluster's CPUs decide")
        sp.add_argument("--executor", choices=["local", "ray"], default="local",
                        help="local: a pool of processes (default); ray: Ray tasks")
        sp.add_argument("--address", metavar="ADDR",
                        help="Ray cluster to join (HOST:PORT of the head node); default: start a "
                             "local Ray instance")

    sw = sub.add_parser("sweep", help="run a grid of runs (resumable) into a sweep directory",
                        description="Run every run of a sweep file that DIR does not hold yet, "
                                    "then rebuild DIR/results.parquet. See docs/sweeps.md.")
    sw.add_argument("sweep", metavar="SWEEP.toml", help="sweep file")
    sw.add_argument("-o", "--out", required=True, metavar="DIR", help="sweep directory")
    executor_opts(sw)
    sw.add_argument("--progress", action="store_true",
                    help="show the progress line even when stderr is not a terminal")
    sw.add_argument("-q", "--quiet", action="store_true", help="no progress line and no summary")

    q = sub.add_parser("query", help="SQL over a sweep's results (DuckDB)",
                       description="Run SQL over a sweep directory's tables: results (one row per "
                                   "run and flow), runs (one row per run) and links.")
    q.add_argument("dir", metavar="DIR", help="sweep directory")
    q.add_argument("sql", metavar="SQL", help='e.g. \'SELECT "flow.dl.cc", avg(goodput_bps) '
                                               'FROM results GROUP BY 1\'')
    fmt = q.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="print CSV")
    fmt.add_argument("--json", action="store_true", help="print a JSON array of rows")
    q.add_argument("--unsafe", action="store_true",
                   help="let the SQL read and write files (COPY, read_csv, ...): off by default, "
                        "so a query cannot change the sweep's tables or other files")

    rp = sub.add_parser("report", help="write report.html (figures, aggregated table) of a sweep",
                        description="Draw a sweep's figures and write its report.html, in the "
                                    "layout of a study's report. See docs/sweeps.md.")
    rp.add_argument("dir", metavar="SWEEP_DIR", help="sweep directory (from `celltcp sweep`)")
    rp.add_argument("-o", "--out", metavar="FILE",
                    help="report file (default SWEEP_DIR/report.html)")
    rp.add_argument("--metrics", type=_names, metavar="NAMES",
                    help="comma-separated result columns to draw and tabulate (default: "
                         "goodput_bps, rtt_mean_ms, retransmitted_segments, loss_ratio: those "
                         "the results have)")
    rp.add_argument("--flows", type=_names, metavar="NAMES",
                    help="comma-separated flow names (default: all)")
    rp.add_argument("--x", metavar="PARAM",
                    help="swept parameter on the x axis (default: the first that varies)")
    rp.add_argument("--group", metavar="PARAM",
                    help="one line per value of PARAM (a swept parameter, or flow)")
    rp.add_argument("--format", type=_formats, default=["png", "svg"],
                    help="figure formats: png, svg, pdf (default png,svg)")
    rp.add_argument("--no-traces", action="store_true",
                    help="leave out the cwnd/goodput time traces of a few runs")

    vw = sub.add_parser("view", help="a run, sweep or study in the browser (linked plots, map)",
                        description="Write a self-contained page of DIR (a run, a sweep or a "
                                    "study) with linked, zoomable time series, a map of the "
                                    "cells and UE tracks, and a table of a sweep's runs, and "
                                    "open it. See docs/outputs.md.")
    vw.add_argument("dir", metavar="DIR", help="run, sweep or study directory")
    vw.add_argument("--export", metavar="FILE.html",
                    help="write the page to FILE.html instead of DIR/view.html, and do not open it")
    vw.add_argument("--no-open", action="store_true", help="write the page, do not open a browser")
    vw.add_argument("--max-points", type=int, default=None, metavar="N",
                    help="at most N samples per series (default 2000 for a run, 300 per run of "
                         "a sweep)")
    vw.add_argument("--max-runs", type=int, default=100, metavar="N",
                    help="embed the time series of at most N runs of a sweep (default 100)")

    st = sub.add_parser("study", help="run a study (its sweep, figures and report.html)")
    st.add_argument("name", nargs="?", metavar="NAME", help="study name (see --list)")
    st.add_argument("-o", "--out", metavar="DIR", help="study directory")
    st.add_argument("--list", action="store_true", help="list the studies and exit")
    st.add_argument("--quick", action="store_true", help="fewer points and shorter runs")
    st.add_argument("--progress", action="store_true",
                    help="show the progress line even when stderr is not a terminal")
    st.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    executor_opts(st)
    return p


def _positive(s: str) -> int:
    try:
        n = int(s)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{s!r}: expected a whole number >= 1")
    return n


# ---------------------------------------------------------------------------------------------
# Output


def _fmt(v: Any, spec: str, scale: float = 1.0) -> str:
    if v is None or isinstance(v, bool):
        return "-"
    try:
        return format(float(v) / scale, spec)
    except (TypeError, ValueError):
        return "-"


def print_flow_table(result: api.Result, stream: TextIO) -> None:
    """An iperf3-like summary: one line per flow."""
    flows = result.summary.get("flows", [])
    if not flows:
        return
    head = ["flow", "app", "cc", "goodput Mbit/s", "retransmits", "RTT mean ms", "loss ratio"]
    rows = []
    for f in flows:
        tcp = f.get("cc") is not None
        retx = f.get("retransmitted_segments")
        rows.append([
            str(f.get("name", "?")),
            str(f.get("app", "-")),
            str(f.get("cc") or "-"),
            _fmt(f.get("goodput_bps"), ".2f", 1e6) if f.get("app") != "ping" else "-",
            str(retx) if tcp and retx is not None else "-",
            _fmt(f.get("rtt_mean_ms"), ".1f"),
            _fmt(f.get("loss_ratio"), ".4f"),
        ])
    rows += _sum_rows(flows)
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
    left = {0, 1, 2}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if k in left else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))

    m = result.manifest
    stream.write(
        f"- - - - - - - - - - - - - - - - - - - - - - - - -\n"
        f"simulated {m.get('sim_time_s', 0):g} s in {m.get('wall_time_s', 0):.2f} s wall, "
        f"{m.get('events', 0):,} events, seed {m.get('seed')}\n"
    )
    stream.write(line(head) + "\n")
    for r in rows:
        stream.write(line(r) + "\n")
    for note in _app_notes(result.summary):
        stream.write(note + "\n")
    stream.flush()


def _sum_rows(flows: Sequence[dict[str, Any]]) -> list[list[str]]:
    """iperf3's ``[SUM]`` line for each test split into streams (``parallel``, ``bidir``): one per
    direction, after the streams."""
    groups: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for f in flows:
        if f.get("stream"):
            groups.setdefault((str(f.get("test")), bool(f.get("reverse"))), []).append(f)
    bidir = {t for t, rev in groups if (t, not rev) in groups}
    rows = []
    for (test, rev), fs in groups.items():
        if len(fs) < 2:
            continue
        name = f"[SUM] {test}" + ((".rx" if rev else ".tx") if test in bidir else "")
        tcp = fs[0].get("cc") is not None
        retx = sum(int(f.get("retransmitted_segments") or 0) for f in fs)
        rows.append([name, str(fs[0].get("app", "-")), str(fs[0].get("cc") or "-"),
                     _fmt(sum(float(f.get("goodput_bps") or 0.0) for f in fs), ".2f", 1e6),
                     str(retx) if tcp else "-", "-", "-"])
    return rows


def _app_notes(summary: dict[str, Any]) -> list[str]:
    """One line per web or video flow (page times; start-up, stalls, satisfaction) and Jain's
    fairness index when two or more flows carry payload."""
    notes = []
    for f in summary.get("flows", []):
        name = f.get("name", "?")
        if f.get("app") == "web":
            notes.append(f"{name}: {f.get('pages', 0)} pages, page time mean "
                         f"{_fmt(f.get('page_time_mean_s'), '.3f')} s, max "
                         f"{_fmt(f.get('page_time_max_s'), '.3f')} s")
        elif f.get("app") == "video":
            ok = "yes" if f.get("video_satisfied") else "no"
            notes.append(f"{name}: start-up {_fmt(f.get('video_startup_s'), '.2f')} s, "
                         f"{f.get('video_stalls', 0)} stalls ({_fmt(f.get('video_stall_time_s'), '.2f')} s), "
                         f"satisfied: {ok}")
    payload = [f for f in summary.get("flows", []) if f.get("app") != "ping"]
    if len(payload) >= 2 and summary.get("jain_index") is not None:
        notes.append(f"Jain's fairness index (goodput, {len(payload)} flows): {_fmt(summary['jain_index'], '.3f')}")
    return notes + _lte_notes(summary.get("lte"))


def _span(values: Sequence[float], spec: str) -> str:
    lo, hi = min(values), max(values)
    return format(lo, spec) if format(lo, spec) == format(hi, spec) else f"{lo:{spec}} to {hi:{spec}}"


def _lte_notes(lte: dict[str, Any] | None) -> list[str]:
    """The LTE facts of a run (see docs/outputs.md, "lte"): one line for the cells (downlink PRB
    use and throughput), one for the UEs (SINR and CQI, per-UE means), one for mobility
    (handovers, interruption, SDUs forwarded over X2 and lost, radio link failures)."""
    if not lte:
        return []
    notes = []
    cells = lte.get("cells") or []
    if cells:
        notes.append(f"LTE cells ({len(cells)}): " + ", ".join(
            f"{c.get('name', '?')} DL PRBs {_fmt(c.get('dl_prb_utilization'), '.0%')} "
            f"{_fmt(c.get('dl_throughput_bps'), '.2f', 1e6)} Mbit/s" for c in cells[:4])
            + (", ..." if len(cells) > 4 else ""))
    ues = [u for u in lte.get("ues") or [] if isinstance(u.get("dl"), dict)]
    sinr = [u["dl"]["sinr_db_mean"] for u in ues if u["dl"].get("sinr_db_mean") is not None]
    cqi = []
    for u in ues:
        hist = u["dl"].get("cqi_hist") or []
        if sum(hist):
            cqi.append(sum(k * n for k, n in enumerate(hist)) / sum(hist))
    if sinr:
        notes.append(f"LTE UEs ({len(ues)}): DL SINR mean {_span(sinr, '.1f')} dB, CQI mean "
                     f"{_span(cqi, '.1f') if cqi else '-'}" + (" (per UE)" if len(ues) > 1 else ""))
    hos = [h for h in lte.get("handovers") or [] if h.get("kind", "handover") == "handover"]
    mob = lte.get("mobility") or {}
    rlf = mob.get("radio_link_failures", len(lte.get("radio_link_failures") or []))
    if hos or rlf or mob.get("handovers"):
        gaps = [h["interruption_ms"] for h in hos if h.get("interruption_ms") is not None]
        fwd = sum(h.get("sdus_forwarded", 0) + h.get("sdus_forwarded_late", 0) for h in hos)
        lost = sum(h.get("sdus_discarded", 0) for h in hos)
        notes.append(
            f"handovers: {len(hos)}"
            + (f", interruption mean {sum(gaps) / len(gaps):.1f} ms (max {max(gaps):.1f})"
               if gaps else "")
            + f", SDUs forwarded over X2 {fwd}, lost {lost}; ping-pongs "
            f"{mob.get('ping_pongs', 0)}, radio link failures {rlf}")
    return notes


def _error(msg: object, code: int = 2) -> int:
    sys.stderr.write(f"{PROG}: error: {msg}\n")
    sys.stderr.flush()
    return code


# ---------------------------------------------------------------------------------------------
# Commands


def _run(args: argparse.Namespace, scenario: api.Scenario, argv: Sequence[str]) -> int:
    out = Path(args.out)
    plot = args.command == "demo" or args.plot
    # iperf3's lines as the intervals complete: asked for, or by default on a terminal
    live = not args.quiet and (getattr(args, "intervals", False) or
                               (getattr(args, "intervals", None) is None and sys.stdout.isatty()))
    shown = [False]

    def print_intervals(rows: list[api.IntervalLine]) -> None:
        if not shown[0]:
            print("iperf intervals (as they complete):")
            shown[0] = True
        for r in rows:
            print(api.format_interval(r))
        sys.stdout.flush()

    result = api.execute(
        scenario,
        seed=args.seed,
        out=out,
        overwrite=args.overwrite,
        progress=not args.quiet and not live,  # the bar would cut through the lines
        overrides=api.overrides_list(args.sets),
        command=[PROG, *argv],
        intervals=print_intervals if live else None,
    )
    # Figures are drawn once the run is committed: a figure that fails loses no result.
    if plot:
        # imported only here: matplotlib and pandas take longer to import than a run takes
        from . import plots

        try:
            plots.plot_run(out, args.format)
        except Exception as e:  # noqa: BLE001 - the run is safe; say what failed, exit 1
            sys.stderr.write(f"{PROG}: the run is complete in {out}, but drawing its figures "
                             f"failed: {type(e).__name__}: {_one_line(str(e))}\n")
            return 1
    if not args.quiet:
        print_flow_table(result, sys.stdout)
        for f in result.manifest.get("files", []):
            if f.startswith("pcap/"):
                print(f"pcap: {out / f}")
        if plot:
            print(f"figures: {out / 'figures'}")
        print(f"results: {out}")
    return 0


def _emu(args: argparse.Namespace, argv: Sequence[str], cmd: list[str]) -> int:
    if os.geteuid() != 0:
        return _error("celltcp emu needs root (CAP_NET_ADMIN) to create network namespaces and "
                      "TUN devices: run it as root (e.g. with sudo)")
    if args.cleanup:
        from . import _core

        for item in _core.emu_cleanup():
            print(f"removed {item}")
        return 0
    if not args.scenario or not args.out:
        return _error("emu: expected SCENARIO.toml and -o DIR (or --cleanup)")
    if args.exec_node and not cmd:
        return _error("emu: --exec NODE needs a command after -- (e.g. --exec ue0 -- ping -c 3 "
                      "{addr:server})")
    if cmd and not args.exec_node:
        return _error("emu: a command after -- needs --exec NODE")
    out = Path(args.out)
    result = api.execute(
        Path(args.scenario),
        seed=args.seed,
        out=out,
        overwrite=args.overwrite,
        overrides=api.overrides_list(args.sets),
        command=[PROG, *argv],
        emu=api.EmuArgs(execs=[(args.exec_node, cmd)] if cmd else [], shell=args.shell),
    )
    if not args.quiet:
        emu = result.summary.get("emu", {})
        lat = emu.get("lateness", {})
        print(f"ended by {emu.get('ended_by')}; event lateness p50 {lat.get('p50_us', 0):.0f} us, "
              f"p99 {lat.get('p99_us', 0):.0f} us, max {lat.get('max_us', 0):.0f} us; "
              f"{emu.get('packets_in', 0)} packets in, {emu.get('packets_out', 0)} out")
        for p in emu.get("exec", []):
            status = (f"exit {p['exit_code']}" if p.get("exit_code") is not None
                      else f"signal {p.get('signal')}")
            print(f"[{p['index']}] {p['node']}: {p['cmd']} ({status}) -> "
                  f"{out / 'exec' / (str(p['index']) + '-' + p['node'])}.out")
        if result.flows is not None and len(result.flows):
            print_flow_table(result, sys.stdout)
        print(f"results: {out}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from . import sweep

    sw = sweep.load_sweep(args.sweep)
    progress = not args.quiet and (args.progress or sys.stderr.isatty())
    if not args.quiet:
        print(f"sweep {args.sweep}: {len(sw.runs)} runs ({len(sw.runs) // len(sw.seeds)} "
              f"combinations x {len(sw.seeds)} seeds) into {args.out}", flush=True)
    res = sweep.run_sweep(sw, args.out, jobs=args.jobs, executor=args.executor,
                          address=args.address, progress=progress)
    if not args.quiet:
        print(f"done {res.done}, skipped {res.skipped} (already finished), failed {res.failed}"
              f" of {res.total} runs in {res.wall_s:.1f} s")
        if res.failed:
            print(f"failed runs: {res.failed_dir} (run the same command again to retry them)")
        print(f"results: {Path(args.out) / sweep.RESULTS} ({len(res.table)} rows)")
    return 1 if res.failed else 0


def _query(args: argparse.Namespace) -> int:
    from . import query

    try:
        df = query.query(args.dir, args.sql, unsafe=args.unsafe)
    except ImportError as e:
        return _error(e)
    if args.csv:
        df.to_csv(sys.stdout, index=False)
    elif args.json:
        query.write_json(df, sys.stdout)
    else:
        query.format_table(df, sys.stdout)
    return 0


def _study(args: argparse.Namespace) -> int:
    try:
        from . import study
    except ModuleNotFoundError as e:
        if e.name != f"{__package__}.study":
            raise
        return _error("study support is not installed (celltcp.study is missing from this "
                      "installation)")
    if not args.list:
        if not args.name:
            return _error("study: expected a study NAME (see celltcp study --list)")
        if not args.out:
            return _error("study: expected -o DIR")
    code: int = study.run(args)
    return code


def _dispatch(args: argparse.Namespace, argv: Sequence[str], cmd: list[str] | None = None) -> int:
    if args.command == "emu":
        return _emu(args, argv, cmd or [])
    if args.command == "run":
        return _run(args, Path(args.scenario), argv)
    if args.command == "demo":
        if args.show_scenario:
            sys.stdout.write(DEMO_SCENARIO)
            return 0
        return _run(args, DEMO_SCENARIO, argv)
    if args.command == "plot":
        from . import plots

        try:
            paths = plots.plot_run(args.dir, args.format, only=args.only, flows=args.flows,
                                   font_scale=args.font_scale, width=args.width)
        except ValueError as e:  # an unknown figure, a font scale or width out of range
            return _error(e)
        for path in paths:
            print(path)
        return 0
    if args.command == "validate":
        config = api.validate(Path(args.scenario), seed=args.seed, set=args.sets)
        print(json.dumps(config, indent=2))
        return 0
    if args.command == "sweep":
        return _sweep(args)
    if args.command == "query":
        return _query(args)
    if args.command == "study":
        return _study(args)
    if args.command == "view":
        from . import viewer

        return viewer.run(args)
    if args.command == "report":
        from . import sweep_report

        return sweep_report.run(args)
    if args.command == "list":
        ccs = api.list_cc()
        width = max((len(n) for n, _ in ccs), default=0)
        for name, desc in ccs:
            print(f"{name.ljust(width)}  {desc}")
        return 0
    raise AssertionError(args.command)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``celltcp`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # `celltcp emu ... --exec NODE -- CMD ARGS...`: everything after `--` is the command
    cmd: list[str] = []
    if argv and argv[0] == "emu" and "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    args = _parser().parse_args(argv)
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (main() called from a thread)
        pass
    try:
        return _dispatch(args, argv, cmd)
    except (ScenarioError, FileNotFoundError, FileExistsError, IsADirectoryError,
            PermissionError, api.InputError) as e:
        return _error(e)
    except OSError as e:
        # an unreadable scenario, an -o that cannot be written (under a file, no permission),
        # a full disk: one line, not a traceback
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _error(f"{where}{e.strerror or e}")
    except ValueError as e:
        # SweepError (a bad sweep file, directory or Ray address) and SQL errors from query
        from .sweep import SweepError

        if isinstance(e, SweepError) or args.command == "query":
            return _error(e)
        raise
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return 130
    except _Terminated:
        sys.stderr.write(f"\n{PROG}: terminated\n")
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    raise SystemExit(main())
