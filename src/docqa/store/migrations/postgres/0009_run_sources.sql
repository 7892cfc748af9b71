-- docqa on PostgreSQL, schema 8: what every published answer rested on, one row per citation, and
-- the latest recheck of a run (as SQLite's schema 7, whose comments say more).  Runs recorded before
-- this get today's hash only when the document was not re-indexed since the run, else 'unknown'.
CREATE TABLE run_sources (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    n             INTEGER NOT NULL,
    document_id   TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    chunk_id      TEXT NOT NULL,
    char_start    INTEGER NOT NULL,
    char_end      INTEGER NOT NULL,
    quote         TEXT NOT NULL,
    changed_at    TEXT
);
CREATE INDEX run_sources_run ON run_sources(run_id);
CREATE INDEX run_sources_document ON run_sources(document_id) WHERE changed_at IS NULL;
ALTER TABLE runs ADD COLUMN recheck TEXT;

INSERT INTO run_sources (run_id, n, document_id, content_hash, chunk_id, char_start, char_end, quote)
SELECT r.id, coalesce((c.value->>'n')::int, 0), c.value->>'document_id',
       CASE WHEN d.indexed_at IS NOT NULL AND d.indexed_at COLLATE "C" <= r.created_at COLLATE "C" THEN d.content_hash ELSE 'unknown' END,
       coalesce(c.value->>'chunk_id', ''), coalesce((c.value->>'char_start')::int, 0),
       coalesce((c.value->>'char_end')::int, 0), coalesce(c.value->>'quote', '')
FROM runs r
CROSS JOIN LATERAL jsonb_array_elements(coalesce(r.result::jsonb->'citations', '[]'::jsonb)) AS c(value)
LEFT JOIN documents d ON d.id = c.value->>'document_id'
WHERE r.result IS NOT NULL AND jsonb_typeof(r.result::jsonb->'citations') = 'array' AND c.value->>'document_id' IS NOT NULL;
