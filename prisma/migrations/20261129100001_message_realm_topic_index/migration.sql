-- A topic narrowed to without its channel (GET /messages with `topic:` alone): the organization's
-- messages of that topic in id order (Zulip's zerver_message_realm_upper_subject), where a rare
-- topic walked the whole of Message (1.6 s at 1M messages).
CREATE INDEX CONCURRENTLY "Message_realmId_upper_topic_id_idx" ON "Message" ("realmId", upper("topic"), "id") WHERE "channelId" IS NOT NULL;
