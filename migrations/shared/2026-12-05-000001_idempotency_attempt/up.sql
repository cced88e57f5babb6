-- Each in-flight idempotency record names the attempt that began it (a
-- token the request draws), so that completing or releasing it touches that
-- attempt's record only. A request whose begin failed without knowing
-- whether its record was committed can then release it safely: the record
-- of another attempt at the same key is never this one.
ALTER TABLE idempotency ADD COLUMN attempt TEXT;
