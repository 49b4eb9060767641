-- Full-text search (Zulip's search_tsvector): the topic and the rendered content, whose HTML
-- tags the text-search parser skips. A trigger keeps it, so rows written by COPY get it too; rows
-- older than this migration are filled in batches after start (src/ops/history-upkeep.ts).
ALTER TABLE "Message" ADD COLUMN "searchVector" tsvector;

CREATE FUNCTION message_search_vector(topic TEXT, rendered TEXT) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_tsvector('english'::regconfig, topic || ' ' || rendered) $$;

CREATE FUNCTION message_search_vector_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."searchVector" := message_search_vector(NEW.topic, NEW."renderedContent");
  RETURN NEW;
END $$;

CREATE TRIGGER message_search_vector BEFORE INSERT OR UPDATE OF topic, "renderedContent" ON "Message"
  FOR EACH ROW EXECUTE FUNCTION message_search_vector_trigger();

-- Channel traffic per day (Zulip's analytics counts), for stream_weekly_traffic and
-- is_recently_active without reading Message.
CREATE TABLE "ChannelMessageDay" (
    "channelId" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "messages" INTEGER NOT NULL,

    CONSTRAINT "ChannelMessageDay_pkey" PRIMARY KEY ("channelId","day")
);

-- How far (in message ids) ChannelMessageDay has counted.
CREATE TABLE "ChannelTrafficState" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "countedToMessageId" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "ChannelTrafficState_pkey" PRIMARY KEY ("id")
);
INSERT INTO "ChannelTrafficState" ("id", "countedToMessageId") VALUES (1, 0);

-- Counts the channel messages written since the last call, at most `batch` ids of them (all when
-- null); returns how many ids it went through. Deleted or moved messages keep being counted where
-- they were sent, as in Zulip's analytics: the figures are estimates.
CREATE FUNCTION count_channel_traffic(batch INTEGER) RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  done_to INTEGER;
  up_to INTEGER;
BEGIN
  SELECT "countedToMessageId" INTO done_to FROM "ChannelTrafficState" WHERE id = 1 FOR UPDATE;
  SELECT coalesce(max(id), 0) INTO up_to FROM "Message";
  IF batch IS NOT NULL THEN up_to := least(up_to, done_to + batch); END IF;
  IF up_to <= done_to THEN RETURN 0; END IF;
  INSERT INTO "ChannelMessageDay" ("channelId", "day", "messages")
    SELECT "channelId", "dateSent"::date, count(*) FROM "Message"
     WHERE id > done_to AND id <= up_to AND "channelId" IS NOT NULL GROUP BY 1, 2
  ON CONFLICT ("channelId", "day") DO UPDATE SET "messages" = "ChannelMessageDay"."messages" + EXCLUDED."messages";
  UPDATE "ChannelTrafficState" SET "countedToMessageId" = up_to WHERE id = 1;
  RETURN up_to - done_to;
END $$;

-- Rows written before this migration that a batched job still has to fill in (message ids
-- nextId..untilId; the row goes once done): the search vector, and the is_private flag bit (512)
-- of direct messages' UserMessage rows.
CREATE TABLE "HistoryBackfill" (
    "name" TEXT NOT NULL,
    "nextId" INTEGER NOT NULL,
    "untilId" INTEGER NOT NULL,

    CONSTRAINT "HistoryBackfill_pkey" PRIMARY KEY ("name")
);
INSERT INTO "HistoryBackfill" ("name", "nextId", "untilId")
SELECT name, 1, max_id FROM (SELECT max(id) AS max_id FROM "Message") m, (VALUES ('search_vector'), ('is_private')) AS v(name)
WHERE max_id IS NOT NULL;
