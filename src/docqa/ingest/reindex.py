"""Reindex: embed every chunk with the configured model, only the texts without its vector, batch by
batch, so an interrupted run resumes where it stopped."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from docqa.embed import Embedder, embed_text, text_hash
from docqa.store import EmbedInput
from docqa.store.vectors import VectorStore

BATCH = 256


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


def reindex(vectors: VectorStore, embedder: Embedder | None, progress: Callable[[int, int], None] | None = None,
            gate: Callable[[], AbstractContextManager] | None = None) -> ReindexReport:
    """Embed the chunks `vectors` has no vector of `embedder` for (None: drop the vectors' embedder).
    Each write is taken under `gate` (the API server's writer turn, pipeline.Gate); embedding holds nothing."""
    started = time.perf_counter()
    step = gate or nullcontext
    if embedder is None:
        with step():
            vectors.set_embedder(None, None)
        return ReindexReport(None, 0, 0, vectors.vector_count()[1], time.perf_counter() - started)
    key = embedder.fingerprint.key
    with step():
        vectors.fill_hashes(_hash_input)
    before, total = vectors.vector_count(key)
    embedded = 0
    while batch := vectors.unembedded(key, BATCH):
        texts = [embed_text(b.title, b.section, b.text, b.context, b.symbol) for b in batch]
        found = embedder.embed_batch(texts, "passage")
        with step():
            vectors.put_vectors(key, {b.text_hash: v for b, v in zip(batch, found)})
        embedded += len(batch)
        if progress:
            progress(vectors.vector_count(key)[0], total)
    with step():
        vectors.set_embedder(embedder.fingerprint.to_json(), key)
        vectors.set_vectors_pending(False)
    return ReindexReport(key, embedded, before, total, time.perf_counter() - started)


def _hash_input(item: EmbedInput) -> str:
    return text_hash(embed_text(item.title, item.section, item.text, item.context, item.symbol))
