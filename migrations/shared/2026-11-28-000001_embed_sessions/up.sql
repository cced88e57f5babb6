-- The offer iframe (onboarding §5): embed sessions are stored, keyed by
-- the SHA-256 of the URL's opaque token, with their state (the code sent,
-- its sends, the verified address, the acceptance) as a typed document
-- and a version that every change must match. A partner's embed origins
-- (the pages that may frame the offer) are a JSON array of origins. A
-- quote's acceptance is a JSON document, set once.
CREATE TABLE embed_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    group_id TEXT NOT NULL,
    quote_id TEXT NOT NULL,
    state TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX embed_sessions_expires ON embed_sessions (expires_at);

ALTER TABLE partners ADD COLUMN embed_origins TEXT NOT NULL DEFAULT '[]';
ALTER TABLE quotes ADD COLUMN acceptance TEXT;
