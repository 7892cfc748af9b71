"""The documents as MCP resources: `docqa://COLLECTION/DOC_ID`, listed for the caller (its collections
only), read as numbered text; resource templates for a range of lines and a PDF page.

    docqa://ops/3f2a…                 the document's text in numbered lines (the first READ_LINES)
    docqa://ops/3f2a…/lines/120-180   lines 120 to 180
    docqa://ops/3f2a…/page/5          page 5 of a PDF (or slide 5 of a deck)

A resource's `mimeType` and `size` are the original file's; reading one gives its stored text
(`text/plain`), the text every citation's lines point into.  The collection is percent-encoded.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from mcp_types import ListResourcesResult, Resource, ResourceTemplate

from docqa.access import Principal
from docqa.errors import InputError
from docqa.kb import KnowledgeBase
from docqa.types import DocumentRecord

SCHEME = "docqa"
PAGE_SIZE = 500  # resources per page of resources/list
READ_LINES = 2_000  # lines a read gives at most (a range reads on)
READ_CHARS = 200_000
_URI = re.compile(r"^docqa://(?P<collection>[^/]+)/(?P<doc>[^/]+)(?:/lines/(?P<a>\d+)-(?P<b>\d+)|/page/(?P<page>\d+))?/?$")

TEMPLATES = [
    ResourceTemplate(name="document", title="A document", uri_template="docqa://{collection}/{doc_id}", mime_type="text/plain",
                     description=f"A document's stored text in numbered lines (the first {READ_LINES:,}), page breaks marked."),
    ResourceTemplate(name="document-lines", title="Lines of a document", mime_type="text/plain",
                     uri_template="docqa://{collection}/{doc_id}/lines/{start}-{end}",
                     description="Lines start to end (from 1) of a document's text, numbered as citations number them."),
    ResourceTemplate(name="document-page", title="A page of a PDF", uri_template="docqa://{collection}/{doc_id}/page/{page}",
                     mime_type="text/plain", description="The text of one page of a PDF (or one slide of a deck), in numbered lines."),
]


@dataclass(frozen=True, slots=True)
class Ref:
    """What a resource URI names."""

    collection: str
    doc_id: str
    lines: tuple[int, int] | None = None
    page: int | None = None


def uri(collection: str, doc_id: str) -> str:
    return f"{SCHEME}://{quote(collection, safe='')}/{doc_id}"


def parse(text: str) -> Ref:
    """The document (and range or page) a URI names; InputError saying the forms there are."""
    m = _URI.match(text.strip())
    if m is None:
        raise InputError(f"not a docqa resource: {text!r}; use docqa://COLLECTION/DOC_ID (from resources/list or "
                         "list_knowledge), optionally with /lines/START-END or /page/N")
    lines = (int(m["a"]), int(m["b"])) if m["a"] else None
    if lines is not None and not 1 <= lines[0] <= lines[1]:
        raise InputError(f"the range {lines[0]}-{lines[1]} is empty: lines count from 1, START-END with START ≤ END")
    return Ref(unquote(m["collection"]), m["doc"], lines, int(m["page"]) if m["page"] else None)


def listing(kb: KnowledgeBase, principal: Principal, cursor: str | None) -> ListResourcesResult:
    """One page of the documents the principal may read, by collection and path; `next_cursor` when more."""
    start = int(cursor) if cursor and cursor.isdigit() else 0
    docs = sorted(kb.documents.list(principal=principal, statuses=["ok"]), key=lambda d: (d.collection, d.path))
    page = docs[start:start + PAGE_SIZE]
    more = start + PAGE_SIZE < len(docs)
    return ListResourcesResult(resources=[resource(d) for d in page], next_cursor=str(start + PAGE_SIZE) if more else None)


def resource(doc: DocumentRecord) -> Resource:
    name = doc.path.replace("\\", "/").rsplit("/", 1)[-1]
    return Resource(uri=uri(doc.collection, doc.document_id), name=name, title=doc.title or name,
                    description=f"{doc.path} ({doc.type}, collection {doc.collection})",
                    mime_type=mimetypes.guess_type(doc.path)[0] or "text/plain", size=doc.size)


def read(kb: KnowledgeBase, ref: Ref, principal: Principal) -> str:
    """The text a URI names, headed by the document's title and path, with a note on how to read on."""
    browse = kb.browse
    if ref.page is not None:
        doc = browse.fetch_page(ref.doc_id, ref.page, ref.collection, max_chars=READ_CHARS, principal=principal)
    else:
        first, last = ref.lines or (1, READ_LINES)
        doc = browse.fetch_doc(ref.doc_id, first, min(last - first + 1, READ_LINES), ref.collection,
                               max_chars=READ_CHARS, principal=principal)
    return render(doc, ref)


def render(doc: Any, ref: Ref) -> str:
    """A DocText (kb.browse) as a resource's text."""
    head = f"{doc.title} · {doc.path} · doc-id {doc.doc_id} · lines {doc.line_start:,}–{doc.line_end:,} of {doc.total_lines:,}"
    wanted_end = ref.lines[1] if ref.lines else None
    if doc.line_end >= doc.total_lines:
        note = "(end of document)"
    elif ref.page is not None:
        note = f"(end of page {ref.page}; the next page: {uri(ref.collection, doc.doc_id)}/page/{ref.page + 1})"
    elif wanted_end is not None and doc.line_end >= wanted_end:
        note = ""
    else:
        following = f"{doc.line_end + 1}-{min(doc.total_lines, doc.line_end + READ_LINES)}"
        note = f"(more: {uri(ref.collection, doc.doc_id)}/lines/{following})"
    return "\n\n".join(part for part in (head, doc.text, note) if part)


__all__ = ["READ_LINES", "SCHEME", "TEMPLATES", "Ref", "listing", "parse", "read", "resource", "uri"]
