// SQL of the dashboard's pages (src/web). Re-exported by queries.ts, so every module still reads `q.<name>`.

// Dashboard device pages (src/web/device-*.ts)
/** Unresolved (open or acknowledged) alerts per device the user may see ($2 true: an admin sees all). */
export const countUnresolvedAlertsByDevice = `
  SELECT a.device_id, count(*)::int AS n
    FROM alerts a JOIN devices d ON d.id = a.device_id
   WHERE a.status <> 'resolved' AND d.deleted_at IS NULL AND ($2 OR d.owner_id = $1)
   GROUP BY a.device_id`;

/** $1 device, $2 from, $3 to, $4 bucket seconds: avg per bucket of every metric of a device, for its charts. */
export const telemetryBucketsAllMetrics = `
  SELECT metric_name, extract(epoch FROM date_bin(make_interval(secs => $4), time, TIMESTAMPTZ '2000-01-01'))::float8 AS t,
         avg(metric_value) AS avg
    FROM telemetry
   WHERE device_id = $1 AND time >= $2 AND time < $3
   GROUP BY 1, 2 ORDER BY 1, 2`;

/** The newest $4 GPS points of a device in [$2, $3), newest first (the caller reverses them into a track). */
export const recentGpsTrack = `
  SELECT lat, lng FROM gps_points WHERE device_id = $1 AND time >= $2 AND time < $3 ORDER BY time DESC LIMIT $4`;

export const recentModuleEvents = `
  SELECT time, event_type, readings, detail FROM module_events WHERE device_id = $1 ORDER BY time DESC LIMIT 50`;

export const recentDeviceAlerts = `
  SELECT id, metric_name, value, severity, status, opened_at, resolved_at
    FROM alerts WHERE device_id = $1 ORDER BY opened_at DESC, id DESC LIMIT 50`;

// Dashboard alert, rule and user pages (src/web/alert-*.ts, rule-*.ts, user-*.ts)
/**
 * Alerts of the devices a user may see ($2 true: an admin sees all) whose status is in $3, newest first, with
 * the device's name and the acknowledging user's email; $4 one alert id (a live row), or null for all.
 */
export const listAlertsForPage = `
  SELECT a.id, a.rule_id, a.device_id, d.name AS device_name, a.metric_name, a.value, a.severity, a.status,
         a.opened_at, a.acknowledged_at, u.email AS acknowledged_by_email, a.resolved_at
    FROM alerts a JOIN devices d ON d.id = a.device_id LEFT JOIN users u ON u.id = a.acknowledged_by
   WHERE d.deleted_at IS NULL AND ($2 OR d.owner_id = $1) AND a.status = ANY ($3::text[]) AND ($4::int8 IS NULL OR a.id = $4)
   ORDER BY a.opened_at DESC, a.id DESC
   LIMIT 500`;

/**
 * Resolves an unresolved alert of a device the user may see ($1 user, $2 admin, $3 alert, $4 time, $5 the
 * user's email) and stores its alert_resolved module event in the same statement. The event's detail is the
 * engine's (rule_id, alert_id, metric_name, value: the device's latest reading of the metric) plus manual and by.
 */
export const resolveAlertByHand = `
  WITH a AS (
    UPDATE alerts a SET status = 'resolved', resolved_at = $4
      FROM devices d
     WHERE a.id = $3 AND d.id = a.device_id AND d.deleted_at IS NULL AND ($2 OR d.owner_id = $1)
       AND a.status <> 'resolved'
    RETURNING a.id, a.rule_id, a.device_id, a.metric_name, a.value, a.severity, a.status, a.opened_at,
              a.acknowledged_at, a.acknowledged_by, a.resolved_at, d.module, d.owner_id,
              (SELECT l.value FROM latest_metrics l WHERE l.device_id = a.device_id AND l.metric_name = a.metric_name) AS latest_value
  ), ev AS (
    INSERT INTO module_events (time, device_id, module, event_type, readings, detail)
    SELECT $4, a.device_id, a.module, 'alert_resolved', 0,
           jsonb_build_object('rule_id', a.rule_id, 'alert_id', a.id, 'metric_name', a.metric_name, 'value', a.latest_value,
                              'manual', true, 'by', $5::text)
      FROM a
  )
  SELECT id, rule_id, device_id, metric_name, value, severity, status, opened_at, acknowledged_at, acknowledged_by,
         resolved_at, owner_id, latest_value FROM a`;

/**
 * Locks the device of an alert as an ingest batch does (FOR UPDATE, sql/003): a manual resolution and the alert
 * engine's evaluation of that device then run one after the other, so the engine never resolves it a second time.
 */
export const lockAlertDevice = `
  SELECT d.id FROM alerts a JOIN devices d ON d.id = a.device_id WHERE a.id = $1 FOR UPDATE OF d`;

export const findUserById = `SELECT id, email, role, disabled_at FROM users WHERE id = $1`;

/** Locks the enabled admins, so two admins cannot demote or disable each other at once and leave none. */
export const lockEnabledAdmins = `SELECT id FROM users WHERE role = 'admin' AND disabled_at IS NULL ORDER BY id FOR UPDATE`;
export const setUserRole = `UPDATE users SET role = $2 WHERE lower(email) = lower($1) RETURNING id, email, role`;
