-- docqa knowledge base, schema 10: a document's keywords are indexed with its first chunk only, as its summary
-- is.  On every chunk, a document-wide field matched every chunk of the document alike: a question sharing a
-- word with a manual page's keywords drew all its chunks into BM25's top hits, above the one chunk of another
-- file that answers.  The full-text index is external content and its deletes read this view back, so the view
-- and the index change together: the index is rebuilt from the new view (one pass over the chunks).
DROP VIEW chunks_fts_source;
CREATE VIEW chunks_fts_source AS
    SELECT c.rowid AS rowid, c.fts_title AS title,
           CASE WHEN c.ordinal = 0 THEN d.fts_keywords ELSE '' END AS keywords,
           CASE WHEN c.ordinal = 0 THEN d.fts_summary ELSE '' END AS summary,
           coalesce(c.fts_content, c.text) AS content
    FROM chunks c JOIN documents d ON d.id = c.document_id;
INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');
