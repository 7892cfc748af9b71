"""A supervised pool of parser processes: a killed or hung parse costs only its own file.

`concurrent.futures.ProcessPoolExecutor` cannot do this: when one worker dies every pending
future fails with `BrokenProcessPool` (the whole batch, 0 indexed), and it can neither stop one
task that hangs nor say which file a dead worker was parsing.  (pebble and loky, which can time
tasks out, are not installed, and they too would fail a whole group of small files at once.)  Here each worker is a forked
process on its own pipe: the parent sends it groups of jobs, the worker answers file by file,
so the parent always knows the one file in progress.  That file has `timeout` seconds from the
moment the worker started it, by the worker's own clock (CLOCK_MONOTONIC is the machine's, so both
processes read the same time): a worker's start and `ready()` are not its first file's time, and a
parent busy elsewhere (embedding the results it has) neither lends a file time nor takes it away.
Past the limit the worker is killed; an answer that comes back after its file overran (the parent
was busy when the limit passed) is that file's timeout, not its result.  A worker that
dies (SIGKILL from the memory cap or the OOM killer, a crash in a C library) or is killed is
replaced; the file it was parsing is reported failed with the reason, and the rest of its jobs
go to the next free worker.

Each worker caps its own memory (`RLIMIT_DATA`) at what it inherited plus `memory_bytes`, so an
allocation past the cap fails in that worker (a MemoryError, or its death) and not in the
machine.  A forked worker may first refill heap its parent had freed (a long-lived process after
a closed model session): the cap is exact from a fresh process, loose by that much in a long-lived
one.  The limits come from `ingest.parse_timeout` and `ingest.worker_memory_mb`.
"""

from __future__ import annotations

import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from docqa.errors import IngestError, ParseTimeoutError, WorkerKilledError

Job = tuple  # (path, size, mtime_ns, old_hash): a job's first item names its file
QUIET = object()  # what run(quiet=...) yields when no answer came for that long (not a result)
_PREFETCH = 3  # groups a worker may hold: the next ones are ready when it finishes the current one
_START_SECONDS = 60.0  # a new worker's start and ready() may take this long, on top of its first file's time


class _Ready:
    """A worker's first message: started, ready() done, memory capped."""


@dataclass(frozen=True, slots=True)
class _Started:
    """A worker took a group: its first job started at `at` (time.monotonic in the worker)."""
    at: float


@dataclass(frozen=True, slots=True)
class _Answer:
    """A job's result, and when the worker finished it (the next job of its group starts then)."""
    result: Any
    at: float


@dataclass(slots=True)
class _Worker:
    process: Any
    conn: Connection
    jobs: deque = field(default_factory=deque)  # sent, not answered yet; jobs[0] is in progress
    groups: deque = field(default_factory=deque)  # per group sent and not finished: answers still due
    deadline: float = 0.0
    ready: bool = False  # its _Ready has arrived
    started: float | None = None  # when the job in progress started, by the worker's clock (None: not yet)


class ParsePool:
    """Runs `work(job)` for every job in worker processes; yields each result as it comes.

    `fail(job, error)` makes the result for a job whose worker died or overran its time.
    `context` is a multiprocessing context (fork where available: workers inherit loaded models).
    `ready()` runs in each worker before its memory cap: it loads what the parent did not.
    """

    def __init__(self, work: Callable[[Job], Any], fail: Callable[[Job, IngestError], Any], *, workers: int,
                 timeout: float, memory_bytes: int, context: Any, ready: Callable[[], None] | None = None):
        self.work, self.fail, self.size, self.ready = work, fail, max(1, workers), ready
        self.timeout, self.memory_bytes, self.context = timeout, memory_bytes, context
        self.workers: list[_Worker] = []

    def run(self, groups: Iterable[list[Job]], quiet: float | None = None) -> Iterator[Any]:
        """Parse every group; results come back in completion order, one per job.  With `quiet`,
        QUIET comes too whenever no answer came for that many seconds (a slow file is being parsed):
        the consumer may deal with what it holds meanwhile."""
        source, retry = iter(groups), deque[list]()
        try:
            while True:
                self._assign(source, retry)
                busy = [w for w in self.workers if w.jobs]
                if busy:
                    yield from self._collect(busy, retry, quiet)
                elif not retry:
                    return
        finally:
            self.close()

    def _assign(self, source: Iterator[list[Job]], retry: deque) -> None:
        """Give every worker with room a group; start workers while there is work and room for them."""
        for worker in [*self.workers, *[None] * (self.size - len(self.workers))]:
            while worker is None or len(worker.groups) < _PREFETCH:
                group = retry.popleft() if retry else next(source, None)
                if group is None:
                    return
                worker = worker or self._start()
                if not self._send(worker, group):
                    retry.appendleft(group)
                    break

    def _send(self, worker: _Worker, group: list[Job]) -> bool:
        """Hand a worker a group; False when it has died meanwhile (an idle one is dropped at once)."""
        try:
            worker.conn.send(group)
        except OSError:
            if not worker.jobs:  # nothing lost; a busy one is failed by the next wait
                _stop(worker)
                self.workers.remove(worker)
            return False
        if not worker.jobs:
            worker.deadline = self._deadline(0.0 if worker.ready else _START_SECONDS)
        worker.jobs.extend(group)
        worker.groups.append(len(group))
        return True

    def _collect(self, busy: list[_Worker], retry: deque, quiet: float | None) -> Iterator[Any]:
        """Wait for the first answers (or deaths, or the nearest deadline, or `quiet` s) and handle them."""
        nearest = min(w.deadline for w in busy) - time.monotonic()
        timeout = max(0.0, nearest) if nearest != float("inf") else None
        if quiet is not None:
            timeout = quiet if timeout is None else min(timeout, quiet)
        ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=timeout))
        handled = False
        for worker in busy:
            if worker.conn in ready or worker.process.sentinel in ready:
                yield from self._drain(worker, retry)
            elif time.monotonic() >= worker.deadline:
                yield self._replace(worker, retry, "timeout")
            else:
                continue
            handled = True
        if not handled and quiet is not None:
            yield QUIET

    def _drain(self, worker: _Worker, retry: deque) -> Iterator[Any]:
        """Every answer the worker has sent so far; then, if it died with work left, its file in progress."""
        while worker.jobs and worker.conn.poll():
            try:
                result = worker.conn.recv()
            except (EOFError, OSError):
                break  # it died: the pipe is closed
            if isinstance(result, _Ready):
                worker.ready = True
                continue
            if isinstance(result, _Started):
                worker.started, worker.deadline = result.at, self._deadline(at=result.at)
                continue
            job, took = worker.jobs[0], result.at - (worker.started if worker.started is not None else result.at)
            self._answered(worker, result.at)
            if self.timeout > 0 and took > self.timeout:  # it overran while this process was busy elsewhere
                yield self.fail(job, self._overran(job))
            else:
                yield result.result
        else:
            if not worker.jobs or worker.process.exitcode is None:
                return  # alive: its next answers come with the next wait
        yield self._replace(worker, retry, None)

    def _answered(self, worker: _Worker, at: float) -> None:
        """A job is answered at `at`: the next job of the same group started then; the first job of
        the next group starts when the worker says so (_Started; until then this provisional clock)."""
        worker.jobs.popleft()
        worker.groups[0] -= 1
        if not worker.groups[0]:
            worker.groups.popleft()
            worker.started = None
        else:
            worker.started = at
        worker.deadline = self._deadline(at=at)

    def _deadline(self, extra: float = 0.0, at: float | None = None) -> float:
        start = time.monotonic() if at is None else at
        return start + self.timeout + extra if self.timeout > 0 else float("inf")

    def _overran(self, job: Job) -> IngestError:
        return ParseTimeoutError(job[0], f"took longer than {self.timeout:g} s to parse; it was stopped "
                                         "(ingest.parse_timeout)")

    def _replace(self, worker: _Worker, retry: deque, why: str | None) -> Any:
        """Stop a dead or overrunning worker; its file in progress fails, its other jobs go back."""
        job, rest = worker.jobs[0], list(worker.jobs)[1:]
        _stop(worker)
        self.workers.remove(worker)
        if rest:
            retry.appendleft(rest)
        if why == "timeout" and not worker.ready:
            error: IngestError = ParseTimeoutError(job[0], f"the parsing process did not start within {_START_SECONDS + self.timeout:g} s; "
                                              "this file was not parsed (ingest.parse_timeout)")
        elif why == "timeout":
            error = self._overran(job)
        else:
            error = WorkerKilledError(job[0], _death(worker.process.exitcode, self.memory_bytes))
        return self.fail(job, error)

    def _start(self) -> _Worker:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_serve, args=(child, self.work, self.memory_bytes, self.ready),
                                       name="docqa-parse", daemon=True)
        process.start()
        child.close()
        worker = _Worker(process, parent)
        self.workers.append(worker)
        return worker

    def close(self) -> None:
        """Stop every worker (idle ones are told to exit; busy ones are killed)."""
        for worker in self.workers:
            if not worker.jobs:
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
        for worker in self.workers:
            worker.process.join(timeout=1 if not worker.jobs else 0)
            _stop(worker)
        self.workers = []


def _stop(worker: _Worker) -> None:
    if worker.process.exitcode is None:
        worker.process.kill()
    worker.process.join()
    worker.conn.close()


_OUT_OF_MEMORY = 86  # a worker's exit code when its memory cap was reached outside the parse


def _death(exitcode: int | None, memory_bytes: int) -> str:
    """Why a worker died, for the failed file's reason."""
    if exitcode is not None and exitcode < 0:
        if -exitcode == signal.SIGKILL:
            return (f"the parsing process was killed (SIGKILL) while reading this file: it may need more than "
                    f"the {memory_bytes // 2**20} MB of ingest.worker_memory_mb, or the system ran out of memory")
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the parsing process crashed ({name}) while reading this file"
    if exitcode == _OUT_OF_MEMORY:
        return (f"parsing needed more memory than the {memory_bytes // 2**20} MB a parsing process may use "
                "(ingest.worker_memory_mb)")
    return (f"the parsing process exited (code {exitcode}) while reading this file: it may have needed more than "
            f"the {memory_bytes // 2**20} MB of ingest.worker_memory_mb")


def _serve(conn: Connection, work: Callable[[Job], Any], memory_bytes: int, ready: Callable[[], None] | None) -> None:
    """A worker's loop: receive a group of jobs, answer each job as soon as it is done."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if ready is not None:
        ready()
    cap_memory(memory_bytes)
    conn.send(_Ready())
    while (group := _receive(conn)) is not None:
        conn.send(_Started(time.monotonic()))  # the group's first file's time limit starts now
        for job in group:
            try:
                conn.send(_Answer(work(job), time.monotonic()))
            except MemoryError:  # past the cap outside the parse itself (e.g. sending the result back)
                os._exit(_OUT_OF_MEMORY)


def _receive(conn: Connection) -> list[Job] | None:
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


def cap_memory(extra_bytes: int) -> None:
    """Cap this process's data memory at what it has now plus `extra_bytes` (0: no cap).

    RLIMIT_DATA (Linux 4.7+: heap and private writable mappings) rather than RLIMIT_AS: address
    space that libraries only reserve (glibc's per-thread arenas, ONNX Runtime) does not count,
    memory actually written does.  The inherited size is the fork's (models the parent loaded)."""
    try:
        import resource

        with open("/proc/self/status") as status:
            current = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:"))
    except (ImportError, OSError, ValueError, StopIteration):
        return  # not Linux: no cheap way to know the inherited size; the timeout still applies
    if extra_bytes > 0:
        limit = current + extra_bytes
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
