"""Marking stale answers on PostgreSQL, inside a document's own transaction, before the old version's rows
are replaced (as sqlite/stale.py, whose docstring says which citations a new version marks, and whose `_MOVED`
says which exact citations of the version being replaced are passed over on the index by their offsets)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from docqa.clock import now
from docqa.store.spans import MARGIN, Edit
from docqa.store.sqlite.stale import _scratch_row, _stale

# The documents being written, as one JSON array of rows (sqlite/stale.py's scratch.stale_new): a number, id, old and
# new hash, the length of the text both versions start with, where the text both end with starts in the old one,
# and where the old one's text ends before its trailing white space.  JSON, not seven arrays: psycopg dumps a list
# element by element in Python, json.dumps in C (the marking's client CPU an add of 1,000 files: 30 -> 26 ms).
_NEW = ("SELECT * FROM json_to_recordset(%(rows)s::json) AS n(k int, id text, old_hash text, hash text, head int,"
        " tail_start int, body_end int)")
_UNMARKED = "NOT EXISTS (SELECT 1 FROM run_source_marks m WHERE m.source_id = r.id)"
_OTHERS = ("SELECT r.id, n.k, r.char_start, r.char_end, r.quote FROM run_sources r"
           " WHERE r.document_id = n.id AND {} AND r.content_hash <> n.hash AND " + _UNMARKED)
# The citations the change may have touched (sqlite/stale.py's _MOVED, which says why): exact ones of the version
# being replaced only where their offsets reach the edit (their quote is not read: the old text at their offsets),
# the others (of an earlier version, or not exact) all, each kind a seek of the index per document (LATERAL: the
# planner would rather scan the whole table for a hash join).
_MOVED = f"""
WITH n AS MATERIALIZED ({_NEW})
SELECT s.* FROM n CROSS JOIN LATERAL (
SELECT r.id, n.k, r.char_start, r.char_end, NULL::text FROM run_sources r
WHERE r.document_id = n.id AND r.exact AND r.content_hash = n.old_hash AND r.char_end > n.head
  AND r.char_start < n.tail_start + {MARGIN} AND (r.char_start < n.tail_start OR r.char_end >= n.body_end) AND {_UNMARKED}
UNION ALL {_OTHERS.format("NOT r.exact")}
UNION ALL {_OTHERS.format("r.exact AND r.content_hash < n.old_hash")}
UNION ALL {_OTHERS.format("r.exact AND r.content_hash > n.old_hash")}) s"""
_COLUMNS = ("k", "id", "old_hash", "hash", "head", "tail_start", "body_end")
# Of the documents being written, those some citation names, with their stored hash and text (an array: unnest's
# length is known to the planner, which seeks each; with a JSON array's guessed 100 rows it scanned `documents`).
_CITED = """
SELECT j.id, d.content_hash, t.text FROM unnest(%s::text[]) AS j(id)
LEFT JOIN documents d ON d.id = j.id LEFT JOIN document_texts t ON t.document_id = j.id
WHERE EXISTS (SELECT 1 FROM run_sources r WHERE r.document_id = j.id)"""
# A plain insert (ON CONFLICT's speculative insertion was two thirds of its server CPU): no citation selected
# can have a mark by now — _MOVED selects each at most once and only unmarked ones, and the only other writers of
# marks are this module's (under the writers' lock: one at a time) and a run's save, which marks only the
# citations it inserts, committed with them (so seen by _MOVED with their mark, or not at all).
_MARK = ("INSERT INTO run_source_marks (source_id, changed_at)"
         " SELECT j.value::bigint, %s::text FROM json_array_elements_text(%s::json) AS j")


def mark_changed(conn, versions: Iterable[tuple[str, str, str]]) -> int:
    """(document id, new content hash, new text) per document about to be written (its old text still
    stored): mark what its change broke; returns how many citations were marked."""
    new = {doc_id: (digest, text) for doc_id, digest, text in versions}
    ids, olds = _cited(conn, list(new))
    if not ids:  # no answer cites any of them: nothing to read or judge
        return 0
    edits = [Edit(olds[doc_id][1] if doc_id in olds else None, new[doc_id][1]) for doc_id in ids]
    rows = [_scratch_row(k, doc_id, new[doc_id][0], edits[k], olds.get(doc_id, ("", ""))[0]) for k, doc_id in enumerate(ids)]
    table = json.dumps([dict(zip(_COLUMNS, row)) for row in rows])
    marked = sorted(row_id for row_id, k, start, end, quote in conn.execute(_MOVED, {"rows": table}).fetchall()
                    if _stale(edits[k], start, end, quote))
    if marked:
        conn.execute(_MARK, (now(), json.dumps(marked)))  # in the table's order
    if reparsed := [doc_id for doc_id, edit in zip(ids, edits) if olds.get(doc_id, ("",))[0] == new[doc_id][0] and edit.old != edit.new]:
        _unexact(conn, reparsed)
    return len(marked)


def _cited(conn, ids: list[str]) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """Of these documents, those some citation names; and the stored hash and text of those that have one."""
    cited: list[str] = []
    olds: dict[str, tuple[str, str]] = {}
    for doc_id, digest, text in conn.execute(_CITED, (ids,)).fetchall():
        cited.append(doc_id)
        if text is not None:
            olds[doc_id] = (digest, text)
    return cited, olds


def _unexact(conn, document_ids: list[str]) -> None:
    """Documents written again with the same hash but another text (a new parser): their citations' quotes
    may no longer be that text at their offsets, so none is taken for exact any more (sqlite/stale.py)."""
    conn.execute("UPDATE run_sources SET exact = FALSE WHERE document_id = ANY(%s) AND exact", (document_ids,))


def mark_removed(conn, document_ids: Iterable[str]) -> None:
    """Documents that went: every open citation of them is marked."""
    ids = list(document_ids)
    if ids:
        conn.execute("INSERT INTO run_source_marks (source_id, changed_at) SELECT id, %s FROM run_sources"
                     " WHERE document_id = ANY(%s) ON CONFLICT DO NOTHING", (now(), ids))


def follow_move(conn, old_id: str, new_id: str) -> None:
    """A renamed file with the same content: its citations follow it (the content is unchanged)."""
    conn.execute("UPDATE run_sources SET document_id = %s WHERE document_id = %s", (new_id, old_id))
