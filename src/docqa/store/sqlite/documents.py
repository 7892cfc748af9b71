"""SQLiteDocuments: documents, their text and chunks, and collections, in the knowledge base file.

`replace_document` writes the document row, its text, its chunks, their full-text entries
(fulltext.py) and new vectors (vectors.py) in one transaction of the shared `SQLiteDB`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping

from docqa.errors import NotFoundError
from docqa.store.documents import DocumentStore, DocumentWrite, FileState, indexed_text
from docqa.store.sqlite.catalog import SQLiteCatalog
from docqa.store.sqlite.fulltext import index_chunks, unindex_document
from docqa.store.sqlite.stale import follow_move, mark_changed, mark_removed
from docqa.store.sqlite.rows import DOC_COLUMNS, to_hit, to_record
from docqa.store.sqlite.vectors import drop_orphan_vectors, insert_vectors
from docqa.store.vectors import ChunkVectors
from docqa.text import segment_for_index, segmenter
from docqa.types import Chunk, DocumentRecord, Hit

HIT_SQL = """
SELECT c.id, c.document_id, d.path, d.collection, d.title, c.section, c.page_start, c.page_end,
       c.line_start, c.line_end, c.char_start, c.char_end, c.text, c.symbol, d.type,
       CASE WHEN substr(d.path, 1, 4) = 'http' THEN json_extract(d.metadata, '$.anchors') END
FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN (%s)"""


class SQLiteDocuments(SQLiteCatalog, DocumentStore):
    """Documents and chunks (the browsing reads come from SQLiteCatalog)."""

    # -- writing -------------------------------------------------------------------------
    def replace_document(self, record: DocumentRecord, text: str, chunks: list[Chunk], metadata: dict | None = None,
                         vectors: ChunkVectors | None = None, segmented: Mapping[str, str] | None = None) -> None:
        self.replace_documents([DocumentWrite(record, text, chunks, metadata, vectors, segmented)])

    def replace_documents(self, writes: list[DocumentWrite]) -> None:
        """In one transaction (inside a batch: the batch's), with the answers their changes broke marked
        for the whole group at once (stale.py)."""
        writes = list(writes)
        if not writes:  # nothing changed: no transaction, and the vector cache's generation stays
            return
        rows = [_write_rows(w) for w in writes]  # checked before the transaction: nothing raises inside a batch
        with self.db.transaction() as conn:
            mark_changed(conn, [(w.record.document_id, w.record.content_hash, w.text) for w in writes])
            for w, (chunk_rows, fts_doc) in zip(writes, rows):
                _write_document(conn, w, chunk_rows, fts_doc)
            self.db.bump_generation(conn)

    def record_failure(self, record: DocumentRecord, metadata: dict | None = None) -> None:
        with self.db.transaction() as conn:
            _ensure_collection(conn, record.collection)
            exists = conn.execute("SELECT 1 FROM documents WHERE id = ?", (record.document_id,)).fetchone()
            if exists:  # keep the last good version searchable; flag it
                conn.execute(
                    "UPDATE documents SET status='error', error=?, size=?, mtime_ns=?, indexed_at=?,"
                    " metadata=json_patch(metadata, ?) WHERE id=?",
                    (record.error, record.size, record.mtime_ns, record.indexed_at,
                     json.dumps(metadata or {}, ensure_ascii=False), record.document_id),
                )
            else:
                _upsert_document(conn, record, metadata or {}, 0)

    def delete_documents(self, document_ids: Iterable[str]) -> int:
        count = 0
        with self.db.transaction() as conn:
            for doc_id in document_ids:
                count += _delete_document(conn, doc_id)
            self.db.bump_generation(conn)
        return count

    def move_document(self, old_id: str, new_id: str, new_path: str, size: int, mtime_ns: int) -> None:
        with self.db.transaction() as conn:
            conn.execute("PRAGMA defer_foreign_keys = ON")  # rows point at the new id by commit time
            conn.execute("UPDATE documents SET id=?, path=?, size=?, mtime_ns=? WHERE id=?", (new_id, new_path, size, mtime_ns, old_id))
            conn.execute("UPDATE chunks SET document_id=? WHERE document_id=?", (new_id, old_id))
            conn.execute("UPDATE document_texts SET document_id=? WHERE document_id=?", (new_id, old_id))
            follow_move(conn, old_id, new_id)
            self.db.bump_generation(conn)

    def touch(self, document_id: str, size: int, mtime_ns: int) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE documents SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, document_id))

    def create_collection(self, name: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("INSERT OR IGNORE INTO collections VALUES (?, datetime('now'))", (name,)).rowcount > 0

    def delete_collection(self, name: str) -> list[DocumentRecord]:
        if name not in self.collections():  # checked first: nothing may raise inside a batch transaction
            raise NotFoundError(f"no collection {name!r}: 'docqa stats' lists the collections")
        records = self.list_documents(name)
        with self.db.transaction() as conn:
            for r in records:
                _delete_document(conn, r.document_id)
            conn.execute("DELETE FROM collections WHERE name = ?", (name,))
            self.db.bump_generation(conn)
        return records

    # -- reading -------------------------------------------------------------------------
    def file_states(self, collection: str) -> dict[str, FileState]:  # the base's, without decoding keywords
        rows = self.conn.execute(
            "SELECT path, size, mtime_ns, content_hash, status, title, error,"
            " CASE WHEN status = 'ok' THEN '' ELSE coalesce(json_extract(metadata, '$.readers'), '') END"
            " FROM documents WHERE collection = ?", (collection,)
        )
        return {r[0]: FileState(*r) for r in rows}

    def list_documents(self, collection: str | None = None, path_prefix: str | None = None) -> list[DocumentRecord]:
        sql, args = f"SELECT {DOC_COLUMNS} FROM documents WHERE 1=1", list[object]()
        if collection is not None:
            sql += " AND collection = ?"
            args.append(collection)
        if path_prefix is not None:
            sql += " AND (path = ? OR substr(path, 1, ?) = ?)"
            prefix = path_prefix.rstrip("/") + "/"
            args += [path_prefix, len(prefix), prefix]
        return [to_record(r) for r in self.conn.execute(sql + " ORDER BY collection, path", args)]

    def document_record(self, document_id: str) -> DocumentRecord:
        row = self.conn.execute(f"SELECT {DOC_COLUMNS} FROM documents WHERE id = ?", (document_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no document {document_id!r}: document ids come from 'docqa list --json' or list_docs")
        return to_record(row)

    def document_text(self, document_id: str) -> str:
        row = self.conn.execute("SELECT text FROM document_texts WHERE document_id = ?", (document_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no stored text for document {document_id}: run 'docqa list' to see what is indexed")
        return row[0]

    def chunk_ids(self, document_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM chunks WHERE document_id = ? ORDER BY ordinal", (document_id,))
        return [r[0] for r in rows]

    def get_hits(self, chunk_ids: list[str]) -> list[Hit]:
        if not chunk_ids:
            return []
        rows = self.conn.execute(HIT_SQL % ",".join("?" * len(chunk_ids)), chunk_ids).fetchall()
        by_id = {r[0]: to_hit(r) for r in rows}
        return [by_id[i] for i in chunk_ids if i in by_id]

    def text_heads(self, chunk_ids: list[str], chars: int = 300) -> dict[str, str]:
        if not chunk_ids:
            return {}
        sql = f"SELECT id, substr(text, 1, ?) FROM chunks WHERE id IN ({','.join('?' * len(chunk_ids))})"
        return dict(self.conn.execute(sql, [chars, *chunk_ids]))

    def document_metadata(self, document_id: str) -> dict:
        row = self.conn.execute("SELECT metadata FROM documents WHERE id = ?", (document_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else {}

    def page_lines(self, document_id: str) -> list[tuple[int, int]]:
        rows = self.conn.execute(
            "SELECT page_start, min(line_start) FROM chunks WHERE document_id = ? AND page_start IS NOT NULL "
            "GROUP BY page_start ORDER BY page_start", (document_id,))
        return [(r[0], r[1]) for r in rows]

    def collections(self) -> list[str]:  # the base's, without counting documents
        return [r[0] for r in self.conn.execute("SELECT name FROM collections ORDER BY name")]

    def collection_sizes(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT c.name, count(d.id) FROM collections c LEFT JOIN documents d "
                                      "ON d.collection = c.name AND d.status = 'ok' GROUP BY c.name ORDER BY c.name"))



def _write_rows(w: DocumentWrite) -> tuple[list[tuple], tuple[str, str]]:
    """A document's chunk rows and full-text fields, segmented (ValueError for vectors that do not fit)."""
    segment = segmenter(w.segmented)
    title = segment(w.record.title)
    fts_doc = (segment(" ".join(w.record.keywords)), segment(w.record.summary))
    hashes = w.vectors.hashes if w.vectors is not None else [None] * len(w.chunks)
    if len(hashes) != len(w.chunks):
        raise ValueError(f"{len(hashes)} text hashes for {len(w.chunks)} chunks")
    rows = [(*_chunk_row(w.record.document_id, w.record.content_hash, title, c, segment), h) for c, h in zip(w.chunks, hashes)]
    return rows, fts_doc


def _write_document(conn: sqlite3.Connection, w: DocumentWrite, rows: list[tuple], fts_doc: tuple[str, str]) -> None:
    """Replace one document's rows: its record, text, chunks, full-text entries and new vectors."""
    record = w.record
    _ensure_collection(conn, record.collection)
    old_hashes = _delete_rows(conn, record.document_id)
    _upsert_document(conn, record, w.metadata or {}, len(w.chunks), fts_doc)
    conn.execute("INSERT INTO document_texts VALUES (?, ?)", (record.document_id, w.text))
    first = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM chunks").fetchone()[0]
    conn.executemany(
        "INSERT INTO chunks (rowid, id, document_id, ordinal, text, context, char_start, char_end, section,"
        " page_start, page_end, line_start, line_end, symbol, language, tokens, fts_title, fts_content, embed_hash)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [(first + i, *row) for i, row in enumerate(rows)],
    )
    index_chunks(conn, [(first + i, row[-3], fts_doc[0], fts_doc[1] if row[2] == 0 else "",
                         row[3] if row[-2] is None else row[-2]) for i, row in enumerate(rows)])
    vectors = w.vectors
    if vectors is not None and vectors.model and vectors.new:
        insert_vectors(conn, vectors.model, vectors.new)
    if old_hashes:
        drop_orphan_vectors(conn, old_hashes)

def _ensure_collection(conn: sqlite3.Connection, name: str) -> None:
    conn.execute("INSERT OR IGNORE INTO collections VALUES (?, datetime('now'))", (name,))


def _delete_rows(conn: sqlite3.Connection, document_id: str) -> list[str]:
    """Delete a document's chunks, full-text entries and text; returns the text hashes its chunks used."""
    # Only when there are chunks: any write statement on the FTS table flushes its buffer.
    if conn.execute("SELECT 1 FROM chunks WHERE document_id = ? LIMIT 1", (document_id,)).fetchone() is None:
        conn.execute("DELETE FROM document_texts WHERE document_id = ?", (document_id,))
        return []
    unindex_document(conn, document_id)
    old_hashes = [r[0] for r in conn.execute(
        "SELECT DISTINCT embed_hash FROM chunks WHERE document_id = ? AND embed_hash IS NOT NULL", (document_id,))]
    conn.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
    conn.execute("DELETE FROM document_texts WHERE document_id = ?", (document_id,))
    return old_hashes


def _delete_document(conn: sqlite3.Connection, document_id: str) -> int:
    """Delete a document with all its rows and its orphaned vectors; returns 1 when it existed."""
    old_hashes = _delete_rows(conn, document_id)
    count = conn.execute("DELETE FROM documents WHERE id = ?", (document_id,)).rowcount
    drop_orphan_vectors(conn, old_hashes)
    if count:
        mark_removed(conn, [document_id])  # answers citing it: their source went
    return count


def _upsert_document(conn: sqlite3.Connection, r: DocumentRecord, metadata: dict, chunk_count: int,
                     fts: tuple[str, str] = ("", "")) -> None:
    conn.execute(
        """INSERT INTO documents (id, collection, path, type, language, title, keywords, summary, size,
               mtime_ns, content_hash, chunk_count, status, error, indexed_at, metadata, fts_keywords, fts_summary)
           VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
           ON CONFLICT(id) DO UPDATE SET type=excluded.type, language=excluded.language,
               title=excluded.title, keywords=excluded.keywords, summary=excluded.summary,
               size=excluded.size, mtime_ns=excluded.mtime_ns, content_hash=excluded.content_hash,
               chunk_count=excluded.chunk_count, status=excluded.status, error=excluded.error,
               indexed_at=excluded.indexed_at, metadata=excluded.metadata,
               fts_keywords=excluded.fts_keywords, fts_summary=excluded.fts_summary""",
        (r.document_id, r.collection, r.path, r.type, r.language, r.title, json.dumps(r.keywords, ensure_ascii=False),
         r.summary, r.size, r.mtime_ns, r.content_hash, chunk_count, r.status, r.error, r.indexed_at,
         json.dumps(metadata, ensure_ascii=False, default=str), *fts),
    )


def _fts_title(title: str, chunk: Chunk, segment: Callable[[str], str]) -> str:
    parts = [title, *map(segment, chunk.section)]
    if chunk.symbol:
        parts.append(chunk.symbol)
    return " / ".join(p for p in parts if p)


def _chunk_row(document_id: str, content_hash: str, title: str, c: Chunk,
               segment: Callable[[str], str] = segment_for_index) -> tuple:
    chunk_id = hashlib.blake2b(f"{document_id}:{content_hash}:{c.ordinal}".encode(), digest_size=8).hexdigest()
    indexed = segment(indexed_text(c))
    return (chunk_id, document_id, c.ordinal, c.text, c.context, c.char_start, c.char_end,
            json.dumps(list(c.section), ensure_ascii=False), c.page_start, c.page_end, c.line_start, c.line_end,
            c.symbol, c.language, c.tokens, _fts_title(title, c, segment), None if indexed == c.text else indexed)
