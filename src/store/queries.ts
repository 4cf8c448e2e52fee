// All SQL as named statements readable in one place: the ingest path, devices, users, sessions, liveness and
// alerts here; delivery and the dashboard pages in the two files re-exported at the end.

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

// The SQL of delivery (webhooks, live relay) and of the dashboard pages lives beside this file.
export * from './delivery-queries.js';
export * from './web-queries.js';
