"""Tables: groups of consecutive rows, the header row as context (spreadsheets, CSV, and the
TABLE blocks of PDF, Word, PowerPoint and HTML documents that do not fit one chunk).

Every chunk of a sheet carries the sheet's header row in `chunk.context` (indexed with the
chunk, not part of its span) and `section == (sheet,)`.  Row budgets reserve the header's
tokens, so `tokens + count(context) <= max_tokens`; a header longer than half the limit is
only given half (then the pair may exceed the limit by the header's excess).  Rows are records,
so groups do not overlap.  Sheets never share a chunk.  The first group of a sheet starts
where the previous sheet ended, so the sheet-name heading and the header row are in its span.

A TABLE block inside prose (`pieces_with_tables`) stays whole in a chunk when it fits;
a longer one becomes row groups the same way, its header being its HEADER_ROW blocks (or its
first line), so every group of a long table can be found by a header word and a cell value.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from docqa.ingest.chunkers.base import Piece, SpanChunker
from docqa.ingest.chunkers.measure import ntokens
from docqa.ingest.chunkers.prose import ProseChunker
from docqa.ingest.chunkers.units import pack, paragraph_units, pieces_for_run
from docqa.types import HEADER_ROW, ROW, TABLE, Block, Document


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


def table_header(document: Document, table: Block) -> str:
    """A table's header: the HEADER_ROW blocks inside it, else its first line."""
    text = document.text
    rows = [b for b in document.blocks
            if b.kind == HEADER_ROW and table.start <= b.start and b.end <= table.end]
    if rows:
        return "\n".join(text[b.start : b.end] for b in sorted(rows, key=lambda b: b.start))
    nl = text.find("\n", table.start, table.end)
    return text[table.start : table.end if nl == -1 else nl]


def table_pieces(document: Document, table: Block, limit: int, lead: Piece | None = None,
                 **fields) -> Iterable[Piece]:
    """Row groups of one table, each with the header as context (as RowChunker does); `lead`
    (the short text before it: a title, a caption) joins the first group when it fits."""
    header = table_header(document, table)
    budget = limit - max(0, min(ntokens(header), limit // 2))
    units = _each_line(document.text, table.start, table.end, budget)
    if lead is not None:
        units.insert(0, (lead.start, lead.end, lead.tokens))
    for s, e, n in pack(document.text, units, budget, 0):
        if lead is not None and e <= lead.end:  # the lead did not fit beside the first rows
            yield lead
        else:
            yield Piece(s, e, n, context=header, **fields)


def long_tables(document: Document, limit: int) -> list[Block]:
    """The document's TABLE blocks longer than `limit` tokens, in order (outer tables only)."""
    out: list[Block] = []
    for block in sorted((b for b in document.blocks if b.kind == TABLE), key=lambda b: b.start):
        if (not out or block.start >= out[-1].end) and ntokens(document.text[block.start : block.end]) > limit:
            out.append(block)
    return out


def pieces_with_tables(document: Document, start: int, end: int, limit: int, overlap: int,
                       tables: Sequence[Block] = (), **fields) -> Iterable[Piece]:
    """Prose pieces for `text[start:end]`, but each of the `long_tables` in it becomes row groups
    with its header as context."""
    pos = start
    for table in tables[bisect.bisect_left(tables, start, key=lambda t: t.start):]:
        if table.start >= end or table.end > end:
            break
        prose = list(pieces_for_run(document, pos, table.start, limit, overlap, **fields))
        lead = prose.pop() if prose and prose[-1].tokens <= limit // 4 else None
        yield from prose
        keep = {k: v for k, v in fields.items() if k in ("section", "symbol")}
        yield from table_pieces(document, table, limit, lead, **keep)
        pos = table.end
    yield from pieces_for_run(document, pos, end, limit, overlap, **fields)
