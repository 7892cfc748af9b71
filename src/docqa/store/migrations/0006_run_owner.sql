-- docqa knowledge base, schema 6: which process is answering a run (host/pid/process start), so a run
-- whose process died (killed, crashed, power cut) can be marked FAILED the next time the knowledge base
-- is opened instead of staying RUNNING for ever.  NULL for runs recorded before this.
ALTER TABLE runs ADD COLUMN owner TEXT;
CREATE INDEX runs_status ON runs(status);
