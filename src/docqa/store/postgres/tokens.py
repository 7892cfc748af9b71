"""The full-text tokens of the SQLite backend, for PostgreSQL: FTS5's `porter unicode61` tokenizer
run in an in-memory SQLite (Python's own), so both backends index and query identical terms.

Rows are (title, keywords, summary, content), already jieba-segmented like SQLite's; the counts
come from an `fts5vocab` instance table: every token with its field and position.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import defaultdict

WEIGHTS = (4.0, 3.0, 3.0, 1.0)  # title, keywords, summary, content: as SQLite's weighted bm25()
TOKENIZE = "porter unicode61 remove_diacritics 2"  # store/migrations/0001_initial.sql


class Tokenizer:
    """FTS5 tokens of texts, thread-safe (one in-memory database behind a lock)."""

    def __init__(self):
        self.conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(title, keywords, summary, content, tokenize = '{TOKENIZE}')")
        self.conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        self.lock = threading.Lock()

    def _instances(self, rows: list[tuple[str, str, str, str]]) -> list[tuple[str, int, int, int]]:
        """(term, row, field, offset) of every token of the rows."""
        with self.lock:
            self.conn.execute("BEGIN")
            try:
                self.conn.executemany("INSERT INTO t (rowid, title, keywords, summary, content) VALUES (?,?,?,?,?)",
                                      [(i, *r) for i, r in enumerate(rows)])
                found = self.conn.execute("SELECT term, doc, col, \"offset\" FROM v").fetchall()
            finally:
                self.conn.execute("ROLLBACK")
        cols = {"title": 0, "keywords": 1, "summary": 2, "content": 3}
        return [(term, doc, cols[col], offset) for term, doc, col, offset in found]

    def postings(self, rows: list[tuple[str, str, str, str]]) -> list[tuple[dict[str, float], int]]:
        """For each row: (term -> field-weighted count, tokens over all fields)."""
        freqs: list[dict[str, float]] = [defaultdict(float) for _ in rows]
        lengths = [0] * len(rows)
        for term, row, col, _ in self._instances(rows):
            freqs[row][term] += WEIGHTS[col]
            lengths[row] += 1
        return [(dict(f), n) for f, n in zip(freqs, lengths)]

    def terms(self, text: str) -> list[str]:
        """The tokens of one text in order (a query term can be several: `covid-19`)."""
        return [term for term, _, _, _ in sorted(self._instances([("", "", "", text)]), key=lambda x: x[3])]

    def fields(self, rows: list[tuple[str, str]]) -> list[tuple[list[str], list[str]]]:
        """Token sequences of (title, content) pairs, for the proximity and phrase boosts."""
        seqs: list[tuple[list, list]] = [([], []) for _ in rows]
        for term, row, col, offset in self._instances([(title, "", "", content) for title, content in rows]):
            seqs[row][0 if col == 0 else 1].append((offset, term))
        return [([t for _, t in sorted(a)], [t for _, t in sorted(b)]) for a, b in seqs]


def near(tokens: list[str], phrases: list[list[str]], distance: int) -> bool:
    """FTS5's NEAR(p1 p2 ..., distance) in one field: every phrase occurs, and at most `distance`
    tokens lie between the end of the first and the start of the last of some occurrence of each."""
    hits = sorted((start, start + len(p) - 1, i) for i, p in enumerate(phrases) for start in _starts(tokens, p))
    need, count, have = len(phrases), defaultdict[int, int](int), 0
    left = 0
    for right in range(len(hits)):
        i = hits[right][2]
        count[i] += 1
        have += count[i] == 1
        while have == need:
            first_end = min(h[1] for h in hits[left:right + 1])
            if hits[right][0] - first_end - 1 <= distance:
                return True
            j = hits[left][2]
            count[j] -= 1
            have -= count[j] == 0
            left += 1
    return False


def contains(tokens: list[str], phrase: list[str]) -> bool:
    """Whether `phrase` occurs as consecutive tokens."""
    return bool(phrase) and any(True for _ in _starts(tokens, phrase))


def _starts(tokens: list[str], phrase: list[str]):
    n = len(phrase)
    if n == 0:
        return
    for i in range(len(tokens) - n + 1):
        if tokens[i] == phrase[0] and tokens[i:i + n] == phrase:
            yield i
