-- The rows still to send, soonest first (the delivery loop's next due row and when it falls due):
-- delivered and failed rows stay forever, and the plain timestamp index walked all of them first.
-- It replaces ScheduledMessage_scheduledTimestamp_idx (dropped two migrations on).
CREATE INDEX CONCURRENTLY "ScheduledMessage_due_idx" ON "ScheduledMessage" ("scheduledTimestamp", "id") WHERE NOT "delivered" AND NOT "failed";
