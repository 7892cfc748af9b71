"""The bounded worker pool that searches and answers: a fixed number of threads and a bounded
queue; a request that finds both full is refused at once (503 with Retry-After), never left waiting.

Each worker thread has its own KnowledgeBase (its own SQLite connection: WAL lets them all read at
once), made on first use by `make_kb`; the heavy models are shared between them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from docqa.api.errors import BusyError
from docqa.kb import KnowledgeBase

T = TypeVar("T")


class WorkerPool:
    def __init__(self, workers: int, queue_size: int, make_kb: Callable[[], KnowledgeBase], retry_after: int = 2):
        self.workers, self.capacity = workers, workers + queue_size
        self._make_kb, self.retry_after = make_kb, retry_after
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="docqa-worker")
        self._local = threading.local()
        self._lock = threading.Lock()
        self._pending = 0  # submitted and not finished
        self.running = 0

    @property
    def queued(self) -> int:
        """Requests waiting for a worker."""
        return max(0, self._pending - self.running)

    def submit(self, work: Callable[[KnowledgeBase], T]) -> Future[T]:
        """Run `work(kb)` on a worker; BusyError when every worker is busy and the queue is full."""
        with self._lock:
            if self._pending >= self.capacity:
                raise BusyError(self.retry_after)
            self._pending += 1
        try:
            future = self._executor.submit(self._run, work)
        except RuntimeError:  # shut down
            self._finished()
            raise BusyError(self.retry_after, "the server is shutting down") from None
        future.add_done_callback(self._finished)  # also when it is cancelled before it started
        return future

    def _finished(self, _future: Future | None = None) -> None:
        with self._lock:
            self._pending -= 1

    def _run(self, work: Callable[[KnowledgeBase], T]) -> T:
        with self._lock:
            self.running += 1
        try:
            kb = getattr(self._local, "kb", None)
            if kb is None:
                kb = self._local.kb = self._make_kb()
            return work(kb)
        finally:
            with self._lock:
                self.running -= 1

    def shutdown(self) -> None:
        """Drop what is queued, wait for what runs."""
        self._executor.shutdown(wait=True, cancel_futures=True)
