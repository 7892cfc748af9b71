"""Marking stale answers on SQLite, inside a document's own transaction (run_sources: docqa.session.sources).

Called with the new version before the old one's rows are replaced: a citation whose exact span the
new version no longer holds as it was (edited, moved elsewhere or deleted: docqa.session.spans) is
marked with the time it changed; one whose span is unchanged — at its place, or carried down by an
edit above it — rests on the new version instead (its hash and offsets move on), so an edit elsewhere
in a file does not flag every answer that cites it.  A document that goes marks every citation of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from docqa.clock import now
from docqa.session.spans import follow

_OPEN = ("SELECT rowid, content_hash, char_start, char_end, quote FROM run_sources"
         " WHERE document_id = ? AND changed_at IS NULL")


def mark_changed(conn: sqlite3.Connection, versions: Iterable[tuple[str, str, str]]) -> int:
    """(document id, new content hash, new text) per document about to be written (its old text still
    stored): mark what its change broke; returns how many citations were marked."""
    stamp = now()
    marked: list[tuple] = []
    kept: list[tuple] = []
    for doc_id, digest, text in versions:
        rows = [r for r in conn.execute(_OPEN, (doc_id,)).fetchall() if r[1] != digest]
        if not rows:
            continue
        old = conn.execute("SELECT text FROM document_texts WHERE document_id = ?", (doc_id,)).fetchone()
        for rowid, _, start, end, quote in rows:
            place = follow(old[0] if old else None, text, start, end, quote)
            if place is None:
                marked.append((stamp, rowid))
            else:
                kept.append((digest, place, place + len(quote), rowid))
    conn.executemany("UPDATE run_sources SET changed_at = ? WHERE rowid = ?", marked)
    conn.executemany("UPDATE run_sources SET content_hash = ?, char_start = ?, char_end = ? WHERE rowid = ?", kept)
    return len(marked)


def mark_removed(conn: sqlite3.Connection, document_ids: Iterable[str]) -> None:
    """Documents that went: every open citation of them is marked."""
    stamp = now()
    conn.executemany("UPDATE run_sources SET changed_at = ? WHERE document_id = ? AND changed_at IS NULL",
                     [(stamp, d) for d in document_ids])


def follow_move(conn: sqlite3.Connection, old_id: str, new_id: str) -> None:
    """A renamed file with the same content: its citations follow it (the content is unchanged)."""
    conn.execute("UPDATE run_sources SET document_id = ? WHERE document_id = ?", (new_id, old_id))
