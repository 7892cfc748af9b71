"""Where a cited span stands on a PDF page: rectangles (fractions 0..1 of the page, top-left origin).

The stored text of a page is pdfium's text with lines re-joined (readers/pdf.py), so the span is
found by its characters alone: both sides drop whitespace, hyphens and table separators and are
compared case-folded and NFKC-normalised; the matched characters' boxes (pdfium's char boxes) are
merged into one rectangle per line.  A span not found whole is looked for line by line (a table
whose rows were rebuilt).  A page that was OCR'd has no text layer: its recognised lines' boxes,
kept in the document's metadata (ingest/ocr.py), are used instead.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pypdfium2 as pdfium

    from docqa.view.original import Original

_SKIP = frozenset("-\u00ad\u2010\u2011\u2012\u2013\x02|")
_MIN_PIECE = 6  # normalised characters a line of the span needs to be looked for on its own


@dataclass(slots=True)
class Box:
    """A rectangle on the page as fractions of its width and height, origin at the top left."""

    left: float
    top: float
    right: float
    bottom: float

    def to_dict(self) -> dict[str, float]:
        return {"left": round(self.left, 5), "top": round(self.top, 5), "right": round(self.right, 5),
                "bottom": round(self.bottom, 5)}


def normalise(text: str) -> tuple[str, list[int]]:
    """`text` without whitespace, hyphens and "|", folded; with each kept character's index in `text`."""
    out, where = [], []
    for i, ch in enumerate(text):
        if ch.isspace() or ch in _SKIP:
            continue
        for folded in unicodedata.normalize("NFKC", ch).casefold():
            if not folded.isspace() and folded not in _SKIP:
                out.append(folded)
                where.append(i)
    return "".join(out), where


def pdf_boxes(pdf: pdfium.PdfDocument, index: int, quote: str) -> list[Box]:
    """Rectangles of `quote` on page `index` (0-based) of an open PDF (the caller holds pdfium's lock)."""
    import pypdfium2.raw as pdfium_c

    page = pdf[index]
    textpage = page.get_textpage()
    try:
        x0, y0, x1, y1 = page.get_bbox()  # what is rendered: the crop box, inherited boxes resolved
        chars = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i) or 32) for i in range(textpage.count_chars()))
        matched = match(chars, quote)
        rects = [textpage.get_charbox(i, loose=True) for i in matched]
    finally:
        textpage.close()
        page.close()
    width, height = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    return [Box((left - x0) / width, (y1 - top) / height, (right - x0) / width, (y1 - bottom) / height)
            for left, bottom, right, top in merge_lines(rects)]


def match(haystack: str, quote: str) -> list[int]:
    """Indices of `haystack`'s characters that make up `quote` (whole, else line by line), in order."""
    hay, where = normalise(haystack)
    needle, _ = normalise(quote)
    if not needle:
        return []
    at = hay.find(needle)
    if at >= 0:
        return where[at:at + len(needle)]
    found, start = [], 0
    for line in quote.splitlines():
        piece, _ = normalise(line)
        if len(piece) < _MIN_PIECE:
            continue
        at = hay.find(piece, start)
        if at >= 0:
            found.extend(where[at:at + len(piece)])
            start = at + len(piece)
    return found


def merge_lines(rects: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Character boxes (left, bottom, right, top, in reading order) merged into one box per line."""
    lines: list[list[float]] = []
    for left, bottom, right, top in rects:
        if right <= left or top <= bottom:
            continue
        last = lines[-1] if lines else None
        if last and _same_line(last, bottom, top) and left - last[2] < 3 * (top - bottom):
            last[0], last[1] = min(last[0], left), min(last[1], bottom)
            last[2], last[3] = max(last[2], right), max(last[3], top)
        else:
            lines.append([left, bottom, right, top])
    return [(a, b, c, d) for a, b, c, d in lines]


def _same_line(line: list[float], bottom: float, top: float) -> bool:
    overlap = min(line[3], top) - max(line[1], bottom)
    return overlap > 0.5 * min(line[3] - line[1], top - bottom)


def ocr_boxes(lines: list[list], page: int, start: int, end: int) -> list[Box]:
    """The recognised lines of `page` that overlap the span [start, end) (ocr.LINE_FIELDS rows)."""
    return [Box(float(left), float(top), float(right), float(bottom))
            for a, b, p, left, top, right, bottom, *_ in lines if p == page and a < end and b > start]


def span_boxes(original: Original, text: str, units: list[dict], metadata: dict, page: int,
               start: int, end: int) -> list[Box]:
    """Boxes on `page` of the part of the span [start, end) that lies on it (NotFoundError past the
    last page; none when the span is on other pages).  `units` are the document's pages (layout.py)."""
    from docqa.ingest.readers.pdf import open_pdf, pdfium_lock
    from docqa.view.render import check_page

    unit = next((u for u in units if u["n"] == page), None)
    a, b = (max(start, unit["char_start"]), min(end, unit["char_end"])) if unit else (0, 0)
    ocr = metadata.get("ocr") or {}
    with pdfium_lock:
        pdf = open_pdf(Path(original.path or original.name), original.read())
        try:
            check_page(pdf, page)
            if a >= b:
                return []
            if page in ocr.get("pages", ()):
                return ocr_boxes(ocr.get("lines", []), page, a, b)
            return pdf_boxes(pdf, page - 1, text[a:b])
        finally:
            pdf.close()
