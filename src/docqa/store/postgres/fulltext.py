"""PostgresFullText: BM25 over postings and corpus statistics kept in the database.

PostgreSQL's `ts_rank` has no IDF, so the postings (`fts_postings`: field-weighted term counts and
chunk lengths), the document frequencies (`fts_terms`) and the totals (`fts_totals`) are written
with the chunks, in `PostgresDocuments.replace_document`'s transaction (`index_chunks`,
`unindex_chunks`), and ranked with the formula of SQLite FTS5's bm25() (k1 1.2, b 0.75, IDF
log((N - n + 0.5) / (n + 0.5)), floored at 1e-6), over the same tokens (tokens.py): the scores of
both backends agree.  The proximity and exact-phrase boosts are checked on the ranked pool's
token sequences, as FTS5's NEAR and phrase queries would.
"""

from __future__ import annotations

import math

from docqa.store.base import ChunkFilter
from docqa.store.fulltext import FullText, TextQuery
from docqa.store.postgres.db import PostgresDB
from docqa.store.postgres.rows import filter_sql
from docqa.store.postgres.tokens import Tokenizer, contains, near
from docqa.store.sqlite.fulltext import COMMON_TERM_SHARE, MIN_CHUNKS_TO_PRUNE

K1, B = 1.2, 0.75
TOKENS = Tokenizer()


def index_chunks(conn, rows: list[tuple[int, str, str, str, str]]) -> None:
    """Add postings of (chunk seq, title, keywords, summary, content) rows and count them in the statistics."""
    counted = TOKENS.postings([r[1:] for r in rows])
    with conn.cursor() as cur, cur.copy("COPY fts_postings (term, chunk, freq, length) FROM STDIN") as copy:
        for (seq, *_), (freqs, length) in zip(rows, counted):
            for term, freq in freqs.items():
                copy.write_row((term, seq, freq, length))
    _count(conn, [r[0] for r in rows], +1, sum(n for _, n in counted))


def unindex_chunks(conn, seqs: list[int]) -> None:
    """Take chunks' postings out of the statistics (their rows go with the chunks: ON DELETE CASCADE)."""
    if seqs:
        tokens = conn.execute("SELECT coalesce(sum(length), 0) FROM (SELECT DISTINCT chunk, length FROM fts_postings"
                              " WHERE chunk = ANY(%s)) c", (seqs,)).fetchone()[0]
        _count(conn, seqs, -1, int(tokens))


def _count(conn, seqs: list[int], sign: int, tokens: int) -> None:
    conn.execute(
        "INSERT INTO fts_terms (term, df) SELECT term, %s * count(*) FROM fts_postings WHERE chunk = ANY(%s)"
        " GROUP BY term ORDER BY term ON CONFLICT (term) DO UPDATE SET df = fts_terms.df + excluded.df", (sign, seqs))
    conn.execute("UPDATE fts_totals SET chunks = chunks + %s, tokens = tokens + %s", (sign * len(seqs), sign * tokens))
    if sign < 0:
        conn.execute("DELETE FROM fts_terms WHERE df <= 0 AND term IN (SELECT DISTINCT term FROM fts_postings"
                     " WHERE chunk = ANY(%s))", (seqs,))


class PostgresFullText(FullText):
    """BM25 with weighted fields, proximity and phrase boosts, and common-term pruning at scale."""

    def __init__(self, db: PostgresDB, common_term_share: float = COMMON_TERM_SHARE,
                 min_chunks_to_prune: int = MIN_CHUNKS_TO_PRUNE):
        self.db = db
        self.common_term_share, self.min_chunks_to_prune = common_term_share, min_chunks_to_prune

    def search_text(self, query: TextQuery, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        if not query.terms:
            return []
        pool = max(top_k * 3, 30)  # boosts re-order a wider pool than what is returned (as on SQLite)
        tokens = {t: TOKENS.terms(t) for t in query.terms}
        # Statistics and postings of one moment (a snapshot): read apart, a commit between the totals
        # and the document frequencies could give a df above N, the log of a negative number.
        with self.db.snapshot() as conn:
            df, chunks, total_tokens = self._statistics(conn, [x for ts in tokens.values() for x in ts])
            if not chunks:
                return []
            terms = self._selective_terms(query.terms, tokens, df, chunks)
            # One FTS5 phrase per query term: its tokens are scored each here (FTS5 would need them adjacent).
            weighted = [(x, _idf(df.get(x, 0), chunks)) for t in terms for x in tokens[t]]
            scored, matched = self._rank(conn, weighted, total_tokens / chunks, pool, where)
            if len(query.terms) > 1 and scored:
                # NEAR and the phrase need every query token in the chunk; the postings tell which hold them all.
                need = len({x for x, _ in weighted})
                whole = len(terms) == len(query.terms)
                self._boost(conn, scored, [c for c in scored if not whole or matched[c] == need], query, tokens)
        return sorted(scored.items(), key=lambda kv: -kv[1])[:top_k]

    def term_counts(self, terms: list[str]) -> tuple[dict[str, int], int]:
        tokens = {t: TOKENS.terms(t) for t in dict.fromkeys(terms)}
        with self.db.snapshot() as conn:
            df, chunks, _ = self._statistics(conn, [x for ts in tokens.values() for x in ts])
        return {t: min((df.get(x, 0) for x in ts), default=0) for t, ts in tokens.items()}, chunks

    @staticmethod
    def _statistics(conn, tokens: list[str]) -> tuple[dict[str, int], int, int]:
        chunks, total = conn.execute("SELECT chunks, tokens FROM fts_totals").fetchone()
        df = dict(conn.execute("SELECT term, df FROM fts_terms WHERE term = ANY(%s)", (list(set(tokens)),)).fetchall())
        return df, chunks, total

    def _selective_terms(self, terms: list[str], tokens: dict[str, list[str]], df: dict[str, int], chunks: int) -> list[str]:
        """Drop terms found in more than COMMON_TERM_SHARE of the chunks when rarer ones remain (as SQLite does)."""
        if len(terms) < 2 or chunks < self.min_chunks_to_prune or self.common_term_share >= 1:
            return terms
        limit = self.common_term_share * chunks
        rare = [t for t in terms if min((df.get(x, 0) for x in tokens[t]), default=0) <= limit]
        return rare or terms

    @staticmethod
    def _rank(conn, weighted: list[tuple[str, float]], avgdl: float, pool: int,
              where: ChunkFilter | None) -> tuple[dict[str, float], dict[str, int]]:
        """(chunk id -> BM25 score, chunk id -> distinct query tokens it holds) of the best `pool` chunks."""
        if not weighted:
            return {}, {}
        clause, args = filter_sql(where) if where is not None and not where.empty else ("TRUE", [])
        join = "" if clause == "TRUE" else " JOIN chunks c ON c.seq = p.chunk JOIN documents d ON d.id = c.document_id"
        sql = (f"SELECT c.id, s.score, s.matched FROM (SELECT p.chunk, count(DISTINCT p.term) AS matched, sum(q.idf * p.freq * {K1 + 1} / (p.freq + {K1} * "
               f"({1 - B} + {B} * p.length / %s))) AS score FROM fts_postings p JOIN unnest(%s::text[], %s::float8[])"
               f" AS q(term, idf) ON q.term = p.term{join} WHERE {clause} GROUP BY p.chunk ORDER BY score DESC, p.chunk"
               " LIMIT %s) s JOIN chunks c ON c.seq = s.chunk ORDER BY s.score DESC, s.chunk")
        rows = conn.execute(sql, [avgdl, [t for t, _ in weighted], [w for _, w in weighted], *args, pool]).fetchall()
        return {r[0]: r[1] for r in rows}, {r[0]: r[2] for r in rows}

    @staticmethod
    def _boost(conn, scored: dict[str, float], candidates: list[str], query: TextQuery, tokens: dict[str, list[str]]) -> None:
        """Proximity in the title or text earns half the boost, the exact phrase all of it (SQLite's rule)."""
        if not candidates:
            return
        rows = conn.execute("SELECT id, fts_title, coalesce(fts_content, text) FROM chunks WHERE id = ANY(%s)",
                            (candidates,)).fetchall()
        phrases = [tokens[t] for t in query.terms if tokens[t]]
        phrase = TOKENS.terms(query.phrase) if query.phrase else []
        half = 1 + (query.phrase_boost - 1) / 2
        for (chunk_id, _, _), fields in zip(rows, TOKENS.fields([(r[1], r[2]) for r in rows])):
            if any(near(f, phrases, len(query.terms) + 3) for f in fields):
                scored[chunk_id] *= half
            if phrase and any(contains(f, phrase) for f in fields):
                scored[chunk_id] *= query.phrase_boost


def _idf(n: int, total: int) -> float:
    idf = math.log((total - n + 0.5) / (n + 0.5))
    return idf if idf > 0 else 1e-6
