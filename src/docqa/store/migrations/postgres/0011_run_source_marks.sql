-- docqa on PostgreSQL, schema 11: stale marks in a table of their own (as SQLite's schema 9): a document's
-- change marks what it broke with small inserts instead of a new version of every marked citation's row.
CREATE TABLE run_source_marks (
    source_id   BIGINT PRIMARY KEY REFERENCES run_sources(id) ON DELETE CASCADE,
    changed_at  TEXT NOT NULL                  -- when the citation's span changed or its document went
);
INSERT INTO run_source_marks (source_id, changed_at) SELECT id, changed_at FROM run_sources WHERE changed_at IS NOT NULL;
DROP INDEX run_sources_document;
ALTER TABLE run_sources DROP COLUMN changed_at;
CREATE INDEX run_sources_document ON run_sources(document_id);
