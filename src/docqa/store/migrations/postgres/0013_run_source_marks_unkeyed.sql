-- docqa on PostgreSQL, schema 13: a stale mark without a foreign key (as SQLite's schema 9).  The key's check
-- looked up and locked (FOR KEY SHARE) the row of every citation a document's change marked: a write to each
-- of those rows of run_sources, pages the mark itself does not touch.  The trigger below does what the key's
-- ON DELETE CASCADE did: the marks of citations that go (a run saved again, or deleted with its session) go
-- with them.  A mark whose citation went between the marking's select and its insert (a run saved again
-- meanwhile) is left behind, read by nothing: every read joins the marks to run_sources, whose ids are never
-- used again.  Written to run again safely (the tests put earlier schemas back).
ALTER TABLE run_source_marks DROP CONSTRAINT IF EXISTS run_source_marks_source_id_fkey;
CREATE OR REPLACE FUNCTION run_sources_unmark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM run_source_marks WHERE source_id = OLD.id;
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS run_sources_unmark ON run_sources;
CREATE TRIGGER run_sources_unmark AFTER DELETE ON run_sources FOR EACH ROW EXECUTE FUNCTION run_sources_unmark();
