"""Marking stale answers on PostgreSQL, inside a document's own transaction, before the old version's rows
are replaced (as sqlite/stale.py, whose docstring says which citations a new version marks)."""

from __future__ import annotations

from collections.abc import Iterable

from docqa.clock import now
from docqa.store.spans import Edit

_OPEN = ("SELECT id, document_id, content_hash, char_start, char_end, quote FROM run_sources r"
         " WHERE document_id = ANY(%s) AND NOT EXISTS (SELECT 1 FROM run_source_marks m WHERE m.source_id = r.id)")
_MARK = "INSERT INTO run_source_marks (source_id, changed_at) SELECT unnest(%s::bigint[]), %s::text ON CONFLICT DO NOTHING"


def mark_changed(conn, versions: Iterable[tuple[str, str, str]]) -> int:
    """(document id, new content hash, new text) per document about to be written (its old text still
    stored): mark what its change broke; returns how many citations were marked."""
    new = {doc_id: (digest, text) for doc_id, digest, text in versions}
    rows = [r for r in conn.execute(_OPEN, (list(new),)).fetchall() if r[2] != new[r[1]][0]] if new else []
    if not rows:
        return 0
    olds = dict(conn.execute("SELECT document_id, text FROM document_texts WHERE document_id = ANY(%s)",
                             (list({r[1] for r in rows}),)).fetchall())
    edits = {doc_id: Edit(olds.get(doc_id), new[doc_id][1]) for doc_id in olds.keys() | {r[1] for r in rows}}
    marked = [row_id for row_id, doc_id, _, start, end, quote in rows if edits[doc_id].follow(start, end, quote) is None]
    if marked:
        conn.execute(_MARK, (marked, now()))
    return len(marked)


def mark_removed(conn, document_ids: Iterable[str]) -> None:
    """Documents that went: every open citation of them is marked."""
    ids = list(document_ids)
    if ids:
        conn.execute("INSERT INTO run_source_marks (source_id, changed_at) SELECT id, %s FROM run_sources"
                     " WHERE document_id = ANY(%s) ON CONFLICT DO NOTHING", (now(), ids))


def follow_move(conn, old_id: str, new_id: str) -> None:
    """A renamed file with the same content: its citations follow it (the content is unchanged)."""
    conn.execute("UPDATE run_sources SET document_id = %s WHERE document_id = %s", (new_id, old_id))
