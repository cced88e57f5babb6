-- Webhook operations (partner portal §3): an endpoint's health — whether
-- it is enabled and since when every attempt has failed (Unix ms) — and
-- the delivery log, one row per attempt (created_at in Unix ms), kept 30
-- days: its outcome, failure reason, latency and the first 1 KiB of the
-- answer. Rows are read per scope, newest first, and per event. A secret
-- rotation keeps the previous secret, sealed, until its grace period ends
-- (Unix seconds).
ALTER TABLE webhook_endpoints ADD COLUMN state TEXT NOT NULL DEFAULT 'enabled';
ALTER TABLE webhook_endpoints ADD COLUMN failing_since_ms BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_sealed_secret BLOB;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at BIGINT;

CREATE TABLE webhook_attempts (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    status_code INTEGER,
    latency_ms INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    failure_reason TEXT,
    response_body TEXT
);
CREATE INDEX webhook_attempts_scope ON webhook_attempts (partner_id, mode, created_at, id);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);
CREATE INDEX webhook_attempts_created ON webhook_attempts (created_at);
