"""SIGKILL during ingestion into PostgreSQL never leaves a half-written document or full-text
statistics that disagree with the postings (the SQLite twin: test_crash_safety.py)."""

from __future__ import annotations

import random
import re
import time

import pytest

from docqa.ingest.pipeline import _BULK_FILES
from ingest.test_crash_safety import _ingest, _write_corpus, kill_part_way

TRIALS = 12
# (files, paragraphs per file): the second is an ingest large enough to be a bulk load (its groups
# are written the same way; on PostgreSQL a new model's vector index would be built at the end).
SETUPS = {"grouped": (120, 120), "bulk-load": (_BULK_FILES, 4)}
# Written documents are committed every 0.1 s instead of 0.5 s (ingest.commit_seconds): a run writes
# a group of files in well under a second here, and a kill can only land mid-write between two commits.
COMMIT_SECONDS = "0.1"


def _check(url: str) -> dict[int, int]:
    """Assert the invariants; return how many documents are at each corpus version."""
    import psycopg

    with psycopg.connect(url) as conn:
        one = lambda sql, args=(): conn.execute(sql, args).fetchone()[0]  # noqa: E731
        # The statistics BM25 ranks with agree with the postings, and every chunk is indexed.
        assert one("SELECT count(*) FROM (SELECT term, count(*) n FROM fts_postings GROUP BY term) p"
                   " FULL JOIN fts_terms t USING (term) WHERE p.n IS DISTINCT FROM t.df") == 0
        assert conn.execute("SELECT chunks, tokens FROM fts_totals").fetchone() == (
            one("SELECT count(*) FROM chunks"),
            one("SELECT coalesce(sum(length), 0) FROM (SELECT DISTINCT chunk, length FROM fts_postings) c"))
        assert one("SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM fts_postings p WHERE p.chunk = c.seq)") == 0
        versions: dict[int, int] = {}
        for doc_id, count in conn.execute("SELECT id, chunk_count FROM documents").fetchall():
            texts = [r[0] for r in conn.execute("SELECT text FROM chunks WHERE document_id = %s", (doc_id,))]
            terms = [r[0] for r in conn.execute("SELECT DISTINCT p.term FROM fts_postings p JOIN chunks c ON c.seq = p.chunk"
                                                " WHERE c.document_id = %s AND p.term LIKE 'marker%%'", (doc_id,))]
            full = one("SELECT text FROM document_texts WHERE document_id = %s", (doc_id,))
            assert len(texts) == count > 0
            found = set(re.findall(r"marker(\d+)", "\n".join(texts + terms + [full])))
            assert len(found) == 1, f"document {doc_id} mixes versions {sorted(found)}"
            version = int(found.pop())
            versions[version] = versions.get(version, 0) + 1
        return versions


def _new_documents(url: str, version: int):
    """How many documents hold `version`'s text (committed), asked on one autocommit connection."""
    import psycopg

    conn = psycopg.connect(url, autocommit=True)

    def count() -> int:
        return conn.execute("SELECT count(*) FROM document_texts WHERE strpos(text, %s) > 0",
                            (f"marker{version} plainly",)).fetchone()[0]
    return conn, count


@pytest.mark.timeout(900)
@pytest.mark.parametrize("setup", SETUPS)
def test_sigkill_at_random_points_postgres(postgres_server, tmp_path, monkeypatch, setup):
    """Every trial rewrites all files with a new version and kills the ingest part-way (half the
    trials right after the new version's first commit: kill_part_way); after each kill every
    document is wholly one version and the full-text statistics are exact."""
    monkeypatch.setenv("DOCQA_INGEST__COMMIT_SECONDS", COMMIT_SECONDS)
    files, paragraphs = SETUPS[setup]
    rng = random.Random(20261203)
    folder, url = tmp_path / "docs", postgres_server.new_database()
    _write_corpus(folder, 1, files, paragraphs)
    started = time.monotonic()
    assert _ingest(url, folder, "none").wait(timeout=600) == 0
    span = time.monotonic() - started
    assert _check(url) == {1: files}
    partial = []
    for version in range(2, 2 + TRIALS):
        _write_corpus(folder, version, files, paragraphs)
        proc = _ingest(url, folder, "none")
        conn, new_documents = _new_documents(url, version)
        with conn:
            kill_part_way(proc, new_documents, files, rng, span, version)
        versions = _check(url)
        assert sum(versions.values()) == files and set(versions) <= set(range(1, version + 1))
        if versions.get(version, 0) not in (0, files):
            partial.append(versions)
        print(f"trial {version}: exit {proc.returncode}, documents by version {versions}")
        if len(partial) >= 3:
            break
    assert partial, "no kill landed while documents were being written"
    assert _ingest(url, folder, "none").wait(timeout=600) == 0  # a final run completes the job
    assert _check(url) == {version: files}
