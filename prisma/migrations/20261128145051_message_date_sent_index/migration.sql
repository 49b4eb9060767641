-- When messages were sent, by block range: the digest's week starts at the smallest id sent in it,
-- read from the few recent block ranges instead of every message of the user's channels. A BRIN
-- index of a history written in date order is a few pages, and costs a send next to nothing.
CREATE INDEX CONCURRENTLY "Message_dateSent_idx" ON "Message" USING BRIN ("dateSent");
