"""What a published answer rested on: one row per citation (document, its content hash when
answered, chunk, exact span), written with the run, and the marking of those rows when a document
changes or goes (each backend runs `mark_*` inside the document's own transaction).

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
SOURCE_COLUMNS = ("n", "document_id", "content_hash", "chunk_id", "char_start", "char_end", "quote", "changed_at")


def citations(run: RunRecord) -> list[dict[str, Any]]:
    """The run's published citations that name a document."""
    found = (run.result or {}).get("citations") or []
    return [c for c in found if isinstance(c, dict) and c.get("document_id")]


def is_passage(chunk_id: str) -> bool:
    """A line range the agent fetched (`<document id>:L<first>-<last>`), not a stored chunk."""
    return ":L" in chunk_id


def source_rows(run: RunRecord, chunk_hashes: dict[str, str], document_hashes: dict[str, str], stamp: str) -> list[tuple]:
    """(run_id, *SOURCE_COLUMNS) per citation; `chunk_hashes`: chunk id -> its document's hash for the
    cited chunks still stored, `document_hashes`: document id -> hash for the cited documents."""
    rows = []
    for c in citations(run):
        chunk_id, doc_id = str(c.get("chunk_id") or ""), str(c["document_id"])
        digest = document_hashes.get(doc_id) if is_passage(chunk_id) else chunk_hashes.get(chunk_id)
        rows.append((run.id, int(c.get("n") or 0), doc_id, digest or UNKNOWN, chunk_id, int(c.get("char_start") or 0),
                     int(c.get("char_end") or 0), str(c.get("quote") or ""), None if digest else stamp))
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


