"""fetch_doc: a document's stored text in numbered lines (`  12| text`), paged, with page breaks marked.

Line numbers count `\\n`-separated lines of the stored text, the numbering every chunk, hit and
citation uses.  PDF pages and slides start where their first chunk starts (chunks never span
two pages), shown as `--- page 5 ---` lines.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass

from docqa.browse.paths import count, title_of
from docqa.errors import InputError, NotFoundError
from docqa.store import DocumentStore
from docqa.types import DocumentRecord

MAX_CHARS = 12_000  # one call's text, cut at a line boundary
MAX_LIMIT = 2_000


@dataclass(slots=True)
class DocText:
    """Lines `line_start`..`line_end` of a document (`line_end < line_start`: nothing there)."""

    doc_id: str
    path: str
    title: str
    text: str  # numbered lines and page markers
    line_start: int
    line_end: int
    total_lines: int
    note: str

    def to_dict(self) -> dict:
        return {"doc_id": self.doc_id, "path": self.path, "title": self.title, "text": self.text,
                "line_start": self.line_start, "line_end": self.line_end, "total_lines": self.total_lines,
                "note": self.note}

    def render(self) -> str:
        head = f"{self.title} · {self.path} · doc-id {self.doc_id}"
        return "\n\n".join(part for part in (head, self.text, self.note) if part)


def fetch_doc(store: DocumentStore, doc_id: str, offset: int = 1, limit: int = 200, max_chars: int = MAX_CHARS,
              collections: Collection[str] | None = None) -> DocText:
    """Up to `limit` lines (and `max_chars` characters) of a document from line `offset` (1-based).
    `doc_id` may also be a path: absolute, or the end of exactly one document's path.  Given
    `collections`, only their documents exist."""
    if offset < 1 or limit < 1:
        raise InputError(f"offset (the first line, from 1) and limit (lines) must be at least 1, not {offset} and {limit}")
    record = resolve(store, doc_id, collections)
    try:
        text = store.document_text(record.document_id)
    except NotFoundError:
        raise NotFoundError(f"{record.path} has no stored text ({record.error or 'it was never ingested'}): "
                            "pick another document from list_docs") from None
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    total = len(lines)
    doc = DocText(record.document_id, record.path, title_of(record), "", offset, offset - 1, total, "")
    if offset > total:
        doc.note = f"offset {offset:,} is past the end: the document has {count(total, 'line')}; call fetch_doc with offset=1"
        return doc
    pages = store.page_lines(record.document_id)
    doc.text, doc.line_end, cut = _window(lines, offset, min(limit, MAX_LIMIT), max_chars, pages)
    span = f"lines {offset:,}–{doc.line_end:,} of {total:,}"
    if doc.line_end >= total:
        doc.note = f"{span} (end of document)"
    else:
        why = {"chars": f" (cut at {max_chars:,} characters)",
               "line": f" (line {doc.line_end:,} is longer than {max_chars:,} characters and was cut)"}.get(cut, "")
        doc.note = f"{span}{why}; call fetch_doc with offset={doc.line_end + 1} for more"
    return doc


def page_span(store: DocumentStore, document_id: str, page: int, total_lines: int) -> tuple[int, int]:
    """The first and last line of a page (of a PDF, or slide of a deck); NotFoundError when there is none."""
    starts = sorted(store.page_lines(document_id), key=lambda p: p[1])
    numbers = [number for number, _ in starts]
    if page not in numbers:
        there = f"pages {numbers[0]}–{numbers[-1]}" if numbers else "no pages (only PDFs and slide decks have them)"
        raise NotFoundError(f"the document has no page {page}: it has {there}")
    at = numbers.index(page)
    first = starts[at][1]
    last = starts[at + 1][1] - 1 if at + 1 < len(starts) else total_lines
    return first, max(first, last)


def resolve(store: DocumentStore, ref: str, collections: Collection[str] | None = None) -> DocumentRecord:
    """A document by id, or by path (absolute, or the end of exactly one document's path); given
    `collections`, the documents of others are not there at all (the same NotFoundError, the same
    ambiguity count), so nothing about them can be learnt."""
    ref = ref.strip()
    if ref.startswith("(") and ref.endswith(")"):  # copied with a catalog line's parentheses
        ref = ref[1:-1].strip()
    if not ref:
        raise InputError("doc_id is empty: give a doc-id from list_docs or search_docs, or a document's path")
    try:
        record = store.document_record(ref)
        if collections is None or record.collection in collections:
            return record
    except NotFoundError:
        pass
    found = [r for r in store.find_documents(ref.removeprefix("./")) if collections is None or r.collection in collections]
    if len(found) > 1:
        exact = [r for r in found if r.path in (ref, os.path.abspath(ref))]
        if len(exact) == 1:
            return exact[0]
        shown = "; ".join(f"{r.path} (doc-id {r.document_id})" for r in found[:5])
        raise InputError(f"{ref!r} matches {count(len(found), 'document')}: {shown}"
                         f"{' …' if len(found) > 5 else ''}. Give more of the path, or a doc-id")
    if not found:
        raise NotFoundError(f"no document {ref!r}: use a doc-id from list_docs (or search_docs), or the end of a "
                            "document's path as list_docs shows it")
    return found[0]


def _window(lines: list[str], offset: int, limit: int, max_chars: int,
            pages: list[tuple[int, int]]) -> tuple[str, int, str]:
    """(numbered text, last line shown, why it stopped early: "" | "chars" | "line")."""
    starts = {line: page for page, line in pages}
    last = min(len(lines), offset + limit - 1)
    width = max(4, len(str(last)))
    out: list[str] = []
    holding = [page for page, line in pages if line < offset]
    if holding and offset not in starts:
        out.append(f"--- page {holding[-1]} (continued) ---")
    used = sum(len(s) + 1 for s in out)
    end = offset - 1
    for number in range(offset, last + 1):
        piece = ([f"--- page {starts[number]} ---"] if number in starts else []) + [f"{number:>{width}}| {lines[number - 1]}"]
        size = sum(len(s) + 1 for s in piece)
        if used + size > max_chars:
            if end >= offset:
                return "\n".join(out), end, "chars"
            keep = max(0, max_chars - used - sum(len(s) + 1 for s in piece[:-1]))
            row = piece[-1]
            piece[-1] = row[:keep] + f" … [{len(row) - keep:,} more characters]"
            return "\n".join(out + piece), number, "line"
        out += piece
        used += size
        end = number
    return "\n".join(out), end, ""
