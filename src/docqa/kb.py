"""KnowledgeBase: the one core every front end (CLI, API, MCP, web) calls."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from docqa.embed import Embedder, Fingerprint, embed_text, make_embedder, text_hash
from docqa.errors import EmbedderMismatchError, NotFoundError
from docqa.index import ChunkFilter, EmbedInput, Store, open_store
from docqa.ingest.pipeline import IngestOptions, Ingestor, IngestReport, Progress, document_id
from docqa.ingest.scan import Scanner
from docqa.retrieve import Retriever, SearchResults
from docqa.settings import Settings
from docqa.types import DocumentRecord, Hit

_REINDEX_BATCH = 256


@dataclass(slots=True)
class ReindexReport:
    """What one `reindex` did."""

    embedder: str | None  # fingerprint key, None when vectors were dropped
    embedded: int  # distinct texts embedded now
    reused: int  # chunks whose vector already existed (an interrupted run, or equal texts)
    chunks: int
    elapsed: float = 0.0

    def to_dict(self) -> dict:
        return {"embedder": self.embedder, "embedded": self.embedded, "reused": self.reused,
                "chunks": self.chunks, "elapsed_s": round(self.elapsed, 3)}


class KnowledgeBase:
    """A knowledge base: add and remove files, list documents, search chunks."""

    def __init__(self, settings: Settings | None = None, store: Store | None = None, embedder: Embedder | None | bool = True):
        """`embedder`: True builds the configured one (lazily, on first use); an instance or None overrides it."""
        self.settings = settings or Settings()
        self.store = store or open_store(self.settings.kb)
        self._embedder = embedder
        self._owns_embedder = embedder is True
        self._retriever: Retriever | None = None

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder (None: BM25 only); built on first use."""
        if self._embedder is True:
            e = self.settings.embed
            self._embedder = make_embedder(e.provider, e.model, e.base_url, e.api_key, e.timeout, e.window_chars)
        return self._embedder  # type: ignore[return-value]

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = Retriever(self.store, self.settings.search, self.embedder)
        return self._retriever

    def _check_embedder(self, writing: bool) -> None:
        """Refuse to mix vectors of two models: the index records which one made its vectors."""
        configured = self.embedder.fingerprint if self.embedder else None
        raw = self.store.embedder()
        stored = Fingerprint.from_json(raw) if raw else None
        if stored == configured:
            return
        if self.store.vector_count()[1] == 0:  # an empty index adopts the configured embedder
            self.store.set_embedder(configured.to_json() if configured else None, configured.key if configured else None)
            return
        if stored is None and configured is not None:
            problem = f"its chunks have no vectors of {configured.name} yet"
        elif configured is None:
            if not writing:
                return  # BM25 still works; new chunks would lack vectors, so writing is refused
            problem = f"it holds vectors of {stored.name}, but embed.provider is 'none'"
        else:
            problem = f"it was embedded with {stored.key}, but the configured embedder is {configured.key}"
        raise EmbedderMismatchError(
            f"{self.settings.kb}: {problem}. Run 'docqa reindex' to embed it with the configured model "
            "(incremental and resumable), or configure the embedder it was built with."
        )

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
        self._check_embedder(writing=True)
        ingestor = Ingestor(self.store, scanner, opts, progress, self.embedder)
        return ingestor.run([Path(p) for p in paths], collection or s.collection)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> ReindexReport:
        """Embed every chunk with the configured model: only texts without its vector are embedded,
        committed batch by batch, so an interrupted run resumes where it stopped."""
        import time

        started = time.perf_counter()
        embedder = self.embedder
        if embedder is None:
            self.store.set_embedder(None, None)
            return ReindexReport(None, 0, 0, self.store.vector_count()[1], time.perf_counter() - started)
        key = embedder.fingerprint.key
        self.store.fill_hashes(_hash_input)
        before, total = self.store.vector_count(key)
        embedded = 0
        while batch := self.store.unembedded(key, _REINDEX_BATCH):
            texts = [embed_text(b.title, b.section, b.text, b.context, b.symbol) for b in batch]
            vectors = embedder.embed_batch(texts, "passage")
            self.store.put_vectors(key, {b.text_hash: v for b, v in zip(batch, vectors)})
            embedded += len(batch)
            if progress:
                progress(self.store.vector_count(key)[0], total)
        self.store.set_embedder(embedder.fingerprint.to_json(), key)
        if self._retriever is not None:
            self._retriever.close()
            self._retriever = None
        return ReindexReport(key, embedded, before, total, time.perf_counter() - started)

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

    def search(self, query: str, top_k: int | None = None, collection: str | None = None, *, mode: str | None = None,
               path_glob: str | None = None, types: list[str] | tuple[str, ...] = ()) -> SearchResults:
        """Best chunks for a query (hybrid by default), across all collections unless one is given.

        The result is a list of hits, best first, with `.low_relevance` set when even the best
        hit scores under `search.relevance_threshold`.
        """
        mode = mode or self.settings.search.mode
        if mode != "bm25" and self.embedder is not None:
            self._check_embedder(writing=False)
        where = ChunkFilter(collection, path_glob, tuple(types))
        return self.retriever.search(query, top_k, where, mode)

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
        if self._retriever is not None:
            self._retriever.close()
        if self._owns_embedder and isinstance(self._embedder, Embedder):
            self._embedder.close()
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _hash_input(item: EmbedInput) -> str:
    return text_hash(embed_text(item.title, item.section, item.text, item.context, item.symbol))
