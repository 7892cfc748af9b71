-- docqa knowledge base, schema 4: API keys for the HTTP API and the MCP server over HTTP.
-- A key is shown once, when it is created; only its SHA-256 is kept (a key is 32 random bytes,
-- so no salt or slow hash is needed: there is no dictionary to try).  `prefix` is the first
-- characters of the key, kept so people can tell their keys apart in `docqa keys list`.
CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    prefix        TEXT NOT NULL,
    hash          TEXT NOT NULL UNIQUE,            -- hex SHA-256 of the whole key
    role          TEXT NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
    collections   TEXT NOT NULL DEFAULT '[]',      -- JSON list of collection names; empty: all
    name          TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    last_used_at  TEXT,
    revoked_at    TEXT                             -- set by `docqa keys revoke`; the row stays for audit
);
