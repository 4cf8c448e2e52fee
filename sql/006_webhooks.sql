-- Per-user webhooks (SPEC §5 "Delivery"): a URL and a secret per user, and an outbox written in the same
-- transaction as the change it reports, so a delivery exists exactly when the change committed.
-- Delivery (src/alerts/webhook-dispatcher.ts) runs on one instance at a time and retries with backoff.

CREATE TABLE IF NOT EXISTS user_webhooks (
  user_id    bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  url        text NOT NULL,
  secret     text NOT NULL, -- kept in clear: the dispatcher signs every delivery with it
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS webhook_outbox (
  id              bigserial PRIMARY KEY,
  -- Removing a webhook drops its pending deliveries with it.
  user_id         bigint NOT NULL REFERENCES user_webhooks (user_id) ON DELETE CASCADE,
  event_type      text NOT NULL,
  payload         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  failed_at       timestamptz,
  last_error      text
);
-- The dispatcher's only question: what is due now.
CREATE INDEX IF NOT EXISTS webhook_outbox_due_idx ON webhook_outbox (next_attempt_at, id)
  WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX IF NOT EXISTS webhook_outbox_user_idx ON webhook_outbox (user_id, id);

-- Who hears about a device: its owner and every admin (the same audience as the live WebSocket), each with
-- a webhook and not disabled.
CREATE OR REPLACE FUNCTION webhook_audience(p_owner bigint) RETURNS TABLE (user_id bigint)
LANGUAGE sql STABLE AS $$
  SELECT w.user_id
    FROM user_webhooks w JOIN users u ON u.id = w.user_id
   WHERE u.disabled_at IS NULL AND (u.id = p_owner OR u.role = 'admin')
$$;

-- Every alert that opens, is acknowledged or resolves (by the engine in the ingest transaction, or by a
-- person) enqueues one delivery per audience member, in the transaction that made the change.
CREATE OR REPLACE FUNCTION enqueue_alert_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  kind text;
  dev  record;
  n    integer;
BEGIN
  IF TG_OP = 'INSERT' THEN
    kind := 'alert.opened';
  ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
    kind := CASE NEW.status WHEN 'acknowledged' THEN 'alert.acknowledged' WHEN 'resolved' THEN 'alert.resolved' ELSE NULL END;
  END IF;
  IF kind IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT d.id, d.name, d.module, d.owner_id INTO dev FROM devices d WHERE d.id = NEW.device_id;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_outbox (user_id, event_type, payload)
  SELECT a.user_id, kind, jsonb_build_object(
           'alert', jsonb_build_object(
             'id', NEW.id, 'rule_id', NEW.rule_id, 'device_id', NEW.device_id, 'metric_name', NEW.metric_name,
             'value', NEW.value, 'severity', NEW.severity, 'status', NEW.status, 'opened_at', NEW.opened_at,
             'acknowledged_at', NEW.acknowledged_at, 'acknowledged_by', NEW.acknowledged_by, 'resolved_at', NEW.resolved_at),
           'device', jsonb_build_object('id', dev.id, 'name', dev.name, 'module', dev.module, 'owner_id', dev.owner_id))
    FROM webhook_audience(dev.owner_id) a;
  GET DIAGNOSTICS n = ROW_COUNT;
  -- Wakes the dispatcher at COMMIT (never for a rolled-back batch) instead of at its next poll.
  IF n > 0 THEN
    PERFORM pg_notify('webhook_outbox', '');
  END IF;
  RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS alerts_enqueue_webhooks ON alerts;
CREATE TRIGGER alerts_enqueue_webhooks
  AFTER INSERT OR UPDATE OF status ON alerts
  FOR EACH ROW EXECUTE FUNCTION enqueue_alert_webhooks();
