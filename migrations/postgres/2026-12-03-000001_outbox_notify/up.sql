-- Every statement that appends events a dispatcher should take tells the
-- dispatchers listening on `partner_api_outbox` (in any process sharing
-- the database), at commit, so an idle dispatcher sleeps until it is told
-- rather than polling. An event appended already claimed (the test ping,
-- whose first attempt the request makes) is not announced. PostgreSQL
-- folds a transaction's identical notifications into one, so a statement
-- of many rows sends one.
CREATE FUNCTION outbox_notify() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('partner_api_outbox', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER events_appended AFTER INSERT ON events
FOR EACH ROW WHEN (NEW.locked_until_ms IS NULL) EXECUTE FUNCTION outbox_notify();
