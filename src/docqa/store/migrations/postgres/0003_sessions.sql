-- docqa on PostgreSQL, schema 3: sessions, runs and feedback (times as ISO 8601 UTC text).
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL DEFAULT '',
    collection  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE runs (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,  -- insertion order (SQLite's rowid)
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question     TEXT NOT NULL,
    standalone   TEXT,
    mode         TEXT,
    status       TEXT NOT NULL CHECK (status IN ('RUNNING', 'SUCCESS', 'FALLBACK', 'FAILED', 'CANCELLED')),
    answerable   BOOLEAN,
    confidence   TEXT,
    answer       TEXT,
    result       TEXT,                         -- JSON, as text (kept byte for byte)
    trace        TEXT NOT NULL DEFAULT '[]',
    timings      TEXT NOT NULL DEFAULT '{}',
    usage        TEXT NOT NULL DEFAULT '{}',
    model        TEXT,
    error        TEXT,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);
CREATE INDEX runs_session ON runs(session_id, created_at);
CREATE INDEX runs_created ON runs(created_at);

CREATE TABLE feedback (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rating      TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    comment     TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX feedback_run ON feedback(run_id, id);
