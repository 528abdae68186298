"""A pool of worker processes in which a crashing run fails alone.

``concurrent.futures.ProcessPoolExecutor`` marks the whole pool broken when one worker dies (an
allocation failure in the core aborts the process; a worker can be killed by the OOM killer or by
hand), and every pending run is then recorded as failed, on every retry. Here each worker runs one
task at a time over its own pipe; when a worker dies, only the task it was running fails, with the
tail of the worker's stderr (where Rust's abort message goes) as its cause, and a new worker takes
its place.

Workers never outlive the driver: each asks the kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)`` on Linux) and also checks its parent between tasks, so a killed
driver does not leave workers blocked on a pipe. A run a worker was writing leaves only a hidden
temporary that the next invocation removes.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import multiprocessing as mp
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection, wait
from typing import Any

Task = Mapping[str, Any]
Result = dict[str, Any]

#: How much of a dead worker's stderr goes into the failure record.
STDERR_TAIL_BYTES = 4096

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent exits (no-op elsewhere)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _worker_main(conn: Connection, err_path: str, parent: int, fn: Callable[[Task], Result],
                 close_fd: int | None) -> None:
    # Ctrl-C reaches the whole process group; the driver decides what happens to the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    # A forked worker must not keep the driver's lock alive after the driver dies.
    if close_fd is not None:
        with contextlib.suppress(OSError):
            os.close(close_fd)
    # fd 2 (Rust writes its abort and panic messages there) goes to a file the driver reads.
    fd = os.open(err_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 2)
    os.close(fd)
    # A Python dump of the worker's stack (faulthandler, which pytest enables) would bury the
    # core's own message under the pool's frames: the cause is what the core wrote.
    faulthandler.disable()
    while True:
        try:
            if not conn.poll(1.0):
                if os.getppid() != parent:
                    os._exit(1)
                continue
            task = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if task is None:
            os._exit(0)
        conn.send(fn(task))


class _Worker:
    def __init__(self, ctx: Any, fn: Callable[[Task], Result], close_fd: int | None,
                 scratch: str) -> None:
        fd, self.err_path = tempfile.mkstemp(prefix="worker-", suffix=".err", dir=scratch)
        os.close(fd)
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_worker_main,
                                args=(child, self.err_path, os.getpid(), fn, close_fd), daemon=True)
        self.proc.start()
        child.close()
        self.task: Task | None = None
        self.err_offset = 0

    def give(self, task: Task) -> None:
        self.task = task
        self.err_offset = os.path.getsize(self.err_path)
        self.conn.send(task)

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError), open(self.err_path, "rb") as f:
            f.seek(self.err_offset)
            data = f.read()
            return data[-STDERR_TAIL_BYTES:].decode("utf-8", "replace").strip()
        return ""

    def close(self, kill: bool) -> None:
        if kill and self.proc.is_alive():
            with contextlib.suppress(Exception):
                self.proc.kill()
        elif self.proc.is_alive():
            with contextlib.suppress(Exception):
                self.conn.send(None)
        with contextlib.suppress(Exception):
            self.proc.join(timeout=5)
        if self.proc.is_alive():
            with contextlib.suppress(Exception):
                self.proc.kill()
                self.proc.join(timeout=5)
        self.conn.close()
        with contextlib.suppress(OSError):
            os.unlink(self.err_path)


def death_cause(exitcode: int | None, stderr: str) -> str:
    """A one-paragraph cause for a worker that died: its signal or status, and its stderr."""
    if exitcode is not None and exitcode < 0:
        try:
            what = f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            what = f"killed by signal {-exitcode}"
    else:
        what = f"exited with status {exitcode}"
    return f"the worker process died ({what})" + (f": {stderr}" if stderr else " and wrote nothing to stderr")


def run_isolated(tasks: list[Task], jobs: int, fn: Callable[[Task], Result],
                 on_result: Callable[[Result], None],
                 on_death: Callable[[Task, str], Result], close_fd: int | None = None) -> None:
    """Run ``fn(task)`` for every task in ``jobs`` worker processes, calling ``on_result`` with
    each result in the driver as it arrives. A worker that dies turns its task into
    ``on_death(task, cause)``; the other tasks go on. ``fn`` must be picklable for the spawn
    start method (a module-level function)."""
    # fork starts a worker in milliseconds (spawn re-imports numpy and pandas: about a second);
    # it is safe only while this process has no other thread.
    import threading

    method = "fork" if ("fork" in mp.get_all_start_methods()
                        and threading.active_count() == 1) else "spawn"
    ctx = mp.get_context(method)
    # the workers' stderr files; a killed driver's are removed by the next pool (private_tmpdir)
    from .api import private_tmpdir

    scratch = str(private_tmpdir("celltcp-pool-"))
    pending = list(reversed(tasks))
    workers: list[_Worker] = []
    ok = False
    try:
        for _ in range(min(jobs, len(tasks))):
            workers.append(_Worker(ctx, fn, close_fd if method == "fork" else None, scratch))
        for w in workers:
            if pending:
                w.give(pending.pop())
        while any(w.task is not None for w in workers):
            busy = [w for w in workers if w.task is not None]
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
            for w in busy:
                if w.conn in ready:
                    try:
                        res = w.conn.recv()
                    except (EOFError, OSError):
                        pass  # the worker died: its pipe closed (below)
                    else:
                        w.task = None
                        on_result(res)
                        if pending:
                            w.give(pending.pop())
                        continue
                if w.conn in ready or w.proc.sentinel in ready:
                    w.proc.join(timeout=5)
                    task, cause = w.task, death_cause(w.proc.exitcode, w.stderr_tail())
                    w.task = None
                    w.close(kill=True)
                    workers.remove(w)
                    on_result(on_death(task, cause))
                    if pending:
                        nw = _Worker(ctx, fn, close_fd if method == "fork" else None, scratch)
                        workers.append(nw)
                        nw.give(pending.pop())
        ok = True
    finally:
        # Interrupted: stop the runs in flight (their temporaries are removed by the next
        # invocation); finished runs are already committed.
        for w in workers:
            w.close(kill=not ok)
        shutil.rmtree(scratch, ignore_errors=True)
