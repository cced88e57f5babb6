-- One rate-limit hit as one statement the server prepares once per
-- connection: `SELECT rate_limit_hit(bucket, window_start, limit)`.
-- It counts the hit in the bucket's window unless the limit is reached
-- (then it answers NULL and counts nothing), and when it opens a new
-- window it drops the bucket's older ones. (An upsert sent as such would
-- be prepared again for every request: a second round trip and a second
-- transaction.)
CREATE FUNCTION rate_limit_hit(p_bucket TEXT, p_window BIGINT, p_limit INTEGER)
RETURNS INTEGER
LANGUAGE plpgsql
AS $$
DECLARE
    n INTEGER;
BEGIN
    INSERT INTO rate_limits (bucket, window_start, count)
    VALUES (p_bucket, p_window, 1)
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limits.count + 1
    WHERE rate_limits.count < p_limit
    RETURNING count INTO n;
    IF n = 1 THEN
        DELETE FROM rate_limits WHERE bucket = p_bucket AND window_start < p_window;
    END IF;
    RETURN n;
END
$$;
