CREATE INDEX CONCURRENTLY "UserMessage_has_alert_word_idx" ON "UserMessage" ("userId", "messageId") WHERE ("flags" & 64) <> 0;
