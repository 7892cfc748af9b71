"""PDF pages and presentation slides: one page is at least one chunk, never two pages in one.

A page that fits is one chunk, so a citation names exactly one page; a longer page is split
by paragraphs (prose rules, overlap only within the page).  Small pages are not merged.
"""

from __future__ import annotations

from collections.abc import Iterable

from docqa.ingest.chunkers.base import Piece, SpanChunker
from docqa.ingest.chunkers.prose import ProseChunker
from docqa.ingest.chunkers.table import long_tables, pieces_with_tables
from docqa.ingest.chunkers.units import block_spans
from docqa.types import PAGE, Document


class PageChunker(SpanChunker):
    """Chunks within PAGE blocks; documents without pages are chunked as prose."""

    def pieces(self, document: Document) -> Iterable[Piece]:
        pages = sorted((b for b in document.blocks if b.kind == PAGE), key=lambda b: b.start)
        if not pages:
            yield from ProseChunker(self.max_tokens, self.overlap).pieces(document)
            return
        atomic = block_spans(document)
        tables = long_tables(document, self.max_tokens)
        for page in pages:
            yield from pieces_with_tables(
                document, page.start, page.end, self.max_tokens, self.overlap, tables, atomic=atomic
            )
