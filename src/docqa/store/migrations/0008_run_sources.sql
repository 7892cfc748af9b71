-- docqa knowledge base, schema 7: what every published answer rested on, one row per citation (the
-- document, its content hash when answered, the chunk and the exact span), so a change to a document
-- marks the answers that cite an earlier version stale (changed_at) in the same transaction; and
-- the latest recheck of a run against the new text (JSON).  Runs recorded before this get today's
-- hash only when the document was not re-indexed since the run, else 'unknown'.
CREATE TABLE run_sources (
    run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    n             INTEGER NOT NULL,            -- the source number the answer cites as [n]
    document_id   TEXT NOT NULL,
    content_hash  TEXT NOT NULL,               -- the document's hash when answered, or 'unknown'
    chunk_id      TEXT NOT NULL,
    char_start    INTEGER NOT NULL,
    char_end      INTEGER NOT NULL,
    quote         TEXT NOT NULL,
    changed_at    TEXT                         -- when the document changed or went (NULL: unchanged)
);
CREATE INDEX run_sources_run ON run_sources(run_id);
-- What a document's change reads of the citations still open, in one index (no table lookups: it runs
-- inside every document write).
CREATE INDEX run_sources_document ON run_sources(document_id, content_hash, char_start, char_end, quote, changed_at)
    WHERE changed_at IS NULL;
ALTER TABLE runs ADD COLUMN recheck TEXT;

INSERT INTO run_sources (run_id, n, document_id, content_hash, chunk_id, char_start, char_end, quote)
SELECT r.id, coalesce(json_extract(c.value, '$.n'), 0), json_extract(c.value, '$.document_id'),
       CASE WHEN d.indexed_at IS NOT NULL AND d.indexed_at <= r.created_at THEN d.content_hash ELSE 'unknown' END,
       coalesce(json_extract(c.value, '$.chunk_id'), ''), coalesce(json_extract(c.value, '$.char_start'), 0),
       coalesce(json_extract(c.value, '$.char_end'), 0), coalesce(json_extract(c.value, '$.quote'), '')
FROM runs r, json_each(r.result, '$.citations') c
LEFT JOIN documents d ON d.id = json_extract(c.value, '$.document_id')
WHERE r.result IS NOT NULL AND json_valid(r.result) AND json_extract(c.value, '$.document_id') IS NOT NULL;
