-- The locking half of an ingest batch in one round trip (the COPY of the readings runs just before it, in the
-- same transaction). Called by src/workers/ingest-worker.ts through queries.ts's commitBatch.
--   1. lock the batch's devices in id order: every worker takes row locks in one order, so none deadlocks;
--   2. re-check each request's token under those locks: a rotation or deletion that committed meanwhile
--      refuses the request (revocation takes effect at once); the caller rolls back and retries without it;
--   3. module events ('telemetry'/'heartbeat' per request, 'online' per device that was offline);
--   4. latest value per (device, metric), rows sorted by the caller, never older over newer;
--   5. devices online, last_seen_at moved forward only;
--   6. the alert engine (evaluate_alerts, sql/005) on the readings whose metric some enabled rule names.
-- Returns the 0-based indexes of the refused requests (empty when everything was written) and the alerts opened
-- and resolved (a JSON array, for live delivery).
CREATE OR REPLACE FUNCTION ingest_commit_batch(
  seen_ids int8[], seen_ms float8[],
  ev_device int8[], ev_token text[], ev_time_ms float8[], ev_module text[], ev_type text[], ev_readings int4[], ev_skipped int4[],
  lt_device int8[], lt_name text[], lt_value float8[], lt_unit text[], lt_time_ms float8[],
  al_device int8[], al_metric text[], al_value float8[], al_time_ms float8[],
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

  IF cardinality(al_device) > 0 THEN
    alert_changes := evaluate_alerts(al_device, al_metric, al_value, al_time_ms);
  END IF;
END
$$;
