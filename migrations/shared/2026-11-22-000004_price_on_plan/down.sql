DROP INDEX quotes_request;
ALTER TABLE quotes DROP COLUMN request_digest;
ALTER TABLE quotes DROP COLUMN kind;
