-- A topic's senders (the participants an @**topic** mention reaches) by a skip scan: one descent per
-- sender, where the (channel, upper(topic), id) index read every message of the topic. Partial on a
-- condition that always holds but that a statement must state (or imply, as `"senderId" = $1`
-- does), so that the planner keeps to the topic's id index for the statements that name no sender.
CREATE INDEX CONCURRENTLY "Message_channelId_upper_topic_senderId_idx" ON "Message" ("channelId", upper("topic"), "senderId", "id") WHERE "senderId" IS NOT NULL;
