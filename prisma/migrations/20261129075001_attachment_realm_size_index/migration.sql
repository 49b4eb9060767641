-- An organization's upload space (every attachment event, GET /attachments, exports): the sizes of
-- its own uploads, summed from this index alone instead of from every upload of every organization.
CREATE INDEX CONCURRENTLY "Attachment_realmId_size_idx" ON "Attachment" ("realmId", "size");
