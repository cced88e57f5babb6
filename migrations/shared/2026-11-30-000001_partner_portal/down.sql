DROP TABLE partner_audit;
DROP TABLE partner_sessions;
DROP TABLE partner_recovery_codes;
DROP TABLE partner_user_links;
DROP TABLE partner_users;
ALTER TABLE partners DROP COLUMN commercial_done_at;
