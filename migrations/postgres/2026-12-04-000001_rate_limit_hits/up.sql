-- Several rate-limit hits as one statement, so that a process's concurrent
-- requests share one round trip and one transaction:
-- `SELECT rate_limit_hits(buckets, window_starts, limits)` answers, in the
-- arrays' order, what `rate_limit_hit` answers for each element (the
-- window's count after the hit, or NULL when its limit was reached). The
-- hits are made in bucket order, whatever the arrays' order, so two
-- processes' batches lock the same buckets' rows in the same order and
-- never deadlock.
CREATE FUNCTION rate_limit_hits(p_buckets TEXT[], p_windows BIGINT[], p_limits INTEGER[])
RETURNS INTEGER[]
LANGUAGE plpgsql
AS $$
DECLARE
    n INTEGER := coalesce(array_length(p_buckets, 1), 0);
    counts INTEGER[] := array_fill(NULL::INTEGER, ARRAY[n]);
    i INTEGER;
BEGIN
    FOR i IN
        SELECT t.ord::INTEGER FROM unnest(p_buckets) WITH ORDINALITY AS t(bucket, ord)
        ORDER BY t.bucket, t.ord
    LOOP
        counts[i] := rate_limit_hit(p_buckets[i], p_windows[i], p_limits[i]);
    END LOOP;
    RETURN counts;
END
$$;
