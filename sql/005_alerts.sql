-- The alert engine's tables, its evaluation function and the default rules (seeded once, with this migration).

CREATE TABLE IF NOT EXISTS alert_rules (
  id              bigserial PRIMARY KEY,
  owner_id        bigint REFERENCES users (id),          -- null: a global rule
  module          text CHECK (module IN ('health', 'vehicle', 'factory', 'home_infra', 'worker', 'fleet')),
  device_id       bigint REFERENCES devices (id),
  metric_name     text NOT NULL,
  operator        text NOT NULL CHECK (operator IN ('>', '>=', '<', '<=', '==', '!=')),
  threshold       double precision NOT NULL,
  clear_threshold double precision,                      -- null: clear when the firing condition stops holding
  for_count       integer NOT NULL DEFAULT 1 CHECK (for_count >= 1),
  severity        text NOT NULL DEFAULT 'warning' CHECK (severity IN ('info', 'warning', 'critical')),
  enabled         boolean NOT NULL DEFAULT true,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS alert_rules_metric_idx ON alert_rules (metric_name) WHERE enabled;

-- Consecutive firing readings per (rule, device): for_count survives restarts because it lives here.
CREATE TABLE IF NOT EXISTS alert_rule_state (
  rule_id     bigint NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
  device_id   bigint NOT NULL,
  consecutive integer NOT NULL DEFAULT 0,
  last_at     timestamptz,              -- recorded_at of the newest reading evaluated: older ones are skipped
  PRIMARY KEY (rule_id, device_id)
);

CREATE TABLE IF NOT EXISTS alerts (
  id              bigserial PRIMARY KEY,
  rule_id         bigint NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
  device_id       bigint NOT NULL,
  metric_name     text NOT NULL,
  value           double precision NOT NULL,
  severity        text NOT NULL,
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'resolved')),
  opened_at       timestamptz NOT NULL,
  acknowledged_at timestamptz,
  acknowledged_by bigint REFERENCES users (id),
  resolved_at     timestamptz
);
-- At most one unresolved alert per (rule, device).
CREATE UNIQUE INDEX IF NOT EXISTS alerts_one_unresolved_idx ON alerts (rule_id, device_id) WHERE status <> 'resolved';
CREATE INDEX IF NOT EXISTS alerts_device_idx ON alerts (device_id, opened_at DESC);

CREATE OR REPLACE FUNCTION alert_compare(v double precision, op text, th double precision) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE op WHEN '>' THEN v > th WHEN '>=' THEN v >= th WHEN '<' THEN v < th
                 WHEN '<=' THEN v <= th WHEN '==' THEN v = th WHEN '!=' THEN v <> th END
$$;

-- Evaluates readings against the enabled rules, in (device, rule, recorded_at) order, inside the caller's
-- transaction (the devices are already locked by ingest_commit_batch, so concurrent batches never race here),
-- skipping readings older than the newest one already evaluated for that (rule, device).
-- A rule fires when `value <op> threshold` holds for for_count consecutive readings and opens one alert; the
-- alert resolves when the clear condition holds: NOT (value <op> clear_threshold) when set, else NOT firing.
-- Returns the alerts opened and resolved, as a JSON array for live delivery.
CREATE OR REPLACE FUNCTION evaluate_alerts(r_device int8[], r_metric text[], r_value float8[], r_time_ms float8[])
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  rec record;
  fires boolean;
  run integer;
  unresolved bigint;
  new_id bigint;
  changes jsonb := '[]'::jsonb;
BEGIN
  FOR rec IN
    SELECT r.d AS device_id, r.m AS metric, r.v AS value, to_timestamp(r.t / 1000.0) AS at, dv.module, dv.owner_id,
           ru.id AS rule_id, ru.operator, ru.threshold, ru.clear_threshold, ru.for_count, ru.severity
      FROM unnest(r_device, r_metric, r_value, r_time_ms) WITH ORDINALITY AS r (d, m, v, t, i)
      JOIN devices dv ON dv.id = r.d
      JOIN alert_rules ru ON ru.enabled AND ru.metric_name = r.m
       AND (ru.module IS NULL OR ru.module = dv.module)
       AND (ru.device_id IS NULL OR ru.device_id = r.d)
       AND (ru.owner_id IS NULL OR ru.owner_id = dv.owner_id)
     ORDER BY r.d, ru.id, r.t, r.i
       FOR KEY SHARE OF ru  -- a rule deleted meanwhile is skipped, and a delete waits for this batch
  LOOP
    fires := alert_compare(rec.value, rec.operator, rec.threshold);
    -- A reading older than one already evaluated (a late request) must not reopen or resolve out of order.
    run := NULL;
    INSERT INTO alert_rule_state AS s (rule_id, device_id, consecutive, last_at)
    VALUES (rec.rule_id, rec.device_id, CASE WHEN fires THEN 1 ELSE 0 END, rec.at)
    ON CONFLICT (rule_id, device_id) DO UPDATE
       SET consecutive = CASE WHEN fires THEN s.consecutive + 1 ELSE 0 END, last_at = EXCLUDED.last_at
     WHERE s.last_at IS NULL OR s.last_at <= EXCLUDED.last_at
    RETURNING consecutive INTO run;
    CONTINUE WHEN run IS NULL;

    SELECT id INTO unresolved FROM alerts
     WHERE rule_id = rec.rule_id AND device_id = rec.device_id AND status <> 'resolved';

    IF fires AND run >= rec.for_count AND unresolved IS NULL THEN
      INSERT INTO alerts (rule_id, device_id, metric_name, value, severity, opened_at)
      VALUES (rec.rule_id, rec.device_id, rec.metric, rec.value, rec.severity, rec.at) RETURNING id INTO new_id;
      INSERT INTO module_events (time, device_id, module, event_type, readings, detail)
      VALUES (rec.at, rec.device_id, rec.module, 'alert_opened', 0,
              jsonb_build_object('rule_id', rec.rule_id, 'metric_name', rec.metric, 'value', rec.value, 'severity', rec.severity));
      changes := changes || jsonb_build_object('type', 'alert_opened', 'alert_id', new_id, 'rule_id', rec.rule_id,
        'device_id', rec.device_id, 'owner_id', rec.owner_id, 'metric_name', rec.metric, 'value', rec.value,
        'severity', rec.severity, 'at', rec.at);
    ELSIF unresolved IS NOT NULL AND NOT fires
          AND NOT coalesce(alert_compare(rec.value, rec.operator, rec.clear_threshold), false) THEN
      UPDATE alerts SET status = 'resolved', resolved_at = rec.at WHERE id = unresolved;
      changes := changes || jsonb_build_object('type', 'alert_resolved', 'alert_id', unresolved, 'rule_id', rec.rule_id,
        'device_id', rec.device_id, 'owner_id', rec.owner_id, 'metric_name', rec.metric, 'value', rec.value, 'at', rec.at);
      INSERT INTO module_events (time, device_id, module, event_type, readings, detail)
      VALUES (rec.at, rec.device_id, rec.module, 'alert_resolved', 0,
              jsonb_build_object('rule_id', rec.rule_id, 'alert_id', unresolved, 'metric_name', rec.metric, 'value', rec.value));
    END IF;
  END LOOP;
  RETURN changes;
END
$$;

-- The default rules, global and critical.
INSERT INTO alert_rules (metric_name, operator, threshold, severity)
SELECT m, '==', 1, 'critical'
  FROM unnest(ARRAY['fall_detected', 'panic_pressed', 'impact_detected', 'geofence_breach', 'fire_detected',
                    'water_leak', 'power_failure', 'high_temperature', 'inactivity']) AS m;
INSERT INTO alert_rules (metric_name, operator, threshold, severity) VALUES
  ('spo2', '<', 90, 'critical'), ('heart_rate', '>', 130, 'critical'), ('heart_rate', '<', 40, 'critical'),
  ('systolic', '>', 180, 'critical'), ('glucose', '<', 70, 'critical'), ('gas_ppm', '>', 50, 'critical'),
  ('smoke_level', '>', 0.1, 'critical'), ('impact_g_force', '>', 4, 'critical');
