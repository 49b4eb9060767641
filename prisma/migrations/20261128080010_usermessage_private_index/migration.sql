CREATE INDEX CONCURRENTLY "UserMessage_is_private_idx" ON "UserMessage" ("userId", "messageId") WHERE ("flags" & 512) <> 0;
