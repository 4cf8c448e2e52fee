// All SQL of the ingest path and of device management, as named statements readable in one place.

export const copyTelemetry =
  'COPY telemetry (time, device_id, metric_name, metric_value, unit) FROM STDIN (FORMAT binary)';
export const copyGps =
  'COPY gps_points (time, device_id, lat, lng, altitude_m, speed_kmh, heading_deg, accuracy_m) FROM STDIN (FORMAT binary)';
export const copyModuleEvents =
  'COPY module_events (time, device_id, module, event_type, readings, detail) FROM STDIN (FORMAT binary)';

/** $1 device ids, $2 names, $3 values, $4 units, $5 epoch ms; rows arrive sorted by (device, name). */
export const upsertLatestMetrics = `
  INSERT INTO latest_metrics (device_id, metric_name, value, unit, recorded_at)
  SELECT d, n, v, u, to_timestamp(t / 1000.0)
    FROM unnest($1::int8[], $2::text[], $3::float8[], $4::text[], $5::float8[]) AS r(d, n, v, u, t)
  ON CONFLICT (device_id, metric_name) DO UPDATE
     SET value = EXCLUDED.value, unit = EXCLUDED.unit, recorded_at = EXCLUDED.recorded_at
   WHERE latest_metrics.recorded_at <= EXCLUDED.recorded_at`;

/**
 * $1 device ids, $2 last contact in epoch ms; the rows are already locked by lockDevicesForCommit.
 * Marks them online and moves last_seen_at forward only.
 */
export const markDevicesSeen = `
  UPDATE devices d
     SET status = 'online', last_seen_at = GREATEST(COALESCE(d.last_seen_at, s.at), s.at)
    FROM (SELECT id, to_timestamp(t / 1000.0) AS at FROM unnest($1::int8[], $2::float8[]) AS u(id, t)) s
   WHERE d.id = s.id`;

/** $1 device ids that were offline, $2 their contact time in epoch ms: one 'online' module event each. */
export const insertOnlineEvents = `
  INSERT INTO module_events (time, device_id, module, event_type, readings)
  SELECT to_timestamp(t / 1000.0), d.id, d.module, 'online', 0
    FROM unnest($1::int8[], $2::float8[]) AS u(id, t) JOIN devices d ON d.id = u.id`;

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

/** $1 device ids, sorted. Locks them in id order for the rest of the batch transaction; reads token and status. */
export const lockDevicesForCommit = `
  SELECT id, api_token_hash, status FROM devices WHERE id = ANY($1::int8[]) AND deleted_at IS NULL ORDER BY id FOR UPDATE`;
