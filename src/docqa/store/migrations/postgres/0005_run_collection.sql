-- docqa on PostgreSQL, schema 5: the collection a run asked (NULL: every collection).
ALTER TABLE runs ADD COLUMN collection TEXT;
UPDATE runs SET collection = (result::jsonb) #>> '{retrieval,collection}' WHERE result IS NOT NULL;
CREATE INDEX runs_collection ON runs(collection, created_at);
