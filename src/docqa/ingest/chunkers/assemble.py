"""Turn pieces into Chunks: drop blanks, cover missed text, stamp ordinal, lines, pages, language."""

from __future__ import annotations

import bisect
import re

from docqa.ingest.chunkers.units import Piece, pieces_for_run
from docqa.text.language import guess_language
from docqa.types import PAGE, Chunk, Document

_NON_SPACE = re.compile(r"\S")


class _Pages:
    """Page lookup from a document's PAGE blocks."""

    def __init__(self, document: Document):
        blocks = sorted((b for b in document.blocks if b.kind == PAGE and b.page is not None),
                        key=lambda b: b.start)
        self.starts = [b.start for b in blocks]
        self.ends = [b.end for b in blocks]
        self.pages = [b.page for b in blocks]

    def at(self, offset: int) -> int | None:
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.pages[i] if i >= 0 and offset < self.ends[i] else None


def _gap_pieces(document: Document, start: int, end: int, piece: Piece | None, limit: int) -> list[Piece]:
    """Prose pieces for text that no piece covered (a safety net; strategies rarely leave any)."""
    section = piece.section if piece is not None else ()
    return list(pieces_for_run(document, start, end, limit, 0, section=section))


def cover(document: Document, pieces: list[Piece], limit: int) -> list[Piece]:
    """`pieces` plus pieces for any non-whitespace text between (or around) them."""
    out: list[Piece] = []
    reach = 0
    for piece in pieces:
        if piece.start > reach and _NON_SPACE.search(document.text, reach, piece.start):
            out.extend(_gap_pieces(document, reach, piece.start, piece, limit))
        out.append(piece)
        reach = max(reach, piece.end)
    if _NON_SPACE.search(document.text, reach):
        out.extend(_gap_pieces(document, reach, len(document.text), out[-1] if out else None, limit))
    return out


def assemble(document: Document, pieces: list[Piece], limit: int, overlap: int) -> list[Chunk]:
    """Chunks from pieces: blanks dropped, gaps covered, every location field stamped."""
    text = document.text
    kept = [p for p in pieces if p.end > p.start and _NON_SPACE.search(text, p.start, p.end)]
    # Re-packed chunks can start after their successor's overlap: order by start.
    kept.sort(key=lambda p: (p.start, p.end))
    kept = cover(document, kept, limit)
    pages = _Pages(document)
    code = document.type == "code"
    chunks: list[Chunk] = []
    for ordinal, p in enumerate(kept):
        body = text[p.start : p.end]
        chunks.append(Chunk(
            text=body, char_start=p.start, char_end=p.end, ordinal=ordinal,
            section=p.section, symbol=p.symbol, context=p.context, tokens=p.tokens,
            line_start=document.line_of(p.start), line_end=document.line_of(p.end - 1),
            page_start=pages.at(p.start), page_end=pages.at(p.end - 1),
            language=document.language if code else guess_language(body),
        ))
    return chunks
