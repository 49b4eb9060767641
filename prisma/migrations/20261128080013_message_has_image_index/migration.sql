CREATE INDEX CONCURRENTLY "Message_hasImage_idx" ON "Message" ("id") WHERE "hasImage";
