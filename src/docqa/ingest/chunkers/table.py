"""Spreadsheets and CSV: groups of consecutive rows of one sheet, the header row as context.

Every chunk of a sheet carries the sheet's header row in `chunk.context` (indexed with the
chunk, not part of its span) and `section == (sheet,)`.  Row budgets reserve the header's
tokens, so `tokens + count(context) <= max_tokens`; a header longer than half the limit is
only given half (then the pair may exceed the limit by the header's excess).  Rows are records,
so groups do not overlap.  Sheets never share a chunk.  The first group of a sheet starts
where the previous sheet ended, so the sheet-name heading and the header row are in its span.
"""

from __future__ import annotations

from collections.abc import Iterable

from docqa.ingest.chunkers.base import Piece, SpanChunker
from docqa.ingest.chunkers.measure import ntokens
from docqa.ingest.chunkers.prose import ProseChunker
from docqa.ingest.chunkers.units import pack, paragraph_units
from docqa.types import HEADER_ROW, ROW, Block, Document


def _sheets(document: Document) -> dict[str, list[Block]]:
    """Header and data rows per sheet, in document order (sheets in order of first row)."""
    sheets: dict[str, list[Block]] = {}
    for block in sorted(document.blocks, key=lambda b: b.start):
        if block.kind in (ROW, HEADER_ROW):
            sheets.setdefault(block.sheet or "", []).append(block)
    return sheets


class RowChunker(SpanChunker):
    """Row groups per sheet; documents without rows are chunked as prose."""

    def pieces(self, document: Document) -> Iterable[Piece]:
        sheets = _sheets(document)
        if not any(b.kind == ROW for rows in sheets.values() for b in rows):
            yield from ProseChunker(self.max_tokens, self.overlap).pieces(document)
            return
        text = document.text
        reach = 0
        for sheet, blocks in sheets.items():
            header = "\n".join(text[b.start : b.end] for b in blocks if b.kind == HEADER_ROW)
            budget = self.max_tokens - max(0, min(ntokens(header), self.max_tokens // 2))
            end = max(b.end for b in blocks)
            # One unit per line (a row), never sentences: rows may contain periods.
            units = _each_line(text, reach, end, budget)
            for s, e, n in pack(text, units, budget, 0):
                yield Piece(s, e, n, section=(sheet,) if sheet else (), context=header)
            reach = end


def _each_line(text: str, s: int, e: int, budget: int) -> list[tuple[int, int, int]]:
    """Every line of `text[s:e]` as a counted unit (long lines cut at tokens)."""
    out: list[tuple[int, int, int]] = []
    pos = s
    while pos < e:
        nl = text.find("\n", pos, e)
        stop = e if nl == -1 else nl
        if text[pos:stop].strip():
            out.extend(paragraph_units(text, pos, stop, budget, sentences=False))
        pos = stop + 1
    return out
