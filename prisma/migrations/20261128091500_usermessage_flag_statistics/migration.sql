-- The planner's estimate of a flag condition such as (flags & 2) <> 0: without statistics on the
-- expression it guesses half the rows, so for a user with millions of rows `is:starred` walked the
-- whole messageId index filtering by user and flag (2.5 s at 10M messages) instead of the starred
-- partial index (3 ms). One statistics object covers each flag expression the partial indexes use;
-- ANALYZE (autovacuum's, or the next manual one) fills it in.
CREATE STATISTICS "UserMessage_flag_bits" ON (flags & 1), (flags & 2), (flags & 56), (flags & 64), (flags & 512) FROM "UserMessage";
ANALYZE "UserMessage";
