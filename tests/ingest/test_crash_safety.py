"""SIGKILL during ingestion never leaves a half-written document, a torn full-text index, or an
orphaned vector; a chunk whose text was committed before its vector (searchable first, embedded
after) gets its vector from the next add."""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

TRIALS = 16
# (files, paragraphs per file, embedding provider): the full-text run is large so kills land
# inside FTS flushes; the embedding run is smaller because the model embeds ~100 chunks/s.
SETUPS = {"fts": (400, 250, "none"), "vectors": (100, 100, "local")}


def _write_corpus(folder: Path, version: int, files: int, paragraphs: int) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(files):
        body = "\n\n".join(f"Paragraph {p} of file {i} says marker{version} plainly." for p in range(paragraphs))
        (folder / f"doc{i:03}.md").write_text(f"# Document {i}\n\n{body}\n", encoding="utf-8")


def _ingest(kb: Path, folder: Path, provider: str) -> subprocess.Popen:
    env = {**os.environ, "DOCQA_INGEST__WORKERS": "2", "DOCQA_EMBED__PROVIDER": provider}
    return subprocess.Popen(
        [sys.executable, "-m", "docqa", "--kb", str(kb), "add", str(folder)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


def _check(kb: Path, complete: bool = True) -> dict[int, int]:
    """Assert the invariants; return how many documents are at each corpus version.  `complete`: the
    last add ran to its end, so every chunk has its vector (after a kill some may still lack one)."""
    conn = sqlite3.connect(kb)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
        assert conn.execute("SELECT count(*) FROM chunks_fts_docsize WHERE id NOT IN (SELECT rowid FROM chunks)").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0]
        if conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]:  # no vector is orphaned
            if complete:  # and every chunk has its vector
                assert conn.execute("SELECT count(*) FROM chunks WHERE embed_hash NOT IN (SELECT text_hash FROM embeddings)").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM embeddings WHERE text_hash NOT IN (SELECT embed_hash FROM chunks)").fetchone()[0] == 0
        versions: dict[int, int] = {}
        for doc_id, count in conn.execute("SELECT id, chunk_count FROM documents"):
            texts = [r[0] for r in conn.execute("SELECT text FROM chunks WHERE document_id = ?", (doc_id,))]
            fts = [r[0] for r in conn.execute(
                "SELECT content FROM chunks_fts_source WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)", (doc_id,))]
            full = conn.execute("SELECT text FROM document_texts WHERE document_id = ?", (doc_id,)).fetchone()[0]
            assert len(texts) == count == len(fts) > 0
            found = set(re.findall(r"marker(\d+)", "\n".join(texts + fts + [full])))
            assert len(found) == 1, f"document {doc_id} mixes versions {sorted(found)}"
            version = int(found.pop())
            versions[version] = versions.get(version, 0) + 1
        return versions
    finally:
        conn.close()


def kill_part_way(proc: subprocess.Popen, new_documents, files: int, rng: random.Random, span: float, trial: int) -> None:
    """Kill the ingest part-way.  Even trials kill at a random moment of a whole run's span (the
    scan, parsing, deletes, a commit); odd trials wait until the first documents of the new version
    are committed and kill a random moment later, inside a following write, so kills mid-write are
    certain however fast the machine is."""
    if trial % 2 == 0:
        time.sleep(rng.uniform(0.2, 1.0) * span)
    else:
        deadline = time.monotonic() + 4 * span + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if new_documents() > 0:
                time.sleep(rng.uniform(0.0, 0.05))
                break
            time.sleep(0.02)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _new_documents(kb: Path, version: int):
    def count() -> int:
        conn = sqlite3.connect(f"file:{kb}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT count(*) FROM document_texts WHERE instr(text, ?) > 0",
                                (f"marker{version} plainly",)).fetchone()[0]
        except sqlite3.OperationalError:  # busy or mid-checkpoint: ask again
            return 0
        finally:
            conn.close()
    return count


@pytest.mark.timeout(600)
@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.slow
def test_sigkill_at_random_points(tmp_path, setup):
    """Every trial rewrites all files with a new version and kills the ingest part-way; after
    each kill every document is wholly one version and the index is consistent."""
    files, paragraphs, provider = SETUPS[setup]
    rng = random.Random(20261202)
    folder = tmp_path / "docs"
    kb = tmp_path / "kb.db"
    _write_corpus(folder, 1, files, paragraphs)
    started = time.monotonic()
    assert _ingest(kb, folder, provider).wait(timeout=300) == 0
    span = time.monotonic() - started  # kills are spread over the span of a whole run
    assert _check(kb) == {1: files}
    partial = []
    for version in range(2, 2 + TRIALS):
        _write_corpus(folder, version, files, paragraphs)
        proc = _ingest(kb, folder, provider)
        kill_part_way(proc, _new_documents(kb, version), files, rng, span, version)
        versions = _check(kb, complete=proc.returncode == 0)
        assert sum(versions.values()) == files and set(versions) <= set(range(1, version + 1))
        if versions.get(version, 0) not in (0, files):
            partial.append(versions)
        print(f"trial {version}: exit {proc.returncode}, documents by version {versions}")
        if len(partial) >= 3:
            break
    assert partial, "no kill landed while documents were being written"
    assert _ingest(kb, folder, provider).wait(timeout=300) == 0  # a final run completes the job
    assert _check(kb) == {version: files}
