"""`Catalog`: the documents as a browsable list and as text (for `list_docs`, `grep_docs`, `fetch_doc`).

Read-only queries over the documents with status ok, ordered by path.  `DocumentStore` extends
this interface, so a backend implements the browsing reads beside its document tables; they are
kept apart because they serve the agent's tools, not ingest, and read whole documents at once.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from docqa.store.base import ChunkFilter
from docqa.types import DocumentRecord


@dataclass(slots=True)
class CatalogPage:
    """A page of the documents with status ok, by path (what `Catalog.catalog` returns)."""

    records: list[DocumentRecord]
    total: int  # documents with status ok that the match admits
    failed: int  # documents whose last ingest failed (never listed)


class Catalog(ABC):
    """Browsing reads over the documents with status ok."""

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
        """Documents (any collection) whose path is `path` or ends with `/` + `path`, by path then collection."""

    @abstractmethod
    def document_texts(self, where: ChunkFilter | None = None) -> Iterator[tuple[str, str, str, str]]:
        """(document id, path, title, stored text) of every document with status ok that the filter
        admits, ordered by path, read lazily (closing the iterator early ends the query)."""

    @abstractmethod
    def path_bounds(self, collection: str | None = None) -> tuple[str, str] | None:
        """The smallest and largest path of the documents with status ok (None when there are none):
        their common prefix is every path's common prefix."""


def common_folder(low: str, high: str) -> str:
    """The deepest folder (with its trailing separator) holding every path from `low` to `high` (a
    `path_bounds`): the common prefix of the smallest and largest paths is that of all paths between them."""
    prefix = os.path.commonprefix([low, high])
    cut = max(prefix.rfind("/"), prefix.rfind("\\"))
    return prefix[: cut + 1]
