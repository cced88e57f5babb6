DROP FUNCTION rate_limit_hits(TEXT[], BIGINT[], INTEGER[]);
