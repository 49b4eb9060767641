-- A user's unread messages with their flags in the index itself: register's unread section (which
-- needs the mention bits) and first_unread read it without visiting UserMessage's heap, one random
-- page per unread message otherwise. It replaces UserMessage_unread_idx (next migration); flags
-- are in that index's predicate already, so carrying them costs updates nothing.
CREATE INDEX CONCURRENTLY "UserMessage_unread_flags_idx" ON "UserMessage" ("userId", "messageId") INCLUDE ("flags") WHERE ("flags" & 1) = 0;
