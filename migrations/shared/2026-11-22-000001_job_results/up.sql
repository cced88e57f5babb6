-- The result a finished job leaves (the market comparison's simulation).
ALTER TABLE jobs ADD COLUMN result TEXT;
CREATE INDEX jobs_latest ON jobs (group_id, kind, state, run_after_ms);
