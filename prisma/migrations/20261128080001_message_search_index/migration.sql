CREATE INDEX CONCURRENTLY "Message_searchVector_idx" ON "Message" USING GIN ("searchVector");
