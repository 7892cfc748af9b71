-- docqa knowledge base, schema 2: dense vectors in the same file as the chunks they belong to.
-- A chunk names the hash of its enriched text (title / section path + content); vectors are
-- content-addressed by (model, text hash), so equal texts are embedded once and an updated
-- document re-embeds only the chunks whose text changed.  `model` is the embedder's fingerprint
-- key: `docqa reindex` writes the new model's vectors beside the old ones (resumable), then
-- switches the recorded fingerprint and drops the old ones.
ALTER TABLE chunks ADD COLUMN embed_hash TEXT;
CREATE INDEX chunks_embed_hash ON chunks(embed_hash);

-- A rowid table: a 1 KB vector row fits in its leaf page; WITHOUT ROWID would push every row to
-- an overflow page of its own (measured: 4.8 KB per vector instead of 1.1 KB).
CREATE TABLE embeddings (
    id         INTEGER PRIMARY KEY,
    model      TEXT NOT NULL,
    text_hash  TEXT NOT NULL,
    vector     BLOB NOT NULL,              -- float16, unit length
    UNIQUE (model, text_hash)
);

CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
