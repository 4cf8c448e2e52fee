-- Time series on plain PostgreSQL: native range partitions by day, created ahead of time and dropped
-- after RETENTION_DAYS by src/store/time-series-maintenance.ts. The DEFAULT partition catches backfill
-- older than the oldest daily partition, so such a reading never fails the whole batch it travels in.

CREATE TABLE IF NOT EXISTS telemetry (
  time         timestamptz NOT NULL,
  device_id    bigint NOT NULL,
  metric_name  text NOT NULL,
  metric_value double precision NOT NULL,
  unit         text
) PARTITION BY RANGE (time);
CREATE INDEX IF NOT EXISTS telemetry_device_metric_time_idx ON telemetry (device_id, metric_name, time DESC);
CREATE TABLE IF NOT EXISTS telemetry_default PARTITION OF telemetry DEFAULT;

CREATE TABLE IF NOT EXISTS gps_points (
  time        timestamptz NOT NULL,
  device_id   bigint NOT NULL,
  lat         double precision NOT NULL,
  lng         double precision NOT NULL,
  altitude_m  double precision,
  speed_kmh   double precision,
  heading_deg double precision,
  accuracy_m  double precision
) PARTITION BY RANGE (time);
CREATE INDEX IF NOT EXISTS gps_points_device_time_idx ON gps_points (device_id, time DESC);
CREATE TABLE IF NOT EXISTS gps_points_default PARTITION OF gps_points DEFAULT;

CREATE TABLE IF NOT EXISTS module_events (
  time       timestamptz NOT NULL,
  device_id  bigint NOT NULL,
  module     text NOT NULL,
  event_type text NOT NULL,
  readings   integer NOT NULL DEFAULT 0,
  detail     jsonb
) PARTITION BY RANGE (time);
CREATE INDEX IF NOT EXISTS module_events_device_time_idx ON module_events (device_id, time DESC);
CREATE TABLE IF NOT EXISTS module_events_default PARTITION OF module_events DEFAULT;
