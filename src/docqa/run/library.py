"""ScopedLibrary: the `Library` a run receives — the knowledge base's services, called as the run's
principal, within the run's collection when it named one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from docqa.access import Principal
from docqa.errors import PermissionDeniedError
from docqa.types import DocumentRecord, Hit

if TYPE_CHECKING:
    from docqa.browse.catalog import DocPage
    from docqa.browse.grep import GrepResult
    from docqa.browse.read import DocText
    from docqa.browse.service import Browse
    from docqa.embed import Embedder
    from docqa.ingest.service import Documents
    from docqa.retrieve import SearchResults
    from docqa.retrieve.service import Search
    from docqa.store import FullText
    from docqa.view.service import Viewer


class ScopedLibrary:
    """What answering needs from the knowledge base (docqa.answer.library.Library), as `principal` may
    use it.  A call naming a collection outside the principal's scope is refused by the same checks as
    every other door (for the agent's tools, an error result)."""

    def __init__(self, principal: Principal, collection: str | None, *, search: Search, documents: Documents,
                 browse: Browse, viewer: Viewer, fulltext: FullText, embedder: Embedder | None):
        self.principal, self.collection = principal, collection
        self._search, self._documents, self._browse, self._viewer = search, documents, browse, viewer
        self.term_counts = fulltext.term_counts
        self.embed = embedder.embed_batch if embedder is not None else None

    def search(self, query: str, top_k: int, collection: str | None, path_glob: str | None = None) -> SearchResults:
        return self._search.search(query, top_k, self._within(collection), path_glob=path_glob, principal=self.principal)

    def keyword(self, query: str, top_k: int) -> SearchResults:
        return self._search.search(query, top_k, self.collection, mode="bm25", rerank="none", principal=self.principal)

    def documents(self, collection: str | None) -> list[DocumentRecord]:
        return self._documents.list(self._within(collection), principal=self.principal)

    def list_docs(self, grep: str | None, page: int, page_size: int) -> DocPage:
        return self._browse.list_docs(grep, page, page_size, self.collection, principal=self.principal)

    def fetch_doc(self, doc_id: str, offset: int, limit: int) -> DocText:
        return self._browse.fetch_doc(doc_id, offset, limit, self.collection, principal=self.principal)

    def grep_docs(self, pattern: str, path_glob: str | None, context: int) -> GrepResult:
        return self._browse.grep_docs(pattern, path_glob, context, collection=self.collection, principal=self.principal)

    def passage(self, document_id: str, line_start: int, line_end: int) -> Hit:
        return self._viewer.passage(document_id, line_start, line_end, principal=self.principal)

    def around(self, hit: Hit) -> list[Hit]:
        return self._documents.around(hit.document_id, hit.chunk_id, principal=self.principal)

    def changes(self, document_ids: list[str]) -> list[dict]:
        return self._documents.changes(document_ids, principal=self.principal)

    def refresh(self, document_ids: list[str]) -> dict:
        return self._documents.refresh(document_ids, principal=self.principal)

    def namesakes(self, paths: list[str]) -> list[str]:
        return self._documents.namesakes(paths, self.collection, principal=self.principal)

    def _within(self, collection: str | None) -> str | None:
        """A run named its collection: a tool call cannot widen it."""
        if self.collection is not None and collection not in (None, self.collection) and self.principal.can_see(collection):
            raise PermissionDeniedError(f"this question is limited to collection {self.collection!r}: "
                                        f"{collection!r} is outside it; search without naming a collection")
        return collection or self.collection
