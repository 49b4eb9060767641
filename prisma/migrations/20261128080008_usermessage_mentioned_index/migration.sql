-- mentioned, stream_wildcard_mentioned or topic_wildcard_mentioned.
CREATE INDEX CONCURRENTLY "UserMessage_mentioned_idx" ON "UserMessage" ("userId", "messageId") WHERE ("flags" & 56) <> 0;
