"""PDF through pypdfium2's text layer: one PAGE block per page, CJK-aware line joining.

Lines come from pdfium's text page; their positions (first and last character boxes) tell a
paragraph break (a large vertical gap) from a wrapped line, so wrapped Chinese lines are
joined without a space while headings and short lines keep their line breaks.
"""

from __future__ import annotations

import re
import statistics
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docqa.errors import CorruptFileError, EncryptedFileError, NoTextLayerError
from docqa.ingest.ocr import PageOcr
from docqa.ingest.readers.base import Reader, TextBuilder, sane_title
from docqa.ingest.readers.pdf_tables import PdfTable, mark_tables, page_tables
from docqa.text.language import WIDE
from docqa.types import PAGE, Document

if TYPE_CHECKING:  # pypdfium2 is imported when a PDF is read
    import pypdfium2 as pdfium

# pdfium is not thread-safe: one document at a time per process.
_PDFIUM_LOCK = threading.Lock()
pdfium_lock = _PDFIUM_LOCK  # the same lock for whoever else opens PDFs in this process (the viewer's pages)
_MIN_PAGE_CHARS = 5  # a page with fewer non-blank characters counts as having no text
_SCAN_SHARE = 0.5  # a page without text whose pictures cover at least this share of it is a scan: OCR'd
_CJK = re.compile(f"[{WIDE}]")  # East Asian text wraps at any character
_WORD_END = re.compile(r"[A-Za-z\u00c0-\u024f][-\u00ad\x02]$")


@dataclass(slots=True)
class Line:
    """One text line of a page with its geometry (PDF points, y grows upwards)."""

    text: str
    left: float = 0.0
    right: float = 0.0
    bottom: float = 0.0
    top: float = 0.0
    table: bool = False  # a whole table (rows as " | " lines) that replaced the lines inside its box


class PdfReader(Reader):
    """PDF text layer, page by page (pypdfium2)."""

    type = "pdf"
    extensions = (".pdf",)
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return b"%PDF-" in head[:1024]

    def read(self, path: Path, data: bytes) -> Document:
        with _PDFIUM_LOCK:
            pdf = open_pdf(path, data)
            try:
                return self._read(path, pdf)
            finally:
                pdf.close()

    def _read(self, path: Path, pdf: pdfium.PdfDocument) -> Document:
        import pypdfium2 as pdfium

        pages, bad_pages = len(pdf), []
        read: list[tuple[str, list[PdfTable]]] = []
        for index in range(pages):
            try:
                read.append(read_page(pdf, index))
            except pdfium.PdfiumError:
                bad_pages.append(index + 1)
                read.append(("", []))
        has_text = [sum(not c.isspace() for c in text[:200]) >= _MIN_PAGE_CHARS for text, _ in read]
        any_text = any(has_text)
        builder = TextBuilder()
        ocr = PageOcr()
        text_pages = sum(has_text)
        for number, ((text, tables), ok) in enumerate(zip(read, has_text), start=1):
            # no text layer: OCR the page when a scan covers it (or, in a PDF with no text at all, any picture)
            if not ok and _worth_ocr(pdf, number - 1, any_text) and ocr.add_pdf_page(builder, pdf, number - 1):
                text_pages += 1
                continue
            if (block := builder.add(text, PAGE, page=number)) is not None:
                mark_tables(text, block, tables, builder.blocks)
            else:
                builder.mark(len(builder), PAGE, page=number)  # keep page numbers consecutive
        if not text_pages:
            why = ("OCR found no text" if ocr.pages else ocr.reason or "OCR page cap reached" if ocr.left_out
                   else "no page holds text or a picture")
            raise NoTextLayerError(str(path), f"no text layer: {why} (scanned or image-only PDF)")
        meta = pdf_metadata(pdf)
        metadata = {"pages": pages, **{k: v for k, v in meta.items() if k != "title"}}
        if bad_pages:
            metadata["unreadable_pages"] = bad_pages
        if ocr_meta := ocr.metadata():
            metadata["ocr"] = ocr_meta
        return builder.document(path, self.type, empty=NoTextLayerError,
                                title=meta.get("title"), metadata=metadata)


def _worth_ocr(pdf: pdfium.PdfDocument, index: int, any_text: bool) -> bool:
    """Should a page without text be recognised?  Yes when pictures cover most of it (a scan); in a
    PDF with no text on any page, when it holds any picture at all.  A cover, a diagram or a blank
    page of a text PDF is not worth seconds of OCR."""
    import pypdfium2 as pdfium

    try:
        share = picture_share(pdf, index)
    except pdfium.PdfiumError:
        return False
    return share >= _SCAN_SHARE or (not any_text and share > 0)


def picture_share(pdf: pdfium.PdfDocument, index: int) -> float:
    """The share of a page's area its pictures cover (0..1; a form holding a picture counts with its bounds)."""
    import pypdfium2.raw as pdfium_c

    page = pdf[index]
    try:
        left, bottom, right, top = page.get_bbox()
        area = max((right - left) * (top - bottom), 1.0)
        covered = 0.0
        for obj in page.get_objects(max_depth=1):
            if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE or (
                    obj.type == pdfium_c.FPDF_PAGEOBJ_FORM and _holds_picture(obj)):
                x0, y0, x1, y1 = obj.get_bounds()
                covered += max(min(x1, right) - max(x0, left), 0.0) * max(min(y1, top) - max(y0, bottom), 0.0)
    finally:
        page.close()
    return min(covered / area, 1.0)


def _holds_picture(form: pdfium.PdfObject) -> bool:
    return _raw_holds_picture(form.raw, 3)


def _raw_holds_picture(form: object, depth: int) -> bool:
    """True when a form (or a form in it, `depth` levels down) draws a picture."""
    import pypdfium2.raw as pdfium_c

    for i in range(pdfium_c.FPDFFormObj_CountObjects(form)):
        obj = pdfium_c.FPDFFormObj_GetObject(form, i)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE or (
                kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth > 0 and _raw_holds_picture(obj, depth - 1)):
            return True
    return False


def open_pdf(path: Path, data: bytes) -> pdfium.PdfDocument:
    """Open with pdfium; map its load errors onto the IngestError tree."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise EncryptedFileError(
                str(path), "encrypted: a password is required to open it (remove the password "
                "and add it again)") from exc
        raise CorruptFileError(str(path), f"could not parse PDF: {exc} (truncated or damaged?)") from exc


def pdf_metadata(pdf: pdfium.PdfDocument) -> dict[str, str]:
    """Title (when sane), author, creator and producer from the document information."""
    import pypdfium2 as pdfium

    try:
        info = pdf.get_metadata_dict(skip_empty=True)
    except (pdfium.PdfiumError, UnicodeDecodeError):
        return {}
    out = {k.lower(): " ".join(v.split()) for k, v in info.items()
           if k in ("Title", "Author", "Creator", "Producer") and v and v.strip()}
    if title := sane_title(out.pop("title", None)):
        out["title"] = title
    return out


def page_text(pdf: pdfium.PdfDocument, index: int) -> str:
    """The text of one page: wrapped lines joined, paragraphs separated by blank lines (tables as prose)."""
    page = pdf[index]
    textpage = page.get_textpage()
    try:
        lines = page_lines(textpage, textpage.get_text_range())
    finally:
        textpage.close()
        page.close()
    return join_lines(lines)


def read_page(pdf: pdfium.PdfDocument, index: int) -> tuple[str, list[PdfTable]]:
    """The text of one page as `page_text`, each ruled table's lines replaced by its rows; and the tables."""
    page = pdf[index]
    textpage = page.get_textpage()
    try:
        tables = page_tables(page, textpage)
        lines = page_lines(textpage, textpage.get_text_range())
    finally:
        textpage.close()
        page.close()
    return join_lines(place_tables(lines, tables) if tables else lines), tables


def place_tables(lines: list[Line], tables: Sequence[PdfTable]) -> list[Line]:
    """The lines with those inside a table's box replaced by one table line where the first stood."""
    out: list[Line] = []
    placed: set[int] = set()
    for line in lines:
        inside = next((i for i, t in enumerate(tables) if line.top > line.bottom
                       and t.holds(line.left, line.bottom, line.right, line.top)), None)
        if inside is None:
            out.append(line)
        elif inside not in placed:
            placed.add(inside)
            out.append(Line(tables[inside].text, table=True))
    return out


def page_lines(textpage: pdfium.PdfTextPage, raw: str) -> list[Line]:
    """Split pdfium's text into lines and measure each line's first and last character."""
    import pypdfium2 as pdfium

    lines, index = [], 0
    raw_lines = raw.split("\r\n")
    if len(raw) != textpage.count_chars():
        return [Line(_unmark(text)) for text in raw_lines]  # indices would not line up
    for text in raw_lines:
        line = Line(_unmark(text))
        stripped = text.strip()
        if stripped:
            first = index + len(text) - len(text.lstrip())
            last = index + len(text.rstrip()) - 1
            try:
                l0, b0, r0, t0 = textpage.get_charbox(first)
                l1, b1, r1, t1 = textpage.get_charbox(last)
                line.left, line.right, line.bottom, line.top = l0, max(r0, r1), min(b0, b1), max(t0, t1)
            except pdfium.PdfiumError:
                pass
        lines.append(line)
        index += len(text) + 2
    return lines


def _unmark(text: str) -> str:
    """Drop pdfium's U+FFFE hyphenation marks (the word is already whole on one line)."""
    return text.replace("\ufffe", "").rstrip()


def join_lines(lines: list[Line]) -> str:
    """Join a page's lines: blank line between paragraphs, wrapped CJK and hyphenated words joined."""
    measured = [ln for ln in lines if ln.text.strip() and ln.top > ln.bottom]
    gaps = [a.bottom - b.bottom for a, b in zip(measured, measured[1:]) if a.bottom > b.bottom]
    step = statistics.median(gaps) if gaps else 0.0
    margin = max((ln.right for ln in measured), default=0.0)
    parts: list[str] = []
    prev: Line | None = None
    blank = False
    for line in lines:
        if not line.text.strip():
            blank = prev is not None
            continue
        if prev is not None:
            if blank or line.table or prev.table or (step and prev.bottom - line.bottom > 1.6 * step):
                parts.append("\n\n")
            else:
                _join_soft(parts, prev, line, margin)
        parts.append(line.text)
        prev, blank = line, False
    return "".join(parts)


def _join_soft(parts: list[str], prev: Line, line: Line, margin: float) -> None:
    """Separator for a line break inside a paragraph: none for wrapped CJK or a split word."""
    end, start = prev.text[-1], line.text.lstrip()[:1]
    height = prev.top - prev.bottom
    full = not margin or not height or prev.right >= margin - 3 * height
    if full and (_CJK.match(end) or _CJK.match(start)) and not start.isspace():
        return
    if full and end.isalnum() and start.isalnum() and _CJK.search(prev.text[-24:]):
        return  # CJK text wraps at any character, splitting Latin words too
    if full and _WORD_END.search(prev.text) and start.islower():
        parts[-1] = parts[-1][:-1]
        return
    parts.append("\n")
