CREATE INDEX CONCURRENTLY "UserMessage_starred_idx" ON "UserMessage" ("userId", "messageId") WHERE ("flags" & 2) <> 0;
