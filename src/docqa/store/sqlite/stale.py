"""Marking stale answers on SQLite, inside a document's own transaction (run_sources: docqa.session.sources).

A new version of a cited document marks the citations whose exact span is no longer at its place
(edited, moved or deleted) with the time it changed; a citation whose span the new version still
holds word for word at the same place rests on the new version as well (its hash moves on), so an
edit elsewhere in a long file does not flag every answer that cites it.  A document that goes
marks every citation of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from docqa.clock import now

_OPEN = "SELECT rowid, content_hash, char_start, char_end, quote FROM run_sources WHERE document_id = ? AND changed_at IS NULL"


def mark_changed(conn: sqlite3.Connection, versions: Iterable[tuple[str, str, str]]) -> int:
    """(document id, new content hash, new text) per document written: mark what its change broke;
    returns how many citations were marked."""
    stamp = now()
    marked: list[int] = []
    moved: list[int] = []
    for doc_id, digest, text in versions:
        for rowid, old, start, end, quote in conn.execute(_OPEN, (doc_id,)).fetchall():
            if old == digest:
                continue
            (moved if text[start:end] == quote else marked).append(rowid)
    if marked:
        conn.executemany("UPDATE run_sources SET changed_at = ? WHERE rowid = ?", [(stamp, r) for r in marked])
    if moved:  # the span is unchanged at its place: the citation rests on the new version too
        conn.executemany("UPDATE run_sources SET content_hash = (SELECT content_hash FROM documents d"
                         " WHERE d.id = run_sources.document_id) WHERE rowid = ?", [(r,) for r in moved])
    return len(marked)


def mark_removed(conn: sqlite3.Connection, document_ids: Iterable[str]) -> None:
    """Documents that went: every open citation of them is marked."""
    stamp = now()
    conn.executemany("UPDATE run_sources SET changed_at = ? WHERE document_id = ? AND changed_at IS NULL",
                     [(stamp, d) for d in document_ids])


def follow_move(conn: sqlite3.Connection, old_id: str, new_id: str) -> None:
    """A renamed file with the same content: its citations follow it (the content is unchanged)."""
    conn.execute("UPDATE run_sources SET document_id = ? WHERE document_id = ?", (new_id, old_id))
