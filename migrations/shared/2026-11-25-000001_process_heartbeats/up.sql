-- Serving processes announce themselves: each registers a random owner id
-- when it starts and refreshes its heartbeat every 2 s (Unix ms). In-flight
-- idempotency records and job claims name their owner, so a record or
-- claim whose owner is gone or silent for 8 s is abandoned without waiting
-- for its lease.
CREATE TABLE processes (
    id TEXT PRIMARY KEY NOT NULL,
    started_at_ms BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL
);
ALTER TABLE idempotency ADD COLUMN owner_id TEXT;
ALTER TABLE jobs ADD COLUMN owner_id TEXT;
