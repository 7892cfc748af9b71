"""Ruled tables from pdfium's page objects: the same tables as pdfplumber run on every page.

The reader finds tables from pdfium's path segments with pdfplumber's own table geometry, and reads
each cell's text from pdfium; the reference here is pdfplumber's whole pipeline (pdfminer parsing
every page, `Page.find_tables`, `Table.extract`), as the reader used it before.  Cell text is
compared without whitespace (pdfminer and pdfium place word spaces differently).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from docqa.ingest.readers.pdf import page_text, read_page
from docqa.ingest.readers.pdf_tables import PdfTable, _looks_tabular
from docqa.ingest.readers.registry import read_file
from docqa.types import TABLE

PROSE = ("The archive keeps its records in boxes on the third floor; each box carries a label with the "
         "year and the department that filed it. ") * 3
HEADER = ["Part", "Store", "Count"]
ROWS = [[f"bolt {i}", ["Lyon", "Graz", "Porto"][i % 3], str(10 + i * 3)] for i in range(12)]


def _table(pdf, rows: list[list[str]], **options) -> None:
    with pdf.table(line_height=6, **options) as table:
        for row in rows:
            table.row(row)


def write_ruled(path: Path) -> Path:
    """Tables in several shapes among prose: fpdf's full grid, one with a cell over two columns,
    a grid drawn from single lines, a table across a page break; and a page with a lone box and a rule."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    pdf.add_page()
    pdf.multi_cell(0, 5, PROSE)
    _table(pdf, [HEADER, *ROWS[:5]])
    pdf.multi_cell(0, 5, PROSE)
    with pdf.table(line_height=6) as table:
        table.row(HEADER)
        row = table.row()
        row.cell("spans two columns", colspan=2)
        row.cell("7")
        table.row(ROWS[6])
    pdf.add_page()  # a grid from single lines, its text placed in the cells
    xs, ys = [20, 70, 120, 170], [40, 50, 60, 70, 80]
    for x in xs:
        pdf.line(x, ys[0], x, ys[-1])
    for y in ys:
        pdf.line(xs[0], y, xs[-1], y)
    for r, y in enumerate(ys[:-1]):
        for c, x in enumerate(xs[:-1]):
            pdf.text(x + 2, y + 7, f"r{r}c{c} {['alpha', 'beta', 'gamma'][c]}")
    pdf.set_y(90)
    pdf.multi_cell(0, 5, PROSE)
    pdf.add_page()  # not tables: a filled box, a rule, horizontal lines only
    pdf.rect(20, 20, 100, 40, style="F")
    pdf.line(20, 70, 190, 70)
    pdf.set_y(80)
    pdf.multi_cell(0, 5, PROSE)
    _table(pdf, [HEADER, *ROWS[:4]], borders_layout="HORIZONTAL_LINES")
    pdf.add_page()
    pdf.set_y(200)
    _table(pdf, [HEADER, *ROWS])  # runs over the page break
    pdf.output(str(path))
    return path


def write_prose(path: Path) -> Path:
    """No tables: prose, a framed paragraph, a rule."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for number in range(3):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page {number + 1}. " + PROSE, border=1 if number == 1 else 0)
        pdf.line(20, 200, 190, 200)
    pdf.output(str(path))
    return path


def plumber_tables(data: bytes) -> dict[int, list[PdfTable]]:
    """pdfplumber on every page, as the reader used it before: its default finder, the same filter."""
    import pdfplumber

    found: dict[int, list[PdfTable]] = {}
    with pdfplumber.open(io.BytesIO(data)) as doc:
        for index, page in enumerate(doc.pages):
            x0, _, _, y1 = (float(v) for v in page.mediabox)
            for table in page.find_tables():
                rows = table.extract()
                if _looks_tabular(rows):
                    lines = [" | ".join(" ".join((c or "").split()) for c in row) for row in rows]
                    left, top, right, bottom = table.bbox
                    found.setdefault(index, []).append(PdfTable(x0 + left, y1 - bottom, x0 + right, y1 - top, [
                        line.rstrip(" |") for line in lines if line.replace("|", "").strip()]))
    return found


def pdfium_tables(data: bytes) -> dict[int, list[PdfTable]]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        return {i: tables for i in range(len(pdf)) if (tables := read_page(pdf, i)[1])}
    finally:
        pdf.close()


def _squeeze(rows: list[str]) -> list[str]:
    return [re.sub(r"\s", "", row) for row in rows]


@pytest.mark.parametrize("writer", [write_ruled, write_prose])
def test_the_same_tables_as_pdfplumber_on_every_page(tmp_path: Path, writer) -> None:
    data = writer(tmp_path / "doc.pdf").read_bytes()
    expected, found = plumber_tables(data), pdfium_tables(data)
    assert sorted(found) == sorted(expected)
    for index, tables in expected.items():
        assert len(found[index]) == len(tables), index
        for new, old in zip(found[index], tables):
            assert _squeeze(new.rows) == _squeeze(old.rows), index
            assert max(abs(new.left - old.left), abs(new.right - old.right), abs(new.top - old.top),
                       abs(new.bottom - old.bottom)) < 0.5, index
    if writer is write_ruled:  # the fixture holds what it should: no table on page 3 (a box, rules)
        assert sorted(found) == [0, 1, 3, 4] and sum(map(len, found.values())) == 5


def test_a_pdf_without_tables_reads_as_pdfium_prose(tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    path = write_prose(tmp_path / "prose.pdf")
    doc = read_file(path, path.read_bytes())
    pdf = pdfium.PdfDocument(str(path))
    try:
        pages = [page_text(pdf, i) for i in range(len(pdf))]
    finally:
        pdf.close()
    assert not [b for b in doc.blocks if b.kind == TABLE]
    assert _squeeze(["".join(pages)]) == _squeeze([doc.text])


def test_table_text_replaces_its_prose_once(tmp_path: Path) -> None:
    path = write_ruled(tmp_path / "ruled.pdf")
    doc = read_file(path, path.read_bytes())
    tables = [doc.text[b.start:b.end] for b in doc.blocks if b.kind == TABLE]
    assert any("r1c2 gamma" in t for t in tables)  # the grid drawn from single lines
    assert doc.text.count("r1c2 gamma") == 1 and doc.text.count("bolt 11") == 1
    assert "spans two columns |  | 7" in doc.text  # the covered cell is empty


def test_cells_are_pdfplumbers_cells(tmp_path: Path) -> None:
    """The faster intersections_to_cells gives pdfplumber's cells, in its order, on every page."""
    import pypdfium2 as pdfium
    from pdfplumber.table import edges_to_intersections
    from pdfplumber.table import intersections_to_cells as plumber_cells

    from docqa.ingest.readers import pdf_tables

    pdf = pdfium.PdfDocument(str(write_ruled(tmp_path / "ruled.pdf")))
    try:
        checked = 0
        for index in range(len(pdf)):
            page = pdf[index]
            edges = pdf_tables.page_edges(page, pdf_tables._page_top(page))
            page.close()
            crossings = edges_to_intersections(pdf_tables._merge(edges or []), 3, 3)
            assert pdf_tables.intersections_to_cells(crossings) == plumber_cells(crossings), index
            checked += bool(crossings)
        assert checked >= 4
    finally:
        pdf.close()
