-- Initial schema. Ids are TEXT, money BIGINT cents, timestamps BIGINT
-- Unix seconds (milliseconds where the column name says _ms); bytes are
-- BLOB (BYTEA on PostgreSQL, see migrations/README.md).

CREATE TABLE partners (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('broker', 'hr_platform')),
    benefits_admin TEXT NOT NULL CHECK (benefits_admin IN ('partner', 'service')),
    capabilities TEXT NOT NULL,
    live_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    live_changed_at BIGINT,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL REFERENCES partners (id),
    mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    digest TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    sealed BLOB CHECK (sealed IS NULL OR mode = 'test'),
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_keys_partner ON api_keys (partner_id, created_at);
CREATE UNIQUE INDEX api_keys_one_live ON api_keys (partner_id)
    WHERE mode = 'live' AND revoked_at IS NULL;

CREATE TABLE groups (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL REFERENCES partners (id),
    mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    status TEXT NOT NULL,
    company_name TEXT NOT NULL,
    domain TEXT NOT NULL,
    external_id TEXT,
    address TEXT,
    contact TEXT,
    current_coverage TEXT,
    census_member_count INTEGER NOT NULL DEFAULT 0,
    rating_digest TEXT,
    company_state TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX groups_list ON groups (partner_id, mode, created_at, id);
CREATE UNIQUE INDEX groups_domain_held ON groups (mode, domain)
    WHERE status IN ('enrolled', 'active');

CREATE TABLE members (
    id TEXT PRIMARY KEY NOT NULL,
    group_id TEXT NOT NULL REFERENCES groups (id),
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    external_id TEXT,
    email_key TEXT,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX members_list ON members (group_id, created_at, id);
CREATE INDEX members_position ON members (group_id, position);

CREATE TABLE quotes (
    id TEXT PRIMARY KEY NOT NULL,
    group_id TEXT NOT NULL REFERENCES groups (id),
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    rating_digest TEXT,
    expires_at BIGINT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX quotes_list ON quotes (group_id, created_at, id);

CREATE TABLE enrollments (
    id TEXT PRIMARY KEY NOT NULL,
    group_id TEXT NOT NULL UNIQUE REFERENCES groups (id),
    quote_id TEXT NOT NULL REFERENCES quotes (id),
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    onboarding_mode TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE events (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    event_type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms BIGINT,
    locked_until_ms BIGINT,
    last_status INTEGER
);
CREATE INDEX events_list ON events (partner_id, mode, created_at, id);
CREATE INDEX events_due ON events (state, next_attempt_at_ms);

CREATE TABLE jobs (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    kind TEXT NOT NULL,
    group_id TEXT,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    run_after_ms BIGINT NOT NULL,
    locked_until_ms BIGINT,
    last_error TEXT
);
CREATE INDEX jobs_due ON jobs (state, run_after_ms);
CREATE INDEX jobs_group ON jobs (group_id, kind, state);

CREATE TABLE idempotency (
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    method TEXT NOT NULL,
    route TEXT NOT NULL,
    digest TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
    status INTEGER,
    headers TEXT,
    body BLOB,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (partner_id, mode, idem_key)
);
CREATE INDEX idempotency_expiry ON idempotency (expires_at);

-- Counters need not survive a crash (a lost window only forgives a few
-- requests), so on PostgreSQL they skip the write-ahead log and its fsync
-- per check.
CREATE /* postgres: UNLOGGED */ TABLE rate_limits (
    bucket TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (bucket, window_start)
);
