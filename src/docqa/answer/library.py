"""Library: what answering needs from the knowledge base, already scoped to one caller and collection.

The pipeline and the agent's tools share one; the knowledge base hands each run a `ScopedLibrary`
(docqa.run.library) over its principal-scoped services, so a collection outside the caller's scope
is refused in the core (the agent's tools turn that into an error result for the model).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from docqa.retrieve import SearchResults
from docqa.types import DocumentRecord, Hit


class Library(Protocol):
    """The knowledge base as a run sees it.  `collection` is the run's own (None: every collection the
    caller may see); a `None` collection argument below means that one."""

    @property
    def collection(self) -> str | None:
        """The run's collection (None: every collection the caller may see)."""

    @property
    def embed(self) -> Callable[[list[str], str], np.ndarray] | None:
        """Embed texts of a kind (query, passage); None: no embedder."""

    def search(self, query: str, top_k: int, collection: str | None, path_glob: str | None = None) -> SearchResults:
        """Best chunks for a query (`path_glob`: only in the documents whose path matches it)."""

    def documents(self, collection: str | None) -> list[DocumentRecord]:
        """The documents of a collection."""

    def list_docs(self, grep: str | None, page: int, page_size: int) -> Any:
        """The catalog page (a DocPage)."""

    def fetch_doc(self, doc_id: str, offset: int, limit: int) -> Any:
        """A document's numbered lines (a DocText)."""

    def grep_docs(self, pattern: str, path_glob: str | None, context: int) -> Any:
        """Lines matching a pattern (a GrepResult)."""

    def passage(self, document_id: str, line_start: int, line_end: int) -> Hit:
        """A document's lines as a citable passage."""

    def around(self, hit: Hit) -> list[Hit]:
        """The chunks just before and just after a hit's chunk in its document."""

    def term_counts(self, terms: list[str]) -> tuple[dict[str, int], int]:
        """Document frequencies of terms and the number of documents (for the extractive answerer's idf)."""

    def keyword(self, query: str, top_k: int) -> SearchResults:
        """BM25 only, in the run's scope."""

    def changes(self, document_ids: list[str]) -> list[dict]:
        """Those of the documents whose files differ on disk."""

    def refresh(self, document_ids: list[str]) -> dict:
        """Re-ingest the documents' files (needs write access)."""

    def namesakes(self, paths: list[str]) -> list[str]:
        """The paths of other documents the caller sees with the file name of one of `paths`."""
