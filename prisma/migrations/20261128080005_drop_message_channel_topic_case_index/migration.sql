DROP INDEX CONCURRENTLY "Message_channelId_topic_id_idx";
