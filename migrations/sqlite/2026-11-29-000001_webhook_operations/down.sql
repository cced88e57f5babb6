DROP TABLE webhook_attempts;
ALTER TABLE webhook_endpoints DROP COLUMN failing_since_ms;
ALTER TABLE webhook_endpoints DROP COLUMN state;
