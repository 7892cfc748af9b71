-- docqa on PostgreSQL, schema 12: whether a citation's quote is its version's text at its offsets (as SQLite's
-- schema 9).  A document's change then passes over, on the index alone, the citations it cannot have touched:
-- those answered from the version being replaced whose span lies in the text both versions start with, or deep
-- in the text both end with (store/postgres/stale.py).  Citations recorded before this stay not exact: each is
-- judged against the new text, as before.
ALTER TABLE run_sources ADD COLUMN exact BOOLEAN NOT NULL DEFAULT FALSE;
-- What a document's change reads of its citations, in one index: the exact citations of the replaced version
-- by where their span ends (no table lookups: their quote is the old text at their offsets), the rest apart.
DROP INDEX run_sources_document;
CREATE INDEX run_sources_document ON run_sources(document_id, exact, content_hash, char_end, char_start);
