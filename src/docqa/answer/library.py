"""Library: what answering needs from the knowledge base, already scoped to one caller and collection.

The pipeline and the agent's tools share one; `KnowledgeBase.library(principal, collection)` builds
it from the knowledge base's own principal-scoped methods, so a collection outside the caller's
scope is refused in the core (the agent's tools turn that into an error result for the model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from docqa.retrieve import SearchResults
from docqa.types import DocumentRecord, Hit


@dataclass(slots=True)
class Library:
    """Thin callables over the knowledge base.  `collection` is the run's own (None: every collection
    the caller may see); a `None` collection argument below means that one."""

    search: Callable[[str, int, str | None], SearchResults]  # query, top_k, collection
    documents: Callable[[str | None], list[DocumentRecord]]  # collection
    list_docs: Callable[[str | None, int, int], Any]  # grep, page, page_size -> DocPage
    fetch_doc: Callable[[str, int, int], Any]  # doc_id, offset, limit -> DocText
    grep_docs: Callable[[str, str | None, int], Any]  # pattern, path_glob, context -> GrepResult
    passage: Callable[[str, int, int], Hit]  # a document's lines as a citable passage
    term_counts: Callable[[list[str]], tuple[dict[str, int], int]]  # for the extractive answerer's idf
    embed: Callable[[list[str], str], np.ndarray] | None = None  # texts, kind; None: no embedder
    collection: str | None = None
    keyword: Callable[[str, int], SearchResults] | None = None  # query, top_k: BM25 only, in the run's scope
    changes: Callable[[list[str]], list[dict]] | None = None  # document ids -> those whose files differ on disk
    refresh: Callable[[list[str]], dict] | None = None  # document ids -> re-ingested (needs write access)
    namesakes: Callable[[list[str]], list[str]] | None = None  # paths -> other visible documents' paths of the same file names
