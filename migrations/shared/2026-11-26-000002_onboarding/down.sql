ALTER TABLE enrollments DROP COLUMN onboarding_revision;
ALTER TABLE enrollments DROP COLUMN onboarding;
