"""SIGKILL during ingestion never leaves a half-written document or a torn full-text index."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

FILES = 400
TRIALS = 8


def _write_corpus(folder: Path, version: int) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(FILES):
        body = "\n\n".join(f"Paragraph {p} of file {i} says marker{version} plainly." for p in range(250))
        (folder / f"doc{i:03}.md").write_text(f"# Document {i}\n\n{body}\n", encoding="utf-8")


def _ingest(kb: Path, folder: Path) -> subprocess.Popen:
    env = {**os.environ, "DOCQA_INGEST__WORKERS": "2"}
    return subprocess.Popen(
        [sys.executable, "-m", "docqa", "--kb", str(kb), "add", str(folder)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


def _check(kb: Path) -> tuple[int, int]:
    """Assert the invariants; return how many documents are at version 1 and 2."""
    conn = sqlite3.connect(kb)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT rowid FROM chunks)").fetchone()[0] == 0
        versions = {1: 0, 2: 0}
        for doc_id, count in conn.execute("SELECT id, chunk_count FROM documents"):
            texts = [r[0] for r in conn.execute("SELECT text FROM chunks WHERE document_id = ?", (doc_id,))]
            fts = [r[0] for r in conn.execute(
                "SELECT content FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)", (doc_id,))]
            assert len(texts) == count == len(fts) > 0
            has1 = any("marker1" in t for t in texts + fts)
            has2 = any("marker2" in t for t in texts + fts)
            assert has1 != has2, f"document {doc_id} mixes old and new chunks"
            full = conn.execute("SELECT text FROM document_texts WHERE document_id = ?", (doc_id,)).fetchone()[0]
            assert ("marker2" in full) == has2
            versions[2 if has2 else 1] += 1
        return versions[1], versions[2]
    finally:
        conn.close()


@pytest.mark.timeout(600)
def test_sigkill_at_random_points(tmp_path):
    rng = random.Random(20261202)
    folder = tmp_path / "docs"
    kb = tmp_path / "kb.db"
    _write_corpus(folder, 1)
    started = time.monotonic()
    assert _ingest(kb, folder).wait(timeout=300) == 0
    full_run = time.monotonic() - started  # kills are spread over the span of a whole run
    assert _check(kb) == (FILES, 0)
    _write_corpus(folder, 2)
    killed_midway, partial = 0, []
    for _ in range(TRIALS):
        proc = _ingest(kb, folder)
        time.sleep(rng.uniform(0.45, 0.95) * full_run)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            killed_midway += 1
        proc.wait()
        v1, v2 = _check(kb)
        assert v1 + v2 == FILES
        if 0 < v2 < FILES:
            partial.append(v2)
        print(f"killed={proc.returncode} v1={v1} v2={v2}")
        if v2 == FILES:
            break
    assert killed_midway >= 1, "the ingest always finished before the kill; make the corpus bigger"
    assert partial, "no kill landed while documents were being written"
    assert _ingest(kb, folder).wait(timeout=300) == 0  # a final run completes the job
    assert _check(kb) == (0, FILES)
