"""SQLiteFullText: FTS5 BM25 over title, keywords, summary and content (Chinese pre-segmented).

`chunks_fts` is an external-content FTS5 table over the view `chunks_fts_source`; its rows are
written and removed with the chunks, inside `SQLiteDocuments.replace_document`'s transaction,
through `index_chunks` and `unindex_document` below.
"""

from __future__ import annotations

import sqlite3

from docqa.errors import StoreError
from docqa.store.base import ChunkFilter
from docqa.store.fulltext import FullText, TextQuery
from docqa.store.sqlite.db import SQLiteDB
from docqa.store.sqlite.rows import effective, filter_sql

BM25_WEIGHTS = (4.0, 3.0, 3.0, 1.0)  # title, keywords, summary, content
# A query term found in more than this share of the chunks is skipped when rarer ones remain
# (measured: SciFact nDCG@10 0.6926 -> 0.6922 when forced on; p50 at 100k chunks 18 -> 14 ms).
COMMON_TERM_SHARE = 0.25
MIN_CHUNKS_TO_PRUNE = 20_000  # below this, scoring every match is cheap and pruning is not worth it


def fts_literal(term: str) -> str:
    """A term as an FTS5 string literal, so no user input can be read as query syntax."""
    return '"' + term.replace('"', '""') + '"'


def index_chunks(conn: sqlite3.Connection, rows: list[tuple[int, str, str, str, str]]) -> None:
    """Add full-text entries: (chunk rowid, title, keywords, summary, content) each."""
    conn.executemany("INSERT INTO chunks_fts (rowid, title, keywords, summary, content) VALUES (?,?,?,?,?)", rows)


def unindex_document(conn: sqlite3.Connection, document_id: str) -> None:
    """Remove a document's entries with exactly the values they were indexed with (run before its chunks go)."""
    conn.execute(
        "INSERT INTO chunks_fts (chunks_fts, rowid, title, keywords, summary, content) "
        "SELECT 'delete', rowid, title, keywords, summary, content FROM chunks_fts_source "
        "WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)",
        (document_id,),
    )


class SQLiteFullText(FullText):
    """BM25 with weighted fields, proximity and phrase boosts, and common-term pruning at scale."""

    def __init__(self, db: SQLiteDB, common_term_share: float = COMMON_TERM_SHARE,
                 min_chunks_to_prune: int = MIN_CHUNKS_TO_PRUNE):
        self.db, self.conn = db, db.conn
        self.common_term_share, self.min_chunks_to_prune = common_term_share, min_chunks_to_prune
        self._total_cache: tuple[tuple[int, int], int] = ((-1, -1), 0)  # ((data_version, total_changes), chunk count)
        self._df_cache: dict[str, int] = {}  # term -> chunks containing it, for _selective_terms

    def search_text(self, query: TextQuery, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        if not query.terms:
            return []
        where = effective(self.conn, where)
        pool = max(top_k * 3, 30)  # boosts re-order a wider pool than what is returned
        terms = self._selective_terms(query.terms)
        scored = dict(self._match(" OR ".join(fts_literal(t) for t in terms), pool, where))
        if len(query.terms) > 1 and scored:
            # Proximity in the title or text earns half the boost, the exact phrase all of it.
            # (Not in keywords/summary: those lists put unrelated words side by side.)
            near = "{title content} : NEAR(" + " ".join(fts_literal(t) for t in query.terms) + f", {len(query.terms) + 3})"
            self._boost(scored, near, 1 + (query.phrase_boost - 1) / 2, pool, where)
            if query.phrase:
                self._boost(scored, "{title content} : " + fts_literal(query.phrase), query.phrase_boost, pool, where)
        return sorted(scored.items(), key=lambda kv: -kv[1])[:top_k]

    def term_counts(self, terms: list[str]) -> tuple[dict[str, int], int]:
        total = self._chunk_total()
        return {t: self._matches(t) for t in dict.fromkeys(terms)}, total

    def _selective_terms(self, terms: list[str]) -> list[str]:
        """Drop terms found in more than COMMON_TERM_SHARE of the chunks, when rarer ones remain.

        FTS5 spends its time running bm25() on every chunk that matches any term; a term in a
        quarter of a 100k-chunk index adds 25k rows to score while its IDF (about 1, against 7-9
        for the rare terms) barely moves the ranking.  Counting matches is cheap; scoring is not.
        The proximity and phrase boosts still use every term.
        """
        total = self._chunk_total()
        if len(terms) < 2 or total < self.min_chunks_to_prune or self.common_term_share >= 1:
            return terms
        limit = self.common_term_share * total
        rare = [t for t in terms if self._matches(t) <= limit]
        return rare or terms

    def _matches(self, term: str) -> int:
        """How many chunks contain `term` (cached until the index changes)."""
        count = self._df_cache.get(term)
        if count is None:
            sql = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
            count = self._df_cache[term] = self.conn.execute(sql, (fts_literal(term),)).fetchone()[0]
            if len(self._df_cache) > 50_000:
                self._df_cache.clear()
        return count

    def _chunk_total(self) -> int:
        # data_version moves on other connections' commits, total_changes on this one's writes.
        version = (self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes)
        if self._total_cache[0] != version:  # written since (by anyone): counts are stale
            self._total_cache = (version, self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
            self._df_cache.clear()
        return self._total_cache[1]

    def _boost(self, scored: dict[str, float], match: str, factor: float, pool: int, where: ChunkFilter | None) -> None:
        for chunk_id, _ in self._match(match, pool, where):
            if chunk_id in scored:
                scored[chunk_id] *= factor

    def _match(self, match: str, top_k: int, where: ChunkFilter | None) -> list[tuple[str, float]]:
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        if where is None:
            # Rank inside FTS5 alone, then look up the few winners: a join here makes SQLite
            # fetch every matching chunk row before sorting (about twice as slow at 100k chunks).
            sql = (f"SELECT c.id, -f.score FROM (SELECT rowid, bm25(chunks_fts, {weights}) AS score FROM chunks_fts"
                   " WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) f JOIN chunks c ON c.rowid = f.rowid ORDER BY f.score")
            args: list = [match, top_k]
        else:
            clause, filter_args = filter_sql(where)
            sql = (f"SELECT c.id, -bm25(chunks_fts, {weights}) AS score FROM chunks_fts"
                   " JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN documents d ON d.id = c.document_id"
                   f" WHERE chunks_fts MATCH ? AND {clause} ORDER BY bm25(chunks_fts, {weights}) LIMIT ?")
            args = [match, *filter_args, top_k]
        try:
            return [(r[0], r[1]) for r in self.conn.execute(sql, args)]
        except sqlite3.OperationalError as exc:  # only reachable through a bug in escaping
            raise StoreError(f"full-text query failed: {exc}") from exc
