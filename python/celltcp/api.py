"""``celltcp.run()`` and the ``Result`` of a run.

A thin layer over the native core (``celltcp._core``): it turns the scenario into TOML text and
the keyword overrides into ``key.path=value`` strings, hands them to the core (which validates,
simulates, and streams the time series to Parquet as it runs), and writes the run directory::

    DIR/manifest.json         configuration as run, seed, versions, wall time, events, ...
    DIR/summary.json          per-flow and per-link metrics
    DIR/timeseries/NAME.parquet  written by the core while the run goes, in row groups
    DIR/pcap/LINK.pcap        when the scenario asks for pcap
    DIR/figures/NAME.{png,svg} with ``celltcp plot DIR`` (or ``celltcp run --plot``)

The directory appears atomically: the run writes into a hidden sibling temporary directory
that is renamed to DIR only once everything is written, and removed on any error or
interrupt, so a failed or interrupted run leaves no half-written DIR.

Without ``out`` the core keeps the time series in memory and hands them back as columns (memory
then grows with the simulated time: give long runs an ``out``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from . import _core, _toml
from ._lazy import lazy

# imported on first use: `import celltcp` and `celltcp --help` stay fast (see _lazy)
np = lazy("numpy")
pd = lazy("pandas")
from ._core import ScenarioError

__all__ = ["Result", "ScenarioError", "run", "validate", "list_cc", "load_scenario"]

if TYPE_CHECKING:
    from .scenario import Scenario as ScenarioObject

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any], "ScenarioObject"]
ProgressArg = Union[bool, Callable[[float], Union[bool, None]], None]

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
TIMESERIES = "timeseries"


# ---------------------------------------------------------------------------------------------
# Inputs


class InputError(ValueError):
    """Input that cannot be read as a scenario (not UTF-8 text, say); the CLI exits 2."""


def _read_toml(path: Path) -> str:
    """A TOML file's text; TOML is UTF-8 (TOML 1.0 §"Spec"), so other encodings are refused
    with the offending byte's position, and a NUL byte is named."""
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path}: the file is UTF-16; TOML files must be UTF-8 (convert it, e.g. "
                         f"iconv -f UTF-16 -t UTF-8)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{path}: line {line}: byte 0x{data[e.start]:02x} is not UTF-8; TOML "
                         f"files must be UTF-8") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(f"{path}: line {line}: a NUL byte; TOML files are text")
    return text.removeprefix("\ufeff")


def load_scenario(scenario: Scenario) -> tuple[str, str | None]:
    """The TOML text of a scenario and the file it came from (None for a TOML string or dict).

    ``scenario`` is a path (``str`` or ``os.PathLike``) to a TOML file, a TOML string (anything
    with a newline or an ``=``), a dict with the same structure as the TOML file, or a
    ``celltcp.Scenario``.
    """
    from .scenario import Scenario as ScenarioObject

    if isinstance(scenario, ScenarioObject):
        return scenario.text, scenario.source
    if isinstance(scenario, Mapping):
        return _toml.dumps(scenario), None
    if isinstance(scenario, os.PathLike):
        path = Path(scenario)
        return _read_toml(path), str(path)
    if isinstance(scenario, str):
        if "\n" in scenario or "=" in scenario:
            return scenario, None
        path = Path(scenario)
        if not path.is_file():
            raise FileNotFoundError(f"no such scenario file: {scenario}")
        return _read_toml(path), str(path)
    raise TypeError(
        f"scenario must be a path, a TOML string or a dict, not {type(scenario).__name__}"
    )


def _override_value(v: Any) -> str:
    # Strings go as written ("20Mbps", "cubic"), the way `--set key=value` passes them.
    if isinstance(v, str):
        return v
    return _toml.value(v)


def overrides_list(sets: Iterable[str] = (), overrides: Mapping[str, Any] | None = None) -> list[str]:
    """``key.path=value`` strings from ``--set`` style strings plus keyword overrides.

    A keyword override uses ``__`` for the dots: ``link__0__rate="20Mbps"`` is
    ``link.0.rate=20Mbps``.
    """
    out = []
    if isinstance(sets, str):  # set="k=v" rather than set=["k=v"]
        sets = [sets]
    for s in sets:
        if not isinstance(s, str) or "=" not in s:
            raise ScenarioError(f"override {s!r}: expected key.path=value")
        out.append(s)
    for k, v in (overrides or {}).items():
        out.append(f"{k.replace('__', '.')}={_override_value(v)}")
    return out


def _with_file(e: ScenarioError, source: str | None) -> ScenarioError:
    """The same error, its message prefixed with the scenario file's name."""
    if source is None:
        return e
    return ScenarioError(f"{source}: {e}")


def validate(
    scenario: Scenario, *, seed: int | None = None, set: Sequence[str] = (), **overrides: Any
) -> dict[str, Any]:
    """Validate a scenario and return the configuration as it would run (defaults filled in)."""
    text, source = load_scenario(scenario)
    ovr = overrides_list(set, overrides)
    try:
        config: dict[str, Any] = json.loads(_core.validate(text, seed=seed, overrides=ovr))
    except ScenarioError as e:
        raise _with_file(e, source) from None
    return config


def list_cc() -> list[tuple[str, str]]:
    """The congestion controls available, as (name, description) pairs."""
    return _core.list_cc()


# ---------------------------------------------------------------------------------------------
# Progress


class ProgressBar:
    """A one-line progress bar on stderr: fraction of simulated time done, elapsed, ETA.

    Stays silent for the first ``delay`` seconds, so short runs print nothing.
    """

    def __init__(self, stream: Any = None, delay: float = 2.0, width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.width = width
        self.start = time.monotonic()
        self.last_draw = 0.0
        self.shown = False

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        elapsed = now - self.start
        if elapsed < self.delay or (now - self.last_draw < 0.1 and fraction < 1.0):
            return
        self.last_draw = now
        self.shown = True
        self._draw(min(max(fraction, 0.0), 1.0), elapsed)

    def _draw(self, fraction: float, elapsed: float) -> None:
        filled = int(round(self.width * fraction))
        eta = elapsed * (1.0 - fraction) / fraction if fraction > 0 else float("nan")
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {100 * fraction:5.1f}% sim time"
            f"  elapsed {_fmt_s(elapsed)}  ETA {_fmt_s(eta)} "
        )
        self.stream.flush()

    def close(self, completed: bool = False) -> None:
        """End the bar's line (at 100% when the run completed)."""
        if self.shown:
            if completed:
                self._draw(1.0, time.monotonic() - self.start)
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


def _fmt_s(s: float) -> str:
    if s != s:  # NaN
        return "--:--"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


# ---------------------------------------------------------------------------------------------
# Columns and files


def _columns_to_frame(cols: Mapping[str, tuple[str, Any]]) -> pd.DataFrame:
    """A DataFrame from the core's columns: one array per column, no object per sample."""
    data: dict[str, Any] = {}
    for name, (dtype, buf) in cols.items():
        if dtype in ("f8", "i8"):
            data[name] = np.frombuffer(buf, dtype=np.dtype(dtype).newbyteorder("<"))
        elif dtype == "b1":
            data[name] = np.frombuffer(buf, dtype=np.bool_)
        elif dtype == "str":
            data[name] = pd.array(buf, dtype="string")
        else:
            raise ValueError(f"column {name}: unknown dtype {dtype!r} from the core")
    return pd.DataFrame(data)


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _make_manifest(raw: Mapping[str, Any], config: Any, command: Sequence[str] | None,
                   source: str | None, files: list[str], cpu: float) -> dict[str, Any]:
    wall = float(raw["wall_time_s"])
    events = int(raw["events"])
    sim = float(raw["sim_time_s"])
    return {
        "celltcp_version": _core.version(),
        "seed": int(raw["seed"]),
        "created_utc": _utc_now(),
        "command": list(command) if command is not None else None,
        "scenario_file": source,
        "wall_time_s": wall,
        "events": events,
        "sim_time_s": sim,
        "events_per_wall_s": events / wall if wall > 0 else None,
        "sim_s_per_wall_s": sim / wall if wall > 0 else None,
        "cpu_time_s": cpu,
        "sim_s_per_cpu_s": sim / cpu if cpu > 0 else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "files": files,
        "config": config,
    }


# ---------------------------------------------------------------------------------------------
# Result


class Result:
    """The result of one run, in memory or in a run directory.

    ``summary`` and ``manifest`` are dicts (``summary.json`` and ``manifest.json``); ``flows`` and
    ``links`` are DataFrames with one row per flow / link; ``timeseries(name)`` is a DataFrame
    with one row per sample. ``dir`` is the run directory, or None for a run kept in memory.
    """

    def __init__(
        self,
        summary: dict[str, Any],
        manifest: dict[str, Any],
        dir: Path | None = None,
        tables: dict[str, pd.DataFrame] | None = None,
    ) -> None:
        self.summary = summary
        self.manifest = manifest
        self.dir = dir
        self._tables: dict[str, pd.DataFrame] = dict(tables or {})

    @classmethod
    def load(cls, dir: str | os.PathLike[str]) -> Result:
        """Reopen a finished run directory (time series are read when first asked for)."""
        d = Path(dir)
        if not (d / MANIFEST).is_file():
            raise FileNotFoundError(f"{d} is not a celltcp run directory (no {MANIFEST})")
        summary = json.loads((d / SUMMARY).read_text(encoding="utf-8"))
        manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
        return cls(summary, manifest, d)

    @property
    def config(self) -> dict[str, Any]:
        """The configuration as run."""
        cfg: dict[str, Any] = self.manifest["config"]
        return cfg

    @property
    def seed(self) -> int:
        return int(self.manifest["seed"])

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow (``summary["flows"]``)."""
        return pd.DataFrame(self.summary.get("flows", []))

    @property
    def links(self) -> pd.DataFrame:
        """One row per link (``summary["links"]``)."""
        return pd.DataFrame(self.summary.get("links", []))

    @property
    def ues(self) -> pd.DataFrame:
        """One row per LTE UE (``summary["lte"]["ues"]``; the downlink and uplink counters as
        ``dl.*`` and ``ul.*`` columns); empty without ``[lte]``."""
        return pd.json_normalize(self._lte("ues"))

    @property
    def cells(self) -> pd.DataFrame:
        """One row per LTE cell (``summary["lte"]["cells"]``); empty without ``[lte]``."""
        return pd.DataFrame(self._lte("cells"))

    @property
    def handovers(self) -> pd.DataFrame:
        """One row per handover (``summary["lte"]["handovers"]``: times, interruption, SDUs
        forwarded and lost); empty when no UE moved between cells."""
        return pd.DataFrame(self._lte("handovers"))

    def _lte(self, key: str) -> list[dict[str, Any]]:
        lte = self.summary.get("lte")
        rows = lte.get(key) if isinstance(lte, dict) else None
        return list(rows) if isinstance(rows, list) else []

    def figure(self, name: str) -> Any:
        """One figure of this run as a matplotlib Figure (``name`` as ``celltcp plot`` names
        them: ``throughput``, ``cwnd``, ``lte_sinr``, ...), or None when the run has no data
        for it; works for a run kept in memory too."""
        from . import plots

        return plots.run_figure(self, name)

    def plot(self, outdir: str | os.PathLike[str] | None = None, formats: Sequence[str] = ("png",),
             **options: Any) -> list[Path]:
        """Write this run's figures (``celltcp.plots.plot_run``'s options) to ``outdir``,
        default ``DIR/figures``; a run kept in memory needs ``outdir``."""
        from . import plots

        if outdir is None and self.dir is None:
            raise InputError("this run is in memory: give plot() an output directory")
        return plots.plot_run(self, formats, outdir, **options)

    @property
    def timeseries_names(self) -> list[str]:
        """The time series this run has (``tcp``, ``queue``, ``rtt``, ...)."""
        if self.dir is not None:
            return sorted(p.stem for p in (self.dir / TIMESERIES).glob("*.parquet"))
        return sorted(self._tables)

    def timeseries(self, name: str, *, names: bool = True) -> pd.DataFrame:
        """One time series as a DataFrame. Its ``flow`` / ``link`` / ``ue`` columns index
        ``flows`` / ``links`` / ``ues``; with ``names`` (default) a ``flow_name`` /
        ``link_name`` / ``ue_name`` column beside each says which one by name."""
        if name not in self._tables:
            if self.dir is None or not (self.dir / TIMESERIES / f"{name}.parquet").is_file():
                have = ", ".join(self.timeseries_names) or "none"
                raise KeyError(f"no time series {name!r} in this run (it has: {have})")
            self._tables[name] = pd.read_parquet(self.dir / TIMESERIES / f"{name}.parquet")
        df = self._tables[name]
        if not names:
            return df
        lte = self.summary.get("lte") if isinstance(self.summary.get("lte"), dict) else {}
        lists = {"flow": self.summary.get("flows", []), "link": self.summary.get("links", []),
                 "ue": (lte or {}).get("ues", []) if name.startswith("lte") else []}
        added = {}
        for col, items in lists.items():
            if col in df.columns and f"{col}_name" not in df.columns and items:
                labels = [str(x.get("name", k)) for k, x in enumerate(items)]
                codes = df[col].to_numpy("int64", na_value=-1, copy=True)
                codes[(codes < 0) | (codes >= len(labels))] = -1  # shown as missing
                if len(set(labels)) == len(labels):
                    added[f"{col}_name"] = pd.Categorical.from_codes(codes, categories=labels)
        if not added:
            return df
        out = df.copy()
        for k, v in added.items():
            out.insert(list(out.columns).index(k[:-5]) + 1, k, v)
        return out

    def __repr__(self) -> str:
        where = f"dir={str(self.dir)!r}" if self.dir is not None else "in memory"
        return (
            f"<celltcp.Result {where} flows={len(self.summary.get('flows', []))} "
            f"sim_time_s={self.manifest.get('sim_time_s')} seed={self.manifest.get('seed')}>"
        )


# ---------------------------------------------------------------------------------------------
# Running


def _is_replaceable_run_dir(p: Path) -> bool:
    """Overwrite replaces only what looks like an earlier run (or an empty directory)."""
    return p.is_dir() and ((p / MANIFEST).is_file() or not any(p.iterdir()))


def _check_out(out: Path, overwrite: bool) -> None:
    # the first ancestor that exists must be a directory (`-o file/x` said "[Errno 17] File exists")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(f"cannot create {out}: {parent} is a file, not a directory")
            break
    if out.exists() or out.is_symlink():
        if not overwrite:
            raise FileExistsError(f"{out} already exists (pass --overwrite, or overwrite=True, to replace it)")
        if not _is_replaceable_run_dir(out):
            raise FileExistsError(
                f"{out} exists and is not a celltcp run directory; refusing to replace it"
            )
        nested = _nested_results(out)
        if nested:
            shown = ", ".join(str(n) for n in nested[:3]) + (", ..." if len(nested) > 3 else "")
            raise FileExistsError(
                f"{out} holds other results ({shown}); refusing to overwrite it and delete them: "
                "move them out or choose another -o"
            )


def _nested_results(out: Path, limit: int = 4) -> list[Path]:
    """Runs, sweeps or studies kept inside the run directory ``out`` (such as ``out/lte`` after
    ``-o out/`` then ``-o out/lte``), which replacing ``out`` would delete: at most ``limit``."""
    found: list[Path] = []
    for root, dirs, files in os.walk(out):
        here = Path(root)
        if here != out and (MANIFEST in files or "results.parquet" in files or "sweep.toml" in files):
            found.append(here)
            dirs.clear()
            if len(found) >= limit:
                break
        dirs.sort()
    return found


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def private_tmpdir(prefix: str, parent: Path | str | None = None) -> Path:
    """A new temporary directory ``<parent>/<prefix><pid>-XXXX`` (private, as ``mkdtemp`` makes
    it), after removing the ones of the same prefix whose process is gone: a run or sweep killed
    by SIGKILL (or a crash) cannot remove its own temporaries, so the next one into the same
    place does."""
    base = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for p in base.glob(f"{glob_escape(prefix)}*"):
            pid = p.name[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


def glob_escape(s: str) -> str:
    """``s`` with glob's special characters taken literally."""
    import glob

    return glob.escape(s)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM back for a few renames, so that an interrupt cannot fall between them."""
    sigs = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _commit(tmp: Path, out: Path, overwrite: bool) -> None:
    """Rename the finished temporary directory to ``out``, atomically replacing an old run."""
    with _signals_deferred():
        _commit_now(tmp, out, overwrite)


def _commit_now(tmp: Path, out: Path, overwrite: bool) -> None:
    _check_out(out, overwrite)
    if not out.exists():
        os.rename(tmp, out)
        return
    old = private_tmpdir(f".{out.name}.old-", out.parent)
    old.rmdir()
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


@dataclass
class EmuArgs:
    """What ``celltcp emu`` adds to a run: commands ``(node, argv)`` and an interactive shell."""

    execs: list[tuple[str, list[str]]] = field(default_factory=list)
    shell: str | None = None


class IntervalLine(NamedTuple):
    """One iperf interval report of a flow (times in seconds since its test started; UDP
    fields None for TCP)."""

    flow: str
    start_s: float
    end_s: float
    bytes: int
    bits_per_second: float
    retransmits: int
    packets: int | None
    lost_packets: int | None
    jitter_ms: float | None
    omitted: bool


def format_interval(r: IntervalLine) -> str:
    """An iperf3-style line: ``[dl]   0.00-1.00   sec  1.17 MBytes  9.80 Mbits/sec    0``
    (TCP: retransmissions; UDP: jitter and lost/total datagrams), ``(omitted)`` within -O."""
    mb = r.bytes / 2**20
    transfer = f"{mb:.2f} MBytes" if mb >= 1 else f"{r.bytes / 1024:.1f} KBytes"
    rate = f"{r.bits_per_second / 1e6:.2f} Mbits/sec"
    head = f"[{r.flow}] {r.start_s:6.2f}-{r.end_s:<6.2f} sec  {transfer:>13}  {rate:>16}"
    if r.packets is not None:
        lost = r.lost_packets or 0
        pct = 100.0 * lost / r.packets if r.packets else 0.0
        tail = f"  {r.jitter_ms or 0.0:.3f} ms  {lost}/{r.packets} ({pct:.2g}%)"
    else:
        tail = f"  {r.retransmits:4d}"
    return head + tail + ("  (omitted)" if r.omitted else "")


def execute(
    scenario: Scenario,
    *,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    progress: ProgressArg = False,
    overrides: Sequence[str] = (),
    command: Sequence[str] | None = None,
    finish: Callable[[Path], object] | None = None,
    emu: EmuArgs | None = None,
    intervals: Callable[[list[IntervalLine]], object] | None = None,
) -> Result:
    """Run a scenario; the engine behind :func:`run` and the CLI.

    ``intervals`` gets, while the run goes on, the iperf interval reports completed since its
    last call (a list of :class:`IntervalLine`), as iperf3 prints its lines.

    ``finish(tmpdir)`` is called after the results are written and before the directory is
    committed (the CLI draws figures there), so it is part of the atomic write too.
    With ``emu``, the scenario runs in real time with real hosts (``celltcp emu``, see
    docs/emulation.md); ``out`` is then required.
    """
    text, source = load_scenario(scenario)
    out_path = Path(out) if out is not None else None
    if emu is not None and out_path is None:
        raise InputError("emulation writes its programs' outputs: an output directory is required")
    if out_path is not None:
        _check_out(out_path, overwrite)

    bar: ProgressBar | None = None
    callback: Callable[[float], bool | None] | None
    if progress is True:
        bar = ProgressBar()
        callback = bar
    elif callable(progress):
        callback = progress
    else:
        callback = None

    tmp: Path | None = None
    try:
        if out_path is not None:
            out_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = private_tmpdir(f".{out_path.name}.tmp-", out_path.parent)
        completed = False
        # CPU time of the process: the core runs on a thread of its own while this one waits
        # (it wakes every 50 ms to look for signals), so this is the core's time; less sensitive
        # than wall time to other load on a shared machine.
        cpu0 = time.process_time()
        try:
            if emu is not None:
                assert tmp is not None
                raw = _core.emu(
                    text,
                    out_dir=str(tmp),
                    seed=seed,
                    overrides=list(overrides),
                    base_dir=str(Path(source).resolve().parent) if source is not None else None,
                    execs=[(n, list(c)) for n, c in emu.execs],
                    shell=emu.shell,
                )
            else:
                raw = _core.run(
                    text,
                    seed=seed,
                    overrides=list(overrides),
                    out_dir=str(tmp) if tmp is not None else None,
                    base_dir=str(Path(source).resolve().parent) if source is not None else None,
                    progress=callback,
                    intervals=(None if intervals is None else
                               lambda rows: intervals([IntervalLine(*r) for r in rows])),
                )
            completed = True
            cpu = time.process_time() - cpu0
        except ScenarioError as e:
            raise _with_file(e, source) from None
        finally:
            if bar is not None:
                bar.close(completed)

        config = json.loads(raw["config"])
        summary = json.loads(raw["summary"])
        columns: dict[str, dict[str, tuple[str, Any]]] = raw["timeseries"]
        files = [str(f) for f in raw["files"]]
        tables = {name: _columns_to_frame(cols) for name, cols in columns.items()}

        if tmp is None:
            manifest = _make_manifest(raw, config, command, source, files, cpu)
            return Result(summary, manifest, None, tables)

        # The core has written DIR/timeseries/*.parquet (listed in `files`) as the run went;
        # Result.timeseries() reads them when asked.
        files.append(SUMMARY)
        from . import iperf3

        # iperf3's -J JSON of each iperf/UDP test, for tools written for iperf3 (see iperf3.py)
        files += iperf3.write(tmp, summary, config, version=_core.version())
        manifest = _make_manifest(raw, config, command, source, sorted(files), cpu)
        _write_json(tmp / SUMMARY, summary)
        _write_json(tmp / MANIFEST, manifest)
        # mkdtemp makes the directory private (0700); a run directory is an ordinary one.
        os.chmod(tmp, 0o755)
        if finish is not None:
            finish(tmp)
        assert out_path is not None
        _commit(tmp, out_path, overwrite)
        tmp = None
        return Result(summary, manifest, out_path)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    progress: ProgressArg = False,
    set: Sequence[str] = (),
    intervals: Callable[[list[IntervalLine]], object] | None = None,
    **overrides: Any,
) -> Result:
    """Run one scenario and return its :class:`Result`.

    ``scenario`` is a path to a TOML file, a TOML string, or a dict with the same structure.
    ``seed`` overrides the scenario's seed. Overrides are keyword arguments with ``__`` for the
    dots (``link__0__rate="20Mbps"``) and/or ``set=["link.0.rate=20Mbps", ...]``.

    With ``out``, the run directory is written atomically (see the module doc); an existing
    ``out`` is refused unless ``overwrite=True``, and then replaced only if it holds an
    earlier run. ``progress=True`` shows a progress bar on stderr for runs longer than ~2 s;
    a callable gets the fraction of simulated time done and may return False to abort.
    ``intervals`` gets the iperf interval reports as they complete during the run (lists of
    :class:`IntervalLine`; :func:`format_interval` prints one as iperf3 does).

    Raises :class:`ScenarioError` (a ``ValueError``) for an invalid scenario; the message
    names the key, the value, what was expected and the line.
    """
    return execute(
        scenario,
        seed=seed,
        out=out,
        overwrite=overwrite,
        progress=progress,
        overrides=overrides_list(set, overrides),
        intervals=intervals,
    )
