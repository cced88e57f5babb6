ALTER TABLE jobs DROP COLUMN owner_id;
ALTER TABLE idempotency DROP COLUMN owner_id;
DROP TABLE processes;
