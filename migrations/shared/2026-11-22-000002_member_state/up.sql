-- A member's roster state: enrollment and invitation status, elected tier
-- and coverage start, termination and COBRA deadline (dates YYYY-MM-DD).
ALTER TABLE members ADD COLUMN enrollment_status TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE members ADD COLUMN invitation_status TEXT NOT NULL DEFAULT 'not_sent';
ALTER TABLE members ADD COLUMN tier TEXT;
ALTER TABLE members ADD COLUMN effective_date TEXT;
ALTER TABLE members ADD COLUMN termination_date TEXT;
ALTER TABLE members ADD COLUMN cobra_deadline TEXT;
