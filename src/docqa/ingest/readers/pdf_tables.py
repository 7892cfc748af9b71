"""Ruled tables in PDF pages through pdfplumber, run only where pdfium sees a grid of rules.

pdfplumber (pdfminer.six) is slow: a page costs 0.1-0.2 s (parsing it, not finding tables).
Its default table finder needs ruling lines that cross anyway, so a page is handed to it only
when pdfium's path objects give at least `_MIN_CROSSINGS` crossings of horizontal and vertical
rules (a cheap check: about 6 ms a page), at most `_MAX_PAGES` pages per file and within
`_BUDGET_S` seconds per file; past those the rest of the file stays prose.  Booktabs tables
(horizontal rules only) are not found by pdfplumber's default finder; they stay prose.  A table
whose cells hold many lines each (rules missing between rows) is dropped: prose reads better.
"""

from __future__ import annotations

import io
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docqa.ingest.readers.base import clean_extracted
from docqa.types import HEADER_ROW, TABLE, Block

if TYPE_CHECKING:
    import pypdfium2 as pdfium

log = logging.getLogger(__name__)

_MIN_CROSSINGS = 9  # a 2 x 2 grid of cells has 3 x 3 crossing rules; a lone box has 4
_THIN = 2.0  # points: a path this thin is a rule
_MAX_RULES = 400  # rules looked at per direction (a plot may have thousands of paths)
_MAX_PAGES = 40
_BUDGET_S = 5.0
_MAX_LINES_PER_CELL = 1.5  # mean lines per non-empty cell above this: rows were merged


@dataclass(slots=True)
class PdfTable:
    """One table: its box in PDF points (y grows upwards) and its rows as " | " lines."""

    left: float
    bottom: float
    right: float
    top: float
    rows: list[str]

    def holds(self, left: float, bottom: float, right: float, top: float) -> bool:
        """True when a text line lies inside the box: its middle height, and all its width (a line
        that runs on into the next column stays prose, so none of its text is lost)."""
        y = (bottom + top) / 2
        return (self.bottom <= y <= self.top and self.left - _THIN <= left
                and right <= self.right + _THIN)

    @property
    def text(self) -> str:
        return "\n".join(self.rows)


def candidate_pages(pdf: pdfium.PdfDocument) -> list[int]:
    """0-based indexes of pages whose ruling lines cross like a table's grid."""
    out = []
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            if _crossings(*_rules(page)) >= _MIN_CROSSINGS:
                out.append(index)
        finally:
            page.close()
    return out


def _rules(page: pdfium.PdfPage) -> tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]]:
    """Horizontal (y, x0, x1) and vertical (x, y0, y1) rules: thin paths, and the sides of boxes."""
    import pypdfium2.raw as pdfium_c

    across: list[tuple[float, float, float]] = []
    down: list[tuple[float, float, float]] = []
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        left, bottom, right, top = obj.get_bounds()
        wide, tall = right - left >= _THIN, top - bottom >= _THIN
        if wide:
            across += [(bottom, left, right)] if not tall else [(bottom, left, right), (top, left, right)]
        if tall:
            down += [(left, bottom, top)] if not wide else [(left, bottom, top), (right, bottom, top)]
        if len(across) > _MAX_RULES and len(down) > _MAX_RULES:
            break
    return across[:_MAX_RULES], down[:_MAX_RULES]


def _crossings(across, down) -> int:
    """How many horizontal and vertical rules touch (up to _MIN_CROSSINGS)."""
    count = 0
    for y, x0, x1 in across:
        for x, y0, y1 in down:
            if x0 - _THIN <= x <= x1 + _THIN and y0 - _THIN <= y <= y1 + _THIN:
                count += 1
                if count >= _MIN_CROSSINGS:
                    return count
    return count


def find_tables(pdf: pdfium.PdfDocument, data: bytes) -> dict[int, list[PdfTable]]:
    """Tables per 0-based page index; {} when pdfplumber finds none or fails (prose stays)."""
    pages = candidate_pages(pdf)[:_MAX_PAGES]
    if not pages:
        return {}
    try:
        import pdfplumber
    except ImportError:  # a core dependency; without it tables stay prose
        return {}
    found: dict[int, list[PdfTable]] = {}
    start = time.perf_counter()
    try:
        with pdfplumber.open(io.BytesIO(data)) as doc:
            for index in pages:
                if time.perf_counter() - start > _BUDGET_S or index >= len(doc.pages):
                    break
                tables = page_tables(doc.pages[index])
                if tables:
                    found[index] = tables
    except Exception as exc:  # noqa: BLE001 - pdfminer raises anything on odd files; tables are optional
        log.debug("pdf tables skipped: %s", exc)
    return found


def page_tables(page) -> list[PdfTable]:
    """pdfplumber's ruled tables of one page that look like real tables, in PDF coordinates."""
    x0, _, _, y1 = (float(v) for v in page.mediabox)
    out = []
    for table in page.find_tables():
        rows = table.extract()
        if not _looks_tabular(rows):
            continue
        lines = [" | ".join(" ".join((c or "").split()) for c in row) for row in rows]
        lines = [line.rstrip(" |") for line in lines if line.replace("|", "").strip()]
        left, top, right, bottom = table.bbox
        out.append(PdfTable(x0 + left, y1 - bottom, x0 + right, y1 - top, lines))
    return out


def _looks_tabular(rows: list[list[str | None]]) -> bool:
    """Two rows and two columns at least, cells that are not whole paragraphs, and text pdfminer
    could map (a "(cid:NN)" glyph: pdfium's prose reads better)."""
    cells = [c for row in rows for c in row if c and c.strip()]
    if len(rows) < 2 or max((len(r) for r in rows), default=0) < 2 or not cells:
        return False
    if any("(cid:" in c for c in cells):
        return False
    return sum(c.strip().count("\n") + 1 for c in cells) / len(cells) <= _MAX_LINES_PER_CELL


def mark_tables(page_text: str, page: Block, tables: list[PdfTable], blocks: list[Block]) -> None:
    """Add TABLE and HEADER_ROW blocks for the tables written into a page (`page_text` as read,
    `page` its block in the document)."""
    if not tables:
        return
    text = clean_extracted(page_text)
    pos = 0
    for table in tables:
        body = table.text
        at = text.find(body, pos) if body else -1
        if at == -1:
            continue
        start = page.start + at
        blocks.append(Block(start, start + len(body), TABLE, page=page.page))
        blocks.append(Block(start, start + len(table.rows[0]), HEADER_ROW, page=page.page))
        pos = at + len(body)
