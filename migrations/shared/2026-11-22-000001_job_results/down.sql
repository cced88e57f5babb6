DROP INDEX jobs_latest;
ALTER TABLE jobs DROP COLUMN result;
