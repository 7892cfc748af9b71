"""The retriever: BM25 over the weighted full-text fields (hybrid retrieval builds on this)."""

from __future__ import annotations

from docqa.index.base import Store
from docqa.retrieve.query import parse_query
from docqa.retrieve.snippet import highlight
from docqa.types import Hit


class Retriever:
    """Searches one store."""

    def __init__(self, store: Store, phrase_boost: float = 1.5, snippet_chars: int = 240):
        self.store = store
        self.phrase_boost = phrase_boost
        self.snippet_chars = snippet_chars

    def search(self, query: str, top_k: int = 10, collection: str | None = None) -> list[Hit]:
        """Best `top_k` chunks for `query`, with scores, BM25 ranks and highlighted snippets."""
        parsed = parse_query(query, self.phrase_boost)
        scored = self.store.search_text(parsed, top_k, collection)
        hits = self.store.get_hits([chunk_id for chunk_id, _ in scored])
        scores = dict(scored)
        for rank, hit in enumerate(hits, start=1):
            hit.score = scores[hit.chunk_id]
            hit.bm25_rank = rank
            hit.snippet = highlight(hit.text, parsed.terms, self.snippet_chars)
        return hits
