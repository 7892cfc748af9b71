"""Marking stale answers on SQLite, inside a document's own transaction (run_sources: docqa.store.sources).

Called with the new version before the old one's rows are replaced: a citation whose exact span the
new version no longer holds as it was (edited, moved elsewhere or deleted: docqa.store.spans) is
marked with the time it changed; one whose span is unchanged — at its place, or carried along by an
edit elsewhere — is left as it is (the hash it was answered with, its offsets: spans.py finds it again),
so an edit elsewhere in a file does not flag every answer that cites it.  A document that goes marks
every citation of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from docqa.clock import now
from docqa.store.spans import MARGIN, Edit

# The open citations of the documents being written (scratch.stale_new, in memory: id, new hash and text, old text, and
# where the text both versions end with starts in the old one) that the new text does not hold at their
# place, nor carried along deep in that shared end (spans.MARGIN); what comes back is judged in Python (spans.py).
# An ASCII text is stored as its bytes (_sql_text): substr() of a blob jumps to its offset where substr() of a
# text walks its characters from the start, for every citation (that walk was most of the statement's time);
# on ASCII a byte is a character, so the CAST back to text compares the same span.
_NEW = ("CREATE TABLE IF NOT EXISTS scratch.stale_new (id TEXT PRIMARY KEY, hash TEXT, text TEXT, old TEXT,"
        " tail_start INTEGER)")
_MOVED = f"""
SELECT r.rowid, r.document_id, r.char_start, r.char_end, r.quote
FROM scratch.stale_new n CROSS JOIN run_sources r ON r.document_id = n.id AND r.changed_at IS NULL  -- n first: few documents
WHERE r.content_hash IS NOT n.hash
  AND NOT (n.old IS NOT NULL AND r.char_start >= n.tail_start + {MARGIN}
           AND CAST(substr(n.old, r.char_start + 1, r.char_end - r.char_start) AS TEXT) IS r.quote)
  AND CAST(substr(n.text, r.char_start + 1, r.char_end - r.char_start) AS TEXT) IS NOT r.quote"""
_PART = 500  # documents per statement


def mark_changed(conn: sqlite3.Connection, versions: Iterable[tuple[str, str, str]]) -> int:
    """(document id, new content hash, new text) per document about to be written (its old text still
    stored): mark what the change broke; returns how many citations were marked.  A few statements for
    a whole group of documents (a document store's replace_documents), the spans compared in SQLite."""
    new = {doc_id: (digest, text) for doc_id, digest, text in versions}
    ids = list(new)
    olds: dict[str, str] = {}
    for part in (ids[i:i + _PART] for i in range(0, len(ids), _PART)):
        olds.update(conn.execute(f"SELECT document_id, text FROM document_texts WHERE document_id IN"
                                 f" ({','.join('?' * len(part))})", part).fetchall())
    edits = {doc_id: Edit(olds.get(doc_id), text) for doc_id, (_, text) in new.items()}
    conn.execute(_NEW)
    conn.execute("DELETE FROM scratch.stale_new")
    conn.executemany("INSERT INTO scratch.stale_new VALUES (?, ?, ?, ?, ?)",
                     [(doc_id, digest, _sql_text(text), _sql_text(olds.get(doc_id)), len(olds.get(doc_id) or "") - edits[doc_id].tail)
                      for doc_id, (digest, text) in new.items()])
    marked = sorted(rowid for rowid, doc_id, start, end, quote in conn.execute(_MOVED)
                    if edits[doc_id].follow(start, end, quote) is None)  # in the table's order: each page once
    conn.execute("DELETE FROM scratch.stale_new")
    stamp = now()
    for part in (marked[i:i + _PART] for i in range(0, len(marked), _PART)):
        conn.execute(f"UPDATE run_sources SET changed_at = ? WHERE rowid IN ({','.join('?' * len(part))})", [stamp, *part])
    return len(marked)


def _sql_text(text: str | None) -> str | bytes | None:
    """A text as the marking's statement reads it fastest: its bytes when it is ASCII (see _MOVED)."""
    return text.encode("ascii") if text is not None and text.isascii() else text


def mark_removed(conn: sqlite3.Connection, document_ids: Iterable[str]) -> None:
    """Documents that went: every open citation of them is marked."""
    stamp = now()
    conn.executemany("UPDATE run_sources SET changed_at = ? WHERE document_id = ? AND changed_at IS NULL",
                     [(stamp, d) for d in document_ids])


def follow_move(conn: sqlite3.Connection, old_id: str, new_id: str) -> None:
    """A renamed file with the same content: its citations follow it (the content is unchanged)."""
    conn.execute("UPDATE run_sources SET document_id = ? WHERE document_id = ?", (new_id, old_id))
