-- docqa knowledge base, schema 9: stale marks in a table of their own, and whether a citation's quote is
-- its version's text at its offsets.  A document's change then marks what it broke with small inserts
-- (it rewrote every marked citation's row and index entry), and passes over, on the index alone, the
-- citations it cannot have touched: those answered from the version being replaced whose span lies in
-- the text both versions start with, or deep in the text both end with (store/sqlite/stale.py).
-- run_sources gets an INTEGER PRIMARY KEY: a mark names its citation by an id no VACUUM renumbers.
CREATE TABLE run_sources_new (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    n             INTEGER NOT NULL,            -- the source number the answer cites as [n]
    document_id   TEXT NOT NULL,
    content_hash  TEXT NOT NULL,               -- the document's hash when answered, or 'unknown'
    chunk_id      TEXT NOT NULL,
    char_start    INTEGER NOT NULL,
    char_end      INTEGER NOT NULL,
    quote         TEXT NOT NULL,
    exact         INTEGER NOT NULL DEFAULT 0   -- 1: quote is version content_hash's text at [char_start, char_end)
);
INSERT INTO run_sources_new (id, run_id, n, document_id, content_hash, chunk_id, char_start, char_end, quote, exact)
SELECT s.rowid, s.run_id, s.n, s.document_id, s.content_hash, s.chunk_id, s.char_start, s.char_end, s.quote,
       coalesce(d.content_hash = s.content_hash AND s.char_start >= 0 AND s.char_end >= s.char_start
                AND substr(t.text, s.char_start + 1, s.char_end - s.char_start) = s.quote, 0)
FROM run_sources s
LEFT JOIN documents d ON d.id = s.document_id
LEFT JOIN document_texts t ON t.document_id = s.document_id;
CREATE TEMP TABLE run_source_marks_old AS SELECT rowid AS source_id, changed_at FROM run_sources WHERE changed_at IS NOT NULL;
DROP TABLE run_sources;
ALTER TABLE run_sources_new RENAME TO run_sources;
-- A citation's mark: when its span changed or its document went (no row: unchanged).  No foreign key: its
-- check would look up every marked citation's row (the cold pages a mark no longer writes); the trigger below
-- removes the marks of citations that go (a run saved again or deleted).
CREATE TABLE run_source_marks (
    source_id   INTEGER PRIMARY KEY,
    changed_at  TEXT NOT NULL
);
INSERT INTO run_source_marks SELECT source_id, changed_at FROM run_source_marks_old;
DROP TABLE run_source_marks_old;
CREATE TRIGGER run_sources_unmark AFTER DELETE ON run_sources BEGIN
    DELETE FROM run_source_marks WHERE source_id = old.id;
END;
CREATE INDEX run_sources_run ON run_sources(run_id);
-- What a document's change reads of its citations, in one index: the exact citations of the replaced version
-- by where their span ends (no table lookups: their quote is the old text at their offsets), the rest apart.
CREATE INDEX run_sources_document ON run_sources(document_id, exact, content_hash, char_end, char_start);
