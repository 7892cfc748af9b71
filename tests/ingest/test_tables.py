"""Tables in PDF, DOCX, PPTX and HTML: every row group keeps the header, and a question about a
cell (its value and a header word) finds the chunk holding that row."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from docqa.ingest.chunkers import chunk_document
from docqa.ingest.readers.registry import read_file
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.types import HEADER_ROW, TABLE
from .fixtures import make_docx, make_html

HEADER = ["Component", "Warehouse", "Price"]
_SYLLABLES = ["ka", "lo", "mi", "nu", "pe", "ri", "so", "tu", "ve", "zo"]
WORDS = ["".join(p) + "x" for p in itertools.product(_SYLLABLES, repeat=2)][:30]
CITIES = ["Lyon", "Graz", "Turku", "Porto", "Gent", "Brno", "Split", "Aarhus", "Bergen", "Malmo"]
# Each city thrice: they, not the component names, are the documents' keywords (as the common
# words of a real table would be), so the search below is decided by the chunk text.
ROWS = [[w, CITIES[i % len(CITIES)], f"{100 + 7 * i}"] for i, w in enumerate(WORDS)]
# A real opening paragraph: the document summary (indexed with every chunk) is cut from it, not
# from the table's first rows.
INTRO = ("This stock list gives, for every component kept in the spring season, the warehouse that "
         "holds it and its unit price in euros. The purchasing team checks the list every month.")
MAX_TOKENS = 64  # small chunks, so the 30-row table is split into several row groups


def write_pdf(path: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 6, INTRO)
    pdf.set_font("helvetica", size=9)
    with pdf.table(line_height=5) as table:
        for row in [HEADER, *ROWS]:
            table.row(row)
    pdf.output(str(path))
    return path


def write_pptx(path: Path) -> Path:
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Stock list"
    slide.shapes.add_textbox(Inches(0.5), Inches(1), Inches(9), Inches(0.5)).text_frame.text = INTRO
    grid = slide.shapes.add_table(len(ROWS) + 1, 3, Inches(0.5), Inches(1.5), Inches(9), Inches(5)).table
    for r, row in enumerate([HEADER, *ROWS]):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    deck.save(str(path))
    return path


def write_html(path: Path) -> Path:
    head = "".join(f"<th>{h}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>" for row in ROWS)
    return make_html(path, "Stock list", f"<h1>Stock list</h1><p>{INTRO}</p>"
                     f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


WRITERS = {
    "pdf": write_pdf,
    "docx": lambda p: make_docx(p, [(1, "Stock list"), (0, INTRO)],
                                table=[HEADER, *ROWS]),
    "pptx": write_pptx,
    "html": write_html,
}


@pytest.fixture(scope="module", params=sorted(WRITERS))
def table_file(request, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp(f"table-{request.param}")
    return WRITERS[request.param](folder / f"stock.{request.param}")


def test_the_table_is_a_table_block_with_its_header(table_file):
    doc = read_file(table_file, table_file.read_bytes())
    tables = [b for b in doc.blocks if b.kind == TABLE]
    headers = [b for b in doc.blocks if b.kind == HEADER_ROW]
    assert len(tables) == 1 and len(headers) == 1
    assert doc.text[headers[0].start:headers[0].end] == " | ".join(HEADER)
    lines = doc.text[tables[0].start:tables[0].end].split("\n")
    assert lines == [" | ".join(row) for row in [HEADER, *ROWS]]
    assert doc.text.count(ROWS[7][0]) == 1  # the table's text is not repeated as prose


def test_every_row_group_carries_the_header(table_file):
    doc = read_file(table_file, table_file.read_bytes())
    chunks = chunk_document(doc, max_tokens=MAX_TOKENS, overlap=8)
    holding = [c for c in chunks if any(row[0] in c.text for row in ROWS)]
    assert len(holding) >= 3  # the table was split
    header = " | ".join(HEADER)
    for chunk in holding:
        assert header in chunk.text or header in chunk.context, chunk.text
    for row in ROWS:  # every row stands whole in some chunk
        assert any(" | ".join(row) in c.text for c in holding), row
    if doc.type in ("pdf", "pptx"):
        assert {c.page_start for c in holding} == {1} and {c.page_end for c in holding} == {1}


def filler_text() -> str:
    """Other text, so the table words are rare in the index as they are in a real one (each
    table word would otherwise also match the few other chunks of its document)."""
    return "\n\n".join(f"Note {i}: the {CITIES[i % 10]} office opens at {8 + i % 3} and closes late."
                       for i in range(120))


@pytest.fixture(scope="module")
def table_kb(tmp_path_factory):
    folder = tmp_path_factory.mktemp("table-kb")
    for kind, write in WRITERS.items():
        write(folder / f"stock.{kind}")
    (folder / "notes.txt").write_text(filler_text(), encoding="utf-8")
    settings = Settings(kb=str(folder / "kb.db"), embed={"provider": "none"},
                        chunk={"max_tokens": MAX_TOKENS, "overlap": 8})
    kb = KnowledgeBase(settings)
    kb.add([folder])
    yield kb
    kb.close()


@pytest.mark.parametrize("kind", sorted(WRITERS))
@pytest.mark.slow
def test_a_cell_question_finds_its_row(table_kb, kind):
    misses = []
    for word, city, price in ROWS:
        hits = [h for h in table_kb.search(f"price of {word}", top_k=10, mode="bm25")
                if h.path.endswith(f"stock.{kind}")]
        if not hits or f"{word} | {city} | {price}" not in hits[0].text:
            misses.append(word)
    assert not misses, f"{kind}: rows not found first: {misses}"


def test_shared_chinese_pdf_table_is_a_table(shared_data):
    path = shared_data / "docs" / "multiformat" / "zh" / "cmrc2018-trial-zh-CN.pdf"
    doc = read_file(path, path.read_bytes())
    tables = [b for b in doc.blocks if b.kind == TABLE]
    assert len(tables) == 1 and tables[0].page == 3
    lines = doc.text[tables[0].start:tables[0].end].split("\n")
    assert lines[0] == "条目 | 编号 | 字数" and "温泉关 | TRIAL_890 | 541" in lines
    assert doc.text.count("TRIAL_890") == 1  # not repeated as prose


@pytest.mark.parametrize("name", ["office/docx-tables.docx", "office/fake-power-point-table.pptx",
                                  "zh/cmrc2018-trial-zh-CN.pdf", "zh/cmrc2018-trial-zh-CN.docx"])
def test_shared_table_rows_keep_their_header(shared_data, name):
    path = shared_data / "docs" / "multiformat" / name
    doc = read_file(path, path.read_bytes())
    chunks = chunk_document(doc, max_tokens=32, overlap=4)  # small: the tables split into row groups
    for table in (b for b in doc.blocks if b.kind == TABLE):
        header = doc.text[table.start:table.end].split("\n")[0]
        inside = [c for c in chunks if c.char_start < table.end and c.char_end > table.start]
        assert inside and all(header in c.text or header in c.context for c in inside), name


@pytest.mark.parametrize(("rows", "tabular"), [
    ([["a", "b"], ["1", "2"]], True),
    ([["only one column"], ["x"]], False),
    ([["Name", "Size"]], False),
    ([["F/M\nM\nF\nF", "M\n-\n-\nF"], ["x", "y"]], False),  # rows merged: rules missing
    ([["Type", "(cid:55)"], ["a", "b"]], False),  # glyphs pdfminer could not map
])
def test_pdf_table_filter(rows, tabular):
    from docqa.ingest.readers.pdf_tables import _looks_tabular

    assert _looks_tabular(rows) is tabular


def test_a_page_without_a_grid_has_no_table(tmp_path):
    import pypdfium2 as pdfium

    from docqa.ingest.readers.pdf import read_page

    from .fixtures import make_pdf

    plain = make_pdf(tmp_path / "plain.pdf", ["Just prose. " * 40, "", "More prose."])  # "" draws a box
    ruled = write_pdf(tmp_path / "ruled.pdf")
    assert [read_page(pdfium.PdfDocument(str(plain)), i)[1] for i in range(3)] == [[], [], []]
    tables = read_page(pdfium.PdfDocument(str(ruled)), 0)[1]
    assert len(tables) == 1 and tables[0].rows[0] == " | ".join(HEADER)
