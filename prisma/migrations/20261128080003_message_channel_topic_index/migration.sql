-- A channel's topic in id order, topics compared ignoring case as Zulip does (upper).
CREATE INDEX CONCURRENTLY "Message_channelId_upper_topic_id_idx" ON "Message" ("channelId", upper("topic"), "id");
