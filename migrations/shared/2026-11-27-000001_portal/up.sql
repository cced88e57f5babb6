-- The hosted employer portal (onboarding §3): one account per hosted
-- enrollment (its signatory), its set-password links (only the SHA-256 of
-- a token is looked up; the token is kept sealed so that the enrollment
-- can show the newest unused link again) and server-side sessions (only
-- the SHA-256 of a session id is stored).
CREATE TABLE portal_accounts (
    enrollment_id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    group_id TEXT NOT NULL,
    email TEXT NOT NULL,
    password_hash TEXT,
    failures TEXT NOT NULL DEFAULT '',
    locked_until BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX portal_accounts_email ON portal_accounts (email);

CREATE TABLE portal_links (
    token_hash TEXT PRIMARY KEY NOT NULL,
    enrollment_id TEXT NOT NULL,
    token_sealed TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT,
    superseded_at BIGINT
);
CREATE INDEX portal_links_enrollment ON portal_links (enrollment_id);

CREATE TABLE portal_sessions (
    id_hash TEXT PRIMARY KEY NOT NULL,
    enrollment_id TEXT,
    csrf TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    seen_at BIGINT NOT NULL
);
CREATE INDEX portal_sessions_enrollment ON portal_sessions (enrollment_id);
CREATE INDEX portal_sessions_seen ON portal_sessions (seen_at);
