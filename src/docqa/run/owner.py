"""Which process answers a run, and whether it is still alive.

A run is recorded RUNNING with its owner, `host/pid/start`: the host name, the process id and the
process's start time (from /proc, so a recycled pid is not taken for the same process).  When a
knowledge base is opened, `reap` marks FAILED every RUNNING run whose owner on this host is gone: a
`docqa ask` killed by its caller, a crashed server.  A run owned by another host is left alone (its
process cannot be checked from here).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from docqa.clock import now
from docqa.store.runlog import RunLog
from docqa.types import FAILED, RUNNING

_HOST = socket.gethostname()


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), None where /proc does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after "(comm)", which may hold spaces
    return fields[19] if len(fields) > 19 else None


def current() -> str:
    """This process, as a run's owner."""
    pid = os.getpid()
    return f"{_HOST}/{pid}/{_start_time(pid) or ''}"


def alive(owner: str) -> bool | None:
    """True when the owner process is running, False when it is gone, None when it cannot be told
    (another host, or an owner recorded in another format)."""
    host, _, rest = owner.partition("/")
    pid_text, _, start = rest.partition("/")
    if host != _HOST or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    if start:
        return _start_time(pid) == start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def reap(runlog: RunLog) -> list[str]:
    """Mark FAILED each RUNNING run whose process has died; return their ids."""
    reaped = []
    for run in runlog.list_runs(statuses=[RUNNING]):
        if not run.owner or alive(run.owner) is not False:
            continue
        pid = run.owner.split("/")[1]
        run.status, run.finished_at = FAILED, now()
        run.error = (f"the process answering this run (pid {pid}) ended before it finished: killed or crashed. "
                     "Ask again.")
        run.trace = [*run.trace, {"stage": "failed", "error": run.error}]
        runlog.save_run(run)
        reaped.append(run.id)
    return reaped
