"""PostgresCatalog: the browsing reads over the `documents` and `document_texts` tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from docqa.store.base import ChunkFilter
from docqa.store.catalog import Catalog, CatalogPage
from docqa.store.postgres.db import PostgresDB
from docqa.store.postgres.rows import DOC_COLUMNS, filter_sql, keyword_text, to_record
from docqa.types import DocumentRecord

BY_PATH = 'ORDER BY path COLLATE "C"'  # byte order, as SQLite sorts


class PostgresCatalog(Catalog):
    """Documents with status ok by path, as records and as text (the base of PostgresDocuments)."""

    def __init__(self, db: PostgresDB):
        self.db = db

    def catalog(self, collection: str | None = None, offset: int = 0, limit: int | None = None,
                select: Callable[[list[str]], list[int]] | None = None) -> CatalogPage:
        where, args = ("collection = %s", [collection]) if collection is not None else ("TRUE", [])
        with self.db.read() as conn:
            total, ok = conn.execute(f"SELECT count(*) FILTER (WHERE status != 'skipped'), count(*) FILTER (WHERE status = 'ok')"
                                     f" FROM documents WHERE {where}", args).fetchone()
            page = "" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}"
            if select is None:
                rows = conn.execute(f"SELECT {DOC_COLUMNS} FROM documents WHERE status = 'ok' AND {where} {BY_PATH}{page}",
                                    args).fetchall()
                return CatalogPage([to_record(r) for r in rows], ok, total - ok)
            rows = conn.execute(f"SELECT id, path, title, keywords, summary FROM documents WHERE status = 'ok' AND {where}"
                                f" {BY_PATH}", args).fetchall()
            kept = [rows[i][0] for i in select([f"{r[1]}\n{r[2]}\n{keyword_text(r[3])}\n{r[4]}" for r in rows])]
            chosen = kept[offset:] if limit is None else kept[offset:offset + limit]
            records = [to_record(r) for r in conn.execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE id = ANY(%s) {BY_PATH}", (chosen,))]
        return CatalogPage(records, len(kept), total - ok)

    def find_documents(self, path: str) -> list[DocumentRecord]:
        tail = "/" + path.lstrip("/")
        sql = f"SELECT {DOC_COLUMNS} FROM documents WHERE path = %s OR right(path, %s) = %s {BY_PATH}, collection"
        with self.db.read() as conn:
            return [to_record(r) for r in conn.execute(sql, (path, len(tail), tail))]

    def document_texts(self, where: ChunkFilter | None = None) -> Iterator[tuple[str, str, str, str]]:
        clause, args = filter_sql(where or ChunkFilter())
        with self.db.read() as conn, conn.transaction(), conn.cursor(name="document_texts") as cursor:
            # A server-side cursor: the texts arrive 64 at a time, and closing the iterator ends the query.
            cursor.execute(f"SELECT d.id, d.path, d.title, t.text FROM documents d JOIN document_texts t ON t.document_id = d.id"
                           f" WHERE d.status = 'ok' AND {clause} ORDER BY d.path COLLATE \"C\"", args)
            while rows := cursor.fetchmany(64):
                yield from rows

    def path_bounds(self, collection: str | None = None) -> tuple[str, str] | None:
        sql, args = "SELECT min(path COLLATE \"C\"), max(path COLLATE \"C\") FROM documents WHERE status = 'ok'", []
        if collection is not None:
            sql, args = sql + " AND collection = %s", [collection]
        with self.db.read() as conn:
            low, high = conn.execute(sql, args).fetchone()
        return None if low is None else (low, high)
