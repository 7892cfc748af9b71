"""What one running API server holds: the knowledge bases (one per thread, the models shared), the
worker pool, the writer, the metrics, the upload folder, this server's place among replicas; and how
a request waits for its work (a timeout from settings; a run ends itself by its own time limit, and
a client that hangs up cancels it).  The live runs and their relay are the core's (docqa.run.runs)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from starlette.requests import Request

from docqa.flow.control import Control
from docqa.api.errors import ApiError, ClientGone
from docqa.api.jobs import Job, SharedJobs, Writer
from docqa.api.limits import RateLimiter
from docqa.api.metrics import Metrics
from docqa.api.uploads import Uploads, upload_root
from docqa.api.watching import WatchSpec, Watching
from docqa.api.workers import WorkerPool
from docqa.errors import StoreError
from docqa.kb import KnowledgeBase
from docqa.run.replica import Replica
from docqa.run.runs import LiveRuns
from docqa.settings import Settings

T = TypeVar("T")
log = logging.getLogger(__name__)
_POLL = 0.25  # seconds between checks that the client is still there


class Runtime:
    def __init__(self, settings: Settings, kb_factory: Callable[[], KnowledgeBase] | None = None,
                 watch: WatchSpec | None = None):
        self.settings = settings
        self.watch = watch
        self.watching: Watching | None = None
        self._factory = kb_factory
        self._kbs: list[KnowledgeBase] = []
        self._kb_lock = threading.Lock()
        self.metrics = Metrics()
        self.live: LiveRuns | None = None  # the runs this server answers (its knowledge bases' `live`)
        self.limiter = RateLimiter(settings.api.rate_limit, settings.api.rate_burst)
        self.uploads = Uploads(upload_root(settings))
        self.pool: WorkerPool | None = None
        self.writer: Writer | None = None
        self.replica: Replica | None = None  # with several servers on one PostgreSQL database
        self._replica_kb: KnowledgeBase | None = None  # the replica's own connection (it LISTENs)
        self.started = False
        # what error messages must not show, and what they say instead
        self._hidden = {value: label for value, label in (
            (str(self.uploads.root), "uploads"), (settings.embed.base_url, "the embedding server"),
            (settings.llm.base_url, "the chat model's server"), (settings.kb, "the knowledge base"),
            (str(settings.kb_path), "the knowledge base")) if value and len(value) > 3}

    # -- lifecycle ---------------------------------------------------------------------------
    def make_kb(self) -> KnowledgeBase:
        """A KnowledgeBase for one thread: from the factory given, else the first one opened and then
        its siblings (own connection, the same embedder and chat model)."""
        with self._kb_lock:
            if self._factory is not None:
                kb = self._factory()
            elif self._kbs:
                kb = self._kbs[0].sibling()
            else:
                kb = KnowledgeBase(self.settings)
                _ = kb.models.embedder  # load the models now, not in the first request
                log.info("chat model: %s", kb.models.chat.note or kb.models.chat.reason)  # said once, in the server's log
            self._kbs.append(kb)
            return kb

    def start(self) -> None:
        api = self.settings.api
        writer_kb = self.make_kb()
        self.live = writer_kb.live
        shared = None
        if writer_kb.cluster is not None:  # a database other servers may share: join them
            self._replica_kb = self.make_kb()
            self.replica = self._replica_kb.runs.replica(api.heartbeat)
            assert self.replica is not None
            shared = SharedJobs(self.replica.cluster, self.replica.id)
        self.writer = Writer(writer_kb, api.queue_size, api.retry_after, self.redact, self._job_finished, shared=shared,
                             lane_kb=self.make_kb())  # uploads and ingests parse there, beside the writer
        self.pool = WorkerPool(api.workers, api.queue_size, self.make_kb, api.retry_after)
        self.metrics.watch(lambda: self.pool.queued, lambda: self.pool.running, lambda: self.writer.queued,
                           lambda: self.live_runs)
        self.writer.start()
        self.pool.submit(self._warm)  # the model and the vectors load while the server already answers
        if self.watch is not None and self.watch.paths:
            self.watching = Watching(self.watch, self.writer, self.writer.kb, self.redact)
            self.watching.start()
        self.started = True

    @staticmethod
    def _warm(kb: KnowledgeBase) -> None:
        """On a worker: a first search then finds the model and the vectors loaded (seconds at 100k files)."""
        try:
            kb.models.warm()
        except Exception as exc:  # noqa: BLE001 - the first search raises it again, where it is reported
            log.warning("could not load the embedding model or the vectors ahead of the first search: %s", exc)

    def stop(self) -> None:
        self.started = False
        if self.live is not None:
            self.live.cancel_all()
        if self.watching is not None:  # before the writer: its last batch still gets written
            self.watching.stop()
        if self.pool is not None:
            self.pool.shutdown()
        if self.writer is not None:
            self.writer.stop()
        if self.replica is not None:  # after the writer: its jobs are finished or failed by now
            self.replica.stop()
        with self._kb_lock:
            for kb in reversed(self._kbs):  # the first one owns the shared models: closed last
                kb.close()
            self._kbs.clear()

    @property
    def live_runs(self) -> int:
        """Runs answered by this server right now."""
        return len(self.live) if self.live is not None else 0

    def ready(self) -> bool:
        return self.started and self.writer is not None and self.writer.alive()

    def database(self) -> dict:
        """Whether the knowledge base's database answers (a blocking round trip: call it off the event loop)."""
        kb = self._replica_kb if self._replica_kb is not None else self.writer.kb if self.writer is not None else None
        if kb is None:
            return {"ok": False, "error": "not open yet"}
        try:
            seconds = kb.status.ping()
        except StoreError as exc:
            return {"ok": False, "error": self.redact(str(exc))}
        return {"ok": True, "backend": "postgresql" if self.replica is not None else "sqlite",
                "round_trip_ms": round(seconds * 1000, 2),
                **({"replica": self.replica.id} if self.replica is not None else {})}

    def health(self) -> dict:
        """Each part's health: the writer, the workers, the watch job (None: not watching)."""
        pool, writer, watching = self.pool, self.writer, self.watching
        job = watching.job if watching is not None else None
        return {
            "writer": {"ok": bool(writer and writer.alive()), "busy": bool(writer and writer.busy),
                       "queued": writer.queued if writer else 0},
            "workers": {"ok": pool is not None and self.started, "workers": pool.workers if pool else 0,
                        "busy": pool.running if pool else 0, "queued": pool.queued if pool else 0,
                        "capacity": pool.capacity if pool else 0},
            "watch": None if job is None else {"ok": job.status == "running", "job": job.id, "status": job.status,
                                               "collection": job.collection, "batches": job.done, "error": job.error},
            "live_runs": self.live_runs,
        }

    # -- waiting for work --------------------------------------------------------------------
    async def read(self, request: Request, work: Callable[[KnowledgeBase], T], control: Control | None = None) -> T:
        """Run `work(kb)` on a worker (BusyError at once when the pool is full) and wait for it.
        With a `control`, a client that hangs up or a timeout cancels the run."""
        assert self.pool is not None
        return await self._wait(asyncio.wrap_future(self.pool.submit(work)), request, control)

    async def write(self, request: Request, work: Callable[[KnowledgeBase], T]) -> T:
        """Run a short write on the writer thread and wait for it."""
        assert self.writer is not None
        return await self._wait(asyncio.wrap_future(self.writer.call(work)), request, None)

    async def _wait(self, future: asyncio.Future, request: Request, control: Control | None) -> T:
        """The work's result.  A run (`control`) has no deadline here: it ends itself by its own time
        limit (the one deadline, `Run(timeout=)`), and is cancelled when the client hangs up; other work
        is given up after api.request_timeout (504)."""
        if control is not None:
            while True:
                done, _ = await asyncio.wait({future}, timeout=_POLL)
                if done:
                    return future.result()
                if await request.is_disconnected():
                    control.cancel()
                    raise ClientGone()
        timeout = self.settings.api.request_timeout
        done, _ = await asyncio.wait({future}, timeout=timeout)
        if not done:
            raise ApiError(504, "timeout", f"the request took longer than api.request_timeout ({timeout:g} s)")
        return future.result()

    # -- helpers ------------------------------------------------------------------------------
    def redact(self, message: str) -> str:
        """A message with the server's file locations and service URLs taken out."""
        for value in sorted(self._hidden, key=len, reverse=True):
            message = message.replace(value, self._hidden[value])
        return message

    def _job_finished(self, job: Job) -> None:
        self.metrics.jobs.labels(job.kind, job.status).inc()

