DROP TABLE webhook_attempts;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_expires_at;
ALTER TABLE webhook_endpoints DROP COLUMN previous_sealed_secret;
ALTER TABLE webhook_endpoints DROP COLUMN failing_since_ms;
ALTER TABLE webhook_endpoints DROP COLUMN state;
