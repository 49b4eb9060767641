-- Resolved topics start with the check mark (RESOLVED_TOPIC_PREFIX, src/actions/messages.ts).
CREATE INDEX CONCURRENTLY "Message_resolved_idx" ON "Message" ("channelId", "id") WHERE "topic" LIKE '✔ %';
