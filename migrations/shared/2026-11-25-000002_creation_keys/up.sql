-- The resource an Idempotency-Key created, written in the creation's own
-- transaction. A key whose first execution committed its resource but died
-- before its answer was stored is executed again once its owner is known
-- dead; the second execution finds the resource here and answers with it
-- instead of creating another. Rows older than the 24 h replay window are
-- replaced when the key is used again.
CREATE TABLE creation_keys (
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (partner_id, mode, idem_key)
);
