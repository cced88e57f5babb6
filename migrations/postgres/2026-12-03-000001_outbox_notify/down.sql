DROP TRIGGER events_appended ON events;
DROP FUNCTION outbox_notify();
