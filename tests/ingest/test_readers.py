"""Every row of the shared multi-format manifest behaves as its `expected` column says."""

from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path

import pytest

from docqa.errors import (
    CorruptFileError, EmptyDocumentError, EncryptedFileError, IngestError, NoTextLayerError,
    UnsupportedFormatError,
)
from docqa.ingest import ocr
from docqa.ingest.readers import read_file
from docqa.types import HEADING, PAGE

pytestmark = pytest.mark.shared

MULTIFORMAT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs" / "multiformat"
_CJK = re.compile(r"[\u3400-\u9fff]")


def manifest_rows() -> list[dict[str, str]]:
    path = MULTIFORMAT / "manifest.tsv"
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


ROWS = manifest_rows()


def normalise(text: str, chinese: bool) -> str:
    """The README's matching rule: NFKC, then collapse whitespace (remove it for Chinese)."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", "", text) if chinese else re.sub(r"\s+", " ", text)


def expected_error(row: dict[str, str]) -> type[IngestError]:
    keyword, detail = row["expected"].split(":", 1)[0], row["expected"].lower()
    if keyword == "error":
        return EncryptedFileError if ("encrypt" in detail or "password" in detail) else CorruptFileError
    return {"no-text": NoTextLayerError, "unsupported": UnsupportedFormatError,
            "skip": EmptyDocumentError}[keyword]


def ocr_reads(row: dict[str, str]) -> bool:
    """A "no-text" row (a scan, an image) is read as text when the OCR extra is installed."""
    return row["expected"].startswith("no-text") and ocr.installed()


def check_blocks(doc) -> None:
    for block in doc.blocks:
        assert 0 <= block.start <= block.end <= len(doc.text), block
        if block.kind == HEADING:
            assert block.level >= 1, block
    if doc.type in ("pdf", "pptx"):
        pages = [b.page for b in doc.blocks if b.kind == PAGE]
        assert pages == list(range(1, len(pages) + 1)), pages


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
@pytest.mark.slow
def test_manifest_row(shared_data: Path, row: dict[str, str]) -> None:
    path = MULTIFORMAT / row["file"]
    if row["expected"].startswith("ingests") or ocr_reads(row):
        doc = read_file(path)
        chinese = bool(_CJK.search(row["phrase"]))
        assert normalise(row["phrase"], chinese) in normalise(doc.text, chinese)
        if row["must_not_contain"]:
            assert row["must_not_contain"] not in doc.text
        assert "\r" not in doc.text and "\ufffd" not in doc.text
        check_blocks(doc)
    else:
        error = expected_error(row)
        with pytest.raises(error) as caught:
            read_file(path)
        # ImageWithoutOcrError (a no-text image, skipped rather than failed) is a NoTextLayerError
        assert type(caught.value) is error or error in (EmptyDocumentError, NoTextLayerError)
        assert path.name in str(caught.value)


def test_manifest_is_present(shared_data: Path) -> None:
    assert len(ROWS) == 41


def test_reading_from_bytes_matches_reading_from_path(shared_data: Path) -> None:
    path = MULTIFORMAT / "office" / "docx-tables.docx"
    assert read_file(path, path.read_bytes()).text == read_file(path).text


def test_parity_files_yield_the_same_core_text(shared_data: Path) -> None:
    texts = {}
    for path in sorted((MULTIFORMAT / "parity").iterdir()):
        text = " ".join(read_file(path).text.split())
        texts[path.suffix] = text.replace("Testing multiple languages ", "")  # pptx slide titles
    reference = texts[".txt"]
    assert all(text == reference for text in texts.values()), {
        k: len(v) for k, v in texts.items() if v != reference}


def test_hard_encodings_decode_cleanly(shared_data: Path) -> None:
    cp1252 = read_file(MULTIFORMAT / "web" / "fake-html-cp1252.html")
    assert "El niño comió paella" in cp1252.text and cp1252.metadata["encoding"] == "cp1252"
    latin1 = read_file(MULTIFORMAT / "text" / "umlauts-non-utf8.md")
    assert "können" in latin1.text and latin1.title == "können"
    gb = read_file(MULTIFORMAT / "zh" / "cmrc2018-trial-gb18030.txt")
    assert gb.metadata["encoding"] == "gb18030" and "\r" not in gb.text
    raw_lines = (MULTIFORMAT / "zh" / "cmrc2018-trial-gb18030.txt").read_bytes().count(b"\n")
    assert gb.text.count("\n") == raw_lines  # line numbers equal the file's


def test_chinese_pdf_lines_are_joined_without_spaces(shared_data: Path) -> None:
    doc = read_file(MULTIFORMAT / "zh" / "cmrc2018-trial-zh-CN.pdf")
    assert "1987年后半年起，所有美国的葡萄酒若含有超过10ppm的亚硫酸盐" in doc.text
    assert doc.title == "中文百科条目节选（CMRC 2018 试验集）"
    assert doc.page_of(doc.text.index("1987年后半年起")) == 3


def test_long_docx_is_read_quickly(shared_data: Path) -> None:
    import time

    started = time.perf_counter()
    doc = read_file(MULTIFORMAT / "office" / "handbook-872p.docx")
    assert time.perf_counter() - started < 5
    assert len(doc.text) > 800_000
    assert sum(b.kind == HEADING for b in doc.blocks) > 100
