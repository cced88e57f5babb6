DROP INDEX members_enrollment_status;
DROP INDEX members_status;
DROP INDEX events_type;
DROP INDEX quotes_kind;
DROP INDEX quotes_status;
DROP INDEX groups_status;
DROP INDEX groups_domain;
DROP INDEX groups_external_id;
ALTER TABLE members DROP COLUMN status;
