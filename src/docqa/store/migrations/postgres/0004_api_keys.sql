-- docqa on PostgreSQL, schema 4: API keys (only each key's SHA-256 is kept).
CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    prefix        TEXT NOT NULL,
    hash          TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
    collections   TEXT NOT NULL DEFAULT '[]',
    name          TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    last_used_at  TEXT,
    revoked_at    TEXT
);
