DROP INDEX CONCURRENTLY "UserMessage_unread_flags_idx";
