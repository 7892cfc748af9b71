"""Documents for the viewer's tests, generated with the libraries the readers read them with: a
three-page PDF whose second page holds the answer, a deck, a workbook, and a zip holding a PDF."""

from __future__ import annotations

import zipfile
from pathlib import Path

PDF_PAGES = [
    "Plant handbook. This first page is about the visitor entrance, parking and the canteen opening hours.",
    "Cooling. The reactor coolant pumps are inspected every 12 hours by the duty engineer on shift. "
    "Each inspection is written into the pump logbook before the end of the shift.",
    "Contacts. The site office answers the telephone on working days from eight until five.",
]
PDF_QUOTE = "The reactor coolant pumps are inspected every 12 hours by the duty engineer on shift."
SLIDES = [("Welcome", "Agenda for the quarterly review"),
          ("Marketing budget", "The marketing budget for 2024 is 3 million euros"),
          ("Closing", "Questions and next steps")]
STAFF = [["Name", "Role", "Floor"], ["Ann", "Nurse", 3], ["Bob", "Porter", 1], [],  # a blank row: not in the text
         ["Carla", "Radiologist", 5], ["Dev", "Cook", 0]]


def make_pdf(path: Path, pages: list[str]) -> Path:
    """One page per string, wrapped by fpdf2 (a core font, so the text layer is plain)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.set_y(60)  # not at the very top: a box at (0, 0) would not prove the position
        pdf.multi_cell(0, 7, text)
    pdf.output(str(path))
    return path


def make_pptx(path: Path, slides: list[tuple[str, str]]) -> Path:
    import pptx

    deck = pptx.Presentation()
    for title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(path))
    return path


def make_xlsx(path: Path, rows: list[list[object]]) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Staff"
    for row in rows:
        sheet.append(row)
    book.save(str(path))
    return path


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def quote_rect(path: Path, page: int, quote: str) -> tuple[float, float, float, float]:
    """Where `quote` stands on `page` (1-based) by pdfium's own search: (left, top, right, bottom) as
    fractions of the page, top-left origin; independent of docqa's matching."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        handle = pdf[page - 1]
        width, height = handle.get_size()
        text = handle.get_textpage()
        search = text.search(quote.split(" by ")[0], match_case=True)
        start, count = search.get_next()
        boxes = [text.get_charbox(i) for i in range(start, start + count)]
        search.close()
        text.close()
        handle.close()
    finally:
        pdf.close()
    left, bottom = min(b[0] for b in boxes), min(b[1] for b in boxes)
    right, top = max(b[2] for b in boxes), max(b[3] for b in boxes)
    return left / width, 1 - top / height, right / width, 1 - bottom / height
