-- A user's uploads (GET /attachments) by their owner: without it every upload of every organization was read.
CREATE INDEX CONCURRENTLY "Attachment_ownerId_idx" ON "Attachment" ("ownerId");
