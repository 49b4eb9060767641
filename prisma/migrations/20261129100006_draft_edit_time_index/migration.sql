-- A user's drafts in the order they are listed (GET /drafts oldest edit first, register's newest
-- 1,000): read in index order, where the user index made each list sort all of the user's drafts.
-- It replaces Draft_userId_idx (next migration).
CREATE INDEX CONCURRENTLY "Draft_userId_lastEditTime_id_idx" ON "Draft"("userId", "lastEditTime", "id");
