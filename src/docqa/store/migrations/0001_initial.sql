-- docqa knowledge base, schema 1: collections, documents, their text, chunks, full-text.
CREATE TABLE collections (
    name        TEXT PRIMARY KEY,
    created_at  TEXT NOT NULL
);

CREATE TABLE documents (
    id            TEXT PRIMARY KEY,            -- hash of (collection, path)
    collection    TEXT NOT NULL REFERENCES collections(name),
    path          TEXT NOT NULL,               -- absolute path of the source file
    type          TEXT NOT NULL,               -- format family (markdown, pdf, code, ...)
    language      TEXT,                        -- programming language for code
    title         TEXT NOT NULL DEFAULT '',
    keywords      TEXT NOT NULL DEFAULT '[]',  -- JSON array
    summary       TEXT NOT NULL DEFAULT '',
    size          INTEGER NOT NULL DEFAULT 0,
    mtime_ns      INTEGER NOT NULL DEFAULT 0,
    content_hash  TEXT NOT NULL DEFAULT '',
    chunk_count   INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL,               -- ok | error
    error         TEXT,                        -- why the last ingest failed
    indexed_at    TEXT NOT NULL,
    metadata      TEXT NOT NULL DEFAULT '{}',  -- JSON object from the reader
    fts_keywords  TEXT NOT NULL DEFAULT '',    -- keywords as indexed (Chinese segmented)
    fts_summary   TEXT NOT NULL DEFAULT '',    -- summary as indexed
    UNIQUE (collection, path)
);
CREATE INDEX documents_path ON documents(path);

CREATE TABLE document_texts (
    document_id  TEXT PRIMARY KEY REFERENCES documents(id),
    text         TEXT NOT NULL
);

CREATE TABLE chunks (
    rowid        INTEGER PRIMARY KEY,          -- shared with chunks_fts.rowid
    id           TEXT NOT NULL UNIQUE,
    document_id  TEXT NOT NULL REFERENCES documents(id),
    ordinal      INTEGER NOT NULL,
    text         TEXT NOT NULL,                -- == document text[char_start:char_end]
    context      TEXT NOT NULL DEFAULT '',     -- indexed with the chunk, outside its span
    char_start   INTEGER NOT NULL,
    char_end     INTEGER NOT NULL,
    section      TEXT NOT NULL DEFAULT '[]',   -- JSON array: heading path
    page_start   INTEGER,
    page_end     INTEGER,
    line_start   INTEGER NOT NULL,
    line_end     INTEGER NOT NULL,
    symbol       TEXT,
    language     TEXT,
    tokens       INTEGER NOT NULL DEFAULT 0,
    fts_title    TEXT NOT NULL DEFAULT '',     -- title / section path / symbol as indexed
    fts_content  TEXT                          -- content as indexed, when it differs from text
);
CREATE INDEX chunks_document ON chunks(document_id, ordinal);

-- Full-text: Chinese pre-segmented with jieba's dictionary, Latin stemmed by porter.
-- Weighted bm25: title 4, keywords 3, summary 3, content 1.  The summary is indexed with a
-- document's first chunk only: repeated on every chunk it doubled the posting lists and the
-- query time at 100k chunks while ranking every chunk of the document alike.  External content: the indexed
-- values live in chunks/documents (no second copy of the text); deletes read them back from
-- this view, so the index is always cleaned with exactly the tokens it was given.
CREATE VIEW chunks_fts_source AS
    SELECT c.rowid AS rowid, c.fts_title AS title, d.fts_keywords AS keywords,
           CASE WHEN c.ordinal = 0 THEN d.fts_summary ELSE '' END AS summary,
           coalesce(c.fts_content, c.text) AS content
    FROM chunks c JOIN documents d ON d.id = c.document_id;

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, keywords, summary, content,
    content = 'chunks_fts_source', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
