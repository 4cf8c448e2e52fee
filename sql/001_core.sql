-- Accounts, devices and the latest value per metric: the tables that are not time series.

CREATE TABLE IF NOT EXISTS users (
  id            bigserial PRIMARY KEY,
  email         text NOT NULL,
  password_hash text NOT NULL,
  role          text NOT NULL DEFAULT 'user' CHECK (role IN ('admin', 'user')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  disabled_at   timestamptz
);
-- Email is unique whatever its case.
CREATE UNIQUE INDEX IF NOT EXISTS users_email_lower_key ON users (lower(email));

CREATE TABLE IF NOT EXISTS devices (
  id               bigserial PRIMARY KEY,
  owner_id         bigint NOT NULL REFERENCES users (id),
  name             text NOT NULL,
  module           text NOT NULL CHECK (module IN ('health', 'vehicle', 'factory', 'home_infra', 'worker', 'fleet')),
  api_token_hash   char(64) NOT NULL,
  token_created_at timestamptz NOT NULL DEFAULT now(),
  status           text NOT NULL DEFAULT 'offline' CHECK (status IN ('online', 'offline')),
  last_seen_at     timestamptz,
  offline_after_s  integer CHECK (offline_after_s > 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
) WITH (fillfactor = 70); -- every accepted batch updates status and last_seen_at: room for HOT updates
CREATE UNIQUE INDEX IF NOT EXISTS devices_api_token_hash_key ON devices (api_token_hash);
CREATE INDEX IF NOT EXISTS devices_owner_idx ON devices (owner_id) WHERE deleted_at IS NULL;

-- Never overwritten by an older reading: the ingest upsert only replaces when recorded_at is not older.
CREATE TABLE IF NOT EXISTS latest_metrics (
  device_id   bigint NOT NULL,
  metric_name text NOT NULL,
  value       double precision NOT NULL,
  unit        text,
  recorded_at timestamptz NOT NULL,
  PRIMARY KEY (device_id, metric_name)
) WITH (fillfactor = 50); -- rewritten on nearly every reading: free space keeps the updates HOT (no index churn)
