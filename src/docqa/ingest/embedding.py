"""One embedding at a time on a thread of its own, so an add keeps reading parsed files meanwhile.

While the model embeds one group of chunk texts, the thread that writes goes on taking the parser
process's results and committing their text (a parser whose results are not taken stops at its
next answer: the two would otherwise take turns, one core idle in each).  The vectors are handed
back to that thread, which writes them: only one thread ever writes.  The thread is a daemon: an
interrupted add does not wait for a batch nobody will write (its texts are embedded by the next
add, `Ingestor._finish_vectors`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np


class EmbeddingThread:
    """Runs `embed(texts)` for one group of texts at a time, off the calling thread."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]):
        self.embed = embed
        self.hashes: list[str] = []  # the group in progress, in the order of its texts
        self._done = threading.Event()
        self._vectors: np.ndarray | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        """A group was started and its vectors not taken yet."""
        return self._thread is not None

    def start(self, hashes: list[str], texts: list[str]) -> None:
        """Embed `texts` (whose text hashes are `hashes`); the previous group must have been taken."""
        if self.busy:
            raise RuntimeError("the previous group's vectors were not taken")
        self.hashes, self._vectors, self._error = hashes, None, None
        self._done.clear()
        self._thread = threading.Thread(target=self._run, args=(texts,), name="docqa-ingest-embed", daemon=True)
        self._thread.start()

    def _run(self, texts: list[str]) -> None:
        try:
            self._vectors = self.embed(texts)
        except BaseException as exc:  # noqa: BLE001 - raised again on the thread that takes the vectors
            self._error = exc
        finally:
            self._done.set()

    def take(self, wait: bool) -> dict[str, np.ndarray] | None:
        """The finished group's vectors by text hash (waiting for them if `wait`); None when no group
        is in progress, or it is not done and `wait` is false.  The model's error is raised here."""
        if self._thread is None or not (wait or self._done.is_set()):
            return None
        self._done.wait()
        self._thread = None
        vectors, error, self._vectors, self._error = self._vectors, self._error, None, None
        if error is not None:
            raise error
        assert vectors is not None
        return dict(zip(self.hashes, vectors))
