-- docqa knowledge base, schema 3: conversations (sessions), runs (the audit trail of every
-- question asked) and feedback, in the same file as the documents they were answered from.
-- Times are ISO 8601 UTC strings, so `created_at >= '2026-01-31'` filters by day.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL DEFAULT '',
    collection  TEXT,                          -- the collection asked, NULL for all
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL                  -- bumped by every run saved in the session
);

CREATE TABLE runs (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question     TEXT NOT NULL,
    standalone   TEXT,                         -- the question condensed with the conversation so far
    mode         TEXT,                         -- pipeline | agent | extractive | catalog
    status       TEXT NOT NULL CHECK (status IN ('RUNNING', 'SUCCESS', 'FALLBACK', 'FAILED', 'CANCELLED')),
    answerable   INTEGER,                      -- 1 / 0, NULL while running or when it failed
    confidence   TEXT,                         -- high | medium | low
    answer       TEXT,                         -- the answer text (for the Q&A log)
    result       TEXT,                         -- JSON: the published result (Answer.to_dict())
    trace        TEXT NOT NULL DEFAULT '[]',   -- JSON list: stages and model calls, for audit and replay
    timings      TEXT NOT NULL DEFAULT '{}',   -- JSON: seconds per stage
    usage        TEXT NOT NULL DEFAULT '{}',   -- JSON: tokens, calls
    model        TEXT,
    error        TEXT,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);
CREATE INDEX runs_session ON runs(session_id, created_at);
CREATE INDEX runs_created ON runs(created_at);

CREATE TABLE feedback (
    id          INTEGER PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rating      TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    comment     TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX feedback_run ON feedback(run_id, id);
