-- Time series on TimescaleDB: hypertables with daily chunks. Compression and retention policies are
-- set at every start from COMPRESS_AFTER_DAYS and RETENTION_DAYS by src/store/time-series-maintenance.ts.

CREATE TABLE IF NOT EXISTS telemetry (
  time         timestamptz NOT NULL,
  device_id    bigint NOT NULL,
  metric_name  text NOT NULL,
  metric_value double precision NOT NULL,
  unit         text
);
SELECT create_hypertable('telemetry', 'time', chunk_time_interval => INTERVAL '1 day', if_not_exists => TRUE);
CREATE INDEX IF NOT EXISTS telemetry_device_metric_time_idx ON telemetry (device_id, metric_name, time DESC);
ALTER TABLE telemetry SET (timescaledb.compress, timescaledb.compress_segmentby = 'device_id, metric_name', timescaledb.compress_orderby = 'time DESC');

CREATE TABLE IF NOT EXISTS gps_points (
  time        timestamptz NOT NULL,
  device_id   bigint NOT NULL,
  lat         double precision NOT NULL,
  lng         double precision NOT NULL,
  altitude_m  double precision,
  speed_kmh   double precision,
  heading_deg double precision,
  accuracy_m  double precision
);
SELECT create_hypertable('gps_points', 'time', chunk_time_interval => INTERVAL '1 day', if_not_exists => TRUE);
CREATE INDEX IF NOT EXISTS gps_points_device_time_idx ON gps_points (device_id, time DESC);
ALTER TABLE gps_points SET (timescaledb.compress, timescaledb.compress_segmentby = 'device_id', timescaledb.compress_orderby = 'time DESC');

CREATE TABLE IF NOT EXISTS module_events (
  time       timestamptz NOT NULL,
  device_id  bigint NOT NULL,
  module     text NOT NULL,
  event_type text NOT NULL,
  readings   integer NOT NULL DEFAULT 0,
  detail     jsonb
);
SELECT create_hypertable('module_events', 'time', chunk_time_interval => INTERVAL '1 day', if_not_exists => TRUE);
CREATE INDEX IF NOT EXISTS module_events_device_time_idx ON module_events (device_id, time DESC);
ALTER TABLE module_events SET (timescaledb.compress, timescaledb.compress_segmentby = 'device_id', timescaledb.compress_orderby = 'time DESC');
