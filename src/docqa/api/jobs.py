"""The writer: one thread does every write to the knowledge base's documents (ingest, upload, remove,
reindex, collections), in order, while the workers keep reading (SQLite allows one writer at a
time; queueing the writes here means no request ever waits on the database's write lock).

An upload, ingest or reindex job runs beside it, on the ingest lane (its own thread and connection, one job
at a time): its files are parsed and embedded there, holding nothing, and each write step takes
the writer's `turn` (queued like any write, so the writes queued before it go first) and lets it go
committed.  A small write waits for one write step at most, never for a parse or an embedding (issue 30: a
`POST /collections` waited 32 s behind an 11 MB docx being parsed).

Long writes are background jobs, with progress, that clients poll (`GET /api/v1/jobs/{id}`); short
ones are awaited by their request.  Jobs live in memory (the last `keep` finished ones are kept)
and, with several replicas on one PostgreSQL database, also in the database (`shared`), so that
any replica shows them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from docqa.api.errors import BusyError, public_message
from docqa.clock import now
from docqa.errors import NotFoundError, StoreError
from docqa.kb import KnowledgeBase

T = TypeVar("T")
log = logging.getLogger("docqa.api")
QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
_PROGRESS_EVERY = 0.5  # seconds between saves of a job's progress to the shared database
LANE_KINDS = ("upload", "ingest", "reindex")  # jobs that parse or embed beside the writer, taking its turn only to write


@dataclass
class Job:
    """A background write and how far it got."""

    id: str
    kind: str  # upload | ingest | reindex
    collection: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    status: str = QUEUED
    done: int = 0
    total: int | None = None
    current: str | None = None  # the file being read
    result: dict[str, Any] | None = None
    error: str | None = None
    created_at: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    on_progress: Callable[[Job], None] | None = field(default=None, repr=False, compare=False)

    def progress(self, done: int, total: int | None, current: str | None = None) -> None:
        """The ingest and reindex progress callback."""
        self.done, self.total, self.current = done, total, current
        if self.on_progress is not None:
            self.on_progress(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        """A job as `to_dict` showed it (read back from the database)."""
        progress = data.get("progress") or {}
        return cls(data["id"], data["kind"], data.get("collection"), data.get("detail") or {}, data["status"],
                   progress.get("done", 0), progress.get("total"), progress.get("current"), data.get("result"),
                   data.get("error"), data.get("created_at", ""), data.get("started_at"), data.get("finished_at"))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "collection": self.collection, "status": self.status,
                "progress": {"done": self.done, "total": self.total, "current": self.current},
                "detail": self.detail, "result": self.result, "error": self.error, "created_at": self.created_at,
                "started_at": self.started_at, "finished_at": self.finished_at}


class Shared(Protocol):
    """Where jobs are also kept for the other replicas (`SharedJobs`)."""

    def save(self, job: Job, progress: bool = False) -> None: ...

    def get(self, job_id: str) -> Job | None: ...


class Writer:
    """`lane_kb`: the knowledge base (its own connection) the ingest lane's jobs run on; None: every
    job runs on the writer's thread, as one write."""

    def __init__(self, kb: KnowledgeBase, capacity: int, retry_after: int = 2, redact: Callable[[str], str] = str,
                 on_job: Callable[[Job], None] | None = None, keep: int = 1000, shared: Shared | None = None,
                 lane_kb: KnowledgeBase | None = None):
        self.kb, self.retry_after, self.redact, self.on_job, self.keep = kb, retry_after, redact, on_job, keep
        self.shared, self.lane_kb = shared, lane_kb
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, capacity))
        self._lane: queue.Queue = queue.Queue(maxsize=max(1, capacity))
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._loop, args=(self._queue, kb), name="docqa-writer", daemon=True)]
        if lane_kb is not None:
            lane_kb.documents.gate = self.turn
            self._threads.append(threading.Thread(target=self._loop, args=(self._lane, lane_kb), name="docqa-ingest",
                                                  daemon=True))
        self.busy = False  # the writer's thread is writing (or lends its turn to the ingest lane)
        self._stopping = False

    @property
    def queued(self) -> int:
        return self._queue.qsize() + self._lane.qsize()

    def full(self, kind: str | None = None) -> bool:
        """Whether the queue a job of `kind` (None: a short write) would join is full."""
        return self._queue_for(kind).full()

    def _queue_for(self, kind: str | None) -> queue.Queue:
        return self._lane if self.lane_kb is not None and kind in LANE_KINDS else self._queue

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def alive(self) -> bool:
        return all(thread.is_alive() for thread in self._threads)

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Hold the writer while an ingest-lane job writes one step (Documents.gate): the writer's
        thread waits meanwhile, so the database has one writer at a time, in queue order."""
        granted, released, queued = Future[None](), threading.Event(), Future[None]()

        def hold(_kb: KnowledgeBase) -> None:
            granted.set_result(None)
            released.wait()

        queued.add_done_callback(lambda f: granted.cancel() if f.cancelled() else None)  # stop() dropped it
        if self._stopping:
            raise BusyError(self.retry_after, "the server stopped before this write")
        self._queue.put((None, hold, queued))  # waits for room: a job's step is never refused
        while True:
            try:
                granted.result(timeout=1.0)
                break
            except CancelledError:
                raise BusyError(self.retry_after, "the server stopped before this write") from None
            except TimeoutError:  # queued behind other writes; or queued after the writer stopped
                if self._stopping and not self._threads[0].is_alive():
                    raise BusyError(self.retry_after, "the server stopped before this write") from None
        try:
            yield
        finally:
            released.set()

    def submit(self, kind: str, work: Callable[[KnowledgeBase, Job], dict | None], collection: str | None = None,
               detail: dict | None = None) -> Job:
        """Queue a background job; `work(kb, job)` returns its result (and may report progress on `job`)."""
        job = self._register(Job(_new_id(), kind, collection, detail or {}, created_at=now()))  # known before it can run
        try:
            self._put((job, work, Future()), self._queue_for(kind))
        except BusyError:
            with self._lock:
                del self._jobs[job.id]
            if self.shared is not None:  # already saved as queued: never left so
                job.status, job.error, job.finished_at = FAILED, "refused: the writer's queue was full", now()
                self.shared.save(job)
            raise
        return job

    def track(self, kind: str, collection: str | None = None, detail: dict | None = None) -> Job:
        """A job that runs elsewhere (a folder watch) and writes through `call`: running from now until `finish`."""
        return self._register(Job(_new_id(), kind, collection, detail or {}, status=RUNNING, created_at=now(),
                                  started_at=now()))

    def _register(self, job: Job) -> Job:
        if self.shared is not None:
            job.on_progress = lambda one: self.shared.save(one, progress=True)
            self.shared.save(job)
        with self._lock:
            self._jobs[job.id] = job
            ended = [key for key, old in self._jobs.items() if old.status in (SUCCEEDED, FAILED)]
            for key in ended[:max(0, len(self._jobs) - self.keep)]:  # the oldest ended ones; a long job stays
                del self._jobs[key]
        return job

    def call(self, work: Callable[[KnowledgeBase], T], lane: bool = False) -> Future[T]:
        """Queue a short write whose request waits for it; with `lane`, a long one that writes in steps
        (an add: it runs on the ingest lane, whose knowledge base takes the writer's turn to write)."""
        future: Future[T] = Future()
        self._put((None, work, future), self._queue_for("ingest" if lane else None))
        return future

    def job(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None and self.shared is not None:  # another replica's job
            job = self.shared.get(job_id)
        if job is None:
            raise NotFoundError(f"no job {job_id!r}: job ids come from the answers of upload, ingest and reindex")
        return job

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the write in progress, then stop (queued jobs are dropped, marked failed)."""
        self._stopping = True
        for lane in (self._lane, self._queue):  # the lane first: its job in progress is told at its next turn
            self._drop(lane)
            lane.put((None, None, None))
        for thread in self._threads:
            if thread.ident is not None:
                thread.join(timeout)

    def _drop(self, lane: queue.Queue) -> None:
        while True:
            try:
                job, _, future = lane.get_nowait()
            except queue.Empty:
                return
            future.cancel()
            if job is not None:
                self.finish(job, None, "the server stopped before this job ran")

    def _put(self, item: tuple, lane: queue.Queue | None = None) -> None:
        try:
            (self._queue if lane is None else lane).put_nowait(item)
        except queue.Full:
            raise BusyError(self.retry_after, "the writer's queue is full") from None

    def _loop(self, lane: queue.Queue, kb: KnowledgeBase) -> None:
        while True:
            job, work, future = lane.get()
            if work is None:
                return
            if not future.set_running_or_notify_cancel():
                continue
            writer = lane is self._queue
            if writer:
                self.busy = True
            try:
                self._one(job, work, future, kb)
            finally:
                if writer:
                    self.busy = False

    def _one(self, job: Job | None, work: Callable, future: Future, kb: KnowledgeBase) -> None:
        if job is not None:
            job.status, job.started_at = RUNNING, now()
            if self.shared is not None:
                self.shared.save(job)
        try:
            result = work(kb, job) if job is not None else work(kb)
        except Exception as exc:  # a failed job is reported on the job or to the waiting request
            if job is None:
                future.set_exception(exc)
                return
            if public_message(exc, self.redact).startswith("internal error"):
                log.error("job %s (%s) failed", job.id, job.kind, exc_info=exc)
            self.finish(job, None, public_message(exc, self.redact))
            future.set_result(None)
            return
        if job is not None:
            self.finish(job, result, None)
        future.set_result(result)

    def finish(self, job: Job, result: dict | None, error: str | None) -> None:
        """The job ended: with its result, or failed with `error` (a message a client may read)."""
        job.result, job.error, job.finished_at = result, error, now()
        job.status = FAILED if error else SUCCEEDED
        job.current = None
        if self.shared is not None:
            self.shared.save(job)
        if self.on_job is not None:
            self.on_job(job)


def _new_id() -> str:
    return uuid.uuid4().hex[:16]


class SharedJobs:
    """The writer's jobs, saved in the database so that every replica shows them."""

    def __init__(self, cluster, replica: str):
        self.cluster, self.replica = cluster, replica
        self._saved: dict[str, float] = {}
        self._lock = threading.Lock()

    def save(self, job: Job, progress: bool = False) -> None:
        """Save the job (a progress update at most every `_PROGRESS_EVERY` s); a lost database is logged, not raised."""
        stamp = time.monotonic()
        with self._lock:
            if progress and stamp - self._saved.get(job.id, 0.0) < _PROGRESS_EVERY:
                return
            self._saved[job.id] = stamp
            if job.status in ("succeeded", "failed"):
                self._saved.pop(job.id, None)
        try:
            self.cluster.save_job(job.to_dict(), self.replica)
        except StoreError as exc:
            log.warning("could not save job %s: %s", job.id, exc)

    def get(self, job_id: str) -> Job | None:
        data = self.cluster.get_job(job_id)
        return None if data is None else Job.from_dict(data)
