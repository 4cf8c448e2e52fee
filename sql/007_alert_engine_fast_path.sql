-- The alert engine's fast path. Measured (bench/batch-steps.ts, BENCH_STEP_RULES=1): evaluating every
-- (reading, rule) pair with its own state upsert and alert look-up cost about 15 µs a pair, 0.66x of W1's
-- rules-off throughput. Nearly every pair changes nothing: no rule fires on the reading, and its device has no
-- count under way and no unresolved alert. The worker flags the readings that may fire; devices with none,
-- and nothing under way, are skipped after one query, and the rest take the per-pair path of 005 unchanged.
--
-- Late readings: 005 kept a per-(rule, device) `last_at`, written on every pair. The same watermark is the
-- device's `latest_metrics.recorded_at` for the metric as it stood before the batch: every reading of a
-- watched metric passes through it, it never moves back, and it is already maintained. ingest_commit_batch
-- now runs the engine before it moves that watermark. A device whose clock runs ahead (recorded_at may lie up
-- to a day in the future) would make every later, correct reading "late" and silence its alerts, so a newest
-- reading more than five minutes ahead of the database clock does not count as the watermark.

-- Where the fast path looks for "something under way": unresolved alerts and counts above zero, by device.
CREATE INDEX IF NOT EXISTS alerts_unresolved_device_idx ON alerts (device_id) WHERE status <> 'resolved';
CREATE INDEX IF NOT EXISTS alert_rule_state_counting_idx ON alert_rule_state (device_id) WHERE consecutive > 0;

-- The 4-array engine and the 18-parameter batch call of 003/005 are replaced by versions with a "may fire" flag.
DROP FUNCTION IF EXISTS ingest_commit_batch(int8[], float8[], int8[], text[], float8[], text[], text[], int4[], int4[],
  int8[], text[], float8[], text[], float8[], int8[], text[], float8[], float8[]);
DROP FUNCTION IF EXISTS evaluate_alerts(int8[], text[], float8[], float8[]);

-- r_hot marks the readings on which, by the worker's copy of the rules (src/alerts/compare.ts, at most a second
-- old, like the metric names it filters by), some rule may fire.
CREATE OR REPLACE FUNCTION evaluate_alerts(r_device int8[], r_metric text[], r_value float8[], r_time_ms float8[], r_hot bool[])
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  busy int8[];
  rec record;
  fires boolean;
  run integer;
  unresolved bigint;
  new_id bigint;
  changes jsonb := '[]'::jsonb;
BEGIN
  -- The devices whose pairs take the full path: a reading may fire, or an alert or a count is under way.
  -- Every other pair would only write "count stays 0": it is skipped, and costs nothing but this query.
  busy := ARRAY(
    SELECT r.d FROM unnest(r_device, r_hot) AS r (d, hot) WHERE r.hot
    UNION
    SELECT a.device_id FROM alerts a WHERE a.status <> 'resolved' AND a.device_id = ANY (r_device)
    UNION
    SELECT s.device_id FROM alert_rule_state s WHERE s.consecutive > 0 AND s.device_id = ANY (r_device));
  IF cardinality(busy) = 0 THEN
    RETURN changes;
  END IF;

  FOR rec IN
    SELECT r.d AS device_id, r.m AS metric, r.v AS value, to_timestamp(r.t / 1000.0) AS at, dv.module, dv.owner_id,
           ru.id AS rule_id, ru.operator, ru.threshold, ru.clear_threshold, ru.for_count, ru.severity
      FROM unnest(r_device, r_metric, r_value, r_time_ms) WITH ORDINALITY AS r (d, m, v, t, i)
      JOIN devices dv ON dv.id = r.d
      JOIN alert_rules ru ON ru.enabled AND ru.metric_name = r.m
       AND (ru.module IS NULL OR ru.module = dv.module)
       AND (ru.device_id IS NULL OR ru.device_id = r.d)
       AND (ru.owner_id IS NULL OR ru.owner_id = dv.owner_id)
     WHERE r.d = ANY (busy)
       -- Older than the newest reading of this metric before the batch: a late request, skipped.
       AND NOT EXISTS (SELECT 1 FROM latest_metrics lm
                        WHERE lm.device_id = r.d AND lm.metric_name = r.m AND lm.recorded_at > to_timestamp(r.t / 1000.0)
                          AND lm.recorded_at <= now() + interval '5 minutes')
     ORDER BY r.d, ru.id, r.t, r.i
  LOOP
    -- Locked only when it may write: a rule deleted meanwhile is skipped, and a delete waits for this batch.
    PERFORM 1 FROM alert_rules WHERE id = rec.rule_id FOR KEY SHARE;
    CONTINUE WHEN NOT FOUND;
    fires := alert_compare(rec.value, rec.operator, rec.threshold);
    run := NULL;
    INSERT INTO alert_rule_state AS s (rule_id, device_id, consecutive, last_at)
    VALUES (rec.rule_id, rec.device_id, CASE WHEN fires THEN 1 ELSE 0 END, rec.at)
    ON CONFLICT (rule_id, device_id) DO UPDATE
       SET consecutive = CASE WHEN fires THEN s.consecutive + 1 ELSE 0 END, last_at = EXCLUDED.last_at
     WHERE s.last_at IS NULL OR s.last_at <= EXCLUDED.last_at OR s.last_at > now() + interval '5 minutes'
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

-- As in 003, with one change: the alert engine runs before the latest values move, so that they are still the
-- watermark of late readings (see above).
CREATE OR REPLACE FUNCTION ingest_commit_batch(
  seen_ids int8[], seen_ms float8[],
  ev_device int8[], ev_token text[], ev_time_ms float8[], ev_module text[], ev_type text[], ev_readings int4[], ev_skipped int4[],
  lt_device int8[], lt_name text[], lt_value float8[], lt_unit text[], lt_time_ms float8[],
  al_device int8[], al_metric text[], al_value float8[], al_time_ms float8[], al_hot bool[],
  OUT refused int4[], OUT alert_changes jsonb
) LANGUAGE plpgsql AS $$
BEGIN
  alert_changes := '[]'::jsonb;
  PERFORM 1 FROM devices WHERE id = ANY (seen_ids) ORDER BY id FOR UPDATE;

  SELECT coalesce(array_agg((e.i - 1)::int4 ORDER BY e.i), '{}') INTO refused
    FROM unnest(ev_device, ev_token) WITH ORDINALITY AS e (device_id, token, i)
    LEFT JOIN devices d ON d.id = e.device_id AND d.deleted_at IS NULL
   WHERE d.api_token_hash IS DISTINCT FROM e.token;
  IF cardinality(refused) > 0 THEN
    RETURN;
  END IF;

  INSERT INTO module_events (time, device_id, module, event_type, readings, detail)
  SELECT to_timestamp(u.t / 1000.0), u.dev, u.m, u.ty, u.r, CASE WHEN u.s > 0 THEN jsonb_build_object('skipped', u.s) END
    FROM unnest(ev_time_ms, ev_device, ev_module, ev_type, ev_readings, ev_skipped) AS u (t, dev, m, ty, r, s);

  INSERT INTO module_events (time, device_id, module, event_type, readings)
  SELECT to_timestamp(s.t / 1000.0), d.id, d.module, 'online', 0
    FROM unnest(seen_ids, seen_ms) AS s (id, t) JOIN devices d ON d.id = s.id
   WHERE d.status <> 'online';

  IF cardinality(al_device) > 0 THEN
    alert_changes := evaluate_alerts(al_device, al_metric, al_value, al_time_ms, al_hot);
  END IF;

  INSERT INTO latest_metrics (device_id, metric_name, value, unit, recorded_at)
  SELECT l.d, l.n, l.v, l.u, to_timestamp(l.t / 1000.0)
    FROM unnest(lt_device, lt_name, lt_value, lt_unit, lt_time_ms) AS l (d, n, v, u, t)
  ON CONFLICT (device_id, metric_name) DO UPDATE
     SET value = EXCLUDED.value, unit = EXCLUDED.unit, recorded_at = EXCLUDED.recorded_at
   WHERE latest_metrics.recorded_at <= EXCLUDED.recorded_at;

  UPDATE devices d
     SET status = 'online', last_seen_at = GREATEST(COALESCE(d.last_seen_at, s.at), s.at)
    FROM (SELECT u.id, to_timestamp(u.t / 1000.0) AS at FROM unnest(seen_ids, seen_ms) AS u (id, t)) s
   WHERE d.id = s.id;
END
$$;
