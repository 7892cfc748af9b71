"""Marking stale answers on SQLite, inside a document's own transaction (run_sources: docqa.store.sources).

Called with the new version before the old one's rows are replaced: a citation whose exact span the
new version no longer holds as it was (edited, moved elsewhere or deleted: docqa.store.spans) is
marked with the time it changed (a row of run_source_marks); one whose span is unchanged — at its place,
or carried along by an edit elsewhere — is left as it is (the hash it was answered with, its offsets:
spans.py finds it again), so an edit elsewhere in a file does not flag every answer that cites it.  A
document that goes marks every citation of it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from docqa.clock import now
from docqa.store.spans import MARGIN, Edit

# The documents being written (in memory): a number, id, old and new hash, the length of the text both versions
# start with (head), where the text both end with starts in the old one (tail_start), and where the old one's
# text ends before its trailing white space (body_end).
_NEW = ("CREATE TABLE IF NOT EXISTS scratch.stale_new (k INTEGER PRIMARY KEY, id TEXT, old_hash TEXT, hash TEXT,"
        " head INTEGER, tail_start INTEGER, body_end INTEGER)")
_UNMARKED = "NOT EXISTS (SELECT 1 FROM run_source_marks m WHERE m.source_id = r.id)"
_OTHERS = ("SELECT r.id, n.k, r.char_start, r.char_end, r.quote FROM scratch.stale_new n CROSS JOIN run_sources r"
           " ON r.document_id = n.id AND r.exact = {} WHERE r.content_hash IS NOT n.hash AND " + _UNMARKED)
# The citations of the documents being written that their change may have touched; what comes back is judged
# in Python (spans.Edit.follow).  An exact citation of the version being replaced (its quote is that text at
# its offsets, as recorded when its run was saved) is passed over on the index, by its offsets alone, where
# follow() would keep it: within the text both versions start with (at its place), or starting in the text
# both end with with text after it, or deep in that shared end (carried along by the shift; spans.MARGIN);
# its quote is not read (the old text at its offsets: the index holds no quote, so it stays small).  The
# others (answered from an earlier version, or not exact) are all judged, each kind found by a seek of the
# index (exact ones of another version: a hash before or after the old one), their quotes read from the table.
_MOVED = f"""
SELECT r.id, n.k, r.char_start, r.char_end, NULL FROM scratch.stale_new n CROSS JOIN run_sources r  -- n first
  ON r.document_id = n.id AND r.exact = 1 AND r.content_hash = n.old_hash AND r.char_end > n.head
WHERE r.char_start < n.tail_start + {MARGIN} AND (r.char_start < n.tail_start OR r.char_end >= n.body_end) AND {_UNMARKED}
UNION ALL {_OTHERS.format("0")}
UNION ALL {_OTHERS.format("1 AND r.content_hash < n.old_hash")}
UNION ALL {_OTHERS.format("1 AND r.content_hash > n.old_hash")}"""
# Of the documents being written (a JSON array), those some citation names, with their stored hash and text.
_CITED = """
SELECT j.value, d.content_hash, t.text FROM json_each(?) j
LEFT JOIN documents d ON d.id = j.value LEFT JOIN document_texts t ON t.document_id = j.value
WHERE EXISTS (SELECT 1 FROM run_sources r WHERE r.document_id = j.value)"""


def mark_changed(conn: sqlite3.Connection, versions: Iterable[tuple[str, str, str]]) -> int:
    """(document id, new content hash, new text) per document about to be written (its old text still
    stored): mark what the change broke; returns how many citations were marked.  A few statements for
    a whole group of documents (a document store's replace_documents)."""
    new = {doc_id: (digest, text) for doc_id, digest, text in versions}
    ids, olds = _cited(conn, list(new))
    if not ids:  # no answer cites any of them: nothing to read or judge
        return 0
    edits = [Edit(olds[doc_id][1] if doc_id in olds else None, new[doc_id][1]) for doc_id in ids]
    conn.execute(_NEW)
    conn.execute("DELETE FROM scratch.stale_new")  # the previous group's rows (kept: a few numbers a document)
    conn.executemany("INSERT INTO scratch.stale_new VALUES (?, ?, ?, ?, ?, ?, ?)",
                     [_scratch_row(k, doc_id, new[doc_id][0], edits[k], olds.get(doc_id, ("", ""))[0]) for k, doc_id in enumerate(ids)])
    marked = sorted(rowid for rowid, k, start, end, quote in conn.execute(_MOVED) if _stale(edits[k], start, end, quote))
    conn.execute("INSERT OR IGNORE INTO run_source_marks (source_id, changed_at) SELECT value, ? FROM json_each(?)",
                 (now(), json.dumps(marked)))  # one statement, in the table's order
    if reparsed := [doc_id for doc_id, edit in zip(ids, edits) if olds.get(doc_id, ("",))[0] == new[doc_id][0] and edit.old != edit.new]:
        _unexact(conn, reparsed)
    return len(marked)


def _cited(conn: sqlite3.Connection, ids: list[str]) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """Of these documents, those some citation names; and the stored hash and text of those that have one."""
    cited: list[str] = []
    olds: dict[str, tuple[str, str]] = {}
    for doc_id, digest, text in conn.execute(_CITED, (json.dumps(ids),)):
        cited.append(doc_id)
        if text is not None:
            olds[doc_id] = (digest, text)
    return cited, olds


def _stale(edit: Edit, start: int, end: int, quote: str | None) -> bool:
    """Whether a citation's span is not in the new text as it was (Edit.follow; None: an exact citation of the
    old text, whose quote is that text at its offsets).  A quote found nowhere in the new text is decided here."""
    if quote is None:
        quote = edit.old[start:end]  # type: ignore[index]  # exact citations come only with an old text
        if quote not in edit.new:  # most of them: within the edited text
            return True
    return edit.follow(start, end, quote) is None


def _scratch_row(k: int, doc_id: str, digest: str, edit: Edit, old_hash: str) -> tuple:
    """A row of scratch.stale_new.  Without an old version (or with the same hash again) no citation is an exact
    one of the version replaced: old_hash '' matches none, and every citation not of the new version is judged."""
    old = edit.old
    if old is None or old_hash == digest:
        return (k, doc_id, "", digest, 0, 0, 0)
    head, tail = edit.bounds()  # at most the exact lengths: the index then passes over a little less
    return (k, doc_id, old_hash, digest, head, len(old) - tail, len(old.rstrip()))


def _unexact(conn: sqlite3.Connection, document_ids: list[str]) -> None:
    """Documents written again with the same hash but another text (a new parser): their citations' quotes
    may no longer be that text at their offsets, so none is taken for exact any more."""
    conn.executemany("UPDATE run_sources SET exact = 0 WHERE document_id = ? AND exact = 1", [(d,) for d in document_ids])


def mark_removed(conn: sqlite3.Connection, document_ids: Iterable[str]) -> None:
    """Documents that went: every citation of them not marked yet is marked."""
    stamp = now()
    conn.executemany("INSERT OR IGNORE INTO run_source_marks (source_id, changed_at)"
                     " SELECT id, ? FROM run_sources WHERE document_id = ?", [(stamp, d) for d in document_ids])


def follow_move(conn: sqlite3.Connection, old_id: str, new_id: str) -> None:
    """A renamed file with the same content: its citations follow it (the content is unchanged)."""
    conn.execute("UPDATE run_sources SET document_id = ? WHERE document_id = ?", (new_id, old_id))
