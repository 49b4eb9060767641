-- A user's unread rows with their flags and conversation in the index itself: register's unread
-- section is an index-only scan of it. Replaces UserMessage_unread_flags_idx (next migration).
CREATE INDEX CONCURRENTLY "UserMessage_unread_conversation_idx" ON "UserMessage" ("userId", "messageId") INCLUDE ("flags", "channelId", "topic", "directGroupId") WHERE ("flags" & 1) = 0;
