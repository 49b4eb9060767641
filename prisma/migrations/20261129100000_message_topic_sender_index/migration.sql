-- A topic's senders (the participants an @**topic** mention reaches) by a skip scan: one descent per
-- sender, where the (channel, upper(topic), id) index read every message of the topic.
CREATE INDEX CONCURRENTLY "Message_channelId_upper_topic_senderId_idx" ON "Message" ("channelId", upper("topic"), "senderId", "id");
