"""PDF pages right: every chunk's page is the page where its text stands (pypdfium2's page text),
and no chunk spans two pages."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from docqa.errors import IngestError
from docqa.ingest.chunkers import chunk_document
from docqa.ingest.readers.pdf import PdfReader

_DROP = re.compile(r"[\s|\-\u00ad\ufffe\x00-\x1f]+")


def norm(text: str) -> str:
    """NFKC without whitespace, '|' separators, hyphens and control marks (joined lines differ)."""
    return _DROP.sub("", unicodedata.normalize("NFKC", text))


def misplaced(path: Path, max_tokens: int = 512, overlap: int = 50) -> tuple[int, list[str]]:
    """(chunks, the ones whose text is not on their page or that span pages)."""
    import pypdfium2 as pdfium

    doc = PdfReader().read(path, path.read_bytes())
    pdf = pdfium.PdfDocument(str(path))
    pages = [norm(pdf[i].get_textpage().get_text_range()) for i in range(len(pdf))]
    pdf.close()
    chunks = chunk_document(doc, max_tokens, overlap)
    ocr_pages = set(doc.metadata.get("ocr", {}).get("pages") or [])
    wrong = []
    for c in chunks:
        if c.page_start in ocr_pages:  # read by OCR: pdfium has no text to compare with (its place is OCR's box)
            continue
        lines = [norm(p) for p in re.split(r"\n| \| ", c.text) if norm(p)]
        if c.page_start != c.page_end or not all(p in pages[c.page_start - 1] for p in lines):
            wrong.append(f"{path.name} p{c.page_start}-{c.page_end}: {c.text[:60]!r}")
        elif "|" not in c.text and norm(c.text) not in pages[c.page_start - 1]:
            wrong.append(f"{path.name} p{c.page_start}: {c.text[:60]!r}")
    return len(chunks), wrong


def write_flowing_pdf(path: Path) -> Path:
    """Three pages: paragraphs that flow over the page breaks, and a ruled table on page 2."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    for i in range(14):
        pdf.multi_cell(0, 6, f"Paragraph {i} about river number {i}. " * 12)
        pdf.ln(3)
    with pdf.table(line_height=6) as table:
        table.row(["River", "Country", "Length"])
        for i in range(12):
            table.row([f"Stream{i}", f"Land{i}", f"{300 + i} km"])
    for i in range(6):
        pdf.multi_cell(0, 6, f"Closing note {i} on lakes. " * 14)
        pdf.ln(3)
    pdf.output(str(path))
    return path


@pytest.mark.parametrize("sizes", [(512, 50), (64, 8)])
@pytest.mark.slow
def test_generated_chunks_stand_on_their_pages(tmp_path, sizes):
    path = write_flowing_pdf(tmp_path / "flow.pdf")
    count, wrong = misplaced(path, *sizes)
    assert count >= 4 and not wrong, wrong
    doc = PdfReader().read(path, path.read_bytes())
    assert doc.metadata["pages"] >= 3


@pytest.mark.slow
def test_shared_pdfs_chunks_stand_on_their_pages(shared_data):
    total, wrong = 0, []
    for path in sorted(shared_data.rglob("*.pdf")):
        try:
            count, bad = misplaced(path)
        except IngestError:  # encrypted, truncated, scanned: nothing to place
            continue
        total += count
        wrong += bad
    assert total >= 50 and not wrong, wrong
