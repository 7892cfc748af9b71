"""The survey's cheap signals for the ingest estimate (issue 33): what a text compresses to (a test log of
repeated lines is indexed for less a character than prose), a .gz file's recorded inflated size, a picture's
pixels as OCR's text detection sees them (from its header), chunk texts that repeat (embedded once), and JSON
lines longer than a chunk (cut by tokens)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from docqa.ingest.ocr import detected_megapixels
from docqa.kb import KnowledgeBase
from docqa.plan.probe import long_line_chars, packed_size
from docqa.plan.estimate import estimate_ingest, format_text
from docqa.plan.survey import Limits, gz_inflated, repeated, survey
from docqa.settings import Settings

WORDS = ("backup restore rollback deploy cluster node replica index shard query cache token latency throughput "
         "queue worker schedule retry timeout ledger invoice contract tenant license archive").split()


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(words)) + ".\n"


def _log(rng: random.Random, lines: int) -> str:
    tests = [f"suite/test-{i}.exp" for i in range(12)]
    return "".join(f"PASS: {rng.choice(tests)}: run the check\n" for _ in range(lines))


def test_a_log_of_repeated_lines_packs_tighter_than_prose():
    rng = random.Random(3)
    prose, log = _prose(rng, 20_000), _log(rng, 4_000)
    assert packed_size(log) / len(log) < 0.5 * packed_size(prose) / len(prose)
    assert packed_size("") == 0


def test_han_characters_are_left_out_of_the_packed_size():
    english = "the quick brown fox jumps over the lazy dog " * 40
    assert packed_size("数据每天凌晨两点自动备份" * 300) == 0
    assert packed_size(english + "数据每天凌晨两点自动备份" * 300) < 2 * packed_size(english)


def test_a_gz_files_inflated_size_is_read_from_its_trailer(tmp_path: Path):
    text = _log(random.Random(5), 20_000).encode()
    log = tmp_path / "check.log.gz"
    log.write_bytes(gzip.compress(text))
    plain = tmp_path / "notes.txt"
    plain.write_bytes(text)
    assert gz_inflated(log, log.stat().st_size) == len(text)
    assert gz_inflated(plain, plain.stat().st_size) == 0
    broken = tmp_path / "broken.gz"  # a trailer smaller than the file is not believed
    broken.write_bytes(b"\x1f\x8b" + bytes(100))
    assert gz_inflated(broken, broken.stat().st_size) == 0


@pytest.mark.slow
def test_gz_files_of_different_ratios_are_estimated_by_their_content(tmp_path: Path):
    """A folder of changelogs (3 times smaller compressed) and logs (30 times), a few of them sampled: the text
    estimated from each file's inflated size, not from a bytes ratio of whichever files were drawn."""
    rng = random.Random(9)
    folder = tmp_path / "docs"
    for i in range(40):
        (folder / f"pkg{i}").mkdir(parents=True)
        body = _prose(rng, 300) if i % 2 else _log(rng, 600)
        (folder / f"pkg{i}" / ("changelog.gz" if i % 2 else "test.log.gz")).write_bytes(gzip.compress(body.encode()))
    found = survey(folder, limits=Limits(sample_files=5, heavy_files=0))
    stat = found.by_type["compressed"]
    assert stat["inflated"] > 3 * stat["bytes"]
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    estimate = estimate_ingest(found, None)
    with KnowledgeBase(settings, create=True) as kb:
        kb.add([folder])
        chars = sum(len(kb.documents.text(r.document_id)) for r in kb.documents.list())
    assert abs(estimate.text_chars - chars) <= 0.05 * chars, (estimate.text_chars, chars)


def test_a_pictures_megapixels_are_read_as_detection_scales_it(tmp_path: Path):
    from PIL import Image

    wide = tmp_path / "wide.png"
    Image.new("RGB", (2560, 640), "white").save(wide)
    small = tmp_path / "small.png"
    Image.new("RGB", (400, 300), "white").save(small)
    text = tmp_path / "notes.png"
    text.write_text("not a picture")
    assert abs(detected_megapixels(wide) - 1280 * 320 / 1e6) < 1e-9  # the long side scaled to 1280
    assert abs(detected_megapixels(small) - 400 * 300 / 1e6) < 1e-9  # a small one as it is
    assert detected_megapixels(text) == 0.0


def test_repeated_counts_hashes_seen_before():
    seen: set[str] = set()
    assert repeated(["a", "b", "a"], seen) == 1
    assert repeated(["b", "c"], seen) == 1
    assert seen == {"a", "b", "c"}


def test_chunk_texts_that_repeat_are_counted_as_the_index_stores_them(tmp_path: Path):
    """Two copies of a handbook (same title) and a page of its own: a third of the chunk texts repeat; the
    index holds one embedded text for each distinct one."""
    rng = random.Random(13)
    folder = tmp_path / "docs"
    handbook = "# Handbook\n\n" + "\n".join(f"## Part {i}\n\n{_prose(rng, 400)}" for i in range(6))
    for name in ("a", "b"):
        (folder / name).mkdir(parents=True)
        (folder / name / "handbook.md").write_text(handbook, encoding="utf-8")
    (folder / "own.md").write_text("# Own\n\n" + "\n".join(f"## Part {i}\n\n{_prose(rng, 400)}" for i in range(6)),
                                   encoding="utf-8")
    found = survey(folder)
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(settings, create=True) as kb:
        kb.add([folder])
    import sqlite3

    with sqlite3.connect(tmp_path / "kb.db") as conn:
        chunks, distinct = conn.execute("SELECT count(*), count(DISTINCT embed_hash) FROM chunks").fetchone()
    assert distinct < chunks
    assert abs(found.duplicate_chunks - (chunks - distinct) / chunks) < 0.02, (found.duplicate_chunks, chunks, distinct)


def _records(rng: random.Random, n: int) -> list[dict]:
    return [{"id": f"r{i}", "title": _prose(rng, 6).strip(), "text": _prose(rng, 60).strip()} for i in range(n)]


def test_json_lines_longer_than_a_chunk_are_counted_by_their_characters():
    """A line over the chunk's tokens is cut at token boundaries (costlier): its characters count, shorter lines' not."""
    rng = random.Random(17)
    short = json.dumps({"text": _prose(rng, 20).strip()})
    long = json.dumps({"text": _prose(rng, 400).strip()})
    assert long_line_chars(short, 512) == 0
    assert long_line_chars(f"{short}\n{long}\n{short}", 512) == len(long)
    assert long_line_chars(f"{short}\n{long}", 10_000) == 0


def test_json_on_one_line_is_estimated_to_take_longer_than_the_same_records_a_line(tmp_path: Path):
    """The same records as one JSON document on one line and as JSON Lines: the same text, chunks cut by tokens
    in the first (the survey counts those characters; benchmarks/RESULTS.md, "JSON on one line")."""
    records = _records(random.Random(19), 300)
    one, lines = tmp_path / "one", tmp_path / "lines"
    one.mkdir()
    lines.mkdir()
    (one / "records.json").write_text(json.dumps(records), encoding="utf-8")
    (lines / "records.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    found = {name: survey(folder) for name, folder in (("one", one), ("lines", lines))}
    held = {name: format_text(s, "json") for name, s in found.items()}  # the file is measured whole (the heaviest)
    assert held["lines"]["cut"] == 0
    assert held["one"]["cut"] == held["one"]["text_chars"] > 0
    estimates = {name: estimate_ingest(s, None) for name, s in found.items()}
    assert estimates["one"].parse_seconds > estimates["lines"].parse_seconds
