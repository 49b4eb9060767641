-- has:link, has:attachment, has:image and is:resolved in id order, however few of history's messages match.
CREATE INDEX CONCURRENTLY "Message_hasLink_idx" ON "Message" ("id") WHERE "hasLink";
