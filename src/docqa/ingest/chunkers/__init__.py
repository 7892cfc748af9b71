"""Chunkers: a Document in, Chunks out; `chunk_document` picks the strategy by document type.

| types | chunker | strategy |
|---|---|---|
| markdown, rst, man, html, docx, odt, epub, eml | SectionChunker | heading sections, prose inside (1) |
| pdf, pptx | PageChunker | per page / slide, prose inside (1) |
| csv, xlsx | RowChunker | row groups per sheet, header as context |
| code | CodeChunker | functions and classes (ast / tree-sitter) |
| json, yaml | LineChunker | blank-line blocks, then lines |
| text, rtf, anything else | ProseChunker | paragraphs merged, split at sentences |

(1) A TABLE block longer than a chunk becomes row groups with its header as context (table.py).

Sizes: `chunk.tokens` is the sum of the exact cl100k counts of the units a chunk was built
from (paragraphs, sentences, lines, statements) plus one per join; a chunk made of one unit
has its exact count.  The sum is at or above the exact count in practice (the tests check
`count_tokens(chunk.text) <= max_tokens` on generated documents), and `tokens <= max_tokens`
always.  Spreadsheet chunks also keep `tokens + count_tokens(context) <= max_tokens` unless
the header alone is over half the limit.
"""

from __future__ import annotations

from docqa.ingest.chunkers.base import Chunker, Piece, SpanChunker
from docqa.ingest.chunkers.code import CodeChunker
from docqa.ingest.chunkers.pages import PageChunker
from docqa.ingest.chunkers.prose import LineChunker, ProseChunker
from docqa.ingest.chunkers.sections import SectionChunker
from docqa.ingest.chunkers.table import RowChunker
from docqa.types import Chunk, Document

CHUNKERS: dict[str, type[Chunker]] = {
    **dict.fromkeys(("markdown", "rst", "man", "html", "docx", "odt", "epub", "eml"), SectionChunker),
    **dict.fromkeys(("pdf", "pptx"), PageChunker),
    **dict.fromkeys(("csv", "xlsx"), RowChunker),
    **dict.fromkeys(("json", "yaml"), LineChunker),
    "code": CodeChunker,
}


def chunker_for(document: Document, max_tokens: int = 512, overlap: int = 50) -> Chunker:
    """The chunker registered for the document's type (prose when none is)."""
    return CHUNKERS.get(document.type, ProseChunker)(max_tokens, overlap)


def chunk_document(document: Document, max_tokens: int = 512, overlap: int = 50) -> list[Chunk]:
    """Chunks of `document` in order, ordinals 0..n-1, every location field stamped."""
    return chunker_for(document, max_tokens, overlap).chunk(document)


__all__ = [
    "CHUNKERS", "Chunker", "CodeChunker", "LineChunker", "PageChunker", "Piece", "ProseChunker",
    "RowChunker", "SectionChunker", "SpanChunker", "chunk_document", "chunker_for",
]
