"""KnowledgeBase: the one core every front end (CLI, API, MCP, web) calls."""

from __future__ import annotations

import os
from pathlib import Path

from docqa.errors import NotFoundError
from docqa.index import Store, open_store
from docqa.ingest.pipeline import IngestOptions, Ingestor, IngestReport, Progress, document_id
from docqa.ingest.scan import Scanner
from docqa.retrieve import Retriever
from docqa.settings import Settings
from docqa.types import DocumentRecord, Hit


class KnowledgeBase:
    """A knowledge base: add and remove files, list documents, search chunks."""

    def __init__(self, settings: Settings | None = None, store: Store | None = None):
        self.settings = settings or Settings()
        self.store = store or open_store(self.settings.kb)
        self.retriever = Retriever(self.store, self.settings.search.phrase_boost, self.settings.search.snippet_chars)

    # -- ingest ----------------------------------------------------------------------------
    def add(self, paths: list[str | Path], collection: str | None = None, progress: Progress | None = None,
            include: list[str] | None = None, exclude: list[str] | None = None) -> IngestReport:
        """Add files and folders (recursively, incrementally) to a collection."""
        s = self.settings
        scanner = Scanner(
            include=include if include is not None else s.ingest.include,
            exclude=[*s.ingest.exclude, *(exclude or [])],
            gitignore=s.ingest.gitignore,
            hidden=s.ingest.hidden,
        )
        opts = IngestOptions(
            max_tokens=s.chunk.max_tokens, overlap=s.chunk.overlap,
            max_bytes=int(s.ingest.max_file_mb * 1024 * 1024), workers=s.ingest.workers,
        )
        ingestor = Ingestor(self.store, scanner, opts, progress)
        return ingestor.run([Path(p) for p in paths], collection or s.collection)

    def remove(self, paths: list[str | Path], collection: str | None = None) -> list[DocumentRecord]:
        """Remove documents by file path, or everything under a folder path. Returns what was removed."""
        collection = collection or self.settings.collection
        doomed: dict[str, DocumentRecord] = {}
        for raw in paths:
            path = os.path.abspath(raw)
            for record in self.store.list_documents(collection, path_prefix=path):
                doomed[record.document_id] = record
        self.store.delete_documents(doomed)
        return list(doomed.values())

    # -- read ------------------------------------------------------------------------------
    def documents(self, collection: str | None = None) -> list[DocumentRecord]:
        """Documents of a collection (all collections when None)."""
        return self.store.list_documents(collection)

    def search(self, query: str, top_k: int | None = None, collection: str | None = None) -> list[Hit]:
        """Best chunks for a query, across all collections unless one is given."""
        return self.retriever.search(query, top_k or self.settings.search.top_k, collection)

    def chunk(self, chunk_id: str) -> Hit:
        """One chunk with its location."""
        hits = self.store.get_hits([chunk_id])
        if not hits:
            raise NotFoundError(f"no chunk {chunk_id!r}: chunk ids come from 'docqa search'")
        return hits[0]

    def document(self, path: str | Path, collection: str | None = None) -> DocumentRecord:
        """The document indexed for a file path."""
        doc_id = document_id(collection or self.settings.collection, os.path.abspath(path))
        for record in self.store.list_documents(collection or self.settings.collection, path_prefix=os.path.abspath(path)):
            if record.document_id == doc_id:
                return record
        raise NotFoundError(f"{path} is not indexed in collection {collection or self.settings.collection!r}: add it with 'docqa add'")

    def document_chunks(self, document_id: str) -> list[Hit]:
        """All chunks of a document, in order."""
        return self.store.get_hits(self.store.chunk_ids(document_id))

    def document_text(self, document_id: str) -> str:
        return self.store.document_text(document_id)

    def stats(self) -> dict:
        return self.store.stats()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
