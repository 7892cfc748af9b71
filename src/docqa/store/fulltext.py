"""`FullText`: BM25 search over the chunks' enriched text (title, keywords, summary, content).

The entries are written with their chunks by `DocumentStore.replace_document`, in its
transaction; this interface only reads them.  Every query term is quoted by the backend, so no
user input can be read as query syntax.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from docqa.store.base import ChunkFilter


@dataclass(slots=True)
class TextQuery:
    """A parsed full-text query: terms to match (any), and whether to boost the whole phrase."""

    terms: list[str]
    phrase: str | None = None
    phrase_boost: float = 1.5


class FullText(ABC):
    """Ranked full-text search over the chunks."""

    @abstractmethod
    def search_text(self, query: TextQuery, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        """(chunk_id, BM25 score) best first; higher score is better.

        Fields weigh title 4, keywords 3, summary 3, content 1; chunks matching the terms near one
        another, or the exact `phrase`, are boosted by up to `query.phrase_boost`.
        """

    @abstractmethod
    def term_counts(self, terms: list[str]) -> tuple[dict[str, int], int]:
        """(chunks containing each full-text term, all chunks): document frequencies for IDF."""
