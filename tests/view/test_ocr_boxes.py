"""A scanned page has no text layer: where a cited span stands on it comes from the line boxes OCR
kept in the document's metadata (ingest/ocr.py), through the knowledge base like any PDF page."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.ingest import ocr
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from ingest.test_ocr import ENGLISH, cjk_font, scan_page


@pytest.mark.skipif(not ocr.installed(), reason="OCR extra not installed: pip install 'docqa[ocr]'")
@pytest.mark.slow
def test_an_ocr_page_gets_the_boxes_of_its_recognised_lines(tmp_path: Path) -> None:
    from fpdf import FPDF

    picture = scan_page(tmp_path / "scan.png", ENGLISH, font=cjk_font())
    pdf = FPDF()  # A4: 210 mm wide; the scan covers the page, its lines start 10 mm in
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 6, "The first page has a real text layer about tangerines.")
    pdf.add_page()
    pdf.image(str(picture), x=0, y=0, w=210, h=297)
    (tmp_path / "docs").mkdir()
    pdf.output(str(tmp_path / "docs" / "mixed.pdf"))
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings) as kb:
        kb.add([tmp_path / "docs"])
        doc = kb.documents.list()[0].document_id
        text = kb.documents.text(doc)
        start = text.index("Northwind")
        boxes = kb.viewer.page_boxes(doc, 2, start, start + len("Northwind Traders"))
        assert kb.viewer.page_boxes(doc, 1, start, start + 9) == []  # the span is not on page 1
        assert len(kb.viewer.page_image(doc, 2)) > 1000
    assert len(boxes) == 1  # the first recognised line, whole
    box = boxes[0]
    assert 10 / 210 - 0.02 <= box.left < box.right <= 190 / 210 + 0.02
    assert 0 < box.top < box.bottom < 0.15  # the first of the two lines, near the top of the page
