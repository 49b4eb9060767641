DROP INDEX CONCURRENTLY "ScheduledMessage_scheduledTimestamp_idx";
