"""PostgresFullText: BM25 over postings and corpus statistics kept in the database.

PostgreSQL's `ts_rank` has no IDF, so the postings (`fts_postings`: field-weighted term counts and
chunk lengths), the document frequencies (`fts_terms`) and the totals (`fts_totals`) are written
with the chunks, in `PostgresDocuments.replace_document`'s transaction (`index_chunks`,
`unindex_chunks`), and ranked with the formula of SQLite FTS5's bm25() (k1 1.2, b 0.75, IDF
log((N - n + 0.5) / (n + 0.5)), floored at 1e-6), over the same tokens (tokens.py): the scores of
both backends agree.  The proximity and exact-phrase boosts are checked on the ranked pool's
token sequences, as FTS5's NEAR and phrase queries would.

When the query's tokens have many postings (PRUNE_FROM_POSTINGS), the best `pool` chunks are found
without reading them all (`_rank_top`, a threshold algorithm over impact-ordered postings: index
`fts_postings_impact`, count descending then length): a first guess (each token's strongest
postings, scored in full) gives a score θ that the pool's last chunk reaches at least; each token t
gets a share λ_t of θ (Σλ_t ≤ θ) and only its postings whose contribution reaches λ_t are read — per
count level, the chunks short enough; a share of 0 reads a rare token whole.  A chunk with none of
those scores below Σλ_t ≤ θ, so the pool among the chunks read, scored in full, is the pool of all:
same chunks, same scores, same order.  The shares are the choice that reads fewest postings (from a
count of each token's strongest postings), and reaches aimed higher first sharpen θ.  When reading
every posting once is cheaper, or a filter leaves fewer chunks than the pool, every posting is scored.
"""

from __future__ import annotations

import itertools
import math

from docqa.store.base import ChunkFilter
from docqa.store.fulltext import FullText, TextQuery
from docqa.store.postgres.db import PostgresDB
from docqa.store.postgres.rows import filter_sql
from docqa.store.postgres.tokens import Tokenizer, contains, near
from docqa.store.sqlite.fulltext import COMMON_TERM_SHARE, MIN_CHUNKS_TO_PRUNE

K1, B = 1.2, 0.75
TOKENS = Tokenizer()
PRUNE_FROM_POSTINGS = 20_000  # fewer postings than this (all query tokens): score them all, as fast
RARE_POSTINGS = 2_000  # a token with fewer postings is read whole by the early-terminating top k
EXPLORE = (0.9, 0.75)  # the first reaches aim at these shares of the best score the query's tokens could give
OPTIONS = 6  # shares tried per token besides 0 (just above its postings of the lowest counts the count covers)
COUNT_CAP = 20_000  # a token's strongest postings counted (by count level) to choose the shares
SLACK = 1e-9  # relative margin on the threshold for the floating-point sums: read a little more, never less


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
                 min_chunks_to_prune: int = MIN_CHUNKS_TO_PRUNE, prune_from_postings: float = PRUNE_FROM_POSTINGS):
        self.db = db
        self.common_term_share, self.min_chunks_to_prune = common_term_share, min_chunks_to_prune
        self.prune_from_postings = prune_from_postings  # math.inf: always score every posting

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
            postings = sum(df.get(x, 0) for x in {x for x, _ in weighted})
            top = df if postings >= self.prune_from_postings else None
            scored, matched = self._rank(conn, weighted, total_tokens / chunks, pool, where, top)
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
              where: ChunkFilter | None, top: dict[str, int] | None = None) -> tuple[dict[str, float], dict[str, int]]:
        """(chunk id -> BM25 score, chunk id -> distinct query tokens it holds) of the best `pool` chunks;
        given the tokens' document frequencies (`top`), without reading every posting."""
        if not weighted:
            return {}, {}
        clause, args = filter_sql(where) if where is not None and not where.empty else ("TRUE", [])
        rows = _rank_top(conn, weighted, top, avgdl, pool, clause, args) if top is not None else None
        if rows is None:
            rows = _score(conn, weighted, avgdl, pool, clause, args, None)
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


def _score(conn, weighted: list[tuple[str, float]], avgdl: float, pool: int, clause: str, args: list,
           chunks: list[int] | None) -> list[tuple[str, float, int]]:
    """(chunk id, BM25 score, distinct query tokens) of the best `pool` chunks: of all, or of `chunks`."""
    join = "" if clause == "TRUE" else " JOIN chunks c ON c.seq = p.chunk JOIN documents d ON d.id = c.document_id"
    among = "" if chunks is None else " AND p.chunk = ANY(%s::bigint[])"
    sql = (f"SELECT c.id, s.score, s.matched FROM (SELECT p.chunk, count(DISTINCT p.term) AS matched, sum(q.idf * p.freq * {K1 + 1} / (p.freq + {K1} * "
           f"({1 - B} + {B} * p.length / %s))) AS score FROM unnest(%s::text[], %s::float8[]) AS q(term, idf)"
           f" JOIN fts_postings p ON q.term = p.term{among}{join} WHERE {clause} GROUP BY p.chunk ORDER BY score DESC, p.chunk"
           " LIMIT %s) s JOIN chunks c ON c.seq = s.chunk ORDER BY s.score DESC, s.chunk")
    params = [avgdl, [t for t, _ in weighted], [w for _, w in weighted], *([] if chunks is None else [chunks]), *args, pool]
    return conn.execute(sql, params).fetchall()


def _rank_top(conn, weighted: list[tuple[str, float]], df: dict[str, int], avgdl: float, pool: int, clause: str,
              args: list, scan_when_cheaper: bool = True) -> list[tuple[str, float, int]] | None:
    """The best `pool` chunks as `_score` ranks them all, reading only postings that can reach them;
    None when the first guess finds fewer than `pool` chunks (a narrow filter) or, unless told
    otherwise, when reading every posting looks cheaper: score them all."""
    weight: dict[str, float] = {}
    for token, idf in weighted:  # a token twice in the query counts twice, as in `_score`'s join
        weight[token] = weight.get(token, 0.0) + idf
    tokens = list(weight)
    guess = conn.execute("SELECT DISTINCT t.chunk FROM unnest(%s::text[]) AS q(term) CROSS JOIN LATERAL (SELECT chunk"
                         " FROM fts_postings p WHERE p.term COLLATE \"C\" = q.term ORDER BY freq DESC, length LIMIT %s) t",
                         (tokens, pool)).fetchall()
    found = _score(conn, weighted, avgdl, pool, clause, args, [r[0] for r in guess])
    if len(found) < pool:
        return None
    levels = _levels(conn, tokens)
    bound = {t: weight[t] * max((_saturation(f, n, avgdl) for f, n in levels[t]), default=0.0) for t in tokens}
    options = _options(conn, tokens, {t: df.get(t, 0) for t in tokens}, weight, levels, avgdl)
    # Reaches aimed high (most of the best score the tokens could give) find chunks strong in several
    # tokens cheaply; the last score of their pool is a sharper threshold than the guess's, and when it
    # is at least what the reach aimed at, the reach was already the final one.
    threshold = found[-1][1]
    for share in EXPLORE:
        aim = share * sum(bound.values())
        if aim <= threshold:
            break
        shares, _ = _shares(bound, options, aim)
        explored = _score(conn, weighted, avgdl, pool, clause, args, _reach(conn, shares, weight, levels, avgdl, threshold))
        if len(explored) == pool and explored[-1][1] > threshold:
            if sum(shares.values()) <= explored[-1][1] * (1 - SLACK):
                return explored
            threshold = explored[-1][1]
            break
    shares, reads = _shares(bound, options, threshold * (1 - SLACK))
    if scan_when_cheaper and reads >= sum(df.get(t, 0) for t in tokens):
        return None  # as many postings to read as a scan reads, and then a look-up per chunk and token
    return _score(conn, weighted, avgdl, pool, clause, args, _reach(conn, shares, weight, levels, avgdl, threshold))


def _levels(conn, tokens: list[str]) -> dict[str, list[tuple[float, int]]]:
    """Per token, (count, shortest chunk length among its postings of that count) for each count
    from 1 to its highest (counts are whole numbers: the field weights are), from the impact index."""
    rows = conn.execute(
        "SELECT q.term, f.level, (SELECT length FROM fts_postings p WHERE p.term COLLATE \"C\" = q.term AND p.freq = f.level"
        " ORDER BY freq DESC, length LIMIT 1) FROM unnest(%s::text[]) AS q(term) CROSS JOIN LATERAL generate_series(1,"
        " coalesce(ceil((SELECT max(freq) FROM fts_postings m WHERE m.term COLLATE \"C\" = q.term)), 0)::int) AS f(level)",
        (tokens,)).fetchall()
    levels: dict[str, list[tuple[float, int]]] = {t: [] for t in tokens}
    for term, level, length in rows:
        if length is not None:
            levels[term].append((float(level), length))
    return levels


def _options(conn, tokens: list[str], df: dict[str, int], weight: dict[str, float],
             levels: dict[str, list[tuple[float, int]]], avgdl: float) -> dict[str, list[tuple[float, int]]]:
    """Per token, the shares worth trying with the postings each reads: 0 reads all of them (df); just
    above the best contribution of the postings of count <= f reads those above f, counted in one scan
    of the token's strongest COUNT_CAP postings (so only for the counts f that scan covers whole)."""
    rows = conn.execute(
        "SELECT q.term, x.freq, count(*) FROM unnest(%s::text[]) AS q(term) CROSS JOIN LATERAL (SELECT freq FROM fts_postings p"
        " WHERE p.term COLLATE \"C\" = q.term ORDER BY freq DESC, length LIMIT %s) x GROUP BY q.term, x.freq",
        (tokens, COUNT_CAP)).fetchall()
    seen: dict[str, dict[float, int]] = {t: {} for t in tokens}
    for term, freq, n in rows:
        seen[term][freq] = n
    options = {}
    for t in tokens:
        complete = sum(seen[t].values()) < COUNT_CAP
        lowest = min(seen[t], default=0.0)
        usable, above = [], 0
        for freq in sorted(seen[t], reverse=True):  # reads above `freq`: the postings of higher counts
            if complete or freq > lowest:
                usable.append((freq, above))
            above += seen[t][freq]
        step = max(1, len(usable) // OPTIONS)
        picked = usable[::-1][::step][:OPTIONS]  # the lowest counts first: reads more, needs less
        best = [(max((weight[t] * _saturation(f, n, avgdl) for f, n in levels[t] if f <= freq), default=0.0), above)
                for freq, above in picked]
        options[t] = [(0.0, df[t])] + [(b * (1 + SLACK), above) for b, above in best]
    return options


def _reach(conn, shares: dict[str, float], weight: dict[str, float], levels: dict[str, list[tuple[float, int]]],
           avgdl: float, threshold: float) -> list[int]:
    """The chunks holding a token whose contribution reaches its share (per count level, the postings
    of chunks short enough; all of a token whose share is 0) that may still score `threshold`: what
    their postings read give, plus the share of each token not read for them (its contribution is below)."""
    tokens, counts, lengths = [], [], []
    for t, share in shares.items():
        need = share / weight[t] / (K1 + 1)
        for freq, shortest in levels[t]:
            longest = math.inf if need <= 0 else (freq / need - freq - K1 * (1 - B)) * avgdl / (K1 * B) * (1 + SLACK) + SLACK
            if longest >= shortest:
                tokens.append(t)
                counts.append(freq)
                lengths.append(min(longest, 2.0 ** 31 - 1))
    return [r[0] for r in conn.execute(
        f"SELECT p.chunk FROM unnest(%s::text[], %s::float8[], %s::float8[], %s::float8[], %s::float8[])"
        f" AS q(term, freq, longest, weight, share) CROSS JOIN LATERAL (SELECT chunk, freq, length FROM fts_postings p"
        f" WHERE p.term COLLATE \"C\" = q.term AND p.freq = q.freq AND p.length <= q.longest) p GROUP BY p.chunk"
        f" HAVING sum(q.weight * p.freq * {K1 + 1} / (p.freq + {K1} * ({1 - B} + {B} * p.length / %s))) + %s - sum(q.share) >= %s",
        (tokens, counts, lengths, [weight[t] for t in tokens], [shares[t] for t in tokens], avgdl, sum(shares.values()),
         threshold * (1 - SLACK))).fetchall()]


def _saturation(freq: float, length: float, avgdl: float) -> float:
    """BM25's term-frequency part, (K1 + 1) f / (f + K1 (1 - B + B len / avgdl)): at most K1 + 1."""
    return (K1 + 1) * freq / (freq + K1 * (1 - B + B * length / avgdl)) if freq > 0 else 0.0


def _shares(bound: dict[str, float], options: dict[str, list[tuple[float, int]]],
            threshold: float) -> tuple[dict[str, float], int]:
    """λ per token with Σλ ≤ threshold, read cheapest: of the tokens' options (`_options`), the choice
    reading the fewest postings; its leftover threshold then raises the shares of the costliest
    tokens read.  With the postings it reads at most."""
    tokens = list(options)
    chosen, cost = None, math.inf
    for pick in itertools.product(*(options[t] for t in tokens)):
        spent, read = sum(p[0] for p in pick), sum(p[1] for p in pick)
        if spent <= threshold and read < cost:
            chosen, cost = pick, read
    if chosen is None:  # (a threshold below 0: no scores are)
        return dict.fromkeys(tokens, 0.0), sum(options[t][0][1] for t in tokens)
    shares, left = {t: p[0] for t, p in zip(tokens, chosen)}, threshold - sum(p[0] for p in chosen)
    for t, _ in sorted(zip(tokens, chosen), key=lambda tp: -tp[1][1]):
        extra = max(0.0, min(bound[t] - shares[t], left))
        shares[t] += extra
        left -= extra
    return shares, int(cost)
