"""E-books and word-processor formats: EPUB (EbookLib), OpenDocument text (odfpy) and RTF."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING
from xml.parsers.expat import ExpatError

from docqa.errors import CorruptFileError
from docqa.ingest.readers.base import Reader, TextBuilder, collapse_spaces, first_heading, sane_title
from docqa.ingest.readers.html import add_html, decode_html
from docqa.ingest.readers.zipguard import check_zip
from docqa.types import HEADING, PARAGRAPH, TABLE, Document

if TYPE_CHECKING:  # EbookLib, odfpy and striprtf are imported when a file of theirs is read
    from ebooklib import epub
    from odf.element import Element

_ZIP_ERRORS = (zipfile.BadZipFile, KeyError, ValueError, OSError, ExpatError, AttributeError)


def _zip_mimetype(head: bytes) -> bytes:
    """The `mimetype` entry an EPUB/ODF zip stores first and uncompressed."""
    if head.startswith(b"PK\x03\x04") and head[30:38] == b"mimetype":
        return head[38:120]
    return b""


class EpubReader(Reader):
    """EPUB: the spine's XHTML documents in reading order through the HTML logic."""

    type = "epub"
    extensions = (".epub",)
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return _zip_mimetype(head).startswith(b"application/epub+zip")

    def read(self, path: Path, data: bytes) -> Document:
        from ebooklib import epub

        try:
            check_zip(data, path)
            book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": True})
        except (epub.EpubException, *_ZIP_ERRORS) as exc:
            raise CorruptFileError(str(path), f"could not parse EPUB: {exc}") from exc
        builder, chapters = TextBuilder(), 0
        for idref, _linear in book.spine:
            item = book.get_item_with_id(idref)
            if item is None or not isinstance(item, (epub.EpubHtml, epub.EpubItem)):
                continue
            before = len(builder)
            add_html(decode_html(item.get_content())[0], builder, xhtml=True)
            chapters += len(builder) > before
        title = _dc(book, "title")
        metadata = {"chapters": chapters, **({"author": a} if (a := _dc(book, "creator")) else {})}
        doc = builder.document(path, self.type, metadata=metadata)
        doc.title = sane_title(title) or first_heading(doc.text, doc.blocks)
        return doc


def _dc(book: epub.EpubBook, name: str) -> str | None:
    values = book.get_metadata("DC", name)
    return collapse_spaces(str(values[0][0])) if values and values[0][0] else None


def _qname(element: Element) -> tuple[str, str]:
    return element.qname if hasattr(element, "qname") else ("", "")


_ODF_SKIP = {"sequence-decls", "variable-decls", "tracked-changes", "forms", "table-of-content",
             "illustration-index", "alphabetical-index"}


class OdtReader(Reader):
    """OpenDocument text: text:h headings (outline level), paragraphs, lists and tables."""

    type = "odt"
    extensions = (".odt", ".ott")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return _zip_mimetype(head).startswith(b"application/vnd.oasis.opendocument.text")

    def read(self, path: Path, data: bytes) -> Document:
        from odf.namespaces import DCNS
        from odf.opendocument import load as load_odf

        try:
            check_zip(data, path)
            document = load_odf(io.BytesIO(data))
            builder = TextBuilder()
            self.walk(document.text, builder)
            title = next((str(n) for n in document.meta.childNodes if _qname(n) == (DCNS, "title")), "")
        except _ZIP_ERRORS as exc:
            raise CorruptFileError(str(path), f"could not parse ODT: {exc}") from exc
        doc = builder.document(path, self.type)
        doc.title = sane_title(title) or first_heading(doc.text, doc.blocks)
        return doc

    def walk(self, element: Element, builder: TextBuilder) -> None:
        """Add headings, paragraphs and tables below `element` in document order."""
        from odf import teletype
        from odf.namespaces import TABLENS, TEXTNS

        for child in element.childNodes:
            namespace, name = _qname(child)
            if namespace == TEXTNS and name == "h":
                level = child.getAttrNS(TEXTNS, "outline-level") or "1"
                builder.add(teletype.extractText(child), HEADING, level=int(level) if level.isdigit() else 1)
            elif namespace == TEXTNS and name == "p":
                builder.add(teletype.extractText(child), PARAGRAPH)
            elif namespace == TABLENS and name == "table":
                builder.add("\n".join(odf_table_rows(child)), TABLE)
            elif name not in _ODF_SKIP and getattr(child, "childNodes", None):
                self.walk(child, builder)


def odf_table_rows(table: Element) -> list[str]:
    """Rows of a table:table (header rows and row groups included), cells joined by " | "."""
    from odf import teletype
    from odf.namespaces import TABLENS
    from odf.table import TableRow

    lines = []
    for row in table.getElementsByType(TableRow):
        cells = []
        for cell in row.childNodes:
            if _qname(cell) == (TABLENS, "table-cell"):
                cells.append(collapse_spaces(" ".join(teletype.extractText(cell).split())))
            elif _qname(cell) == (TABLENS, "covered-table-cell"):
                cells.append("")
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            lines.append(" | ".join(cells))
    return lines


_ANSICPG = re.compile(rb"\\ansicpg(\d+)")


class RtfReader(Reader):
    """RTF through striprtf; every paragraph separated by a blank line."""

    type = "rtf"
    extensions = (".rtf",)
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return head.startswith(b"{\\rtf")

    def read(self, path: Path, data: bytes) -> Document:
        from striprtf.striprtf import rtf_to_text

        match = _ANSICPG.search(data[:4096])
        codepage = f"cp{match.group(1).decode()}" if match else "cp1252"
        try:
            "".encode(codepage)
        except LookupError:
            codepage = "cp1252"
        try:
            text = rtf_to_text(data.decode(codepage, errors="replace"), encoding=codepage, errors="replace")
        except (ValueError, IndexError, KeyError) as exc:
            raise CorruptFileError(str(path), f"could not parse RTF: {exc}") from exc
        builder = TextBuilder()
        for paragraph in text.split("\n"):
            builder.add(paragraph, PARAGRAPH)
        return builder.document(path, self.type, metadata={"encoding": codepage})
