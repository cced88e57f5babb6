ALTER TABLE members DROP COLUMN cobra_deadline;
ALTER TABLE members DROP COLUMN termination_date;
ALTER TABLE members DROP COLUMN effective_date;
ALTER TABLE members DROP COLUMN tier;
ALTER TABLE members DROP COLUMN invitation_status;
ALTER TABLE members DROP COLUMN enrollment_status;
