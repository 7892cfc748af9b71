-- docqa on PostgreSQL, schema 2: dense vectors (pgvector), content-addressed by (model, text hash)
-- as in SQLite.  halfvec without a fixed width: the HNSW index (cosine) is an expression index per
-- model, created when that model's first vectors arrive (vectors.py), since the width is only
-- known then.
CREATE EXTENSION IF NOT EXISTS vector;
ALTER TABLE chunks ADD COLUMN embed_hash TEXT;
CREATE INDEX chunks_embed_hash ON chunks(embed_hash);

CREATE TABLE embeddings (
    model      TEXT NOT NULL,
    text_hash  TEXT NOT NULL,
    vector     halfvec NOT NULL,          -- unit length
    PRIMARY KEY (model, text_hash)
);

CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
