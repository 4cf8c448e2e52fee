// SQL of delivery to people: webhooks and their outbox, and live messages across instances. Re-exported by
// queries.ts, so every module still reads `q.<name>`.

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
