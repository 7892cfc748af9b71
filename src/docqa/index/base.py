"""The `Store` interface: documents, chunks and full-text behind one contract.

A store holds collections of documents.  `replace_document` is atomic: after a crash a document
is wholly its old version or wholly its new one, chunks and full-text entries included.  The
same contract test suite runs against every backend.

It also keeps the conversations asked of those documents: sessions, their runs (one question
answered, with its full trace, for audit and replay) and the users' feedback on runs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from docqa.types import ApiKeyRecord, Chunk, DocumentRecord, FeedbackRecord, Hit, RunRecord, SessionRecord


@dataclass(slots=True)
class FileState:
    """What the index remembers of a file, to decide whether it changed."""

    path: str
    size: int
    mtime_ns: int
    content_hash: str
    status: str
    title: str = ""


@dataclass(slots=True)
class TextQuery:
    """A parsed full-text query: terms to match (any), and whether to boost the whole phrase."""

    terms: list[str]
    phrase: str | None = None
    phrase_boost: float = 1.5


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


@dataclass(slots=True)
class CatalogPage:
    """A page of the documents with status ok, by path (what `Store.catalog` returns)."""

    records: list[DocumentRecord]
    total: int  # documents with status ok that the match admits
    failed: int  # documents whose last ingest failed (never listed)


@dataclass(slots=True)
class ChunkVectors:
    """Dense vectors written with a document: `hashes[i]` is chunk i's embedded-text hash."""

    model: str | None  # the embedder fingerprint key; None when no embedder is configured
    hashes: list[str]
    new: dict[str, np.ndarray] = field(default_factory=dict)  # hash -> vector not yet stored


@dataclass(slots=True)
class EmbedInput:
    """A stored chunk text that has no vector for some model yet (for `docqa reindex`)."""

    text_hash: str
    title: str
    section: list[str]
    context: str
    text: str
    symbol: str | None


class Store(ABC):
    """Persistent index of one knowledge base."""

    @abstractmethod
    def replace_document(self, record: DocumentRecord, text: str, chunks: list[Chunk], metadata: dict | None = None,
                         vectors: ChunkVectors | None = None) -> None:
        """Insert or replace a document, its text, its chunks and their vectors in one transaction."""

    @abstractmethod
    def record_failure(self, record: DocumentRecord) -> None:
        """Remember a file that failed to ingest; an older good version keeps its chunks."""

    @abstractmethod
    def delete_documents(self, document_ids: Iterable[str]) -> int:
        """Delete documents with all their rows; returns how many existed."""

    @abstractmethod
    def file_states(self, collection: str) -> dict[str, FileState]:
        """Path -> FileState for every document of a collection."""

    @abstractmethod
    def move_document(self, old_id: str, new_id: str, new_path: str, size: int, mtime_ns: int) -> None:
        """Give an indexed document a new path (a renamed file with the same content)."""

    @abstractmethod
    def touch(self, document_id: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for an unchanged document (content hash equal)."""

    @abstractmethod
    def list_documents(self, collection: str | None = None, path_prefix: str | None = None) -> list[DocumentRecord]:
        """Documents, optionally of one collection and under one path prefix."""

    @abstractmethod
    def document_record(self, document_id: str) -> DocumentRecord:
        """One document by id (NotFoundError when there is none)."""

    @abstractmethod
    def search_text(self, query: TextQuery, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        """(chunk_id, BM25 score) best first; higher score is better."""

    @abstractmethod
    def search_vector(self, vector: np.ndarray, model: str, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) best first, over the vectors of one model."""

    # -- vectors ---------------------------------------------------------------------------
    @abstractmethod
    def known_vectors(self, model: str, hashes: Iterable[str]) -> set[str]:
        """Which of these text hashes already have a vector of `model` (they need no embedding)."""

    @abstractmethod
    def embedder(self) -> str | None:
        """The recorded embedder fingerprint (JSON), or None when nothing was embedded yet."""

    @abstractmethod
    def set_embedder(self, fingerprint: str | None, model: str | None) -> None:
        """Record the embedder and drop every vector of any other model (None: no embedder)."""

    @abstractmethod
    def unembedded(self, model: str, limit: int) -> list[EmbedInput]:
        """Up to `limit` distinct chunk texts lacking a vector of `model`."""

    @abstractmethod
    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Store vectors of `model` by text hash (one transaction)."""

    @abstractmethod
    def fill_hashes(self, hasher: Callable[[EmbedInput], str]) -> int:
        """Give chunks indexed before vectors existed their text hash; returns how many."""

    @abstractmethod
    def vector_count(self, model: str | None = None) -> tuple[int, int]:
        """(chunks with a vector of `model`, all chunks)."""

    @abstractmethod
    def get_hits(self, chunk_ids: list[str]) -> list[Hit]:
        """Hits (chunk + document fields) for chunk ids, in the given order; unknown ids skipped."""

    @abstractmethod
    def document_text(self, document_id: str) -> str:
        """The full stored text of a document."""

    # -- browsing: documents as text ---------------------------------------------------------
    @abstractmethod
    def catalog(self, collection: str | None = None, offset: int = 0, limit: int | None = None,
                select: Callable[[list[str]], list[int]] | None = None) -> CatalogPage:
        """Documents with status ok ordered by path: `limit` of them (all when None) from `offset`.

        `select`, when given, filters first: it gets the text of every such document, in path
        order, as `"{path}\n{title}\n{keywords, space-separated}\n{summary}"`, and returns the
        positions (ascending) of those to keep; one call, so a pattern can scan them all at once.
        """

    @abstractmethod
    def find_documents(self, path: str) -> list[DocumentRecord]:
        """Documents (any collection) whose path is `path` or ends with `/` + `path`."""

    @abstractmethod
    def document_texts(self, where: ChunkFilter | None = None) -> Iterator[tuple[str, str, str, str]]:
        """(document id, path, title, stored text) of every document with status ok that the filter
        admits, ordered by path, read lazily (closing the iterator early ends the query)."""

    @abstractmethod
    def path_bounds(self, collection: str | None = None) -> tuple[str, str] | None:
        """The smallest and largest path of the documents with status ok (None when there are none):
        their common prefix is every path's common prefix."""

    @abstractmethod
    def page_lines(self, document_id: str) -> list[tuple[int, int]]:
        """(page, first line) of each PDF page or slide that holds text, in page order, from its chunks."""

    @abstractmethod
    def term_counts(self, terms: list[str]) -> tuple[dict[str, int], int]:
        """(chunks containing each full-text term, all chunks): document frequencies for IDF."""

    @abstractmethod
    def text_heads(self, chunk_ids: list[str], chars: int = 300) -> dict[str, str]:
        """The first `chars` characters of each chunk's text, by chunk id."""

    @abstractmethod
    def chunk_ids(self, document_id: str) -> list[str]:
        """Chunk ids of a document in order."""

    @abstractmethod
    def stats(self) -> dict:
        """Counts and sizes for `docqa stats`."""

    @abstractmethod
    def collections(self) -> list[str]:
        """Names of all collections."""

    @abstractmethod
    def collection_sizes(self) -> dict[str, int]:
        """Every collection's name and how many documents it holds, by name."""

    @abstractmethod
    def create_collection(self, name: str) -> bool:
        """Create an empty collection; False when it already exists."""

    @abstractmethod
    def delete_collection(self, name: str) -> list[DocumentRecord]:
        """Delete a collection and all its documents in one transaction; returns the documents.
        NotFoundError when there is no such collection."""

    # -- sessions, runs, feedback ----------------------------------------------------------
    @abstractmethod
    def save_session(self, session: SessionRecord) -> SessionRecord:
        """Insert or update a session (its created_at is kept, updated_at set to now); returns it as stored."""

    @abstractmethod
    def get_session(self, session_id: str) -> SessionRecord:
        """A session by id; NotFoundError when there is none."""

    @abstractmethod
    def delete_session(self, session_id: str) -> bool:
        """Delete a session with its runs and their feedback; False when it did not exist."""

    @abstractmethod
    def save_run(self, run: RunRecord) -> RunRecord:
        """Insert or update a run in one transaction, creating its session when missing and bumping
        the session's updated_at.  A missing created_at is set to now.  Feedback is not written."""

    @abstractmethod
    def get_run(self, run_id: str) -> RunRecord:
        """A run with its feedback (oldest first); NotFoundError when there is none."""

    @abstractmethod
    def list_runs(self, *, since: str | None = None, until: str | None = None, statuses: Iterable[str] | None = None,
                  session_id: str | None = None, limit: int | None = None) -> list[RunRecord]:
        """Runs with their feedback, newest first.

        `since` (inclusive) and `until` (exclusive) compare with created_at as ISO 8601 text, so a
        day `2026-01-31` or a full timestamp both work.  `statuses` keeps only runs in those.
        """

    @abstractmethod
    def add_feedback(self, run_id: str, rating: str, comment: str | None = None) -> FeedbackRecord:
        """Record a rating ('up' or 'down') of a run; NotFoundError when the run does not exist."""

    # -- API keys (only hashes are stored) ---------------------------------------------------
    @abstractmethod
    def add_key(self, record: ApiKeyRecord, key_hash: str) -> ApiKeyRecord:
        """Store a new key by its hash (the key itself is never given to the store); returns it as stored."""

    @abstractmethod
    def get_key(self, key_id: str) -> ApiKeyRecord:
        """A key by id, revoked or not; NotFoundError when there is none."""

    @abstractmethod
    def key_by_hash(self, key_hash: str) -> ApiKeyRecord | None:
        """The key with this hash, revoked or not; None when there is none."""

    @abstractmethod
    def list_keys(self, include_revoked: bool = False) -> list[ApiKeyRecord]:
        """Keys, oldest first; revoked ones only when asked."""

    @abstractmethod
    def active_keys(self) -> int:
        """How many keys are not revoked (any: the API requires a key)."""

    @abstractmethod
    def revoke_key(self, key_id: str) -> ApiKeyRecord:
        """Mark a key revoked (kept for audit; revoking twice keeps the first time); NotFoundError when unknown."""

    @abstractmethod
    def touch_key(self, record: ApiKeyRecord) -> None:
        """Record that a key was used now (at most about once a minute per key)."""

    def session_runs(self, session_id: str, limit: int | None = None) -> list[RunRecord]:
        """A session's runs oldest first: all of them, or the last `limit`."""
        return self.list_runs(session_id=session_id, limit=limit)[::-1]

    @contextmanager
    def batch(self, seconds: float = 0.5):
        """Group many writes into fewer commits; each document stays atomic. Default: no grouping."""
        yield self

    def commit_pending(self) -> None:
        """Inside `batch()`: commit what is written so far now (before slow work such as embedding)."""

    def close(self) -> None:
        """Release resources."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
