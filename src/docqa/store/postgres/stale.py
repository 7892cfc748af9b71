"""Marking stale answers on PostgreSQL, inside a document's own transaction (as sqlite/stale.py, whose
docstring says which citations a new version marks)."""

from __future__ import annotations

from collections.abc import Iterable

from docqa.clock import now

_OPEN = ("SELECT id, document_id, content_hash, char_start, char_end, quote FROM run_sources"
         " WHERE document_id = ANY(%s) AND changed_at IS NULL")


def mark_changed(conn, versions: Iterable[tuple[str, str, str]]) -> int:
    """(document id, new content hash, new text) per document written: mark what its change broke;
    returns how many citations were marked."""
    new = {doc_id: (digest, text) for doc_id, digest, text in versions}
    if not new:
        return 0
    marked: list[int] = []
    moved: list[int] = []
    for row_id, doc_id, old, start, end, quote in conn.execute(_OPEN, (list(new),)).fetchall():
        digest, text = new[doc_id]
        if old != digest:
            (moved if text[start:end] == quote else marked).append(row_id)
    if marked:
        conn.execute("UPDATE run_sources SET changed_at = %s WHERE id = ANY(%s)", (now(), marked))
    if moved:  # the span is unchanged at its place: the citation rests on the new version too
        conn.execute("UPDATE run_sources s SET content_hash = d.content_hash FROM documents d"
                     " WHERE s.id = ANY(%s) AND d.id = s.document_id", (moved,))
    return len(marked)


def mark_removed(conn, document_ids: Iterable[str]) -> None:
    """Documents that went: every open citation of them is marked."""
    ids = list(document_ids)
    if ids:
        conn.execute("UPDATE run_sources SET changed_at = %s WHERE document_id = ANY(%s) AND changed_at IS NULL",
                     (now(), ids))


def follow_move(conn, old_id: str, new_id: str) -> None:
    """A renamed file with the same content: its citations follow it (the content is unchanged)."""
    conn.execute("UPDATE run_sources SET document_id = %s WHERE document_id = %s", (new_id, old_id))
