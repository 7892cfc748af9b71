"""SQLiteCatalog: the browsing reads over the `documents` and `document_texts` tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from docqa.store.base import ChunkFilter
from docqa.store.catalog import Catalog, CatalogPage
from docqa.store.sqlite.db import SQLiteDB
from docqa.store.sqlite.rows import DOC_COLUMNS, filter_sql, keyword_text, to_record
from docqa.types import DocumentRecord


class SQLiteCatalog(Catalog):
    """Documents with status ok by path, as records and as text (the base of SQLiteDocuments)."""

    def __init__(self, db: SQLiteDB):
        self.db, self.conn = db, db.conn

    def catalog(self, collection: str | None = None, offset: int = 0, limit: int | None = None,
                select: Callable[[list[str]], list[int]] | None = None) -> CatalogPage:
        where, args = ("collection = ?", [collection]) if collection is not None else ("1", [])
        total, ok = self.conn.execute(f"SELECT coalesce(sum(status != 'skipped'), 0), coalesce(sum(status = 'ok'), 0) "
                                      f"FROM documents WHERE {where}", args).fetchone()  # skipped files are not failures
        page = "" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}"
        if select is None:  # the path index gives the order; only the page's rows are read
            rows = self.conn.execute(f"SELECT {DOC_COLUMNS} FROM documents WHERE status = 'ok' AND {where} "
                                     f"ORDER BY path{page}", args).fetchall()
            return CatalogPage([to_record(r) for r in rows], ok, total - ok)
        # Filter on the few columns a catalog line shows; full records only for the page kept.
        rows = self.conn.execute(f"SELECT id, path, title, keywords, summary FROM documents "
                                 f"WHERE status = 'ok' AND {where} ORDER BY path", args).fetchall()
        kept = [rows[i][0] for i in select([f"{r[1]}\n{r[2]}\n{keyword_text(r[3])}\n{r[4]}" for r in rows])]
        chosen = kept[offset:] if limit is None else kept[offset:offset + limit]
        records = []
        for start in range(0, len(chosen), 500):
            ids = chosen[start:start + 500]
            records += [to_record(r) for r in self.conn.execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE id IN ({','.join('?' * len(ids))}) ORDER BY path", ids)]
        return CatalogPage(records, len(kept), total - ok)

    def find_documents(self, path: str) -> list[DocumentRecord]:
        # A suffix cannot use the path index; one scan of the documents table takes ~2 ms at 10k.
        sql = f"SELECT {DOC_COLUMNS} FROM documents WHERE path = ? OR substr(path, -?) = ? ORDER BY path, collection"
        tail = "/" + path.lstrip("/")
        return [to_record(r) for r in self.conn.execute(sql, (path, len(tail), tail))]

    def document_texts(self, where: ChunkFilter | None = None) -> Iterator[tuple[str, str, str, str]]:
        clause, args = filter_sql(where or ChunkFilter())
        cursor = self.conn.execute(
            f"SELECT d.id, d.path, d.title, t.text FROM documents d JOIN document_texts t ON t.document_id = d.id "
            f"WHERE d.status = 'ok' AND {clause} ORDER BY d.path", args)
        try:
            while rows := cursor.fetchmany(64):
                yield from rows
        finally:
            cursor.close()

    def path_bounds(self, collection: str | None = None) -> tuple[str, str] | None:
        sql, args = "SELECT min(path), max(path) FROM documents WHERE status = 'ok'", []
        if collection is not None:
            sql, args = sql + " AND collection = ?", [collection]
        low, high = self.conn.execute(sql, args).fetchone()
        return None if low is None else (low, high)
