"""The multiformat corpus through the whole pipeline: every row as its manifest says, and every
findable phrase found by `search` in the right file."""

from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path

import pytest

from docqa.ingest import ocr
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

pytestmark = pytest.mark.slow  # the whole ../shared/data corpus ingested with the bundled model (one module fixture)


def normalise(text: str, chinese: bool) -> str:
    """The manifest's matching rule: NFKC, then collapse whitespace (remove it for Chinese)."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", "" if chinese else " ", text)


@pytest.fixture(scope="module")
def ingested(shared_data, tmp_path_factory):
    folder = shared_data / "docs" / "multiformat"
    with (folder / "manifest.tsv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    kb = KnowledgeBase(Settings(kb=str(tmp_path_factory.mktemp("mf") / "kb.db")))
    report = kb.add([folder], exclude=["LICENSES/**", "*.tsv", "README.md"])
    yield folder, rows, kb, report
    kb.close()


@pytest.mark.slow
def test_every_row_behaves_as_the_manifest_says(ingested):
    folder, rows, kb, report = ingested
    ok = {Path(p).relative_to(folder).as_posix() for p in report.added}
    failed = {Path(p).relative_to(folder).as_posix(): kind for p, kind, _ in report.failed}
    skipped = {Path(p).relative_to(folder).as_posix() for p, _ in report.skipped}
    expected_kind = {"encrypted": "encrypted", "malformed": "corrupt", "corrupt": "corrupt"}
    for row in rows:
        name, expected = row["file"], row["expected"]
        if expected.startswith("ingests"):
            assert name in ok, f"{name} should ingest: {failed.get(name)}"
        elif expected.startswith("error:"):
            word = next(w for w in expected_kind if w in expected)
            assert failed.get(name) == expected_kind[word], f"{name}: {failed.get(name)}"
        elif expected.startswith("no-text:") and ocr.installed():
            assert name in ok, f"{name} should be read with OCR: {failed.get(name)}"
        elif expected.startswith("no-text:"):  # a scanned PDF fails (needs OCR); an image is skipped without OCR
            assert failed.get(name) == "no-text" or ("skipped" in expected and name in skipped), name
        elif expected.startswith("unsupported:"):  # a format docqa does not read is skipped with its reason
            assert name in skipped, name
        elif expected.startswith("skip:"):
            assert name in skipped, name
    assert len(ok) + len(failed) + len(skipped) == len(rows)


@pytest.mark.slow
def test_every_phrase_is_found_by_search(ingested):
    folder, rows, kb, _ = ingested
    missing = []
    for row in rows:
        read_by_ocr = row["expected"].startswith("no-text") and ocr.installed() and row["phrase"]
        if not (row["expected"].startswith("ingests") or read_by_ocr):
            continue
        phrase = row["phrase"]
        chinese = bool(re.search(r"[\u4e00-\u9fff]", phrase))
        target = normalise(phrase, chinese)
        hits = [h for h in kb.search(phrase, top_k=50) if Path(h.path).relative_to(folder).as_posix() == row["file"]]
        if not any(target in normalise(h.text, chinese) for h in hits):
            missing.append(row["file"])
    assert not missing, f"phrases not found by search in: {missing}"


@pytest.mark.slow
def test_excluded_content_is_not_indexed(ingested):
    folder, rows, kb, _ = ingested
    excluded = [row for row in rows if row["must_not_contain"]]
    assert excluded, "the manifest names content that must not be indexed"
    for row in excluded:
        hits = kb.search(row["must_not_contain"], top_k=50)
        assert not [h for h in hits if row["must_not_contain"] in h.text], row["file"]


@pytest.mark.slow
def test_failures_are_listed_with_reasons(ingested):
    folder, rows, kb, report = ingested
    must_fail = {row["file"] for row in rows if row["expected"].startswith("error:")}
    assert must_fail and must_fail <= {Path(p).relative_to(folder).as_posix() for p, _, _ in report.failed}
    listed = {d.path: d for d in kb.documents.list()}
    for path, kind, reason in report.failed:
        assert reason and listed[path].status == "error" and listed[path].error.startswith(kind)
