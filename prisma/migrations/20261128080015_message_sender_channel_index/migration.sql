-- A sender's messages in one channel in id order (Zulip's realm_sender_recipient): the
-- sender + channel narrow reads neither all of the channel nor all of the sender.
CREATE INDEX CONCURRENTLY "Message_senderId_channelId_id_idx" ON "Message" ("senderId", "channelId", "id");
