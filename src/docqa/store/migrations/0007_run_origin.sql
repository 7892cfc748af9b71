-- docqa knowledge base, schema 7: where a run was asked (cli, mcp, or api: the page and other HTTP
-- clients), so a list of conversations can group those started elsewhere.  NULL for runs recorded
-- before this.
ALTER TABLE runs ADD COLUMN origin TEXT;
