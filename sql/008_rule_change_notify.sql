-- Every change to the alert rules tells the ingest workers at COMMIT, so each drops its copy of the rules
-- (src/workers/ingest-worker.ts) before its next batch instead of at the next one-second re-read: the
-- "may fire" flags of sql/007 never lag a committed rule change by more than the batch already under way.
CREATE OR REPLACE FUNCTION notify_alert_rules_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('alert_rules_changed', '');
  RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS alert_rules_changed ON alert_rules;
CREATE TRIGGER alert_rules_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON alert_rules
  FOR EACH STATEMENT EXECUTE FUNCTION notify_alert_rules_changed();
