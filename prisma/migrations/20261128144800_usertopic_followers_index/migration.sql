-- Who follows a topic, read by every channel message (missed-message emails for followed topics):
-- only followed rows, by channel and topic as topics compare (case-insensitively).
CREATE INDEX CONCURRENTLY "UserTopic_followers_idx" ON "UserTopic" ("channelId", lower("topic")) WHERE "visibility" = 3;
