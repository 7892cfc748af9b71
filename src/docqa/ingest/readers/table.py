"""Tables: CSV/TSV and Excel workbooks, one text line per row with cells joined by " | ".

Each sheet (a CSV is one sheet named after the file) opens with a level-1 HEADING block, then a
HEADER_ROW block (its first non-empty row) and one ROW block per further non-empty row, with
the row number as the user sees it in the file or sheet.
"""

from __future__ import annotations

import builtins
import csv
import datetime as dt
import io
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docqa.errors import CorruptFileError, UnsupportedFormatError
from docqa.ingest.readers import _encoding
from docqa.ingest.readers.base import Reader, TextBuilder, sane_title
from docqa.ingest.readers.zipguard import check_zip
from docqa.types import HEADER_ROW, HEADING, ROW, Document

_SNIFF_BYTES = 16 * 1024


def cell_text(value: Any) -> str:
    """A cell value as the user would read it (12.0 -> "12", dates in ISO form)."""
    if value.__class__ is str:  # the common case first: CSV cells are all strings
        return " ".join(value.split())
    if value is None:
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else str(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return " ".join(str(value).split())


def row_line(values: Iterable[Any]) -> str:
    """Cells joined by " | ", empty trailing cells dropped ("" for a blank row)."""
    cells = [cell_text(v) for v in values]
    while cells and not cells[-1]:
        cells.pop()
    return " | ".join(cells)


def add_sheet(builder: TextBuilder, name: str, rows: Iterable[tuple[int, Iterable[Any]]],
              numbers: dict[str, list[list[int]]] | None = None) -> int:
    """Append one sheet: heading, header row, data rows. Returns the number of non-blank rows.
    `numbers[name]` gets the row numbers of the lines as runs [first, count] (blank rows are left out
    of the text, so a viewer needs them to show the numbers the file has)."""
    count, runs = 0, list[list[int]]()
    for number, values in rows:
        line = row_line(values)
        if not line.replace("|", "").strip():
            continue
        if not count:
            builder.add(name, HEADING, level=1, sheet=name)
        builder.add(line, ROW if count else HEADER_ROW, sep="\n", sheet=name, row=number)
        count += 1
        if runs and runs[-1][0] + runs[-1][1] == number:
            runs[-1][1] += 1
        else:
            runs.append([number, 1])
    if numbers is not None and runs:
        numbers[name] = runs
    return count


class CsvReader(Reader):
    """CSV and TSV; the delimiter is sniffed, the encoding detected like plain text."""

    type = "csv"
    extensions = (".csv", ".tsv", ".tab", ".psv")

    def read(self, path: Path, data: bytes) -> Document:
        if _encoding.looks_binary(data):
            raise UnsupportedFormatError(str(path), f"unsupported file type (binary): {path.name}")
        text, encoding = _encoding.decode(data)
        dialect = self.dialect(path, text[:_SNIFF_BYTES])
        builder = TextBuilder()
        try:
            rows = enumerate(csv.reader(io.StringIO(text, newline=""), dialect), 1)
            numbers: dict[str, list[list[int]]] = {}
            count = add_sheet(builder, path.stem, rows, numbers)
        except csv.Error as exc:
            raise CorruptFileError(str(path), f"could not parse CSV: {exc}") from exc
        return builder.document(path, self.type, title=path.stem, metadata={
            "encoding": encoding, "delimiter": dialect.delimiter, "rows": count, "sheets": [path.stem],
            "row_numbers": numbers})

    @staticmethod
    def dialect(path: Path, sample: str) -> builtins.type[csv.Dialect] | csv.Dialect:  # not `type`: an attribute here
        """csv.Sniffer on a sample, else the delimiter every first line has, else tab/comma."""
        try:
            return csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            pass
        lines = [line for line in sample.splitlines()[:20] if line.strip()][:5]
        counts = {d: min((line.count(d) for line in lines), default=0) for d in ",;\t|"}
        best = max(counts, key=lambda d: counts[d])
        if counts[best] and best != "\t":
            return type("Sniffed", (csv.excel,), {"delimiter": best})
        return csv.excel_tab if counts["\t"] or path.suffix.lower() in (".tsv", ".tab") else csv.excel


class XlsxReader(Reader):
    """Excel workbooks (.xlsx/.xlsm), every worksheet, cached values of formulas."""

    type = "xlsx"
    extensions = (".xlsx", ".xlsm", ".xltx", ".xltm")
    priority = 10

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return head.startswith(b"PK\x03\x04") and b"xl/" in head

    def read(self, path: Path, data: bytes) -> Document:
        import openpyxl  # imported when a workbook is read: it is slow to import
        from openpyxl.utils.exceptions import InvalidFileException

        try:
            check_zip(data, path)
            book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
            raise CorruptFileError(str(path), f"could not parse XLSX: {exc}") from exc
        try:
            builder, rows, numbers = TextBuilder(), 0, dict[str, list[list[int]]]()
            names = [sheet.title for sheet in book.worksheets]
            for sheet in book.worksheets:
                numbered = enumerate(sheet.iter_rows(min_row=1, values_only=True), 1)
                rows += add_sheet(builder, sheet.title, numbered, numbers)
            title = sane_title(book.properties.title)
            author = (book.properties.creator or "").strip()
        except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
            raise CorruptFileError(str(path), f"could not parse XLSX: {exc}") from exc
        finally:
            book.close()
        metadata = {"sheets": names, "rows": rows, "row_numbers": numbers, **({"author": author} if author else {})}
        return builder.document(path, self.type, title=title, metadata=metadata)
