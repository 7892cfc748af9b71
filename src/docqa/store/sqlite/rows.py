"""Rows of the SQLite knowledge base as records, and a `ChunkFilter` as SQL (shared by the concerns)."""

from __future__ import annotations

import json
import sqlite3

from docqa.store.base import ChunkFilter
from docqa.types import DocumentRecord, Hit

DOC_COLUMNS = (
    "id, path, collection, type, title, keywords, summary, size, content_hash, chunk_count, "
    "status, error, indexed_at, mtime_ns, language"
)


def to_record(r: tuple) -> DocumentRecord:
    """A DocumentRecord from a row of DOC_COLUMNS."""
    return DocumentRecord(
        document_id=r[0], path=r[1], collection=r[2], type=r[3], title=r[4], keywords=json.loads(r[5]),
        summary=r[6], size=r[7], content_hash=r[8], chunks=r[9], status=r[10], error=r[11], indexed_at=r[12],
        mtime_ns=r[13], language=r[14],
    )


def to_hit(r: tuple) -> Hit:
    """A Hit (score 0) from a row of documents.HIT_SQL."""
    section = " > ".join(json.loads(r[5]))
    return Hit(chunk_id=r[0], document_id=r[1], path=r[2], collection=r[3], title=r[4], section=section,
               page=r[6], page_end=r[7], line_start=r[8], line_end=r[9], char_start=r[10], char_end=r[11],
               score=0.0, text=r[12], symbol=r[13], type=r[14], anchors=_anchors(r[15]) if len(r) > 15 else ())


def _anchors(stored: str | None) -> tuple[tuple[int, str], ...]:
    """A web page's stored section anchors ([[offset, id], ...] in its metadata) as a tuple."""
    return tuple((int(a), str(b)) for a, b in json.loads(stored)) if stored else ()


def keyword_text(keywords_json: str) -> str:
    """A stored JSON list of keywords as space-separated words, without decoding it (10k rows a call)."""
    return keywords_json.strip("[]").replace('", "', " ").replace('"', "")


def effective(conn: sqlite3.Connection, where: ChunkFilter | None) -> ChunkFilter | None:
    """The filter, or None when it cannot exclude anything (a join would only cost time)."""
    if where is None or where.empty:
        return None
    if not where.path_glob and not where.types:
        names = [r[0] for r in conn.execute("SELECT name FROM collections")]
        if names == [where.collection]:
            return None
    return where


def filter_sql(where: ChunkFilter) -> tuple[str, list]:
    """A WHERE clause over `documents d` for a filter, with its arguments."""
    clauses, args = [], []
    if where.collection is not None:
        clauses.append("d.collection = ?")
        args.append(where.collection)
    if where.path_glob:
        clauses.append("d.path GLOB ?")
        args.append(path_glob_pattern(where.path_glob))
    if where.types:
        kinds = [t.lower().lstrip(".") for t in where.types]
        ors = [f"d.type IN ({','.join('?' * len(kinds))})"] + ["lower(d.path) GLOB ?"] * len(kinds)
        clauses.append("(" + " OR ".join(ors) + ")")
        args += kinds + [f"*.{k}" for k in kinds]
    return " AND ".join(clauses) or "1", args


def path_glob_pattern(glob: str) -> str:
    """A user's path glob as an SQLite GLOB over absolute paths (`**` = `*`; relative = any depth)."""
    pattern = glob.replace("**/", "*").replace("**", "*")
    if not pattern.startswith(("/", "*")):
        pattern = "*/" + pattern.removeprefix("./")
    return pattern
