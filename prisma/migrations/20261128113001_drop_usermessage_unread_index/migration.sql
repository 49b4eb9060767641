DROP INDEX CONCURRENTLY "UserMessage_unread_idx";
