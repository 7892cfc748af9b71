"""`docqa serve --watch PATH`: the folders kept in step while the server runs.

One Watcher thread (docqa.ingest.watch) whose syncs queue on the server's one writer, like every
other write; it shows as a job of kind "watch" (running; progress = batches; result = the last
batch and the totals) at GET /api/v1/jobs/{id}, its id in the log at start and in /readyz.  It
stops with the server, before the writer does.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.api.errors import BusyError, public_message
from docqa.api.jobs import Job, Writer
from docqa.kb import KnowledgeBase

if TYPE_CHECKING:
    from docqa.kb import Batch

log = logging.getLogger("docqa.api")


@dataclass(frozen=True, slots=True)
class WatchSpec:
    """What `serve --watch` asked for: folders, and the collection their documents go to (None: the default)."""

    paths: tuple[str, ...]
    collection: str | None = None


class Watching:
    def __init__(self, spec: WatchSpec, writer: Writer, kb: KnowledgeBase, redact=str):
        """`kb`: whose settings give the rules (globs, .gitignore, hidden); InputError for a path that is no folder."""
        self.spec, self.writer, self.redact = spec, writer, redact
        self.collection = spec.collection or kb.settings.collection  # named, so a key scoped to it sees the job
        self.watcher = kb.documents.watcher(list(spec.paths), self.collection, sync=self._sync)
        self.stopping = threading.Event()
        self.job: Job | None = None
        self._totals: Counter = Counter()
        self._thread = threading.Thread(target=self._run, name="docqa-watch", daemon=True)

    def start(self) -> Job:
        roots = [str(r) for r in self.watcher.roots]
        self.job = self.writer.track("watch", self.collection, {"paths": roots})
        self._thread.start()
        log.info("watching %s (collection %s): job %s at /api/v1/jobs/%s", ", ".join(roots), self.collection,
                 self.job.id, self.job.id)
        return self.job

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the batch under way (its write still goes through the writer, which runs until after this)."""
        self.stopping.set()
        self._thread.join(timeout)

    def _sync(self, targets: list[Path]):
        collection = self.collection
        while True:
            try:
                return self.writer.call(lambda kb: kb.add(targets, collection), lane=True).result()
            except BusyError as exc:  # the writer's queue is full: wait and keep the batch
                if self.stopping.wait(float(exc.headers.get("Retry-After", 2))):
                    raise

    def _on_batch(self, batch: Batch) -> None:
        job = self.job
        if batch.exception is not None:
            batch.error = public_message(batch.exception, self.redact)
        self._totals.update({k: v for k, v in batch.counts().items() if k != "unchanged"})
        job.done += 1
        job.result = {"batches": job.done, "last": batch.to_dict(), "totals": dict(self._totals)}
        c = batch.counts()
        log.info("watch job %s, batch %d: added %d, updated %d, removed %d, moved %d, failed %d%s in %.2f s",
                 job.id, batch.number, c["added"], c["updated"], c["removed"], c["moved"], c["failed"],
                 f", error: {batch.error}" if batch.error else "", batch.latency)

    def _run(self) -> None:
        try:
            self.watcher.run(self.stopping, self._on_batch)
        except Exception as exc:  # the watch itself broke (its folder vanished...): the job says so
            log.error("watch job %s stopped", self.job.id, exc_info=exc)
            self.writer.finish(self.job, self.job.result, public_message(exc, self.redact))
            return
        self.writer.finish(self.job, self.job.result, None)
