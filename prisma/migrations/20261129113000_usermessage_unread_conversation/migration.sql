-- An unread UserMessage row carries its message's conversation (channel and topic, or the direct
-- message group), so register's unread section reads the unread index alone instead of one random
-- Message page per unread message. Only unread rows are kept current; on a read row the columns
-- mean nothing. The send statement writes them itself; these triggers cover every other way a row
-- becomes unread (an insert of an unread row, marking unread) and every move of a message.
ALTER TABLE "UserMessage" ADD COLUMN "channelId" INTEGER, ADD COLUMN "topic" TEXT, ADD COLUMN "directGroupId" INTEGER;

CREATE FUNCTION user_message_unread_conversation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT "channelId", topic, "directGroupId" INTO NEW."channelId", NEW.topic, NEW."directGroupId" FROM "Message" WHERE id = NEW."messageId";
  RETURN NEW;
END $$;

CREATE TRIGGER user_message_unread_insert BEFORE INSERT ON "UserMessage" FOR EACH ROW
  WHEN ((NEW.flags & 1) = 0 AND NEW."channelId" IS NULL AND NEW."directGroupId" IS NULL)
  EXECUTE FUNCTION user_message_unread_conversation();
CREATE TRIGGER user_message_unread_again BEFORE UPDATE OF flags ON "UserMessage" FOR EACH ROW
  WHEN ((OLD.flags & 1) <> 0 AND (NEW.flags & 1) = 0)
  EXECUTE FUNCTION user_message_unread_conversation();

CREATE FUNCTION message_moved_unread_conversation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "UserMessage" SET "channelId" = NEW."channelId", topic = NEW.topic WHERE "messageId" = NEW.id AND (flags & 1) = 0;
  RETURN NULL;
END $$;

CREATE TRIGGER message_moved_unread_conversation AFTER UPDATE OF "channelId", topic ON "Message" FOR EACH ROW
  WHEN (OLD."channelId" IS DISTINCT FROM NEW."channelId" OR OLD.topic IS DISTINCT FROM NEW.topic)
  EXECUTE FUNCTION message_moved_unread_conversation();

-- Unread rows written before this migration are filled in batches after start
-- (src/ops/history-upkeep.ts); until then register reads their conversation from Message.
INSERT INTO "HistoryBackfill" ("name", "nextId", "untilId")
SELECT 'unread_conversation', 1, max(id) FROM "Message" HAVING max(id) IS NOT NULL;
