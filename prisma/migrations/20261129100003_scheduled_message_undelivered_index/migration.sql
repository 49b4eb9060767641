-- A user's scheduled messages or reminders not yet delivered, in the order GET lists them, without
-- their delivered ones. It replaces ScheduledMessage_senderId_deliveryType_idx (dropped two migrations on).
CREATE INDEX CONCURRENTLY "ScheduledMessage_undelivered_idx" ON "ScheduledMessage" ("senderId", "deliveryType", "scheduledTimestamp", "id") WHERE NOT "delivered";
