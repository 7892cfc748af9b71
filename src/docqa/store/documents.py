"""`DocumentStore`: collections of documents and their chunks, with an atomic `replace_document`.

A document's rows change in one transaction: after a crash a document is wholly its old version
or wholly its new one, chunks, full-text entries and new vectors included (the backend writes the
other concerns' rows inside the same transaction).  The browsing reads come from `Catalog`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from docqa.store.catalog import Catalog
from docqa.store.vectors import ChunkVectors
from docqa.text.segment import with_glued_parts
from docqa.types import Chunk, DocumentRecord, Hit


@dataclass(slots=True)
class FileState:
    """What the index remembers of a file, to decide whether it changed."""

    path: str
    size: int
    mtime_ns: int
    content_hash: str
    status: str  # ok | error | skipped
    title: str = ""
    error: str | None = None  # "kind: reason" of a failed or skipped file
    readers: str = ""  # fingerprint of the readers that failed or skipped it (registry.readers_fingerprint)


@dataclass(slots=True)
class DocumentWrite:
    """One document to write with `replace_documents`: the arguments of `replace_document`."""

    record: DocumentRecord
    text: str
    chunks: list[Chunk]
    metadata: dict | None = None
    vectors: ChunkVectors | None = None
    # The segmented form of `fulltext_inputs` that have Chinese in them, made by the parser process
    # (segmented_forms); what is missing is segmented when written.
    segmented: Mapping[str, str] | None = None


def fulltext_inputs(title: str, keywords: list[str], summary: str, chunks: list[Chunk]) -> Iterator[str]:
    """The strings a store segments for its full-text index (Chinese words split by spaces), so
    that a parser process can segment them beforehand (`DocumentWrite.segmented`)."""
    yield title
    yield " ".join(keywords)
    yield summary
    for chunk in chunks:
        yield from chunk.section
        yield indexed_text(chunk)


def indexed_text(chunk: Chunk) -> str:
    """A chunk's text as its full-text entry holds it: its context (a table's header row) first, and each word of
    letters glued to a number followed by its parts (`RFC8878 RFC 8878`: text.segment.with_glued_parts)."""
    text = with_glued_parts(chunk.text)
    return f"{chunk.context}\n{text}" if chunk.context else text


class DocumentStore(Catalog):
    """Documents, their text and chunks, and the collections that hold them."""

    # -- writing ---------------------------------------------------------------------------
    @abstractmethod
    def replace_document(self, record: DocumentRecord, text: str, chunks: list[Chunk], metadata: dict | None = None,
                         vectors: ChunkVectors | None = None, segmented: Mapping[str, str] | None = None) -> None:
        """Insert or replace a document, its text, its chunks (with their full-text entries) and
        their new vectors in one transaction; creates the collection when missing.  `segmented`:
        see `DocumentWrite`."""

    def replace_documents(self, writes: list[DocumentWrite]) -> None:
        """`replace_document` for many documents (distinct ids), each wholly old or wholly new after
        a crash.  Default: one by one; a backend may write them together (PostgreSQL: one COPY per
        table, bulk.py), which makes the group atomic as a whole."""
        for w in writes:
            self.replace_document(w.record, w.text, w.chunks, w.metadata, w.vectors, w.segmented)

    @abstractmethod
    def record_failure(self, record: DocumentRecord, metadata: dict | None = None) -> None:
        """Remember a file that failed to ingest; an older good version keeps its chunks.
        `metadata` keys are merged into the document's metadata."""

    @abstractmethod
    def delete_documents(self, document_ids: Iterable[str]) -> int:
        """Delete documents with all their rows; returns how many existed."""

    @abstractmethod
    def move_document(self, old_id: str, new_id: str, new_path: str, size: int, mtime_ns: int) -> None:
        """Give an indexed document a new path (a renamed file with the same content)."""

    @abstractmethod
    def touch(self, document_id: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for an unchanged document (content hash equal)."""

    @abstractmethod
    def create_collection(self, name: str) -> bool:
        """Create an empty collection; False when it already exists."""

    @abstractmethod
    def delete_collection(self, name: str) -> list[DocumentRecord]:
        """Delete a collection and all its documents in one transaction; returns the documents.
        NotFoundError when there is no such collection."""

    # -- reading ---------------------------------------------------------------------------
    @abstractmethod
    def list_documents(self, collection: str | None = None, path_prefix: str | None = None) -> list[DocumentRecord]:
        """Documents ordered by collection then path, optionally of one collection and under one path prefix."""

    @abstractmethod
    def document_record(self, document_id: str) -> DocumentRecord:
        """One document by id (NotFoundError when there is none)."""

    @abstractmethod
    def document_text(self, document_id: str) -> str:
        """The full stored text of a document (NotFoundError when none is stored)."""

    @abstractmethod
    def chunk_ids(self, document_id: str) -> list[str]:
        """Chunk ids of a document in order."""

    @abstractmethod
    def get_hits(self, chunk_ids: list[str]) -> list[Hit]:
        """Hits (chunk + document fields, score 0) for chunk ids, in the given order; unknown ids skipped."""

    @abstractmethod
    def text_heads(self, chunk_ids: list[str], chars: int = 300) -> dict[str, str]:
        """The first `chars` characters of each chunk's text, by chunk id."""

    @abstractmethod
    def document_metadata(self, document_id: str) -> dict:
        """What the reader recorded about a document (pages, slides, sheets, OCR line boxes); {} when none."""

    @abstractmethod
    def page_lines(self, document_id: str) -> list[tuple[int, int]]:
        """(page, first line) of each PDF page or slide that holds text, in page order, from its chunks."""

    @abstractmethod
    def collection_sizes(self) -> dict[str, int]:
        """Every collection's name and how many documents it holds, by name."""

    # -- derived ---------------------------------------------------------------------------
    def collections(self) -> list[str]:
        """Names of all collections, sorted."""
        return list(self.collection_sizes())

    def file_states(self, collection: str) -> dict[str, FileState]:
        """Path -> FileState for every document of a collection."""
        return {r.path: FileState(r.path, r.size, r.mtime_ns, r.content_hash, r.status, r.title, r.error)
                for r in self.list_documents(collection)}
