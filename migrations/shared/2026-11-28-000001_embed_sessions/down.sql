ALTER TABLE quotes DROP COLUMN acceptance;
ALTER TABLE partners DROP COLUMN embed_origins;
DROP TABLE embed_sessions;
