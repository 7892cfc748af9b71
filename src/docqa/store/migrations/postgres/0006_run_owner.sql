-- docqa on PostgreSQL, schema 6: which process is answering a run (host/pid/process start).
ALTER TABLE runs ADD COLUMN owner TEXT;
CREATE INDEX runs_status ON runs(status);
