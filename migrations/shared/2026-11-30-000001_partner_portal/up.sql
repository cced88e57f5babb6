-- The partner portal (partner-portal §1): go-live step (c) on the
-- partner; portal users with their roles, set-password links (only the
-- SHA-256 of a token is stored), TOTP secrets (sealed) and recovery codes
-- (SHA-256 only); server-side sessions that remember the mode the pages
-- show; and the audit log, kept one year.
ALTER TABLE partners ADD COLUMN commercial_done_at BIGINT;

CREATE TABLE partner_users (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    password_hash TEXT,
    failures TEXT NOT NULL DEFAULT '',
    locked_until BIGINT,
    totp_sealed TEXT,
    totp_last_step BIGINT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX partner_users_email ON partner_users (partner_id, email);
CREATE INDEX partner_users_by_email ON partner_users (email);

CREATE TABLE partner_user_links (
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT,
    superseded_at BIGINT
);
CREATE INDEX partner_user_links_user ON partner_user_links (user_id);

CREATE TABLE partner_recovery_codes (
    user_id TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    used_at BIGINT,
    PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE partner_sessions (
    id_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT,
    second_factor_pending BOOLEAN NOT NULL DEFAULT FALSE,
    csrf TEXT NOT NULL,
    mode TEXT NOT NULL DEFAULT 'test',
    created_at BIGINT NOT NULL,
    seen_at BIGINT NOT NULL
);
CREATE INDEX partner_sessions_user ON partner_sessions (user_id);
CREATE INDEX partner_sessions_seen ON partner_sessions (seen_at);

CREATE TABLE partner_audit (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    user_email TEXT NOT NULL,
    ip TEXT,
    action TEXT NOT NULL,
    target TEXT NOT NULL
);
CREATE INDEX partner_audit_partner ON partner_audit (partner_id, created_at, id);
CREATE INDEX partner_audit_at ON partner_audit (created_at);
