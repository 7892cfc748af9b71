"""What a published answer rested on: one row per citation (document, its content hash when
answered, chunk, exact span), written with the run, and the marking of those rows when a document
changes or goes (each backend runs `mark_*` inside the document's own transaction): a mark is a row
of run_source_marks (when the span changed), read back as the source's `changed_at`.

A chunk's id is a hash of its document's id, content hash and ordinal, so a citation whose chunk is
still stored cites the current version; one whose chunk is gone was changed while answering and is
recorded as 'unknown' and changed at once.  A passage the agent read by lines (`doc:L12-40`) is no
chunk: it takes its document's current hash.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from docqa.types import RunRecord

UNKNOWN = "unknown"  # the version a citation rested on is not known (recorded before schema 7, or changed meanwhile)
WRITE_COLUMNS = ("n", "document_id", "content_hash", "chunk_id", "char_start", "char_end", "quote")
SOURCE_COLUMNS = (*WRITE_COLUMNS, "changed_at")  # as read: with the citation's mark
# The sources of runs as read (SOURCE_COLUMNS, after the run's id): each citation with its mark, if any.
READ_SOURCES = (f"SELECT s.run_id, {', '.join('s.' + c for c in WRITE_COLUMNS)}, m.changed_at"
                " FROM run_sources s LEFT JOIN run_source_marks m ON m.source_id = s.id")
# When a run's first cited document changed or went (None: none did), and whether any did.
STALE_AT = ("(SELECT min(m.changed_at) FROM run_sources s JOIN run_source_marks m ON m.source_id = s.id"
            " WHERE s.run_id = runs.id)")
STALE = "EXISTS (SELECT 1 FROM run_sources s JOIN run_source_marks m ON m.source_id = s.id WHERE s.run_id = runs.id)"
# A run's citations of versions not known (their chunk was gone when it was saved) are marked at once.
MARK_UNKNOWN = "INSERT INTO run_source_marks (source_id, changed_at) SELECT id, {p} FROM run_sources WHERE run_id = {p} AND content_hash = {p}"


def citations(run: RunRecord) -> list[dict[str, Any]]:
    """The run's published citations that name a document."""
    found = (run.result or {}).get("citations") or []
    return [c for c in found if isinstance(c, dict) and c.get("document_id")]


def is_passage(chunk_id: str) -> bool:
    """A line range the agent fetched (`<document id>:L<first>-<last>`), not a stored chunk."""
    return ":L" in chunk_id


def source_rows(run: RunRecord, chunk_hashes: dict[str, str], document_hashes: dict[str, str]) -> list[tuple]:
    """(run_id, *WRITE_COLUMNS) per citation; `chunk_hashes`: chunk id -> its document's hash for the
    cited chunks still stored, `document_hashes`: document id -> hash for the cited documents."""
    rows = []
    for c in citations(run):
        chunk_id, doc_id = str(c.get("chunk_id") or ""), str(c["document_id"])
        digest = document_hashes.get(doc_id) if is_passage(chunk_id) else chunk_hashes.get(chunk_id)
        rows.append((run.id, int(c.get("n") or 0), doc_id, digest or UNKNOWN, chunk_id, int(c.get("char_start") or 0),
                     int(c.get("char_end") or 0), str(c.get("quote") or "")))
    return rows


def source_dict(row: tuple) -> dict[str, Any]:
    """A stored source row (SOURCE_COLUMNS) as the run's JSON shows it."""
    return dict(zip(SOURCE_COLUMNS, row))


def attach(runs: list[RunRecord], rows: Iterable[tuple]) -> list[RunRecord]:
    """Give each run its sources from rows of (run_id, *SOURCE_COLUMNS), in the order read."""
    by_id = {r.id: r for r in runs}
    for row in rows:
        by_id[row[0]].sources.append(source_dict(row[1:]))
    return runs


def chunked(ids: list[str], size: int = 500) -> Iterable[list[str]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


