"""Sweeps: a grid of runs of one base scenario, on local processes or a Ray cluster.

A sweep file (TOML) names a base scenario and the parameters to vary::

    base = "scenario.toml"          # relative to the sweep file
    seeds = 3                       # seeds 1..3, or a list: seeds = [1, 7, 9]
    [grid]                          # cartesian product
    "flow.dl.cc" = ["newreno", "cubic", "bbr"]
    [zip]                           # equal-length lists varied together, crossed with the grid
    "flow.dl.mss" = [1000, 3000]
    "lte.rlc.buffer" = ["1MB", "4MB"]
    [[exclude]]                     # drop the combinations that match all of these
    "flow.dl.cc" = "bbr"
    "flow.dl.mss" = 3000
    [set]                           # fixed changes to the base for every run (not swept)
    duration = "10s"

A parameter path is a dotted path into the scenario; a list of tables (``[[flow]]``, ``[[link]]``,
``[[lte.ue]]``, ...) is indexed by an element's ``name`` or its position (``link.0.rate``), and
``*`` means every element (``flow.*.cc``); an unnamed link answers to ``"<a>-<b>"`` and an unnamed
flow to ``"flow<i>"``. Paths are resolved and applied by the core's path editor
(``celltcp._core.resolve_path`` / ``apply_overrides``, the one behind ``--set``), so a path means
the same in a sweep, on the command line and in the Python API. Every combination is checked by the core's own
validation (the one behind ``celltcp validate``) before the first run starts; any problem is a
:class:`SweepError` naming the key, the value and what was expected.

The output directory::

    DIR/sweep.toml, DIR/base.toml     copies of the two files
    DIR/runs/RUN_ID/                  a normal run directory (see celltcp.api), plus scenario.toml
                                      (the materialised scenario) and sweep-run.json (params, seed,
                                      and the worker's host, pid, start and end time)
    DIR/failed/RUN_ID.json            the error of a run that failed (retried by the next invocation)
    DIR/results.parquet               one row per run and flow: run_id, seed, the swept parameters,
                                      flow, every scalar per-flow metric, run.* run-level scalars
    DIR/runs.parquet                  one row per run of the sweep: status, error, wall time
    DIR/links.parquet                 one row per run and link

A run's id is a hash of its materialised scenario and seed (canonical JSON), so it is the same on
every machine and in every process. A run directory appears atomically (written into a hidden
sibling and renamed), so after a crash, a Ctrl-C or a ``kill -9`` the next ``celltcp sweep`` skips
every finished run, removes leftover temporaries and runs the rest. A process pool runs the
runs locally (each run single-threaded and deterministic); ``executor="ray"`` hands the same runs
to Ray as tasks (Ray schedules them; the results come back to the driver as archives, so the
cluster needs no shared file system).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import math
import os
import shutil
import signal
import socket
import sys
import tarfile
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from . import _core, _toml, api
from ._core import ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

__all__ = [
    "Sweep",
    "SweepError",
    "SweepResult",
    "SweepRun",
    "aggregate",
    "load_results",
    "load_sweep",
    "sweep_from_dict",
    "run_sweep",
    "t_quantile",
]

SWEEP_FILE = "sweep.toml"
BASE_FILE = "base.toml"
RUNS = "runs"
FAILED = "failed"
RESULTS = "results.parquet"
RUNS_TABLE = "runs.parquet"
LINKS_TABLE = "links.parquet"
RUN_INFO = "sweep-run.json"
RUN_SCENARIO = "scenario.toml"
LOCK = ".sweep.lock"

#: Seconds allowed for joining a Ray cluster that accepts connections before giving up
#: (the environment variable CELLTCP_RAY_TIMEOUT_S overrides it).
RAY_CONNECT_TIMEOUT_S = 15.0

_TOP_KEYS = ("base", "seeds", "grid", "zip", "exclude", "set", "description")


class SweepError(ValueError):
    """A bad sweep file or sweep directory, found before any run starts; or an executor that
    cannot start (a Ray address that does not answer). The message names the key, the value
    and what was expected."""


class SweepRun(NamedTuple):
    """One run of a sweep: ``(run_id, params, seed)``."""

    run_id: str
    params: dict[str, Any]
    seed: int


# ---------------------------------------------------------------------------------------------
# Sweep files


@dataclasses.dataclass
class Sweep:
    """A validated sweep: the base scenario, the parameters and the runs.

    ``runs`` lists ``(run_id, params, seed)`` in a stable order (grid order, then seeds);
    ``params`` maps each swept path to its value. ``param_names`` are the swept paths in the
    order of the file (grid first, then zip).
    """

    path: Path
    text: str
    base_path: Path
    base_text: str
    base: dict[str, Any]
    seeds: list[int]
    grid: dict[str, list[Any]]
    zip: dict[str, list[Any]]
    exclude: list[dict[str, Any]]
    param_names: list[str]
    runs: list[SweepRun]
    #: swept path -> the concrete index paths it sets (``flow.*.cc`` -> flow.0.cc, flow.1.cc)
    targets: dict[str, list[str]]
    #: ``[set]``: fixed values applied to every run (path -> value); not columns of the results
    fixed: dict[str, Any] = dataclasses.field(default_factory=dict)
    description: str = ""

    def overrides(self, params: Mapping[str, Any]) -> list[str]:
        """The ``key.path=value`` overrides (indices, not names) that make one run's scenario."""
        out = []
        for name, value in self.fixed.items():
            for target in self.targets[name]:
                out.append(f"{target}={_toml.value(value)}")
        for name in self.param_names:
            for target in self.targets[name]:
                out.append(f"{target}={_toml.value(params[name])}")
        return out

    def scenario(self, params: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """The materialised scenario of one run, as a dict (what its id hashes): the base
        edited by the core's path editor with :meth:`overrides`."""
        doc = tomllib.loads(_core.apply_overrides(self.base_text, self.overrides(params)))
        doc["seed"] = seed
        return doc

    def run(self, run_id: str) -> SweepRun:
        for r in self.runs:
            if r.run_id == run_id:
                return r
        raise KeyError(f"no run {run_id!r} in this sweep")

    def __len__(self) -> int:
        return len(self.runs)


def _err(where: str, msg: str) -> SweepError:
    return SweepError(f"{where}: {msg}")


def _show(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, default=str)


def _resolve(base_text: str, path: str, where: str) -> list[str]:
    """The concrete (index) paths that ``path`` sets in the base scenario, by the core's path
    editor (``celltcp._core.resolve_path``, the one ``--set`` uses): elements of a list of
    tables by ``name``, by position, or ``*`` for all. Keys the base does not have are allowed
    (the core's validation judges them); elements that do not exist are not."""
    if path.split(".")[0] == "seed":
        raise _err(where, "\"seed\" cannot be swept as a parameter; use `seeds = N` or "
                          "`seeds = [..]` at the top of the sweep file")
    try:
        return _core.resolve_path(base_text, path)
    except ScenarioError as e:
        raise _err(where, str(e)) from None


def _dotted_hint(where: str, key: str, v: Mapping[str, Any]) -> None:
    # `flow.dl.cc = [...]` (unquoted) is a nested table to TOML; the path must be quoted.
    inner = next(iter(v), "")
    raise _err(where, f"{key!r} = {_show(v)}: a table; write parameter paths in quotes, e.g. "
                      f"\"{key}.{inner}...\" = ... (an unquoted dotted key makes nested tables)")


def _check_values(values: Any, where: str, key: str) -> list[Any]:
    if isinstance(values, dict):
        _dotted_hint(where, key, values)
    if not isinstance(values, list):
        raise _err(where, f"{key!r} = {_show(values)}: expected a list of values, "
                          f"e.g. {key!r} = [{_show(values)}]")
    if not values:
        raise _err(where, f"{key!r} = []: expected at least one value (an empty list makes an "
                          f"empty grid)")
    seen: list[str] = []
    for v in values:
        s = _canonical(v)
        if s in seen:
            raise _err(where, f"{key!r}: the value {_show(v)} appears twice")
        seen.append(s)
    return values


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def run_id_of(scenario: Mapping[str, Any], seed: int) -> str:
    """The id of a run: a hash of the canonical JSON of its materialised scenario and seed."""
    blob = _canonical({"scenario": scenario, "seed": seed}).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def _parse_seeds(raw: Any, base: Mapping[str, Any], where: str) -> list[int]:
    if raw is None:
        s = base.get("seed", 1)
        return [int(s)] if isinstance(s, int) and not isinstance(s, bool) else [1]
    if isinstance(raw, bool) or not isinstance(raw, (int, list)):
        raise _err(where, f"seeds = {_show(raw)}: expected a number of replications (seeds 1..N) "
                          f"or a list of seeds, e.g. seeds = [1, 7, 9]")
    if isinstance(raw, int):
        if raw < 1:
            raise _err(where, f"seeds = {raw}: expected at least 1 replication")
        return list(range(1, raw + 1))
    if not raw:
        raise _err(where, "seeds = []: expected at least one seed")
    out: list[int] = []
    for s in raw:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**63:
            raise _err(where, f"seeds: {_show(s)} is not a seed (expected an integer 0..2^63-1)")
        if s in out:
            raise _err(where, f"seeds: seed {s} appears twice")
        out.append(s)
    return out


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    # The core's validate() resolves relative trace files against the working directory (it has
    # no base_dir argument), so validation runs from the base scenario's directory.
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def parse_sweep(text: str, path: Path) -> Sweep:
    """Parse and validate a sweep file's text (``path`` is where it lives: ``base`` is relative
    to it). Raises :class:`SweepError`."""
    where = str(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _err(where, f"invalid TOML: {e}") from None
    for k in doc:
        if k not in _TOP_KEYS:
            raise _err(where, f"unknown key {k!r} (expected one of: {', '.join(_TOP_KEYS)}; "
                              f"parameters go in [grid] or [zip])")
    base_rel = doc.get("base")
    if not isinstance(base_rel, str) or not base_rel:
        raise _err(where, f"base = {_show(base_rel)}: expected the path of the base scenario, "
                          f"e.g. base = \"scenario.toml\"")
    base_path = (path.parent / base_rel).resolve() if not Path(base_rel).is_absolute() else Path(base_rel)
    if not base_path.is_file():
        raise _err(where, f"base = {_show(base_rel)}: no such file ({base_path})")
    base_text = _read_text(base_path)
    try:
        base = tomllib.loads(base_text)
    except tomllib.TOMLDecodeError as e:
        raise _err(str(base_path), f"invalid TOML: {e}") from None

    seeds = _parse_seeds(doc.get("seeds"), base, where)

    tables: dict[str, dict[str, list[Any]]] = {}
    for section in ("grid", "zip"):
        raw = doc.get(section, {})
        if not isinstance(raw, dict):
            raise _err(where, f"{section} = {_show(raw)}: expected a table [{section}] of "
                              f"\"param.path\" = [values]")
        tables[section] = {k: _check_values(v, f"{where}: [{section}]", k) for k, v in raw.items()}
    grid, zipped = tables["grid"], tables["zip"]
    if "grid" in doc and not grid:
        raise _err(where, "[grid] is empty: expected at least one \"param.path\" = [values]")
    for k in grid:
        if k in zipped:
            raise _err(where, f"{k!r} is in both [grid] and [zip]; put it in one of them")
    if zipped:
        lengths = {k: len(v) for k, v in zipped.items()}
        if len(set(lengths.values())) > 1:
            desc = ", ".join(f"{k!r} has {n}" for k, n in lengths.items())
            raise _err(where, f"[zip] lists must have equal lengths: {desc}")
    if not grid and not zipped and len(seeds) < 2:
        raise _err(where, "nothing to sweep: no [grid] or [zip] parameters and a single seed "
                          "(expected at least one \"param.path\" = [values], or seeds = N > 1)")
    param_names = [*grid, *zipped]
    fixed = doc.get("set", {})
    if not isinstance(fixed, dict):
        raise _err(where, f"set = {_show(fixed)}: expected a table [set] of \"param.path\" = value")
    for k, v in fixed.items():
        if isinstance(v, dict):
            _dotted_hint(f"{where}: [set]", k, v)

    targets: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for name in [*fixed, *param_names]:
        section = "set" if name in fixed else "grid" if name in grid else "zip"
        targets[name] = _resolve(base_text, name, f"{where}: [{section}]")
        for t in targets[name]:
            if t in owner:
                raise _err(where, f"{name!r} and {owner[t]!r} both set {t}; sweep it once")
            owner[t] = name

    raw_ex = doc.get("exclude", [])
    if isinstance(raw_ex, dict):
        raw_ex = [raw_ex]
    if not isinstance(raw_ex, list) or not all(isinstance(e, dict) for e in raw_ex):
        raise _err(where, f"exclude = {_show(raw_ex)}: expected [[exclude]] tables of "
                          f"\"param.path\" = value")
    exclude: list[dict[str, Any]] = []
    for n, ex in enumerate(raw_ex):
        w = f"{where}: [[exclude]] #{n + 1}"
        if not ex:
            raise _err(w, "empty: it would drop every combination")
        for k, v in ex.items():
            if k not in grid and k not in zipped:
                raise _err(w, f"{k!r} is not a swept parameter (expected one of: "
                              f"{', '.join(repr(p) for p in param_names) or 'none'})")
            values = grid.get(k, zipped.get(k, []))
            if _canonical(v) not in {_canonical(x) for x in values}:
                raise _err(w, f"{k!r} = {_show(v)} is not one of its swept values "
                              f"{_show(values)}")
        exclude.append(dict(ex))

    combos: list[dict[str, Any]] = []
    grid_items = list(grid.items())

    def cross(i: int, acc: dict[str, Any]) -> None:
        if i == len(grid_items):
            n = len(next(iter(zipped.values()))) if zipped else 1
            for j in range(n):
                combo = dict(acc)
                for k, v in zipped.items():
                    combo[k] = v[j]
                combos.append(combo)
            return
        k, values = grid_items[i]
        for v in values:
            cross(i + 1, {**acc, k: v})

    cross(0, {})
    kept = [c for c in combos
            if not any(all(_canonical(c[k]) == _canonical(v) for k, v in ex.items()) for ex in exclude)]
    if not kept:
        raise _err(where, f"[[exclude]] drops all {len(combos)} combinations: nothing to run")

    sweep = Sweep(
        path=path, text=text, base_path=base_path, base_text=base_text, base=base, seeds=seeds,
        grid=grid, zip=zipped, exclude=exclude, param_names=param_names, runs=[],
        targets=targets, fixed=fixed, description=str(doc.get("description", "")),
    )
    # Every combination through the core's validation (the one of `celltcp validate`).
    with _cwd(base_path.parent):
        for combo in kept:
            try:
                _core.validate(base_text, seed=seeds[0], overrides=sweep.overrides(combo))
            except ScenarioError as e:
                shown = ", ".join(f"{k} = {_show(v)}" for k, v in combo.items()) or "(no parameters)"
                raise _err(where, f"the run with {shown} is not a valid scenario: "
                                  f"{base_path.name}: {e}") from None
    runs = []
    for combo in kept:
        for seed in seeds:
            runs.append(SweepRun(run_id_of(sweep.scenario(combo, seed), seed), combo, seed))
    ids = [r.run_id for r in runs]
    if len(set(ids)) != len(ids):  # two parameter values that make the same scenario
        dup = next(i for i in ids if ids.count(i) > 1)
        same = [r.params for r in runs if r.run_id == dup]
        raise _err(where, f"two runs make the same scenario: {_show(same[0])} and {_show(same[1])}")
    sweep.runs = runs
    return sweep


def sweep_from_dict(d: Mapping[str, Any]) -> Sweep:
    """A sweep given as a dict with the keys of a sweep file. ``base`` is the base scenario's
    path (relative to the current directory) or the base scenario itself as a dict (relative
    paths inside it, such as trace files, are then relative to no directory: make them
    absolute). Raises :class:`SweepError` as :func:`load_sweep` does."""
    doc = dict(d)
    base = doc.get("base")
    with tempfile.TemporaryDirectory(prefix="celltcp-sweep-") as tmp:
        t = Path(tmp)
        if isinstance(base, Mapping):
            (t / BASE_FILE).write_text(_toml.dumps(base), encoding="utf-8")
            doc["base"] = BASE_FILE
        elif isinstance(base, (str, os.PathLike)):
            doc["base"] = str(Path(base).resolve())
        try:
            text = _toml.dumps(doc)
        except (TypeError, ValueError) as e:
            raise SweepError(f"sweep dict: {e}") from None
        (t / SWEEP_FILE).write_text(text, encoding="utf-8")
        return parse_sweep(text, t / SWEEP_FILE)


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read and validate a sweep file. Raises :class:`SweepError` for any problem, before any
    run starts."""
    p = Path(path)
    if not p.is_file():
        raise SweepError(f"no such sweep file: {p}")
    return parse_sweep(_read_text(p), p)


def _read_text(p: Path) -> str:
    """A sweep or base scenario file's text; unreadable or non-UTF-8 files are a SweepError."""
    try:
        return api._read_toml(p)
    except api.InputError as e:
        raise SweepError(str(e)) from None
    except OSError as e:
        raise SweepError(f"{p}: {e.strerror or e}") from None


# ---------------------------------------------------------------------------------------------
# One run (in a worker process or a Ray task)


def _task(sweep: Sweep, r: SweepRun, runs_dir: Path | None) -> dict[str, Any]:
    """Everything a worker needs for one run, as plain picklable data."""
    overrides = sweep.overrides(r.params)
    return {
        "run_id": r.run_id,
        "seed": r.seed,
        "params": r.params,
        "overrides": overrides,
        "base_path": str(sweep.base_path),
        "base_text": sweep.base_text,
        "scenario_toml": _toml.dumps(sweep.scenario(r.params, r.seed)),
        "runs_dir": str(runs_dir) if runs_dir is not None else None,
        "command": ["celltcp", "run", str(sweep.base_path), "-o", r.run_id, "--seed", str(r.seed),
                    *[a for o in overrides for a in ("--set", o)]],
    }


def _base_for(task: Mapping[str, Any], scratch: Path) -> Path:
    """The base scenario file to run: the original if it is unchanged (relative trace paths keep
    working), else a copy of the text the run's id was computed from."""
    p = Path(task["base_path"])
    try:
        if p.is_file() and p.read_text(encoding="utf-8") == task["base_text"]:
            return p
    except OSError:
        pass
    copy_path = scratch / p.name
    copy_path.write_text(task["base_text"], encoding="utf-8")
    return copy_path


def _execute_into(task: Mapping[str, Any], out: Path, scratch: Path) -> api.Result:
    started = time.time()

    def finish(tmp: Path) -> None:
        (tmp / RUN_SCENARIO).write_text(task["scenario_toml"], encoding="utf-8")
        info = {"run_id": task["run_id"], "seed": task["seed"], "params": task["params"],
                "overrides": task["overrides"],
                # where and when it ran (which node of a cluster; how runs overlapped)
                "worker": {"host": socket.gethostname(), "pid": os.getpid(),
                           "started_unix_s": started, "finished_unix_s": time.time()}}
        (tmp / RUN_INFO).write_text(json.dumps(info, indent=2, default=str) + "\n", encoding="utf-8")

    return api.execute(
        _base_for(task, scratch), seed=task["seed"], out=out, overrides=task["overrides"],
        command=task["command"], finish=finish,
    )


def _failure(task: Mapping[str, Any], e: BaseException) -> dict[str, Any]:
    return {
        "run_id": task["run_id"], "ok": False, "seed": task["seed"], "params": task["params"],
        "error": f"{type(e).__name__}: {e}",
        "traceback": "".join(traceback.format_exception(type(e), e, e.__traceback__)),
    }


def run_local_task(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one task into ``runs_dir/run_id`` (atomically); never raises for a failed run."""
    out = Path(task["runs_dir"]) / task["run_id"]
    t0 = time.monotonic()
    scratch = api.private_tmpdir("celltcp-sweep-")
    try:
        _execute_into(task, out, scratch)
    except FileExistsError:
        # Finished meanwhile by a worker orphaned by an earlier, killed invocation.
        if not (out / api.MANIFEST).is_file():
            return _failure(task, FileExistsError(f"{out} exists and is not a finished run"))
    except Exception as e:  # noqa: BLE001 - a failed run is recorded and the sweep goes on
        return _failure(task, e)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"run_id": task["run_id"], "ok": True, "wall_s": time.monotonic() - t0}


def run_remote_task(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one task in a scratch directory and return the run directory as a tar archive (for
    executors whose workers do not share the driver's file system)."""
    t0 = time.monotonic()
    scratch = api.private_tmpdir("celltcp-sweep-")
    try:
        out = scratch / task["run_id"]
        _execute_into(task, out, scratch)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(out, arcname=".")
        return {"run_id": task["run_id"], "ok": True, "wall_s": time.monotonic() - t0,
                "archive": buf.getvalue()}
    except Exception as e:  # noqa: BLE001
        return _failure(task, e)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _unpack(archive: bytes, runs_dir: Path, run_id: str) -> None:
    tmp = api.private_tmpdir(f".{run_id}.tmp-", runs_dir)
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
            if sys.version_info >= (3, 12) or hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # pragma: no cover
                tar.extractall(tmp)
        os.chmod(tmp, 0o755)
        out = runs_dir / run_id
        if out.exists():
            return
        os.rename(tmp, out)
        tmp = None  # type: ignore[assignment]
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Executors


OnResult = Callable[[dict[str, Any]], None]


def _run_local(tasks: list[dict[str, Any]], jobs: int, on_result: OnResult,
               lock_fd: int | None = None) -> None:
    # Every run in a worker process, even with one job: a run that crashes the core (an abort,
    # a signal) fails alone with its cause, and the sweep goes on (see celltcp._pool).
    from . import _pool

    def on_death(task: Mapping[str, Any], cause: str) -> dict[str, Any]:
        return _failure(task, RuntimeError(cause))

    _pool.run_isolated(tasks, jobs, run_local_task, on_result, on_death, lock_fd)


def _check_address(address: str) -> None:
    """Fail fast (a few seconds) when nothing listens at a Ray address."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port_s = hostport.rpartition(":")
    if not sep or not port_s.isdigit():
        raise SweepError(f"--address {address!r}: expected HOST:PORT (a Ray head node's GCS "
                         f"address, e.g. 10.0.0.5:6379) or ray://HOST:PORT")
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port_s)), timeout=5.0):
            pass
    except OSError as e:
        raise SweepError(f"--address {address!r}: no Ray cluster answers there ({e}); is the head "
                         f"node started (ray start --head)?") from None


def _ray_init(ray: Any, address: str | None, jobs: int | None) -> bool:
    """Connect to (or start) Ray within a bounded time; True when this call initialised it."""
    if ray.is_initialized():
        return False
    if address is None:
        # A local instance. Ray must start from the main thread: its daemons die with the
        # thread that started them (PR_SET_PDEATHSIG).
        try:
            ray.init(num_cpus=jobs or os.cpu_count() or 1, log_to_driver=False,
                     include_dashboard=False)
        except Exception as e:  # noqa: BLE001
            raise SweepError(f"cannot start a local Ray instance: {type(e).__name__}: {e}") from None
        return True
    _check_address(address)
    # Joining a cluster starts no local daemons, so it can wait in a thread with a deadline:
    # ray.init retries an unresponsive address for minutes.
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            ray.init(address=address, log_to_driver=False)
            box["ok"] = True
        except BaseException as e:  # noqa: BLE001
            box["error"] = e

    try:
        limit = float(os.environ.get("CELLTCP_RAY_TIMEOUT_S", RAY_CONNECT_TIMEOUT_S))
    except ValueError:
        limit = RAY_CONNECT_TIMEOUT_S
    th = threading.Thread(target=connect, name="celltcp-ray-init", daemon=True)
    th.start()
    th.join(limit)
    if th.is_alive():
        raise SweepError(f"--address {address!r}: no answer from a Ray cluster within "
                         f"{limit:g} s; giving up")
    if "error" in box:
        err = box["error"]
        raise SweepError(f"--address {address!r}: cannot join the Ray cluster: "
                         f"{type(err).__name__}: {err}") from None
    return True


def _run_ray(tasks: list[dict[str, Any]], jobs: int | None, address: str | None,
             runs_dir: Path, on_result: OnResult) -> None:
    try:
        import ray
    except ImportError:
        raise SweepError("--executor ray: Ray is not installed (pip install \"celltcp[ray]\" or "
                         "pip install ray)") from None
    started = _ray_init(ray, address, jobs)
    refs: list[Any] = []
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(run_remote_task)
        refs = [remote.remote(t) for t in tasks]
        by_ref = {r: t for r, t in zip(refs, tasks)}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    res = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a task that Ray could not finish
                    res = _failure(by_ref[ref], e)
                if res.get("ok"):
                    try:
                        _unpack(res.pop("archive"), runs_dir, res["run_id"])
                    except Exception as e:  # noqa: BLE001
                        res = _failure(by_ref[ref], e)
                on_result(res)
        refs = []
    finally:
        for ref in refs:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------------------------
# Progress


class SweepProgress:
    """One progress line on stderr: runs done / failed / total, elapsed, estimated time left."""

    def __init__(self, total: int, skipped: int, stream: Any = None, label: str = "sweep") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.skipped = skipped
        self.done = 0
        self.failed = 0
        self.start = time.monotonic()
        self.last = 0.0

    def update(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.draw()

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        finished = self.done + self.failed
        todo = self.total - self.skipped - finished
        eta = elapsed / finished * todo if finished else float("nan")
        return (f"{self.label}: {self.skipped + self.done}/{self.total} done, {self.failed} failed"
                f"{f' ({self.skipped} skipped)' if self.skipped else ''}"
                f"  elapsed {api._fmt_s(elapsed)}  left {api._fmt_s(eta) if todo else '00:00'}")

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < (0.2 if self.tty else 2.0):
            return
        self.last = now
        self.stream.write(("\r" + self.line() + " ") if self.tty else self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.draw(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# ---------------------------------------------------------------------------------------------
# Running a sweep


@dataclasses.dataclass
class SweepResult:
    """What one ``run_sweep`` invocation did: ``done`` runs now, ``skipped`` (already finished),
    ``failed``; ``table`` is ``DIR/results.parquet``."""

    out_dir: Path
    done: int
    skipped: int
    failed: int
    table: pd.DataFrame
    total: int = 0
    wall_s: float = 0.0

    @property
    def failed_dir(self) -> Path:
        return self.out_dir / FAILED


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[int]:
    import fcntl

    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepError(f"{out}: another celltcp sweep is writing into this directory") from None
        yield fd
    finally:
        os.close(fd)


def _prepare_dir(sweep: Sweep, out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise SweepError(f"-o {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / SWEEP_FILE).is_file():
        raise SweepError(f"-o {out}: the directory is not empty and holds no sweep "
                         f"({SWEEP_FILE} missing); refusing to write into it")
    out.mkdir(parents=True, exist_ok=True)


def _clean_leftovers(out: Path) -> None:
    runs_dir = out / RUNS
    for p in runs_dir.iterdir():
        if p.name.startswith(".") and (".tmp-" in p.name or ".old-" in p.name):
            shutil.rmtree(p, ignore_errors=True)
    for d in (out, out / FAILED):
        for p in d.iterdir():
            if p.name.startswith(".") and ".tmp-" in p.name and p.is_file():
                p.unlink(missing_ok=True)


def run_sweep(
    sweep_or_path: Sweep | Mapping[str, Any] | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    executor: str = "local",
    address: str | None = None,
    progress: bool = False,
    progress_stream: Any = None,
    progress_label: str = "sweep",
) -> SweepResult:
    """Run every run of a sweep that is not finished yet into ``out_dir``, then rebuild the
    results table. The sweep is a sweep file's path, a dict with its keys
    (:func:`sweep_from_dict`) or a loaded :class:`Sweep`.

    ``executor`` is ``"local"`` (a pool of ``jobs`` processes, default the number of cores) or
    ``"ray"`` (Ray tasks; ``address`` is a cluster to join, default a local Ray instance with
    ``jobs`` CPUs). A run that fails is recorded in ``DIR/failed/RUN_ID.json`` and the sweep
    goes on; it is retried by the next invocation. ``progress`` draws one line on
    ``progress_stream`` (default stderr) that starts with ``progress_label``. Raises :class:`SweepError` for a bad sweep or
    directory, before any run starts.
    """
    t0 = time.monotonic()
    if isinstance(sweep_or_path, Sweep):
        sweep = sweep_or_path
    elif isinstance(sweep_or_path, Mapping):
        sweep = sweep_from_dict(sweep_or_path)
    else:
        sweep = load_sweep(sweep_or_path)
    if executor not in ("local", "ray"):
        raise SweepError(f"executor {executor!r}: expected \"local\" or \"ray\"")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SweepError(f"jobs = {jobs!r}: expected a number of processes >= 1")
    if address is not None and executor != "ray":
        raise SweepError(f"--address {address!r} needs --executor ray")
    out = Path(out_dir)
    if executor == "ray" and address is not None:
        # an unreachable cluster is bad input: refuse it before anything is written
        _check_address(address)
    _prepare_dir(sweep, out)
    with _locked(out) as lock_fd:
        runs_dir = out / RUNS
        failed_dir = out / FAILED
        runs_dir.mkdir(exist_ok=True)
        failed_dir.mkdir(exist_ok=True)
        _clean_leftovers(out)
        _write_atomic(out / SWEEP_FILE, sweep.text.encode("utf-8"))
        _write_atomic(out / BASE_FILE, sweep.base_text.encode("utf-8"))

        todo = [r for r in sweep.runs if not (runs_dir / r.run_id / api.MANIFEST).is_file()]
        skipped = len(sweep.runs) - len(todo)
        bar = (SweepProgress(len(sweep.runs), skipped, progress_stream, progress_label)
               if progress else None)
        if bar is not None and todo:
            bar.draw(force=True)
        counts = {"done": 0, "failed": 0}

        def on_result(res: dict[str, Any]) -> None:
            rid = res["run_id"]
            if res.get("ok"):
                counts["done"] += 1
                (failed_dir / f"{rid}.json").unlink(missing_ok=True)
            else:
                counts["failed"] += 1
                record = {k: res[k] for k in ("run_id", "seed", "params", "error", "traceback")}
                record["failed_utc"] = api._utc_now()
                _write_atomic(failed_dir / f"{rid}.json",
                              (json.dumps(record, indent=2, default=str) + "\n").encode("utf-8"))
            if bar is not None:
                bar.update(bool(res.get("ok")))

        try:
            if todo:
                if executor == "local":
                    n = jobs or os.cpu_count() or 1
                    _run_local([_task(sweep, r, runs_dir) for r in todo], min(n, len(todo)),
                               on_result, lock_fd)
                else:
                    _run_ray([_task(sweep, r, None) for r in todo], jobs, address, runs_dir, on_result)
        finally:
            if bar is not None:
                bar.close()
            # Whatever happened, the table reflects every run finished so far.
            table = write_tables(sweep, out)
    return SweepResult(out, counts["done"], skipped, counts["failed"], table,
                       total=len(sweep.runs), wall_s=time.monotonic() - t0)


# ---------------------------------------------------------------------------------------------
# Results


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def _flat(prefix: str, d: Mapping[str, Any], out: dict[str, Any]) -> None:
    for k, v in d.items():
        if isinstance(v, dict):
            _flat(f"{prefix}{k}.", v, out)
        elif _scalar(v):
            out[f"{prefix}{k}"] = v


def _param_cell(v: Any) -> Any:
    return v if _scalar(v) else json.dumps(v, sort_keys=True, default=str)


def _frame(rows: list[dict[str, Any]], head: Sequence[str],
           text: Sequence[str] = ("run_id", "flow", "link", "status", "error")) -> pd.DataFrame:
    """A DataFrame with column types Parquet and SQL handle well: integers stay integers
    (nullable), booleans booleans, and a column of mixed types (a parameter swept over
    ``"1MB"`` and ``4000000``) becomes text."""
    cols: dict[str, None] = dict.fromkeys(head)
    for r in rows:
        cols.update(dict.fromkeys(r))
    data: dict[str, Any] = {}
    for c in cols:
        vals = [r.get(c) for r in rows]
        vals = [None if isinstance(v, float) and math.isnan(v) else v for v in vals]
        kinds = {type(v) for v in vals if v is not None}
        if not kinds and c in text:
            data[c] = pd.array(vals, dtype="string")
        elif not kinds:
            data[c] = pd.array([math.nan] * len(vals), dtype="float64")
        elif kinds == {bool}:
            data[c] = pd.array(vals, dtype="boolean")
        elif kinds == {int}:
            data[c] = pd.array(vals, dtype="Int64")
        elif kinds <= {int, float}:
            data[c] = pd.array([math.nan if v is None else float(v) for v in vals], dtype="float64")
        elif kinds == {str}:
            data[c] = pd.array(vals, dtype="string")
        else:
            data[c] = pd.array([None if v is None else str(v) for v in vals], dtype="string")
    return pd.DataFrame(data, columns=list(cols))


def write_tables(sweep: Sweep, out: Path) -> pd.DataFrame:
    """Rebuild ``results.parquet``, ``runs.parquet`` and ``links.parquet`` (atomically) from the
    finished runs of ``sweep``; returns the results table."""
    flow_rows: list[dict[str, Any]] = []
    link_rows: list[dict[str, Any]] = []
    run_rows: list[dict[str, Any]] = []
    names = sweep.param_names
    for r in sweep.runs:
        head = {"run_id": r.run_id, "seed": r.seed, **{k: _param_cell(r.params[k]) for k in names}}
        d = out / RUNS / r.run_id
        status, error, manifest = "pending", None, None
        if (d / api.MANIFEST).is_file():
            status = "done"
            manifest = json.loads((d / api.MANIFEST).read_text(encoding="utf-8"))
            summary = json.loads((d / api.SUMMARY).read_text(encoding="utf-8"))
            run_level: dict[str, Any] = {}
            for k, v in summary.items():
                if _scalar(v):
                    run_level[f"run.{k}"] = v
            for k in ("sim_time_s", "events", "wall_time_s"):
                run_level[f"run.{k}"] = manifest.get(k)
            ues = {u.get("name"): u for u in summary.get("lte", {}).get("ues", []) or []
                   if isinstance(u, dict)}
            for f in summary.get("flows", []):
                row = dict(head)
                row["flow"] = f.get("name")
                for k, v in f.items():
                    if k != "name" and _scalar(v) and k not in row:
                        row[k] = v
                ue = ues.get(f.get("to")) or ues.get(f.get("from"))
                if ue is not None:
                    _flat("ue.", ue, row)
                row.update(run_level)
                flow_rows.append(row)
            for link in summary.get("links", []):
                row = dict(head)
                row["link"] = link.get("name")
                row.update({k: v for k, v in link.items() if k != "name" and _scalar(v)})
                link_rows.append(row)
        elif (out / FAILED / f"{r.run_id}.json").is_file():
            status = "failed"
            with contextlib.suppress(ValueError, OSError):
                error = json.loads((out / FAILED / f"{r.run_id}.json").read_text()).get("error")
        run_rows.append({**head, "status": status, "error": error,
                         "wall_time_s": manifest.get("wall_time_s") if manifest else None,
                         "sim_time_s": manifest.get("sim_time_s") if manifest else None,
                         "events": manifest.get("events") if manifest else None})

    base_cols = ["run_id", "seed", *names]
    results = _frame(flow_rows, [*base_cols, "flow"])
    links = _frame(link_rows, [*base_cols, "link"])
    runs = _frame(run_rows, [*base_cols, "status", "error"])
    for name, df in ((RESULTS, results), (LINKS_TABLE, links), (RUNS_TABLE, runs)):
        tmp = out / f".{name}.tmp-{os.getpid()}"
        df.to_parquet(tmp, index=False)
        os.replace(tmp, out / name)
    return results


def load_results(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The results table of a sweep directory (``DIR/results.parquet``)."""
    p = Path(out_dir) / RESULTS
    if not p.is_file():
        raise FileNotFoundError(f"{out_dir} has no {RESULTS} (is it a sweep directory? run "
                                f"`celltcp sweep SWEEP.toml -o {out_dir}` first)")
    return pd.read_parquet(p)


# ---------------------------------------------------------------------------------------------
# Confidence intervals


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz evaluation)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
                    -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lnfront = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
               + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lnfront) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lnfront) * _betacf(b, a, 1.0 - x) / b


def _t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (scipy's ``t.ppf`` when
    scipy is installed; else bisection on the CDF through the incomplete beta function)."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"t_quantile: expected 0 < p < 1 and df > 0, got p={p}, df={df}")
    try:
        from scipy import stats
    except ImportError:
        pass
    else:
        return float(stats.t.ppf(p, df))
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def aggregate(
    df: pd.DataFrame,
    by: Sequence[str] | str = (),
    metric: str = "goodput_bps",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean, standard deviation, count and the Student-t confidence interval of ``metric`` over
    the rows of each group (typically the replications: group by the swept parameters and
    ``flow``).

    Returns one row per group: the ``by`` columns, ``mean``, ``std`` (sample, n-1), ``n``,
    ``ci_low``, ``ci_high`` and ``ci_half`` (the half-width; NaN when n < 2). Missing values
    of the metric are left out.
    """
    if isinstance(by, str):
        by = [by]
    by = list(by)
    for c in [*by, metric]:
        if c not in df.columns:
            raise KeyError(f"aggregate: no column {c!r} (columns: {', '.join(map(str, df.columns))})")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"aggregate: confidence = {confidence}: expected 0 < confidence < 1")
    data = df[[*by, metric]].dropna(subset=[metric])
    values = pd.to_numeric(data[metric]).astype("float64")
    data = data.assign(**{metric: values})
    if by:
        g = data.groupby(by, sort=True, dropna=False)[metric]
        out = g.agg(["mean", "std", "count"]).reset_index()
    else:
        out = pd.DataFrame({"mean": [values.mean()], "std": [values.std()],
                            "count": [int(values.count())]})
    out = out.rename(columns={"count": "n"})
    half = []
    for std, n in zip(out["std"], out["n"]):
        if n >= 2 and std == std:
            half.append(t_quantile(0.5 + confidence / 2.0, n - 1) * std / math.sqrt(n))
        else:
            half.append(float("nan"))
    out["ci_half"] = half
    out["ci_low"] = out["mean"] - out["ci_half"]
    out["ci_high"] = out["mean"] + out["ci_half"]
    return out[[*by, "mean", "std", "n", "ci_low", "ci_high", "ci_half"]]

