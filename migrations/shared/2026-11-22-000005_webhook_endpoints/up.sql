-- One webhook endpoint per partner and mode; the signing secret is sealed
-- (AES-256-GCM under the sealing key) and never stored in the clear.
CREATE TABLE webhook_endpoints (
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    url TEXT NOT NULL,
    sealed_secret BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (partner_id, mode)
);
