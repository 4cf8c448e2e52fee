-- Instances with live WebSocket subscribers (src/live/relay.ts). Every instance relays the live messages it
-- produces through NOTIFY only while another instance has subscribers, so a fleet whose dashboards all sit on
-- one instance, or nobody watching at all, pays nothing. Unlogged: it is presence, rebuilt within seconds.
CREATE UNLOGGED TABLE IF NOT EXISTS live_instances (
  instance_id text PRIMARY KEY,
  subscribers integer NOT NULL,
  seen_at     timestamptz NOT NULL
);
