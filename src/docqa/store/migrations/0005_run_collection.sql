-- docqa knowledge base, schema 5: the collection a run asked (NULL: every collection), so a key
-- scoped to collections sees only the runs and conversations of those.  Runs recorded before
-- this take it from their published result.
ALTER TABLE runs ADD COLUMN collection TEXT;
UPDATE runs SET collection = json_extract(result, '$.retrieval.collection') WHERE result IS NOT NULL;
CREATE INDEX runs_collection ON runs(collection, created_at);
