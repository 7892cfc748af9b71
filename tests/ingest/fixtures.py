"""Builders of small real files in every supported format, shared by the ingest, pipeline and CLI tests.

Each builder writes one file with the given content and returns its path.  `make_corpus`
writes one file per format, each holding a unique phrase, and returns {path: phrase}.
"""

from __future__ import annotations

import csv
import gzip
import json
from email.message import EmailMessage
from pathlib import Path

Item = tuple[int, str]  # (heading level, text); level 0 is a body paragraph


def make_pdf(path: Path, pages: list[str], user_password: str | None = None) -> Path:
    """A PDF with one page per string (core font, Latin-1); "" makes a page with only a drawing."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, text)
        else:
            pdf.rect(20, 20, 100, 60, style="F")
    if user_password is not None:
        pdf.set_encryption(owner_password="owner-secret", user_password=user_password)
    pdf.output(str(path))
    return path


def make_docx(path: Path, items: list[Item], table: list[list[str]] | None = None,
              title: str | None = None) -> Path:
    """A DOCX with headings/paragraphs, then an optional table."""
    import docx

    document = docx.Document()
    for level, text in items:
        if level:
            document.add_heading(text, level=level)
        else:
            document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    if title:
        document.core_properties.title = title
    document.save(str(path))
    return path


def make_xlsx(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    """A workbook with one worksheet per entry (rows of cell values)."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(str(path))
    return path


def make_pptx(path: Path, slides: list[tuple[str, str]]) -> Path:
    """A deck with one title-and-content slide per (title, body)."""
    import pptx

    deck = pptx.Presentation()
    layout = deck.slide_layouts[1]
    for title, body in slides:
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(path))
    return path


def make_epub(path: Path, title: str, chapters: list[tuple[str, str]]) -> Path:
    """An EPUB with one XHTML chapter per (heading, paragraph)."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("docqa-test")
    book.set_title(title)
    book.set_language("en")
    items = []
    for number, (heading, body) in enumerate(chapters, 1):
        chapter = epub.EpubHtml(title=heading, file_name=f"chap{number}.xhtml", lang="en")
        chapter.content = f"<h1>{heading}</h1><p>{body}</p>"
        book.add_item(chapter)
        items.append(chapter)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = items
    epub.write_epub(str(path), book)
    return path


def make_odt(path: Path, items: list[Item], table: list[list[str]] | None = None) -> Path:
    """An OpenDocument text with headings (outline levels), paragraphs and an optional table."""
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, P

    document = OpenDocumentText()
    for level, text in items:
        document.text.addElement(H(outlinelevel=level, text=text) if level else P(text=text))
    if table:
        grid = Table(name="Table1")
        grid.addElement(TableColumn(numbercolumnsrepeated=len(table[0])))
        for row in table:
            element = TableRow()
            for value in row:
                cell = TableCell()
                cell.addElement(P(text=value))
                element.addElement(cell)
            grid.addElement(element)
        document.text.addElement(grid)
    document.save(str(path))
    return path


def make_rtf(path: Path, paragraphs: list[str]) -> Path:
    """A minimal RTF file; non-ASCII characters written as \\'xx cp1252 escapes."""
    def escape(text: str) -> str:
        return "".join(c if ord(c) < 128 else "\\'" + c.encode("cp1252").hex() for c in text)

    body = "\n".join(f"{{\\pard {escape(p)}\\par}}" for p in paragraphs)
    path.write_text("{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Times;}}\n" + body + "\n}",
                    encoding="ascii")
    return path


def make_eml(path: Path, subject: str, body: str, html: str | None = None,
             attachment: tuple[str, str] | None = None) -> Path:
    """An e-mail: base64 text/plain body, optional HTML alternative and a text attachment."""
    message = EmailMessage()
    message["From"] = "Alice <alice@example.org>"
    message["To"] = "Bob <bob@example.org>"
    message["Date"] = "Mon, 01 Jan 2024 10:00:00 +0000"
    message["Subject"] = subject
    message.set_content(body, cte="base64")
    if html:
        message.add_alternative(html, subtype="html")
    if attachment:
        name, text = attachment
        message.add_attachment(text.encode("utf-8"), maintype="text", subtype="plain", filename=name)
    path.write_bytes(bytes(message))
    return path


def make_html(path: Path, title: str, body: str, encoding: str = "utf-8") -> Path:
    """An HTML page with a meta charset, a script and a style block around `body`."""
    page = (f'<!DOCTYPE html><html><head><meta charset="{encoding}"><title>{title}</title>'
            "<style>body { color: red }</style><script>var secretScript = 1;</script></head>"
            f"<body><h1>{title}</h1>{body}</body></html>")
    path.write_bytes(page.encode(encoding))
    return path


def make_corpus(directory: Path) -> dict[Path, str]:
    """One file of each supported format, each with a unique phrase; returns {path: phrase}."""
    directory.mkdir(parents=True, exist_ok=True)
    d = directory
    phrases: dict[Path, str] = {}

    def put(path: Path, phrase: str) -> None:
        phrases[path] = phrase

    put(_write(d / "notes.txt", "Plain notes\nthe amber falcon sleeps at noon\n"), "amber falcon sleeps")
    put(_write(d / "guide.md", "# Guide\n\nThe copper lantern glows twice.\n"), "copper lantern glows")
    put(_write(d / "manual.rst", "Manual\n======\n\nThe silver kettle hums.\n"), "silver kettle hums")
    put(_write(d / "tool.py", 'def crimson_otter():\n    """Crimson otter swims."""\n'), "Crimson otter swims")
    put(_write(d / "data.json", json.dumps({"note": "the violet glacier melts"})), "violet glacier melts")
    put(_write(d / "conf.yaml", "note: the indigo meadow sings\n"), "indigo meadow sings")
    with open(d / "table.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["name", "motto"], ["x", "the scarlet harbor waits"]])
    put(d / "table.csv", "scarlet harbor waits")
    put(make_html(d / "page.html", "Page", "<p>The golden bridge creaks.</p>"), "golden bridge creaks")
    put(make_pdf(d / "paper.pdf", ["The ivory tower leans north."]), "ivory tower leans north")
    put(make_docx(d / "report.docx", [(1, "Report"), (0, "The jade compass points east.")]),
        "jade compass points east")
    put(make_xlsx(d / "book.xlsx", {"Data": [["k", "v"], ["a", "the cobalt river bends"]]}),
        "cobalt river bends")
    put(make_pptx(d / "deck.pptx", [("Deck", "The onyx statue smiles.")]), "onyx statue smiles")
    put(make_epub(d / "book.epub", "Book", [("One", "The pearl orchard blooms.")]), "pearl orchard blooms")
    put(make_odt(d / "letter.odt", [(1, "Letter"), (0, "The ruby anchor rusts.")]), "ruby anchor rusts")
    put(make_rtf(d / "memo.rtf", ["The bronze clock chimes."]), "bronze clock chimes")
    put(make_eml(d / "mail.eml", "Hello", "The teal kite soars high."), "teal kite soars high")
    page = ".TH BEACON 1\n.SH NAME\nbeacon \\- a lamp\n.SH OPTIONS\n.TP\n\\fB\\-\\-spin\\fR\nThe obsidian beacon turns slowly.\n"
    (d / "beacon.1.gz").write_bytes(gzip.compress(page.encode()))
    put(d / "beacon.1.gz", "obsidian beacon turns slowly")
    return phrases


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def blank_png(size: int = 32) -> bytes:
    """A valid white PNG with no text, built with the standard library (skipped with OCR or without)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff" * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
