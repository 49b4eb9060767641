CREATE INDEX CONCURRENTLY "Message_hasAttachment_idx" ON "Message" ("id") WHERE "hasAttachment";
