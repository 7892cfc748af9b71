-- docqa on PostgreSQL, schema 10: the postings of a term in impact order (field-weighted count
-- descending, then chunk length ascending), so BM25's top k reads a common term's strongest
-- postings only (fulltext.py: exact top k with early termination) instead of every one of them.
-- Keyed by `term COLLATE "C"`: only the queries that say so use it, and the look-ups of given
-- (term, chunk) pairs keep the primary key (this index would read every posting of the term).
CREATE INDEX fts_postings_impact ON fts_postings ((term COLLATE "C"), freq DESC, length) INCLUDE (chunk);
