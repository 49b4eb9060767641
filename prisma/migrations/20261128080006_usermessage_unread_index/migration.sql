-- Zulip's partial indexes on UserMessage: a user's unread, starred, mentioned, alerted and
-- direct messages in id order, whatever the size of their history (flag bits: src/domain/message-flags.ts).
CREATE INDEX CONCURRENTLY "UserMessage_unread_idx" ON "UserMessage" ("userId", "messageId") WHERE ("flags" & 1) = 0;
