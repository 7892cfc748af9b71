"""Browse: the documents as text for one caller (`kb.browse`) — the catalog, a document's numbered
lines, grep over every document — what a model exploring with tools reads, and `docqa llms-txt`."""

from __future__ import annotations

from docqa.access import LOCAL, Principal, require, scope
from docqa.browse.catalog import DocPage, list_docs, llms_txt
from docqa.browse.grep import GrepResult, grep_docs
from docqa.browse.overview import Overview, overview
from docqa.browse.read import MAX_CHARS, DocText, fetch_doc, page_span
from docqa.store import DocumentStore
from docqa.store.catalog import common_folder


class Browse:
    """The stored documents as text, within the collections a principal sees."""

    def __init__(self, documents: DocumentStore):
        self.documents = documents

    def list_docs(self, grep: str | None = None, page: int = 1, page_size: int = 50,
                  collection: str | None = None, *, principal: Principal = LOCAL) -> DocPage:
        """The catalog, one `- [dir / title](doc-id): summary` line per document, filtered by `grep`
        (over path, title, keywords, summary) and paged; every collection the principal sees unless one is given."""
        require(principal, "read")
        return list_docs(self.documents, grep, page, page_size, scope(principal, collection))

    def fetch_page(self, doc_id: str, page: int, collection: str | None = None, *, max_chars: int = MAX_CHARS,
                   principal: Principal = LOCAL) -> DocText:
        """The numbered lines of one page of a PDF (or slide of a deck): NotFoundError naming the pages
        there are when it has no such page, or no pages at all."""
        record = self.fetch_doc(doc_id, 1, 1, collection, principal=principal)
        first, last = page_span(self.documents, record.doc_id, page, record.total_lines)
        return self.fetch_doc(record.doc_id, first, last - first + 1, collection, max_chars=max_chars, principal=principal)

    def fetch_doc(self, doc_id: str, offset: int = 1, limit: int = 200, collection: str | None = None, *,
                  max_chars: int = MAX_CHARS, principal: Principal = LOCAL) -> DocText:
        """A document's text in numbered lines from line `offset`, at most `limit` lines and ~12,000
        characters, page breaks marked; `doc_id` may also be a path or the end of one.  Documents
        the principal cannot see do not exist for it (the same error as none)."""
        require(principal, "read")
        if collection is not None:
            seen: tuple[str, ...] | None = (scope(principal, collection),)  # type: ignore[assignment]
        else:
            seen = principal.collections or None
        return fetch_doc(self.documents, doc_id, offset, limit, max_chars, collections=seen)

    def grep_docs(self, pattern: str, path_glob: str | None = None, context: int = 1, max_matches: int = 50,
                  collection: str | None = None, ignore_case: bool = True, *, principal: Principal = LOCAL) -> GrepResult:
        """Lines matching a regular expression in every document's text, like ripgrep, with context."""
        require(principal, "read")
        return grep_docs(self.documents, pattern, path_glob, context, max_matches, scope(principal, collection), ignore_case)

    def llms_txt(self, collection: str | None = None, *, principal: Principal = LOCAL) -> str:
        """The catalog as an llms.txt file, one section per folder (every collection the principal sees unless one is given)."""
        require(principal, "read")
        return llms_txt(self.documents, scope(principal, collection))

    def overview(self, collection: str | None = None, *, principal: Principal = LOCAL) -> Overview:
        """What the knowledge base holds for someone about to ask: counts, collections, the documents'
        languages and three example questions from their headings — over the collections the principal
        sees (or `collection` alone)."""
        require(principal, "read")
        if collection is not None:
            scope(principal, collection)
        return overview(self.documents, list(principal.collections) or None, collection)

    def root(self, *, principal: Principal = LOCAL) -> str:
        """The deepest folder holding every indexed document, with its trailing separator ('' when
        there are none): the folder they were added from, when one was."""
        require(principal, "read")
        bounds = self.documents.path_bounds(None)
        return common_folder(*bounds) if bounds else ""
