-- Aggregate claims by group, month and category: the ledger behind a
-- group's account spend. Amounts and member counts only: never a member,
-- a diagnosis or an individual's amount.
CREATE TABLE claims_aggregates (
    group_id TEXT NOT NULL REFERENCES groups (id),
    partner_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    month TEXT NOT NULL,
    category TEXT NOT NULL,
    amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
    member_count INTEGER NOT NULL CHECK (member_count >= 0),
    PRIMARY KEY (group_id, month, category)
);
