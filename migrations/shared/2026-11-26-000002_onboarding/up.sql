-- The onboarding checklist of each enrollment (a versioned snake_case
-- document; empty for a fresh checklist) and the revision that orders its
-- changes: a change made on an older revision is refused and made again.
ALTER TABLE enrollments ADD COLUMN onboarding TEXT NOT NULL DEFAULT '';
ALTER TABLE enrollments ADD COLUMN onboarding_revision BIGINT NOT NULL DEFAULT 0;
