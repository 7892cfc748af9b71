"""`Stores`: one knowledge base's storage, opened by URL and handed out by concern.

Each concern is a small interface of its own module, and each backend implements every one of
them over one shared connection (txtai's base / factory / one module per backend):

    documents  DocumentStore (documents.py, with the browsing reads of catalog.py)
    fulltext   FullText      (fulltext.py)
    vectors    VectorStore   (vectors.py)
    runlog     RunLog        (runlog.py, with what each answer rests on: sources.py)
    keys       KeyStore      (keys.py)
    cluster    Cluster       (cluster.py; only where several servers share the database, else None)

The bundle adds what spans the concerns: grouping writes (`batch`, `bulk_load`, `commit_pending`), the
backend's own health report (`check`) and counts (`stats`), and closing.  `ChunkFilter`, the
filter every search and the browsing reads accept, lives here because several concerns share it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docqa.store.documents import DocumentStore
    from docqa.store.fulltext import FullText
    from docqa.store.cluster import Cluster
    from docqa.store.keys import KeyStore
    from docqa.store.runlog import RunLog
    from docqa.store.vectors import VectorStore


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Which chunks a search may return: by collection, path glob and file type (all optional).

    `path_glob` matches the absolute path (`*` crosses folders; a relative pattern matches at any
    depth, so `docs/*.md` finds every `.../docs/x.md`).  `types` are format families (`pdf`,
    `markdown`, `code`, ...) or file extensions (`md`, `py`).
    """

    collection: str | None = None
    path_glob: str | None = None
    types: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.collection is None and not self.path_glob and not self.types


class Stores(ABC):
    """The storage of one knowledge base, one attribute per concern (all on one connection)."""

    documents: DocumentStore
    fulltext: FullText
    vectors: VectorStore
    runlog: RunLog
    keys: KeyStore
    cluster: Cluster | None = None  # several API servers on one database (PostgreSQL)

    @abstractmethod
    def check(self) -> dict:
        """Integrity report of the backend (for SQLite: integrity_check, FTS5 index vs its content)."""

    @abstractmethod
    def stats(self) -> dict:
        """Counts and sizes for `docqa stats`: documents, chunks, tokens, bytes, embedder, vectors."""

    @contextmanager
    def batch(self, seconds: float = 0.5):
        """Group many writes into fewer commits; each document stays atomic. Default: no grouping."""
        yield self

    @contextmanager
    def bulk_load(self, seconds: float = 5.0):
        """A `batch` for a large load (many new documents at once): a backend may defer work it can
        do once at the end cheaper than per write (PostgreSQL: the HNSW index).  Default: `batch`."""
        with self.batch(seconds):
            yield self

    def commit_pending(self) -> None:
        """Inside `batch()`: commit what is written so far now (before slow work such as embedding)."""

    def close(self) -> None:
        """Release resources."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def ping(self) -> float:
        """Seconds one round trip to the database takes; StoreUnavailableError when it cannot be
        reached.  A file has no server to lose: 0."""
        return 0.0
