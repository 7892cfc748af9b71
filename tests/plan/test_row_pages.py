"""The index-size estimate counts the pages the chunks' rows fill (issue 33): SQLite appends each row to the last
page when it fits, else starts a new one, so rows of 2-4 KB (full chunks of prose) leave pages half empty and a
folder of long chunks takes more bytes per character than one of short ones; and the fixed cost of an add (the
process, the model's load) is a term of its own, not spread over the files."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.plan import rates
from docqa.plan.estimate import estimate_ingest
from docqa.plan.probe import probe, row_pages
from docqa.plan.survey import survey
from docqa.settings import Settings

WORDS = ("backup restore rollback deploy cluster node replica index shard query cache token latency throughput "
         "queue worker schedule retry timeout ledger invoice contract tenant license archive").split()


def _table_pages(sizes: list[int], tmp_path: Path) -> int:
    """Pages a real SQLite table takes when rows of these payload sizes are appended in rowid order."""
    with sqlite3.connect(tmp_path / "rows.db") as conn:
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("CREATE TABLE t (rowid INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(i + 1, b"x" * n) for i, n in enumerate(sizes)])
        return conn.execute("SELECT count(*) FROM dbstat WHERE name = 't'").fetchone()[0]


def test_rows_fill_pages_as_sqlite_appends_them(tmp_path: Path):
    rng = random.Random(4)
    for sizes in ([2_100] * 200, [300] * 2_000, [rng.randint(200, 9_000) for _ in range(400)]):
        actual = _table_pages(sizes, tmp_path)
        simulated = row_pages([n + 8 for n in sizes])  # a cell's length, rowid and record header
        assert abs(simulated - actual) <= 0.03 * actual, (sizes[:3], simulated, actual)
        (tmp_path / "rows.db").unlink()
    assert row_pages([2_100] * 100) > 1.9 * row_pages([1_000] * 200)  # the same bytes, twice the pages


def _page(rng: random.Random, long: bool) -> str:
    """A Markdown page: one long section (a full chunk is a 2 KB row) or many short ones."""
    if long:
        return "# Guide\n\n" + "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(90)) + "." for _ in range(14)) + "\n"
    return "# Notes\n\n" + "\n\n".join(f"## Item {i}\n\n" + " ".join(rng.choice(WORDS) for _ in range(12)) + "."
                                       for i in range(20)) + "\n"


@pytest.mark.slow
def test_the_probe_counts_the_pages_the_store_fills(tmp_path: Path):
    """Folders of full chunks (2 KB rows) and of short sections: the pages the probe counts are the pages the chunks
    table fills after `docqa add`, and the estimated index size is the file's within 15 %."""
    rng = random.Random(8)
    for long in (True, False):
        folder = tmp_path / ("long" if long else "short")
        folder.mkdir()
        for i in range(6):
            (folder / f"page-{i}.md").write_text(_page(rng, long), encoding="utf-8")
        settings = Settings(kb=str(tmp_path / f"{folder.name}.db"), embed={"provider": "none"}, llm={"provider": "none"})
        with KnowledgeBase(settings, create=True) as kb:
            kb.add([folder])
        with sqlite3.connect(tmp_path / f"{folder.name}.db") as conn:
            actual = conn.execute("SELECT count(*) FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf'").fetchone()[0]
            size = conn.execute("PRAGMA page_count").fetchone()[0] * 4096
        simulated = sum(probe((str(p), p.stat().st_size, True, "markdown")).pages for p in sorted(folder.iterdir()))
        assert abs(simulated - actual) <= max(1.5, 0.08 * actual), (folder.name, simulated, actual)
        estimate = estimate_ingest(survey(folder), None)
        assert abs(estimate.index_bytes - size) <= 0.15 * size, (folder.name, estimate.index_bytes, size)


def test_the_fixed_cost_is_a_term_of_its_own(tmp_path: Path):
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "page.md").write_text("# Backups\n\nBackups are kept for 35 days.\n", encoding="utf-8")
    found = survey(folder)
    plain, embedded = estimate_ingest(found, None), estimate_ingest(found, "use-multilingual-v3")
    assert abs(plain.seconds - rates.START_S) <= 0.1  # one short page: the start, nothing else to speak of
    assert abs(embedded.seconds - rates.START_S - rates.EMBED_START_S) <= 0.1
    assert abs(embedded.embed_seconds - rates.EMBED_START_S) <= 0.1  # the model's load: the embedding of one line is nothing
