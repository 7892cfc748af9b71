"""OCR: images and PDF pages without a text layer become searchable text with pages and line boxes.

The images are drawn here with Pillow (English with any font; Chinese with WenQuanYi Micro Hei
from the `paperang-p2-fonts-cjk` wheel in the `test` extra), so the core tests need no shared data.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from docqa.errors import CorruptFileError, FileTooLargeError, MissingExtraError, NoTextLayerError
from docqa.ingest import ocr
from docqa.ingest.readers import read_file
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.types import PAGE

from .fixtures import make_pdf

needs_ocr = pytest.mark.skipif(not ocr.installed(), reason="OCR extra not installed: pip install 'docqa[ocr]'")
ENGLISH = ["Invoice 4711 was paid by Northwind Traders", "on the third of March."]
CHINESE = ["知识库问答系统支持中文检索", "扫描件也能被搜索到。"]


def cjk_font() -> str | None:
    """WenQuanYi Micro Hei (Latin and CJK glyphs) from its wheel, or None when it is not installed."""
    try:
        from importlib.resources import files

        font = files("paperang_p2_fonts_cjk") / "fonts" / "wqy-microhei.ttc"
    except ModuleNotFoundError:
        return None
    return str(font) if font.is_file() else None


def draw(path: Path, lines: list[str], size: int = 32, font: str | None = None) -> Path:
    """A white picture with `lines` in black, one under the other; Pillow's own font when none is given."""
    from PIL import Image, ImageDraw, ImageFont

    face = ImageFont.truetype(font, size) if font else ImageFont.load_default(size=size)
    width = int(max(face.getlength(line) for line in lines)) + 2 * size
    image = Image.new("RGB", (width, int(len(lines) * size * 1.8 + size)), "white")
    pen = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        pen.text((size, size // 2 + int(number * size * 1.8)), line, font=face, fill="black")
    image.save(path)
    return path


def scan_page(path: Path, lines: list[str], font: str | None = None) -> Path:
    """A scanned A4 page at 150 DPI: white, `lines` from 10 mm in from the left edge near the top."""
    from PIL import Image, ImageDraw, ImageFont

    size = 40
    face = ImageFont.truetype(font, size) if font else ImageFont.load_default(size=size)
    image = Image.new("RGB", (1240, 1754), "white")
    pen = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        pen.text((59, 80 + int(number * size * 1.8)), line, font=face, fill="black")
    image.save(path)
    return path


def scanned_pdf(path: Path, pages: list[str | Path | None]) -> Path:
    """A PDF with a page per item: a string is its text layer, a picture path a scan over the whole
    page, None a small picture (a logo) on a page without text."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for page in pages:
        pdf.add_page()
        if isinstance(page, str):
            pdf.multi_cell(0, 6, page)
        elif page is None:
            pdf.image(str(draw(path.with_suffix(".logo.png"), ["LOGO"])), x=80, y=100, w=40)
        else:
            pdf.image(str(page), x=0, y=0, w=210, h=297)
    pdf.output(str(path))
    return path


def similar(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, "".join(a.split()), "".join(b.split())).ratio()


@pytest.fixture(autouse=True)
def default_options():
    ocr.configure(ocr.OcrOptions())
    yield
    ocr.configure(ocr.OcrOptions())


@needs_ocr
@pytest.mark.slow
def test_english_image_is_read_with_lines_and_boxes(tmp_path: Path) -> None:
    doc = read_file(draw(tmp_path / "note.png", ENGLISH, font=cjk_font()))
    assert doc.type == "image" and doc.metadata["pages"] == 1
    assert similar(doc.text, " ".join(ENGLISH)) > 0.95, doc.text
    assert "Northwind" in doc.text and "4711" in doc.text
    assert [(b.kind, b.page) for b in doc.blocks] == [(PAGE, 1)]
    meta = doc.metadata["ocr"]
    assert meta["pages"] == [1] and meta["line_fields"][:3] == ["start", "end", "page"]
    tops = []
    for start, end, page, left, top, right, bottom, score in meta["lines"]:
        assert page == 1 and doc.text[start:end].strip() and 0 <= left < right <= 1 and 0 <= top < bottom <= 1
        assert 0 < score <= 1
        tops.append(top)
    assert tops == sorted(tops)  # reading order: top to bottom


@needs_ocr
@pytest.mark.slow
def test_chinese_image_is_read(tmp_path: Path) -> None:
    font = cjk_font()
    if font is None:
        pytest.skip("no CJK font: pip install paperang-p2-fonts-cjk==0.1.0 (in the test extra)")
    doc = read_file(draw(tmp_path / "扫描.jpg", CHINESE, font=font))
    assert similar(doc.text, "".join(CHINESE)) > 0.9, doc.text
    assert "知识库" in doc.text


@needs_ocr
@pytest.mark.slow
def test_pdf_page_without_text_layer_is_read_and_keeps_its_page_number(tmp_path: Path) -> None:
    scan = scan_page(tmp_path / "scan.png", ENGLISH, font=cjk_font())
    path = scanned_pdf(tmp_path / "mixed.pdf", ["The first page has a real text layer about tangerines.", scan, None])
    doc = read_file(path)
    pages = {b.page: doc.text[b.start:b.end] for b in doc.blocks if b.kind == PAGE}
    assert "tangerines" in pages[1] and "Northwind" in pages[2] and "LOGO" not in doc.text
    assert doc.metadata["ocr"]["pages"] == [2]  # page 3, a small picture in a text PDF, is not a scan
    assert {line[2] for line in doc.metadata["ocr"]["lines"]} == {2}
    assert doc.metadata["ocr"]["seconds"] > 0


@needs_ocr
@pytest.mark.slow
def test_ocr_page_cap_leaves_pages_out_and_says_so(tmp_path: Path) -> None:
    from fpdf import FPDF

    picture = draw(tmp_path / "scan.png", ENGLISH)
    pdf = FPDF()
    for _ in range(3):
        pdf.add_page()
        pdf.image(str(picture), x=10, y=10, w=180)
    pdf.output(str(tmp_path / "scans.pdf"))
    ocr.configure(ocr.OcrOptions(max_pages=2))
    doc = read_file(tmp_path / "scans.pdf")
    meta = doc.metadata["ocr"]
    assert meta["pages"] == [1, 2] and meta["left_out"] == [3]
    assert "ingest.ocr_max_pages" in meta["left_out_reason"]
    assert [b.page for b in doc.blocks if b.kind == PAGE] == [1, 2, 3]


@needs_ocr
@pytest.mark.slow
def test_tiff_frames_are_pages(tmp_path: Path) -> None:
    from PIL import Image

    first = Image.open(draw(tmp_path / "a.png", ["First frame says tangerine."]))
    second = Image.open(draw(tmp_path / "b.png", ["Second frame says lighthouse."]))
    first.save(tmp_path / "two.tiff", save_all=True, append_images=[second])
    doc = read_file(tmp_path / "two.tiff")
    pages = {b.page: doc.text[b.start:b.end] for b in doc.blocks if b.kind == PAGE}
    assert "tangerine" in pages[1] and "lighthouse" in pages[2] and doc.metadata["pages"] == 2


@needs_ocr
def test_huge_picture_is_refused_before_decoding(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("1", (8000, 8000), 1).save(tmp_path / "huge.png")
    with pytest.raises(FileTooLargeError, match="huge.png: image of 8000×8000 pixels is over the 60 megapixel"):
        read_file(tmp_path / "huge.png")


@needs_ocr
@pytest.mark.slow
def test_blank_pdf_and_broken_image_with_ocr(tmp_path: Path) -> None:
    with pytest.raises(NoTextLayerError, match="blank.pdf: no text layer: no page holds text or a picture"):
        read_file(make_pdf(tmp_path / "blank.pdf", [""]))
    blank = scan_page(tmp_path / "blank.png", [])
    with pytest.raises(NoTextLayerError, match="white.pdf: no text layer: OCR found no text"):
        read_file(scanned_pdf(tmp_path / "white.pdf", [blank]))
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with pytest.raises(CorruptFileError, match="pic.png: could not decode the image"):
        read_file(tmp_path / "pic.png")


def test_without_the_extra_images_and_scans_say_how_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ocr, "installed", lambda: False)
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with pytest.raises(NoTextLayerError, match=r"needs OCR: pip install 'docqa\[ocr\]'"):
        read_file(tmp_path / "pic.png")
    scan = scan_page(tmp_path / "scan.png", ENGLISH)
    with pytest.raises(NoTextLayerError, match=r"scans.pdf: no text layer: needs OCR: pip install 'docqa\[ocr\]'"):
        read_file(scanned_pdf(tmp_path / "scans.pdf", [scan]))
    doc = read_file(scanned_pdf(tmp_path / "mixed.pdf", ["A page with text on it.", scan, None]))
    assert doc.metadata["ocr"] == {"pages": [], "left_out": [2],
                                   "left_out_reason": "needs OCR: pip install 'docqa[ocr]'"}
    assert "ocr" not in read_file(make_pdf(tmp_path / "drawn.pdf", ["A page with text on it.", ""])).metadata
    with pytest.raises(MissingExtraError, match=r"pip install 'docqa\[ocr\]'"):
        ocr.check(ocr.OcrOptions(mode="on"))
    ocr.check(ocr.OcrOptions(mode="auto"))  # auto: no error, files are reported one by one


def test_ocr_off_reports_images_as_needing_ocr(tmp_path: Path) -> None:
    ocr.configure(ocr.OcrOptions(mode="off"))
    with pytest.raises(NoTextLayerError, match=r"OCR is off \(ingest.ocr: off\)"):
        read_file(draw(tmp_path / "note.png", ENGLISH))


@needs_ocr
@pytest.mark.slow
def test_generated_scan_is_found_by_search(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    draw(folder / "note.png", ENGLISH, font=cjk_font())
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), search={"mode": "bm25"})) as kb:
        report = kb.add([folder])
        assert [Path(p).name for p in report.added] == ["note.png"], report.failed
        assert [(Path(p).name, pages) for p, pages, _ in report.ocr] == [("note.png", 1)]
        assert report.ocr[0][2] > 0 and report.to_dict()["ocr"][0]["pages"] == 1
        hits = kb.search("Northwind", top_k=5)
        assert hits and Path(hits[0].path).name == "note.png" and hits[0].page == 1


@needs_ocr
@pytest.mark.shared
@pytest.mark.slow
def test_shared_scans_become_searchable(shared_data: Path, tmp_path: Path) -> None:
    """The two OCR-only files of the multiformat corpus, found by a word of each."""
    edge = shared_data / "docs" / "multiformat" / "edge"
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), search={"mode": "bm25"})) as kb:
        report = kb.add([edge / "chi_sim_image.jpeg", edge / "single_table.pdf"])
        assert len(report.added) == 2, report.failed
        for query, name in (("适用人群", "chi_sim_image.jpeg"), ("Chipper", "single_table.pdf")):
            hits = kb.search(query, top_k=5)
            assert hits and Path(hits[0].path).name == name, (query, [h.path for h in hits])
            assert hits[0].page == 1


def test_page_text_reads_rows_left_to_right_and_keeps_each_line_span() -> None:
    line = ocr.OcrLine
    lines = [line("cell two", (0.5, 0.10, 0.7, 0.14), 0.9), line("Cell one", (0.1, 0.11, 0.3, 0.15), 0.9),
             line("next row", (0.1, 0.16, 0.4, 0.20), 0.9), line("far below", (0.1, 0.40, 0.4, 0.44), 0.9)]
    text, spans = ocr.page_text(lines)
    assert text == "Cell one cell two\nnext row\n\nfar below"
    assert [text[s:e] for s, e, _ in spans] == ["Cell one", "cell two", "next row", "far below"]


def test_ocr_on_without_the_extra_stops_adding_with_the_install_command(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ocr, "installed", lambda: False)
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), ingest={"ocr": "on"})) as kb:
        with pytest.raises(MissingExtraError, match=r"(?s)ingest.ocr: on.*pip install 'docqa\[ocr\]'"):
            kb.add([tmp_path])


@needs_ocr
@pytest.mark.slow
def test_worker_processes_read_pictures_with_the_settings(tmp_path: Path) -> None:
    """More files than the in-process threshold: forked workers get the OCR options with the ingest options."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for number, word in enumerate(["tangerine", "lighthouse", "harbour", "meadow"]):
        draw(folder / f"p{number}.png", [f"The {word} note."], size=24)
    settings = Settings(kb=str(tmp_path / "kb.db"), search={"mode": "bm25"}, ingest={"workers": 2, "ocr_max_pages": 1})
    with KnowledgeBase(settings) as kb:
        report = kb.add([folder])
        assert len(report.added) == 4, report.failed
        assert Path(kb.search("lighthouse", top_k=3)[0].path).name == "p1.png"
