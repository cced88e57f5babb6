ALTER TABLE idempotency DROP COLUMN attempt;
