"""Plain data types shared by every package: Document, Block, Chunk, Hit and friends.

A `Document` is the reader's output: the extracted text plus structure as `Block`s, each a
character span of `Document.text`.  A `Chunk` is the chunker's output: a span of the same
text with its location (section path, pages, lines, symbol).  The invariant the whole system
relies on for exact citations is `chunk.text == document.text[chunk.char_start:chunk.char_end]`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

# Block kinds readers emit; chunkers switch on them.
HEADING = "heading"  # level 1..6; text is the heading's title
PARAGRAPH = "paragraph"
CODE = "code"  # a fenced/preformatted block inside prose
TABLE = "table"  # a whole table rendered as text (e.g. Markdown pipe table, docx table)
HEADER_ROW = "header_row"  # spreadsheet/CSV header row (repeated in every row-group chunk)
ROW = "row"  # spreadsheet/CSV data row
PAGE = "page"  # a whole PDF page / slide / sheet boundary marker when no finer structure exists


@dataclass(slots=True)
class Block:
    """One structural unit of a document: `text[start:end]`."""

    start: int
    end: int
    kind: str = PARAGRAPH
    level: int = 0  # heading level (1 = top) for HEADING blocks
    page: int | None = None  # PDF page or slide number (1-based)
    sheet: str | None = None  # spreadsheet sheet name
    row: int | None = None  # spreadsheet row number (1-based, as the user sees it)


@dataclass(slots=True)
class Document:
    """A reader's output. `text` is what gets indexed; every Block is a span of it."""

    path: str
    type: str  # format family: "text", "markdown", "code", "pdf", "docx", ...
    text: str
    blocks: list[Block] = field(default_factory=list)
    title: str | None = None  # from metadata or first heading, when the format has one
    language: str | None = None  # programming language for code ("python", "go", ...)
    metadata: dict[str, Any] = field(default_factory=dict)  # author, encoding, sheets, ...
    _line_starts: list[int] | None = field(default=None, repr=False)

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset into `text`."""
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        return bisect.bisect_right(self._line_starts, offset)

    def page_of(self, offset: int) -> int | None:
        """Page (or slide) number holding `offset`, from the blocks' page marks."""
        for block in self.blocks:
            if block.page is not None and block.start <= offset < max(block.end, block.start + 1):
                return block.page
        return None


@dataclass(slots=True)
class Chunk:
    """A retrievable span of a document with its location.

    `text` is exactly `document.text[char_start:char_end]`.  `context` is extra text that is
    indexed with the chunk but is not part of its span (a spreadsheet's header row).
    """

    text: str
    char_start: int
    char_end: int
    ordinal: int = 0
    section: tuple[str, ...] = ()
    page_start: int | None = None
    page_end: int | None = None
    line_start: int = 1
    line_end: int = 1
    symbol: str | None = None  # function / class name for code
    language: str | None = None
    tokens: int = 0
    context: str = ""

    @property
    def section_path(self) -> str:
        return " > ".join(self.section)


@dataclass(slots=True)
class Enrichment:
    """Per-document title, keywords and lead summary."""

    title: str
    keywords: list[str]
    summary: str


@dataclass(slots=True)
class DocumentRecord:
    """A document as the index knows it (what `docqa list` shows)."""

    document_id: str
    path: str
    collection: str
    type: str
    title: str
    keywords: list[str]
    summary: str
    size: int
    content_hash: str
    chunks: int
    status: str  # "ok" | "error"
    error: str | None
    indexed_at: str
    mtime_ns: int = 0
    language: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "path": self.path,
            "collection": self.collection,
            "type": self.type,
            "title": self.title,
            "keywords": self.keywords,
            "summary": self.summary,
            "size": self.size,
            "chunks": self.chunks,
            "status": self.status,
            "error": self.error,
            "indexed_at": self.indexed_at,
            "content_hash": self.content_hash,
            "language": self.language,
        }


@dataclass(slots=True)
class Hit:
    """One search result: a chunk with its document and score."""

    chunk_id: str
    document_id: str
    path: str
    collection: str
    title: str
    section: str
    page: int | None
    page_end: int | None
    line_start: int
    line_end: int
    char_start: int
    char_end: int
    score: float
    text: str
    snippet: str = ""
    symbol: str | None = None
    type: str = ""
    bm25_rank: int | None = None  # rank in the BM25 list (None: not in it)
    dense_rank: int | None = None  # rank in the dense list (None: not in it)
    bm25_score: float | None = None  # raw BM25 score
    dense_score: float | None = None  # cosine similarity of query and chunk

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "path": self.path,
            "collection": self.collection,
            "title": self.title,
            "section": self.section,
            "page": self.page,
            "page_end": self.page_end,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "score": round(self.score, 4),
            "symbol": self.symbol,
            "type": self.type,
            "bm25_rank": self.bm25_rank,
            "dense_rank": self.dense_rank,
            "bm25_score": None if self.bm25_score is None else round(self.bm25_score, 4),
            "dense_score": None if self.dense_score is None else round(self.dense_score, 4),
            "snippet": self.snippet,
            "text": self.text,
        }
