"""Sweeps: sweep files (grid, zip, exclude, seeds, bad input), the local and Ray executors,
resuming after SIGKILL and Ctrl-C, failed runs, the results table, confidence intervals, `celltcp query`
and the `celltcp study` surface."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

import celltcp
from celltcp import cli as cli_mod
from celltcp.sweep import (
    Sweep,
    SweepError,
    aggregate,
    load_results,
    load_sweep,
    run_sweep,
    t_quantile,
)
from conftest import SMALL_TOML, cli, require_ray

#: SMALL_TOML, one second long.
BASE = SMALL_TOML.replace('duration = "3s"', 'duration = "1s"')

SWEEP = """\
base = "base.toml"
seeds = 2
[grid]
"flow.bulk.cc" = ["newreno", "cubic", "bbr"]
"link.bottleneck.queue" = ["15KB", "60KB"]
[[exclude]]
"flow.bulk.cc" = "bbr"
"link.bottleneck.queue" = "15KB"
"""


def write(d: Path, sweep: str = SWEEP, base: str = BASE, name: str = "s.toml") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "base.toml").write_text(base)
    (d / name).write_text(sweep)
    return d / name


# ---------------------------------------------------------------------------------------------
# Sweep files


def test_grid_exclude_and_seeds_expand_to_runs(tmp_path: Path) -> None:
    s = load_sweep(write(tmp_path))
    assert s.param_names == ["flow.bulk.cc", "link.bottleneck.queue"]
    assert s.seeds == [1, 2]
    combos = [tuple(r.params.values()) for r in s.runs]
    # 3 x 2 combinations, minus bbr/15KB, x 2 seeds
    assert len(s.runs) == 10
    assert ("bbr", "15KB") not in combos and combos.count(("bbr", "60KB")) == 2
    assert [r.seed for r in s.runs[:2]] == [1, 2]
    assert len({r.run_id for r in s.runs}) == 10
    assert s.overrides(s.runs[0].params) == ['flow.0.cc="newreno"', 'link.1.queue="15KB"']


def test_zip_varies_together_and_crosses_the_grid(tmp_path: Path) -> None:
    s = load_sweep(write(tmp_path, """\
base = "base.toml"
seeds = [5, 9]
[grid]
"flow.bulk.cc" = ["newreno", "cubic"]
[zip]
"flow.bulk.mss" = [1000, 1400, 536]
"link.1.queue" = ["10KB", "20KB", "30KB"]
"""))
    assert len(s.runs) == 2 * 3 * 2
    pairs = {(r.params["flow.bulk.mss"], r.params["link.1.queue"]) for r in s.runs}
    assert pairs == {(1000, "10KB"), (1400, "20KB"), (536, "30KB")}
    assert {r.seed for r in s.runs} == {5, 9}


def test_star_sets_every_element_and_default_seed_is_the_base_seed(tmp_path: Path) -> None:
    base = BASE.replace('interval = "100ms"', 'interval = "100ms"\n\n[[flow]]\nname = "bulk2"\n'
                        'app = "bulk"\nfrom = "server"\nto = "client"\ncc = "cubic"')
    s = load_sweep(write(tmp_path, 'base = "base.toml"\n[grid]\n"flow.*.start" = ["0s", "0.5s"]\n',
                         base))
    assert s.seeds == [7]  # SMALL_TOML's seed
    assert s.overrides({"flow.*.start": "0s"}) == ['flow.0.start="0s"', 'flow.1.start="0s"',
                                                   'flow.2.start="0s"']
    scen = s.scenario({"flow.*.start": "0.5s"}, 7)
    assert [f["start"] for f in scen["flow"]] == ["0.5s"] * 3


def test_run_ids_hash_the_materialised_scenario_and_seed(tmp_path: Path) -> None:
    s = load_sweep(write(tmp_path))
    # Same configuration and seed -> same id in another process (canonical JSON, not hash()).
    code = ("import sys; from celltcp.sweep import load_sweep; "
            "print(' '.join(r.run_id for r in load_sweep(sys.argv[1]).runs))")
    other = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.toml")],
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "123"})
    assert other.stdout.split() == [r.run_id for r in s.runs]
    # The id follows the scenario, not how it is spelled: a sweep that reaches the same runs
    # through an index instead of a name gives the same ids.
    (tmp_path / "t.toml").write_text(SWEEP.replace('"flow.bulk.cc"', '"flow.0.cc"'))
    t = load_sweep(tmp_path / "t.toml")
    assert [r.run_id for r in t.runs] == [r.run_id for r in s.runs]
    # ... and a change of the base scenario changes them.
    (tmp_path / "base.toml").write_text(BASE.replace("10Mbps", "12Mbps"))
    u = load_sweep(tmp_path / "s.toml")
    assert not {r.run_id for r in u.runs} & {r.run_id for r in s.runs}


@pytest.mark.parametrize(
    ("sweep", "needles"),
    [
        ('base = "base.toml"\n[grid]\n"flow.dl.cc" = ["cubic"]\n', ["flow.dl.cc", "'dl'", "bulk"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.colour" = ["red"]\n', ["colour", "red"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["cubic", "cubc"]\n', ["cc", "cubc"]),
        ('base = "base.toml"\n[grid]\n"link.5.rate" = ["1Mbps"]\n', ["link.5.rate", "out of range"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.cc" = []\n', ["flow.bulk.cc", "empty"]),
        ('base = "base.toml"\n[grid]\n', ["[grid] is empty"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.cc" = "cubic"\n', ["flow.bulk.cc", "expected a list"]),
        ('base = "base.toml"\n[zip]\n"flow.bulk.cc" = ["cubic", "bbr"]\n"link.1.queue" = ["1KB"]\n',
         ["equal lengths", "flow.bulk.cc", "link.1.queue"]),
        ('base = "base.toml"\nseeds = 0\n[grid]\n"flow.bulk.cc" = ["bbr"]\n', ["seeds = 0"]),
        ('base = "base.toml"\nseeds = [1, "x"]\n[grid]\n"flow.bulk.cc" = ["bbr"]\n', ["seeds", '"x"']),
        ('base = "base.toml"\nseeds = [3, 3]\n[grid]\n"flow.bulk.cc" = ["bbr"]\n', ["seed 3", "twice"]),
        ('base = "base.toml"\nseeds = 1.5\n[grid]\n"flow.bulk.cc" = ["bbr"]\n', ["seeds = 1.5"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["bbr"]\n[[exclude]]\n"flow.bulk.mss" = 1000\n',
         ["flow.bulk.mss", "not a swept parameter"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["bbr"]\n[[exclude]]\n"flow.bulk.cc" = "bbr"\n',
         ["drops all"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["bbr"]\n[[exclude]]\n"flow.bulk.cc" = "bbx"\n',
         ["bbx", "not one of"]),
        ('base = "base.toml"\n[grids]\n"flow.bulk.cc" = ["bbr"]\n', ["grids", "unknown key"]),
        ('base = "nope.toml"\n[grid]\n"flow.bulk.cc" = ["bbr"]\n', ["nope.toml", "no such file"]),
        ('[grid]\n"flow.bulk.cc" = ["bbr"]\n', ["base"]),
        ('base = "base.toml"\n[grid]\nseed = [1, 2]\n', ["seed", "seeds ="]),
        ('base = "base.toml"\n[grid]\n"flow.bulk" = [1]\n', ["flow.bulk", "whole"]),
        ('base = "base.toml"\n[grid]\nflow.bulk.cc = ["bbr"]\n', ["quotes", "flow"]),
        ('base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["bbr", "bbr"]\n', ["bbr", "twice"]),
        ('base = "base.toml"\n[grid]\n"flow.*.cc" = ["bbr"]\n"flow.bulk.cc" = ["cubic"]\n',
         ["flow.0.cc", "both"]),
        ('base = "base.toml"\n', ["nothing to sweep"]),
        ('base = "base.toml"\n[grid\n', ["invalid TOML"]),
    ],
    ids=["unknown-element", "unknown-key", "bad-value", "bad-index", "empty-list", "empty-grid",
         "scalar-not-list", "zip-unequal", "seeds-zero", "seeds-not-int", "seeds-dup",
         "seeds-float", "exclude-unswept", "exclude-all", "exclude-unknown-value", "top-key",
         "no-base-file", "no-base", "seed-param", "whole-entry", "unquoted-path", "dup-value",
         "two-params-one-key", "nothing", "bad-toml"],
)
def test_bad_sweep_is_a_clear_error_before_any_run(sweep: str, needles: list[str],
                                                   tmp_path: Path) -> None:
    path = write(tmp_path, sweep)
    with pytest.raises(SweepError) as e:
        run_sweep(path, tmp_path / "out")
    msg = str(e.value)
    assert str(path) in msg or "base.toml" in msg
    for n in needles:
        assert n in msg, msg
    assert not (tmp_path / "out").exists()


def test_cli_bad_sweep_exits_2_with_the_message(tmp_path: Path) -> None:
    path = write(tmp_path, 'base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["cubic", "cubc"]\n')
    r = cli("sweep", path, "-o", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("celltcp: error: ") and "cubc" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# Running, resuming, results


def test_sweep_results_equal_single_runs_and_a_second_call_skips_everything(tmp_path: Path) -> None:
    s = load_sweep(write(tmp_path))
    out = tmp_path / "out"
    res = run_sweep(s, out, jobs=2)
    assert (res.done, res.skipped, res.failed) == (10, 0, 0)
    assert (out / "sweep.toml").read_text() == SWEEP and (out / "base.toml").read_text() == BASE
    t = res.table
    assert list(t.columns[:5]) == ["run_id", "seed", "flow.bulk.cc", "link.bottleneck.queue", "flow"]
    for c in ["goodput_bps", "rtt_mean_ms", "retransmitted_segments", "run.duration_s", "run.events"]:
        assert c in t.columns
    assert len(t) == 10 * 2 and set(t["flow"]) == {"bulk", "ping"}
    assert t.equals(load_results(out))
    # Each row is what the same run gives on its own (celltcp.run with the same overrides).
    for r in s.runs[::3]:
        single = celltcp.run(tmp_path / "base.toml", seed=r.seed, set=s.overrides(r.params))
        row = t[(t.run_id == r.run_id) & (t.flow == "bulk")].iloc[0]
        f = single.flows.set_index("name").loc["bulk"]
        assert row["goodput_bps"] == f["goodput_bps"]
        assert row["retransmitted_segments"] == f["retransmitted_segments"]
        assert row["flow.bulk.cc"] == r.params["flow.bulk.cc"] == f["cc"]
        run_dir = out / "runs" / r.run_id
        assert json.loads((run_dir / "sweep-run.json").read_text())["params"] == r.params
        assert (run_dir / "scenario.toml").is_file() and (run_dir / "timeseries").is_dir()
    # the swept parameter changes the result: a 60 KB queue holds a longer standing queue than a
    # 15 KB one (over the same controls: BBR runs only with 60 KB). (Retransmissions are no
    # such law in a 1 s run: slow start overshoots further into the larger queue.)
    same = t[(t.flow == "bulk") & (t["flow.bulk.cc"] != "bbr")]
    g = aggregate(same, by=["link.bottleneck.queue"], metric="rtt_mean_ms")
    assert g.set_index("link.bottleneck.queue").loc["60KB", "mean"] > \
        1.2 * g.set_index("link.bottleneck.queue").loc["15KB", "mean"]
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    again = run_sweep(s, out, jobs=2)
    assert (again.done, again.skipped, again.failed) == (0, 10, 0)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()} == stamps
    assert again.table.equals(t)
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 10 and set(runs["status"]) == {"done"}


def test_runs_are_deterministic_across_executions(tmp_path: Path) -> None:
    sweep = 'base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["bbr", "cubic"]\n'
    a = run_sweep(write(tmp_path / "a", sweep), tmp_path / "oa", jobs=2).table
    b = run_sweep(write(tmp_path / "b", sweep), tmp_path / "ob", jobs=1).table
    drop = ["run.wall_time_s"]
    assert a.drop(columns=drop).equals(b.drop(columns=drop))


def test_a_failed_run_is_recorded_the_sweep_goes_on_and_a_rerun_retries_it(tmp_path: Path) -> None:
    # Trace-driven bottlenecks; removing one trace file after validation makes its runs fail.
    trace = "\n".join(str(ms) for ms in range(1, 11)) + "\n"  # 10 packets / 10 ms = 12 Mbit/s
    (tmp_path / "a.trace").write_text(trace)
    (tmp_path / "b.trace").write_text(trace)
    base = BASE.replace('rate = "10Mbps"', 'rate = "10Mbps"\ntrace = "a.trace"')
    path = write(tmp_path, 'base = "base.toml"\n[grid]\n"link.bottleneck.trace" = ["a.trace", '
                           '"b.trace"]\n"flow.bulk.cc" = ["cubic", "bbr"]\n', base)
    s = load_sweep(path)
    (tmp_path / "b.trace").unlink()
    out = tmp_path / "out"
    res = run_sweep(s, out, jobs=2)
    assert (res.done, res.skipped, res.failed) == (2, 0, 2)
    failed = sorted((out / "failed").glob("*.json"))
    assert len(failed) == 2
    rec = json.loads(failed[0].read_text())
    assert rec["params"]["link.bottleneck.trace"] == "b.trace" and "b.trace" in rec["error"]
    assert set(res.table["link.bottleneck.trace"]) == {"a.trace"}
    status = pd.read_parquet(out / "runs.parquet").set_index("run_id")["status"]
    assert sorted(status) == ["done", "done", "failed", "failed"]
    (tmp_path / "b.trace").write_text(trace)
    again = run_sweep(s, out, jobs=2)
    assert (again.done, again.skipped, again.failed) == (2, 2, 0)
    assert not list((out / "failed").glob("*.json"))
    assert len(again.table) == 4 * 2


def _crash_on_bbr(task: dict) -> dict:
    """A worker function whose runs with BBR crash their process the way the core's abort does
    (a message on stderr, then SIGABRT) or die by SIGKILL, as the OOM killer does."""
    from celltcp import sweep as sweep_mod
    if task["params"]["flow.bulk.cc"] == "bbr":
        os.write(2, b"memory allocation of 123456789 bytes failed\n")
        os.kill(os.getpid(), signal.SIGABRT if task["seed"] % 2 else signal.SIGKILL)
    return sweep_mod._real_run_local_task(task)  # type: ignore[attr-defined]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crashing_worker_fails_only_its_run_with_its_cause(tmp_path: Path, jobs: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from celltcp import sweep as sweep_mod
    monkeypatch.setattr(sweep_mod, "_real_run_local_task", sweep_mod.run_local_task, raising=False)
    monkeypatch.setattr(sweep_mod, "run_local_task", _crash_on_bbr)
    path = write(tmp_path, 'base = "base.toml"\nseeds = [1, 2]\n[grid]\n'
                           '"flow.bulk.cc" = ["newreno", "bbr", "cubic"]\n')
    out = tmp_path / "out"
    res = run_sweep(path, out, jobs=jobs)
    # the four healthy runs complete; each crashed one fails alone, with its real cause
    assert (res.done, res.failed) == (4, 2)
    assert set(res.table["flow.bulk.cc"]) == {"newreno", "cubic"}
    records = [json.loads(p.read_text()) for p in (out / "failed").glob("*.json")]
    assert sorted(r["params"]["flow.bulk.cc"] for r in records) == ["bbr", "bbr"]
    causes = sorted(r["error"] for r in records)
    assert "killed by SIGABRT" in causes[0] and "killed by SIGKILL" in causes[1], causes
    assert all("memory allocation of 123456789 bytes failed" in c for c in causes), causes
    # the workers' stderr files are gone
    assert not list(Path(tempfile.gettempdir()).glob(f"celltcp-pool-{os.getpid()}-*"))


def test_workers_do_not_outlive_a_killed_driver(tmp_path: Path) -> None:
    base = BASE.replace('duration = "1s"', 'duration = "30s"').replace("10Mbps", "200Mbps")
    path = write(tmp_path, 'base = "base.toml"\nseeds = 4\n[grid]\n'
                           '"flow.bulk.cc" = ["newreno", "cubic"]\n', base)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "celltcp", "sweep", str(path), "-o", str(out),
                             "--jobs", "2", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        children: list[int] = []
        while time.monotonic() < deadline and len(children) < 2:
            children = _children(proc.pid)
            time.sleep(0.05)
        assert len(children) >= 2, "the workers never started"
        proc.kill()
        proc.wait(30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(c) for c in children):
            time.sleep(0.05)
        assert not any(_alive(c) for c in children), "a worker outlived the driver"
    finally:
        if proc.poll() is None:
            proc.kill()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _interrupt_sweep(tmp_path: Path, sig: signal.Signals) -> tuple[Path, Path, int, str]:
    """Start a 9-run sweep with one job, send ``sig`` to its process group (as a terminal's
    Ctrl-C does) once two runs have finished; the sweep file, its directory, the exit status
    and stderr."""
    base = BASE.replace('duration = "1s"', 'duration = "4s"').replace("10Mbps", "50Mbps")
    path = write(tmp_path, 'base = "base.toml"\nseeds = 3\n[grid]\n'
                           '"flow.bulk.cc" = ["newreno", "cubic", "bbr"]\n', base)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "celltcp", "sweep", str(path), "-o", str(out),
                             "--jobs", "1", "-q"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    finished: list[Path] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            finished = [p for p in (out / "runs").glob("*") if not p.name.startswith(".")] \
                if (out / "runs").is_dir() else []
            if len(finished) >= 2:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        os.killpg(proc.pid, sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert proc.returncode is not None
    return path, out, proc.returncode, stderr


def _resume_loses_nothing(path: Path, out: Path) -> None:
    before = {p.name: (p / "manifest.json").stat().st_mtime_ns
              for p in (out / "runs").iterdir() if not p.name.startswith(".")}
    assert 2 <= len(before) < 9
    # every directory under runs/ is a complete run (temporaries are hidden and removed later)
    for name in before:
        assert (out / "runs" / name / "summary.json").is_file()
    r = cli("sweep", path, "-o", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert f"skipped {len(before)} (already finished)" in r.stdout
    assert f"done {9 - len(before)}," in r.stdout
    after = {p.name: (p / "manifest.json").stat().st_mtime_ns for p in (out / "runs").iterdir()}
    assert len(after) == 9 and all(after[k] == v for k, v in before.items())
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")]
    assert len(load_results(out)) == 9 * 2


def test_sweep_resumes_after_sigkill_and_loses_no_finished_run(tmp_path: Path) -> None:
    path, out, rc, _ = _interrupt_sweep(tmp_path, signal.SIGKILL)
    assert rc == -signal.SIGKILL
    _resume_loses_nothing(path, out)


def test_sweep_resumes_after_ctrl_c_and_loses_no_finished_run(tmp_path: Path) -> None:
    path, out, rc, stderr = _interrupt_sweep(tmp_path, signal.SIGINT)
    assert rc == 130, stderr
    assert "Traceback" not in stderr
    # an interrupted sweep still writes the table of the runs it finished
    done = [p.name for p in (out / "runs").iterdir() if not p.name.startswith(".")]
    assert sorted(load_results(out)["run_id"].unique()) == sorted(done)
    _resume_loses_nothing(path, out)


def test_local_executor_runs_in_parallel_processes(tmp_path: Path) -> None:
    base = BASE.replace('duration = "1s"', 'duration = "20s"').replace("10Mbps", "100Mbps")
    path = write(tmp_path, 'base = "base.toml"\nseeds = 3\n[grid]\n'
                           '"flow.bulk.cc" = ["newreno", "cubic"]\n', base)
    res = run_sweep(path, tmp_path / "out", jobs=2)
    assert res.done == 6
    workers = [json.loads((p / "sweep-run.json").read_text())["worker"]
               for p in (tmp_path / "out" / "runs").iterdir()]
    assert len({w["pid"] for w in workers}) == 2 and os.getpid() not in {w["pid"] for w in workers}
    # two runs of different workers were under way at the same time
    assert any(a["pid"] != b["pid"] and a["started_unix_s"] < b["finished_unix_s"]
               and b["started_unix_s"] < a["finished_unix_s"] for a in workers for b in workers)


def test_progress_line_counts_runs_and_time_left(tmp_path: Path) -> None:
    buf = io.StringIO()
    run_sweep(write(tmp_path, 'base = "base.toml"\n[grid]\n"flow.bulk.cc" = ["bbr", "cubic"]\n'),
              tmp_path / "out", jobs=1, progress=True, progress_stream=buf)
    last = buf.getvalue().strip().splitlines()[-1]
    assert "2/2 done" in last and "0 failed" in last and "elapsed" in last and "left 00:00" in last


def test_out_dir_that_is_not_a_sweep_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "precious.txt").write_text("keep me")
    with pytest.raises(SweepError, match="not empty"):
        run_sweep(write(tmp_path), tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["precious.txt"]


# ---------------------------------------------------------------------------------------------
# Ray


def test_missing_ray_fails_rather_than_skips_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    monkeypatch.delenv("CELLTCP_REQUIRE_RAY", raising=False)
    with pytest.raises(pytest.skip.Exception):
        require_ray()
    monkeypatch.setenv("CELLTCP_REQUIRE_RAY", "1")
    with pytest.raises(pytest.fail.Exception, match="CELLTCP_REQUIRE_RAY=1"):
        require_ray()


@pytest.mark.filterwarnings("ignore")
def test_ray_executor_equals_the_local_one_run_for_run(tmp_path: Path) -> None:
    require_ray()
    path = write(tmp_path, 'base = "base.toml"\nseeds = 2\n[grid]\n"flow.bulk.cc" = ["bbr", "cubic"]\n'
                           '"link.bottleneck.queue" = ["15KB", "60KB"]\n')
    local = run_sweep(path, tmp_path / "local", jobs=2)
    ray_res = run_sweep(path, tmp_path / "ray", jobs=2, executor="ray")
    assert (ray_res.done, ray_res.failed) == (8, 0)
    drop = ["run.wall_time_s"]
    a = local.table.drop(columns=drop).sort_values(["run_id", "flow"]).reset_index(drop=True)
    b = ray_res.table.drop(columns=drop).sort_values(["run_id", "flow"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    for rid in a["run_id"].unique():
        sa = json.loads((tmp_path / "local" / "runs" / rid / "summary.json").read_text())
        sb = json.loads((tmp_path / "ray" / "runs" / rid / "summary.json").read_text())
        assert sa == sb
        assert (tmp_path / "ray" / "runs" / rid / "timeseries" / "tcp.parquet").is_file()


def test_ray_address_that_does_not_answer_fails_fast(tmp_path: Path) -> None:
    require_ray()
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = write(tmp_path)
    t0 = time.monotonic()
    r = cli("sweep", path, "-o", tmp_path / "out", "--executor", "ray", "--address",
            f"127.0.0.1:{port}", timeout=60)
    assert time.monotonic() - t0 < 20
    assert r.returncode == 2, r.stderr
    assert f"127.0.0.1:{port}" in r.stderr and "no Ray cluster answers" in r.stderr
    # refused before anything is written: no sweep directory
    assert not (tmp_path / "out").exists()


@pytest.mark.filterwarnings("ignore")
def test_ray_address_that_accepts_but_never_answers_gives_up(tmp_path: Path) -> None:
    require_ray()
    with socket.socket() as srv:  # accepts TCP connections, never speaks Ray
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "celltcp", "sweep", str(write(tmp_path)), "-o",
             str(tmp_path / "out"), "--executor", "ray", "--address", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "CELLTCP_RAY_TIMEOUT_S": "3"})
        elapsed = time.monotonic() - t0
    assert r.returncode == 2, r.stderr
    assert "no answer from a Ray cluster within 3 s" in r.stderr
    assert elapsed < 20


# ---------------------------------------------------------------------------------------------
# Confidence intervals


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    # Student's t table (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2), 3 decimals
    [(0.975, 1, 12.706), (0.975, 2, 4.303), (0.975, 4, 2.776), (0.975, 10, 2.228),
     (0.95, 2, 2.920), (0.95, 20, 1.725), (0.995, 30, 2.750), (0.9, 5, 1.476),
     (0.975, 1e7, 1.960)],
)
def test_t_quantile_matches_the_table(p: float, df: float, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=5e-4)
    assert t_quantile(1 - p, df) == pytest.approx(-expected, abs=5e-4)


def test_own_t_quantile_without_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy", None)
    assert t_quantile(0.975, 4) == pytest.approx(2.7764451, abs=1e-6)
    assert t_quantile(0.995, 3) == pytest.approx(5.8409093, abs=1e-6)


def test_aggregate_mean_std_and_t_interval() -> None:
    df = pd.DataFrame({"cc": ["a"] * 5 + ["b"] * 2 + ["c"],
                       "goodput_bps": [1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 14.0, 7.0]})
    g = aggregate(df, by=["cc"]).set_index("cc")
    a = g.loc["a"]
    assert a["mean"] == 3.0 and a["n"] == 5
    assert a["std"] == pytest.approx(1.5811388, rel=1e-7)
    half = 2.7764451 * 1.5811388 / 5 ** 0.5
    assert a["ci_low"] == pytest.approx(3.0 - half, rel=1e-6)
    assert a["ci_high"] == pytest.approx(3.0 + half, rel=1e-6)
    b = g.loc["b"]  # n = 2: t(0.975, 1) = 12.706, std = 2.828
    assert b["ci_half"] == pytest.approx(12.7062047 * 2.8284271 / 2 ** 0.5, rel=1e-6)
    assert g.loc["c", "n"] == 1 and pd.isna(g.loc["c", "ci_half"])
    wide = aggregate(df, by="cc", confidence=0.99).set_index("cc")
    assert wide.loc["a", "ci_half"] > a["ci_half"]
    with pytest.raises(KeyError, match="nope"):
        aggregate(df, by=["nope"])


# ---------------------------------------------------------------------------------------------
# celltcp query, celltcp study


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("q")
    run_sweep(write(d, 'base = "base.toml"\nseeds = 2\n[grid]\n"flow.bulk.cc" = ["bbr", "cubic"]\n'),
              d / "out", jobs=2)
    return d / "out"


def test_query_prints_a_table_csv_and_json(swept: Path) -> None:
    sql = ('SELECT "flow.bulk.cc" AS cc, count(*) AS n, avg(goodput_bps) AS goodput '
           "FROM results WHERE flow = 'bulk' GROUP BY 1 ORDER BY 1")
    expect = load_results(swept).query("flow == 'bulk'").groupby("flow.bulk.cc")["goodput_bps"].mean()
    r = cli("query", swept, sql)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["cc", "n", "goodput"] and lines[-1] == "(2 rows)"
    assert lines[2].split()[:2] == ["bbr", "2"]
    c = cli("query", swept, sql, "--csv")
    got = pd.read_csv(io.StringIO(c.stdout)).set_index("cc")["goodput"]
    assert got.to_dict() == pytest.approx(expect.to_dict())
    j = json.loads(cli("query", swept, sql, "--json").stdout)
    assert [row["cc"] for row in j] == ["bbr", "cubic"] and j[1]["n"] == 2
    runs = cli("query", swept, "SELECT status, count(*) AS n FROM runs GROUP BY 1", "--json")
    assert json.loads(runs.stdout) == [{"status": "done", "n": 4}]


def test_query_errors_exit_2(swept: Path, tmp_path: Path) -> None:
    r = cli("query", swept, "SELECT nope FROM results")
    assert r.returncode == 2 and "nope" in r.stderr and "Traceback" not in r.stderr
    r = cli("query", tmp_path, "SELECT 1")
    assert r.returncode == 2 and "results.parquet" in r.stderr


def test_query_cannot_write_or_read_files_unless_unsafe(swept: Path, tmp_path: Path) -> None:
    results = swept / "results.parquet"
    before = results.read_bytes()
    target = tmp_path / "x.csv"
    # overwriting the sweep's own table, writing elsewhere, reading other files: all refused
    for sql in (f"COPY (SELECT 1 AS a) TO '{results}' (FORMAT parquet)",
                f"COPY (SELECT 1 AS a) TO '{target}'",
                "SELECT * FROM read_csv('/etc/passwd')",
                "SET enable_external_access = true"):
        r = cli("query", swept, sql)
        assert r.returncode == 2, (sql, r.stdout)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert results.read_bytes() == before and not target.exists()
    # the tables still answer
    r = cli("query", swept, "SELECT count(*) AS n FROM results", "--csv")
    assert r.returncode == 0 and r.stdout.splitlines()[1] == str(len(load_results(swept)))
    # --unsafe allows it
    r = cli("query", swept, f"COPY (SELECT 1 AS a) TO '{target}'", "--unsafe")
    assert r.returncode == 0, r.stderr
    assert target.read_text().splitlines() == ["a", "1"]


def test_study_without_study_support_exits_2(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "celltcp.study", None)
    monkeypatch.delattr(celltcp, "study", raising=False)
    assert cli_mod.main(["study", "--list"]) == 2
    assert "study support is not installed" in capsys.readouterr().err


def test_study_dispatches_to_celltcp_study_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    seen = {}
    fake = types.ModuleType("celltcp.study")

    def run(args: object) -> int:
        seen["args"] = args
        return 0

    fake.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "celltcp.study", fake)
    monkeypatch.setattr(celltcp, "study", fake, raising=False)
    assert cli_mod.main(["study", "handover", "-o", "x", "--quick", "--jobs", "2",
                         "--executor", "ray", "--address", "h:1"]) == 0
    a = seen["args"]
    assert (a.name, a.out, a.quick, a.jobs, a.executor, a.address, a.list) == \
        ("handover", "x", True, 2, "ray", "h:1", False)
    assert cli_mod.main(["study", "handover"]) == 2  # no -o


def test_sweep_object_api(tmp_path: Path) -> None:
    s = load_sweep(write(tmp_path))
    assert isinstance(s, Sweep) and len(s) == 10
    rid, params, seed = s.runs[0]
    assert s.run(rid).params == params and seed == 1
