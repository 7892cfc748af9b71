"""The boxes of a cited span stand over its ink on the rendered page, also on a page whose crop box
does not start at the origin: checked against the pixels of the PNG the viewer shows."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from web.viewer_docs import PDF_PAGES, PDF_QUOTE, make_pdf


def ink(image, box, dx: float = 0.0, dy: float = 0.0) -> float:
    """The share of dark pixels inside `box` (fractions of the page), moved by (dx, dy) page fractions."""
    w, h = image.size
    area = image.crop((int((box.left + dx) * w), int((box.top + dy) * h), int((box.right + dx) * w),
                       int((box.bottom + dy) * h))).convert("L")
    histogram = area.histogram()  # 256 counts of grey levels
    return sum(histogram[:128]) / max(sum(histogram), 1)


@pytest.mark.parametrize("crop", [None, (40, 60, 560, 800)])
def test_boxes_cover_the_quoted_ink(tmp_path: Path, crop) -> None:
    from PIL import Image
    import pypdfium2 as pdfium

    (tmp_path / "docs").mkdir()
    path = make_pdf(tmp_path / "source.pdf", PDF_PAGES)
    if crop:  # a crop box away from the origin: what is rendered starts at (40, 60)
        pdf = pdfium.PdfDocument(str(path))
        pdf[1].set_cropbox(*crop)
        pdf.save(str(tmp_path / "docs" / "cropped.pdf"))
        pdf.close()
    else:
        (tmp_path / "docs" / "plain.pdf").write_bytes(path.read_bytes())
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings) as kb:
        kb.add([tmp_path / "docs"])
        doc = kb.documents.list()[0].document_id
        start = kb.documents.text(doc).index(PDF_QUOTE)
        boxes = kb.viewer.page_boxes(doc, 2, start, start + len(PDF_QUOTE))
        image = Image.open(io.BytesIO(kb.viewer.page_image(doc, 2, 2.0)))
    assert boxes
    first = boxes[0]
    height = first.bottom - first.top
    assert ink(image, first) > 0.05  # text under the box
    assert ink(image, first, dy=-2 * height) == 0  # nothing above the first line: the box is not too low
