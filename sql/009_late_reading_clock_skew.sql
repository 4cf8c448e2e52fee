-- A late reading is one older than the device's newest reading of that metric before the batch (sql/007). A
-- device whose clock runs ahead (recorded_at may lie up to a day in the future) would make every later, correct
-- reading "late" until real time catches up, and silence its alerts. A newest reading more than five minutes
-- ahead of the database clock therefore does not count as the watermark. Otherwise as in 007.
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
