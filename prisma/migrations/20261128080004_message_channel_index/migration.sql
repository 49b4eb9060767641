CREATE INDEX CONCURRENTLY "Message_channelId_id_idx" ON "Message" ("channelId", "id");
