-- List filters (contract §10): a member's census status as a column, and
-- an index for each filter of each list, ending in the list's keyset
-- order (created_at, id) so a filtered page reads in index order.
--
-- The status is backfilled from the stored member document, which
-- serde_json writes compactly: the structural key reads exactly
-- "status":"terminated" (a string value holding those characters would
-- have its quotes escaped).
ALTER TABLE members ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
UPDATE members SET status = 'terminated' WHERE data LIKE '%"status":"terminated"%';

CREATE INDEX groups_external_id ON groups (partner_id, mode, external_id, created_at, id);
CREATE INDEX groups_domain ON groups (partner_id, mode, domain, created_at, id);
CREATE INDEX groups_status ON groups (partner_id, mode, status, created_at, id);
CREATE INDEX quotes_status ON quotes (group_id, status, created_at, id);
CREATE INDEX quotes_kind ON quotes (group_id, kind, created_at, id);
CREATE INDEX events_type ON events (partner_id, mode, event_type, created_at, id);
CREATE INDEX members_status ON members (group_id, status, created_at, id);
CREATE INDEX members_enrollment_status ON members (group_id, enrollment_status, created_at, id);
