-- Mobile access tokens and browser sessions: only hashes of the secrets are stored.

CREATE TABLE IF NOT EXISTS api_access_tokens (
  id           bigserial PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users (id),
  token_hash   char(64) NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX IF NOT EXISTS api_access_tokens_user_idx ON api_access_tokens (user_id) WHERE revoked_at IS NULL;

CREATE TABLE IF NOT EXISTS sessions (
  id_hash      char(64) PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users (id),
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user_idx ON sessions (user_id);
