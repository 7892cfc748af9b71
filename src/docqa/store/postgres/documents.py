"""PostgresDocuments: documents, their text and chunks, and collections, in PostgreSQL.

`replace_document` writes the document row, its text, its chunks, their full-text postings and
statistics (fulltext.py) and new vectors (vectors.py) in one transaction, so a killed writer
leaves every document wholly old or wholly new; `replace_documents` does the same for a group of
documents with one COPY per table (bulk.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from docqa.errors import NotFoundError
from docqa.store.documents import DocumentStore, DocumentWrite, FileState
from docqa.store.postgres.bulk import (CHUNK_COLUMNS, chunk_rows, copy_rows, delete_rows, postings_rows, reserve_seqs,
                                       write_documents)
from docqa.store.postgres.catalog import PostgresCatalog
from docqa.store.postgres.fulltext import index_chunks
from docqa.store.postgres.stale import follow_move, mark_changed, mark_removed
from docqa.store.postgres.rows import DOC_COLUMNS, to_hit, to_record
from docqa.store.postgres.vectors import drop_orphan_vectors, insert_vectors
from docqa.store.vectors import ChunkVectors
from docqa.types import Chunk, DocumentRecord, Hit

HIT_SQL = """
SELECT c.id, c.document_id, d.path, d.collection, d.title, c.section, c.page_start, c.page_end,
       c.line_start, c.line_end, c.char_start, c.char_end, c.text, c.symbol, d.type,
       CASE WHEN left(d.path, 4) = 'http' THEN d.metadata->>'anchors' END
FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ANY(%s)"""


class PostgresDocuments(PostgresCatalog, DocumentStore):
    """Documents and chunks (the browsing reads come from PostgresCatalog)."""

    # -- writing -------------------------------------------------------------------------
    def replace_document(self, record: DocumentRecord, text: str, chunks: list[Chunk], metadata: dict | None = None,
                         vectors: ChunkVectors | None = None, segmented: Mapping[str, str] | None = None) -> None:
        rows, keywords, summary = chunk_rows(DocumentWrite(record, text, chunks, metadata, vectors, segmented))
        with self.db.transaction(documents=True) as conn:
            _ensure_collection(conn, record.collection)
            mark_changed(conn, [(record.document_id, record.content_hash, text)])  # answers its change broke
            old_hashes = delete_rows(conn, [record.document_id])
            _upsert_document(conn, record, metadata or {}, len(chunks))
            conn.execute("INSERT INTO document_texts VALUES (%s, %s)", (record.document_id, text))
            seqs = reserve_seqs(conn, len(rows))
            copy_rows(conn, f"chunks ({CHUNK_COLUMNS})", ((seq, *row) for seq, row in zip(seqs, rows)))
            index_chunks(conn, postings_rows(seqs, rows, keywords, summary))
            if vectors is not None and vectors.model and vectors.new:
                insert_vectors(conn, vectors.model, vectors.new, index=not self.db.index_deferred())
            if old_hashes:
                drop_orphan_vectors(conn, old_hashes)

    def replace_documents(self, writes: list[DocumentWrite]) -> None:
        """All of them in one transaction, one COPY per table (bulk.py)."""
        writes = list(writes)
        if writes:
            with self.db.transaction(documents=True) as conn:
                mark_changed(conn, [(w.record.document_id, w.record.content_hash, w.text) for w in writes])
                write_documents(conn, writes, index=not self.db.index_deferred())

    def record_failure(self, record: DocumentRecord, metadata: dict | None = None) -> None:
        with self.db.transaction(documents=True) as conn:
            _ensure_collection(conn, record.collection)
            updated = conn.execute(  # keep the last good version searchable; flag it
                "UPDATE documents SET status='error', error=%s, size=%s, mtime_ns=%s, indexed_at=%s,"
                " metadata = metadata || %s::jsonb WHERE id = %s",
                (record.error, record.size, record.mtime_ns, record.indexed_at,
                 json.dumps(metadata or {}, ensure_ascii=False, default=str), record.document_id)).rowcount
            if not updated:
                _upsert_document(conn, record, metadata or {}, 0)

    def delete_documents(self, document_ids: Iterable[str]) -> int:
        with self.db.transaction(documents=True) as conn:
            return sum(_delete_document(conn, doc_id) for doc_id in document_ids)

    def move_document(self, old_id: str, new_id: str, new_path: str, size: int, mtime_ns: int) -> None:
        with self.db.transaction(documents=True) as conn:  # chunks and text follow (ON UPDATE CASCADE)
            conn.execute("UPDATE documents SET id=%s, path=%s, size=%s, mtime_ns=%s WHERE id=%s",
                         (new_id, new_path, size, mtime_ns, old_id))
            follow_move(conn, old_id, new_id)

    def touch(self, document_id: str, size: int, mtime_ns: int) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE documents SET size=%s, mtime_ns=%s WHERE id=%s", (size, mtime_ns, document_id))

    def create_collection(self, name: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("INSERT INTO collections VALUES (%s, now()::text) ON CONFLICT DO NOTHING", (name,)).rowcount > 0

    def delete_collection(self, name: str) -> list[DocumentRecord]:
        if name not in self.collections():
            raise NotFoundError(f"no collection {name!r}: 'docqa stats' lists the collections")
        records = self.list_documents(name)
        with self.db.transaction(documents=True) as conn:
            for r in records:
                _delete_document(conn, r.document_id)
            conn.execute("DELETE FROM collections WHERE name = %s", (name,))
        return records

    # -- reading -------------------------------------------------------------------------
    def _rows(self, sql: str, args=()) -> list[tuple]:
        with self.db.read() as conn:
            return conn.execute(sql, args).fetchall()

    def file_states(self, collection: str) -> dict[str, FileState]:
        rows = self._rows("SELECT path, size, mtime_ns, content_hash, status, title, error,"
                          " CASE WHEN status = 'ok' THEN '' ELSE coalesce(metadata->>'readers', '') END"
                          " FROM documents WHERE collection = %s", (collection,))
        return {r[0]: FileState(*r) for r in rows}

    def list_documents(self, collection: str | None = None, path_prefix: str | None = None) -> list[DocumentRecord]:
        sql, args = f"SELECT {DOC_COLUMNS} FROM documents WHERE TRUE", list[object]()
        if collection is not None:
            sql += " AND collection = %s"
            args.append(collection)
        if path_prefix is not None:
            prefix = path_prefix.rstrip("/") + "/"
            sql += " AND (path = %s OR left(path, %s) = %s)"
            args += [path_prefix, len(prefix), prefix]
        return [to_record(r) for r in self._rows(sql + ' ORDER BY collection COLLATE "C", path COLLATE "C"', args)]

    def document_record(self, document_id: str) -> DocumentRecord:
        rows = self._rows(f"SELECT {DOC_COLUMNS} FROM documents WHERE id = %s", (document_id,))
        if not rows:
            raise NotFoundError(f"no document {document_id!r}: document ids come from 'docqa list --json' or list_docs")
        return to_record(rows[0])

    def document_text(self, document_id: str) -> str:
        rows = self._rows("SELECT text FROM document_texts WHERE document_id = %s", (document_id,))
        if not rows:
            raise NotFoundError(f"no stored text for document {document_id}: run 'docqa list' to see what is indexed")
        return rows[0][0]

    def document_metadata(self, document_id: str) -> dict:
        rows = self._rows("SELECT metadata FROM documents WHERE id = %s", (document_id,))
        return dict(rows[0][0] or {}) if rows else {}

    def chunk_ids(self, document_id: str) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM chunks WHERE document_id = %s ORDER BY ordinal", (document_id,))]

    def get_hits(self, chunk_ids: list[str]) -> list[Hit]:
        if not chunk_ids:
            return []
        by_id = {r[0]: to_hit(r) for r in self._rows(HIT_SQL, (list(chunk_ids),))}
        return [by_id[i] for i in chunk_ids if i in by_id]

    def text_heads(self, chunk_ids: list[str], chars: int = 300) -> dict[str, str]:
        if not chunk_ids:
            return {}
        return dict(self._rows("SELECT id, left(text, %s) FROM chunks WHERE id = ANY(%s)", (chars, list(chunk_ids))))

    def page_lines(self, document_id: str) -> list[tuple[int, int]]:
        rows = self._rows("SELECT page_start, min(line_start) FROM chunks WHERE document_id = %s AND page_start IS NOT NULL"
                          " GROUP BY page_start ORDER BY page_start", (document_id,))
        return [(r[0], r[1]) for r in rows]

    def collections(self) -> list[str]:
        return [r[0] for r in self._rows('SELECT name FROM collections ORDER BY name COLLATE "C"')]

    def collection_sizes(self) -> dict[str, int]:
        return dict(self._rows("SELECT c.name, count(d.id) FROM collections c LEFT JOIN documents d"
                               " ON d.collection = c.name AND d.status = 'ok' GROUP BY c.name ORDER BY c.name COLLATE \"C\""))


def _ensure_collection(conn, name: str) -> None:
    conn.execute("INSERT INTO collections VALUES (%s, now()::text) ON CONFLICT DO NOTHING", (name,))


def _delete_document(conn, document_id: str) -> int:
    old_hashes = delete_rows(conn, [document_id])
    count = conn.execute("DELETE FROM documents WHERE id = %s", (document_id,)).rowcount
    drop_orphan_vectors(conn, old_hashes)
    if count:
        mark_removed(conn, [document_id])  # answers citing it: their source went
    return count


def _upsert_document(conn, r: DocumentRecord, metadata: dict, chunk_count: int) -> None:
    conn.execute(
        """INSERT INTO documents (id, collection, path, type, language, title, keywords, summary, size,
               mtime_ns, content_hash, chunk_count, status, error, indexed_at, metadata)
           VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::jsonb)
           ON CONFLICT (id) DO UPDATE SET type=excluded.type, language=excluded.language,
               title=excluded.title, keywords=excluded.keywords, summary=excluded.summary,
               size=excluded.size, mtime_ns=excluded.mtime_ns, content_hash=excluded.content_hash,
               chunk_count=excluded.chunk_count, status=excluded.status, error=excluded.error,
               indexed_at=excluded.indexed_at, metadata=excluded.metadata""",
        (r.document_id, r.collection, r.path, r.type, r.language, r.title, json.dumps(r.keywords, ensure_ascii=False),
         r.summary, r.size, r.mtime_ns, r.content_hash, chunk_count, r.status, r.error, r.indexed_at,
         json.dumps(metadata, ensure_ascii=False, default=str)),
    )
