// All SQL of the ingest path and of device management, as named statements readable in one place.

export const copyTelemetry =
  'COPY telemetry (time, device_id, metric_name, metric_value, unit) FROM STDIN (FORMAT binary)';
export const copyGps =
  'COPY gps_points (time, device_id, lat, lng, altitude_m, speed_kmh, heading_deg, accuracy_m) FROM STDIN (FORMAT binary)';

/**
 * The rest of a batch after its COPYs, in one round trip: see sql/003_ingest_commit.sql. Parameters: devices
 * (sorted) and last contact; per request device, token hash, time, module, event type, readings, skipped;
 * latest values sorted by (device, metric); readings for the alert engine. Returns the indexes of requests refused
 * for a revoked token, and the number of alerts opened.
 */
export const commitBatch = `
  SELECT refused, alert_changes FROM ingest_commit_batch($1::int8[], $2::float8[], $3::int8[], $4::text[], $5::float8[],
    $6::text[], $7::text[], $8::int4[], $9::int4[], $10::int8[], $11::text[], $12::float8[], $13::text[], $14::float8[],
    $15::int8[], $16::text[], $17::float8[], $18::float8[], $19::bool[])`;

/** Notified at the commit of any rule change (sql/008): every worker re-reads the rules before its next batch. */
export const RULES_CHANGED_CHANNEL = 'alert_rules_changed';

/** The enabled rules' conditions: the worker sends only watched readings to the engine, flagging those that may fire. */
export const watchedRules = 'SELECT metric_name, operator, threshold FROM alert_rules WHERE enabled';

export const findDeviceByTokenHash = `
  SELECT id, owner_id, module FROM devices WHERE api_token_hash = $1 AND deleted_at IS NULL`;

export const insertUser = `
  INSERT INTO users (email, password_hash, role) VALUES ($1, $2, $3) RETURNING id, email, role`;

export const findUserByEmail = `
  SELECT id, email, role, password_hash, disabled_at FROM users WHERE lower(email) = lower($1)`;

export const countUsers = 'SELECT count(*)::int AS n FROM users';

export const insertDevice = `
  INSERT INTO devices (owner_id, name, module, api_token_hash) VALUES ($1, $2, $3, $4) RETURNING id, name, module`;

/** Returns the old hash so caches can drop it. */
export const rotateDeviceToken = `
  UPDATE devices d SET api_token_hash = $2, token_created_at = now()
    FROM devices old WHERE old.id = d.id AND d.id = $1 AND d.deleted_at IS NULL
  RETURNING d.id, old.api_token_hash AS old_hash`;

export const deleteDevice = `
  UPDATE devices SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING id, api_token_hash`;

export const listDevices = `
  SELECT d.id, d.name, d.module, d.status, d.last_seen_at, u.email AS owner
    FROM devices d JOIN users u ON u.id = d.owner_id
   WHERE d.deleted_at IS NULL AND ($1::text IS NULL OR lower(u.email) = lower($1))
   ORDER BY d.id`;

/** LISTEN/NOTIFY channel on which a revoked token's hash is broadcast to every instance. */
export const TOKEN_REVOKED_CHANNEL = 'device_token_revoked';
export const notifyTokenRevoked = `SELECT pg_notify('${TOKEN_REVOKED_CHANNEL}', $1)`;

/** $1 owner, $2 names, $3 module, $4 token hashes: many devices in one statement. */
export const insertDevicesBulk = `
  INSERT INTO devices (owner_id, name, module, api_token_hash)
  SELECT $1, n, $3, h FROM unnest($2::text[], $4::text[]) AS d(n, h)
  RETURNING id, name`;


export const insertAccessToken = `
  INSERT INTO api_access_tokens (user_id, token_hash, expires_at) VALUES ($1, $2, $3)`;

/** The user behind a live mobile token; refreshes last_used_at. Disabled users' tokens do not count. */
export const useAccessToken = `
  UPDATE api_access_tokens t SET last_used_at = $2
    FROM users u
   WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2
     AND u.id = t.user_id AND u.disabled_at IS NULL
  RETURNING u.id, u.email, u.role`;

/** $1 token hashes, $2 now: the users of those still live, read-only (the live WebSocket's re-check). */
export const liveAccessTokens = `
  SELECT t.token_hash AS hash, u.id, u.email, u.role FROM api_access_tokens t JOIN users u ON u.id = t.user_id
   WHERE t.token_hash = ANY ($1::text[]) AND t.revoked_at IS NULL AND t.expires_at > $2 AND u.disabled_at IS NULL`;

export const revokeAccessToken = `
  UPDATE api_access_tokens SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL`;

/** Ends every mobile token and browser session of a user (disabled, or password changed). */
export const revokeUserCredentials = `
  WITH t AS (UPDATE api_access_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL)
  DELETE FROM sessions WHERE user_id = $1`;

/** Idempotent: disabling a disabled user keeps the first disabled_at and still returns the row. */
export const disableUser = `
  UPDATE users SET disabled_at = COALESCE(disabled_at, now()) WHERE lower(email) = lower($1) RETURNING id, email, role`;
export const enableUser = `UPDATE users SET disabled_at = NULL WHERE lower(email) = lower($1) RETURNING id, email, role`;
export const setPassword = `UPDATE users SET password_hash = $2 WHERE lower(email) = lower($1) RETURNING id, email, role`;
/** Never selects password_hash: the list is printed and may be served. */
export const listUsers = `SELECT id, email, role, created_at, disabled_at FROM users ORDER BY id`;

/** Devices visible to a user ($2 true: an admin sees all), with their latest values as a JSON object. */
export const listVisibleDevices = `
  SELECT d.id, d.name, d.module, d.status, d.last_seen_at,
         COALESCE((SELECT jsonb_object_agg(l.metric_name, jsonb_build_object('value', l.value, 'unit', l.unit,
                    'recorded_at', to_char(l.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
                     FROM latest_metrics l WHERE l.device_id = d.id), '{}'::jsonb) AS latest
    FROM devices d
   WHERE d.deleted_at IS NULL AND ($2 OR d.owner_id = $1) AND ($3::int8 IS NULL OR d.id = $3)
   ORDER BY d.id`;

/** $1 device, $2 metric, $3 from, $4 to, $5 bucket seconds: time-bucketed aggregates. */
export const telemetryBuckets = `
  SELECT date_bin(make_interval(secs => $5), time, TIMESTAMPTZ '2000-01-01') AS t,
         avg(metric_value) AS avg, min(metric_value) AS min, max(metric_value) AS max, count(*)::int AS count
    FROM telemetry
   WHERE device_id = $1 AND metric_name = $2 AND time >= $3 AND time < $4
   GROUP BY 1 ORDER BY 1`;

export const gpsTrack = `
  SELECT time, lat, lng, altitude_m, speed_kmh, heading_deg, accuracy_m
    FROM gps_points WHERE device_id = $1 AND time >= $2 AND time < $3 ORDER BY time LIMIT 10000`;

// Browser sessions (src/auth/sessions.ts). Only the SHA-256 of a session id is ever stored.
export const insertSession = `
  INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $4, $4, $5)`;

/** $1 id hash, $2 now, $3 idle cutoff: the user of a live session, refreshing last_seen_at. Disabled users' sessions do not count. */
export const useSession = `
  UPDATE sessions s SET last_seen_at = $2
    FROM users u
   WHERE s.id_hash = $1 AND u.id = s.user_id AND u.disabled_at IS NULL
     AND s.expires_at > $2 AND s.last_seen_at > $3
  RETURNING u.id, u.email, u.role, s.csrf_token`;

export const deleteSession = `DELETE FROM sessions WHERE id_hash = $1`;

/**
 * $1 id hashes, $2 now, $3 idle cutoff: the users of those sessions still live, read-only. The live WebSocket's
 * re-check must not count as activity, or an open page would keep its session from ever going idle.
 */
export const liveSessions = `
  SELECT s.id_hash AS hash, u.id, u.email, u.role FROM sessions s JOIN users u ON u.id = s.user_id
   WHERE s.id_hash = ANY ($1::text[]) AND u.disabled_at IS NULL AND s.expires_at > $2 AND s.last_seen_at > $3`;

/** $1 now, $2 idle cutoff: drops every session past its absolute or idle timeout. */
export const purgeExpiredSessions = `DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2`;

// Liveness (src/liveness/sweeper.ts).
/** Advisory lock key of the offline sweeper: whoever holds it sweeps; the other instances skip that round. */
export const SWEEPER_LOCK_KEY = 727003;
export const trySweeperLock = `SELECT pg_try_advisory_xact_lock(${SWEEPER_LOCK_KEY}) AS held`;

/**
 * $1 sweep time (ms since the epoch), $2 default offline_after_s, $3 at most this many devices. Marks offline every live, online device
 * silent for strictly longer than its timeout, and stores one 'offline' module event per device, in one
 * statement, plus a `device.offline` webhook delivery for each audience member (sql/006_webhooks.sql). A device
 * that reported meanwhile is re-checked under its row lock and stays online.
 */
export const markDevicesOffline = `
  WITH silent AS (
    -- In id order, as every ingest batch locks devices, so the two never deadlock; a device an ingest batch holds
    -- is skipped: it is being seen right now.
    SELECT d.id FROM devices d
     WHERE d.status = 'online' AND d.deleted_at IS NULL
       AND d.last_seen_at < to_timestamp($1::float8 / 1000.0) - make_interval(secs => COALESCE(d.offline_after_s, $2::int4))
     ORDER BY d.id LIMIT $3
       FOR UPDATE SKIP LOCKED
  ), gone AS (
    UPDATE devices d SET status = 'offline' FROM silent s WHERE d.id = s.id
    RETURNING d.id, d.owner_id, d.name, d.module, d.last_seen_at, COALESCE(d.offline_after_s, $2::int4) AS offline_after_s
  ), hooks AS (
    INSERT INTO webhook_outbox (user_id, event_type, payload)
    SELECT a.user_id, 'device.offline', jsonb_build_object('device', jsonb_build_object(
             'id', g.id, 'name', g.name, 'module', g.module, 'owner_id', g.owner_id, 'status', 'offline',
             'last_seen_at', g.last_seen_at, 'offline_after_s', g.offline_after_s, 'offline_at', to_timestamp($1::float8 / 1000.0)))
      FROM gone g CROSS JOIN LATERAL webhook_audience(g.owner_id) a
  ), events AS (
    INSERT INTO module_events (time, device_id, module, event_type, readings, detail)
    SELECT to_timestamp($1::float8 / 1000.0), g.id, g.module, 'offline', 0,
           jsonb_build_object('last_seen_at', to_char(g.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                              'offline_after_s', g.offline_after_s)
      FROM gone g
  )
  SELECT id, owner_id, module, last_seen_at, offline_after_s FROM gone ORDER BY id`;

/** Alerts of the devices a user may see ($2 true: an admin sees all), optionally by status, newest first. */
export const listVisibleAlerts = `
  SELECT a.id, a.rule_id, a.device_id, d.name AS device_name, a.metric_name, a.value, a.severity, a.status,
         a.opened_at, a.acknowledged_at, a.acknowledged_by, a.resolved_at
    FROM alerts a JOIN devices d ON d.id = a.device_id
   WHERE d.deleted_at IS NULL AND ($2 OR d.owner_id = $1) AND ($3::text IS NULL OR a.status = $3)
   ORDER BY a.opened_at DESC, a.id DESC
   LIMIT 500`;

/** Acknowledges an open alert of a device the user may see; returns nothing for anyone else's. */
export const acknowledgeAlert = `
  UPDATE alerts a SET status = 'acknowledged', acknowledged_at = $4, acknowledged_by = $1
    FROM devices d
   WHERE a.id = $3 AND d.id = a.device_id AND d.deleted_at IS NULL AND ($2 OR d.owner_id = $1)
     AND a.status = 'open'
  RETURNING a.id, a.rule_id, a.device_id, a.metric_name, a.value, a.severity, a.status, a.opened_at,
            a.acknowledged_at, a.acknowledged_by, a.resolved_at`;

/** An alert of a device the user may see, whatever its status. */
export const findVisibleAlert = `
  SELECT a.id, a.status FROM alerts a JOIN devices d ON d.id = a.device_id
   WHERE a.id = $3 AND d.deleted_at IS NULL AND ($2 OR d.owner_id = $1)`;

export const countUnresolvedAlerts = `SELECT count(*)::int AS n FROM alerts WHERE device_id = $1 AND status <> 'resolved'`;

// Alert rules (src/alerts/rules.ts). Every rule is printed and served with its owner's email, never more of the user.
const RULE_COLUMNS = `r.id, r.owner_id, u.email AS owner, r.module, r.device_id, r.metric_name, r.operator, r.threshold,
  r.clear_threshold, r.for_count, r.severity, r.enabled, r.created_at`;

/** $1 all, $2 owner: every rule ($1 true), or those of one owner ($2 null: the global rules), oldest first. */
export const listRulesByOwner = `
  SELECT ${RULE_COLUMNS} FROM alert_rules r LEFT JOIN users u ON u.id = r.owner_id
   WHERE $1 OR r.owner_id IS NOT DISTINCT FROM $2::int8
   ORDER BY r.id`;

/**
 * Rules a user may see ($2 true: an admin sees all): their own, and the global ones not narrowed to another
 * user's device. $3 one rule id, or null for all.
 */
export const listVisibleRules = `
  SELECT ${RULE_COLUMNS} FROM alert_rules r LEFT JOIN users u ON u.id = r.owner_id
   WHERE ($2 OR r.owner_id = $1
          OR (r.owner_id IS NULL AND (r.device_id IS NULL
              OR EXISTS (SELECT 1 FROM devices d WHERE d.id = r.device_id AND d.owner_id = $1 AND d.deleted_at IS NULL))))
     AND ($3::int8 IS NULL OR r.id = $3)
   ORDER BY r.id`;

// NO KEY UPDATE leaves the ingest workers' FOR KEY SHARE (their alert and state rows' foreign keys) unblocked.
const LOCK_RULE = `
  SELECT r.id, r.owner_id, r.module, r.device_id, r.metric_name, r.operator, r.threshold, r.clear_threshold,
         r.for_count, r.severity, r.enabled,
         (SELECT d.owner_id FROM devices d WHERE d.id = r.device_id AND d.deleted_at IS NULL) AS device_owner_id
    FROM alert_rules r WHERE r.id = $1`;
export const lockRuleForUpdate = `${LOCK_RULE} FOR NO KEY UPDATE OF r`;
export const lockRuleForDelete = `${LOCK_RULE} FOR UPDATE OF r`;

/** A device by id, deleted or not, for checking a rule's device_id. */
export const findDeviceForRule = `SELECT id, owner_id, module, deleted_at IS NOT NULL AS deleted FROM devices WHERE id = $1`;
export const userExists = `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1) AS found`;
export const countRulesOfOwner = `SELECT count(*)::int AS n FROM alert_rules WHERE owner_id = $1`;

/** $1..$10: owner_id, module, device_id, metric_name, operator, threshold, clear_threshold, for_count, severity, enabled. */
export const insertRule = `
  WITH r AS (
    INSERT INTO alert_rules (owner_id, module, device_id, metric_name, operator, threshold, clear_threshold, for_count, severity, enabled)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *)
  SELECT ${RULE_COLUMNS} FROM r LEFT JOIN users u ON u.id = r.owner_id`;

/** $1 id, then the ten columns in insertRule's order. */
export const updateRule = `
  WITH r AS (
    UPDATE alert_rules SET owner_id = $2, module = $3, device_id = $4, metric_name = $5, operator = $6, threshold = $7,
           clear_threshold = $8, for_count = $9, severity = $10, enabled = $11
     WHERE id = $1 RETURNING *)
  SELECT ${RULE_COLUMNS} FROM r LEFT JOIN users u ON u.id = r.owner_id`;

/** A changed rule counts its for_count run afresh (the rest of its per-device state stays). */
export const resetRuleState = `UPDATE alert_rule_state SET consecutive = 0 WHERE rule_id = $1 AND consecutive <> 0`;
/** Deleting a rule deletes its alerts (counted here) and, by ON DELETE CASCADE, its for_count state. */
export const deleteRuleAlerts = `DELETE FROM alerts WHERE rule_id = $1`;
export const deleteRule = `DELETE FROM alert_rules WHERE id = $1`;

// Webhooks (src/alerts/webhooks.ts, src/alerts/webhook-dispatcher.ts; tables in sql/006_webhooks.sql).
export const upsertWebhook = `
  INSERT INTO user_webhooks (user_id, url, secret) VALUES ($1, $2, $3)
  ON CONFLICT (user_id) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret, updated_at = now()
  RETURNING url, created_at, updated_at`;

export const webhookStatus = `
  SELECT w.url, w.created_at, w.updated_at,
         (SELECT count(*)::int FROM webhook_outbox o WHERE o.user_id = w.user_id AND o.delivered_at IS NULL AND o.failed_at IS NULL) AS pending,
         (SELECT count(*)::int FROM webhook_outbox o WHERE o.user_id = w.user_id AND o.failed_at IS NOT NULL) AS failed,
         (SELECT max(o.delivered_at) FROM webhook_outbox o WHERE o.user_id = w.user_id) AS last_delivered_at,
         (SELECT o.last_error FROM webhook_outbox o WHERE o.user_id = w.user_id AND o.last_error IS NOT NULL ORDER BY o.id DESC LIMIT 1) AS last_error
    FROM user_webhooks w WHERE w.user_id = $1`;

export const deleteWebhook = `DELETE FROM user_webhooks WHERE user_id = $1`;

/** Session-level advisory lock of the webhook dispatcher: held by one instance's dedicated connection while it lives. */
export const WEBHOOK_LOCK_KEY = 727004;
export const tryWebhookLock = `SELECT pg_try_advisory_lock(${WEBHOOK_LOCK_KEY}) AS held`;
/** Whether this connection still holds the lock (it is not re-taken: advisory locks count re-entries). */
export const holdsWebhookLock = `
  SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = ${WEBHOOK_LOCK_KEY} AND classid = 0
                 AND objsubid = 1 AND pid = pg_backend_pid() AND granted) AS held`;
export const WEBHOOK_CHANNEL = 'webhook_outbox';
export const notifyWebhookOutbox = `SELECT pg_notify('${WEBHOOK_CHANNEL}', '')`;

/**
 * $1 limit, $2 limit per receiver, $3 receivers to skip (their lane is busy): the due deliveries, oldest first,
 * with where and how to sign them.
 */
export const dueWebhookDeliveries = `
  SELECT id, user_id, event_type, payload, created_at, attempts, url, secret FROM (
    SELECT o.id, o.user_id, o.event_type, o.payload, o.created_at, o.attempts, w.url, w.secret, o.next_attempt_at,
           row_number() OVER (PARTITION BY o.user_id ORDER BY o.id) AS nth
      FROM webhook_outbox o JOIN user_webhooks w ON w.user_id = o.user_id
     WHERE o.delivered_at IS NULL AND o.failed_at IS NULL AND o.next_attempt_at <= now()
       AND NOT (o.user_id = ANY ($3::int8[]))
  ) due
   WHERE nth <= $2
   ORDER BY next_attempt_at, id
   LIMIT $1`;

export const markWebhookDelivered = `
  UPDATE webhook_outbox SET delivered_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = $1`;

/** $1 id, $2 delay ms, $3 error, $4 give-up hours: schedules the next attempt, or marks it failed when too old. */
export const markWebhookRetry = `
  UPDATE webhook_outbox
     SET attempts = attempts + 1, last_error = $3,
         next_attempt_at = now() + make_interval(secs => $2::float8 / 1000.0),
         failed_at = CASE WHEN created_at < now() - make_interval(hours => $4::int4) THEN now() END
   WHERE id = $1
  RETURNING failed_at IS NOT NULL AS gave_up`;

/** Delivered and failed deliveries are kept 7 days for inspection, then dropped, so the outbox stays bounded. */
export const purgeOldWebhookDeliveries = `
  DELETE FROM webhook_outbox WHERE (delivered_at < now() - interval '7 days') OR (failed_at < now() - interval '7 days')`;

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

// Live messages across instances (src/live/relay.ts; table in sql/009_live_instances.sql).
export const LIVE_EVENTS_CHANNEL = 'live_events';
export const notifyLiveEvents = `SELECT pg_notify('${LIVE_EVENTS_CHANNEL}', $1)`;
export const announceLiveInstance = `
  INSERT INTO live_instances (instance_id, subscribers, seen_at) VALUES ($1, $2, now())
  ON CONFLICT (instance_id) DO UPDATE SET subscribers = EXCLUDED.subscribers, seen_at = EXCLUDED.seen_at`;
export const leaveLiveInstances = `DELETE FROM live_instances WHERE instance_id = $1 OR seen_at < now() - interval '1 minute'`;
/** Another instance announced subscribers within the last 10 s (five presence rounds). */
export const otherLiveInstances = `
  SELECT EXISTS (SELECT 1 FROM live_instances WHERE instance_id <> $1 AND subscribers > 0 AND seen_at > now() - interval '10 seconds') AS others`;
