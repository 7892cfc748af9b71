-- docqa on PostgreSQL, schema 7: several API servers ('docqa serve' replicas) on one database.
-- Each replica beats here every few seconds (database time: no clock skew between hosts).
CREATE TABLE replicas (
    id          TEXT PRIMARY KEY,                     -- host/pid/process start, as a run's owner
    started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    beat_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Steer, follow up or cancel a run that another replica is answering: written here by the replica
-- that got the request, taken (woken by NOTIFY docqa_run_commands) and answered by the run's owner.
CREATE TABLE run_commands (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      TEXT NOT NULL,
    owner       TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('steer', 'follow_up', 'cancel')),
    text        TEXT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    accepted    BOOLEAN                               -- NULL until the owner has answered
);
CREATE INDEX run_commands_pending ON run_commands(owner) WHERE accepted IS NULL;

-- Background jobs (upload, ingest, reindex, watch): readable through every replica.
CREATE TABLE jobs (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    collection  TEXT,
    owner       TEXT NOT NULL,                        -- the replica that runs it
    status      TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    data        TEXT NOT NULL,                        -- the job as the API shows it (JSON)
    created_at  TEXT NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX jobs_open ON jobs(owner) WHERE status IN ('queued', 'running');
