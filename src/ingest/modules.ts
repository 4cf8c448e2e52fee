/** The six module kinds; their index travels in batches as one byte. Shared with sql/001_core.sql's CHECK. */
export const MODULES = ['health', 'vehicle', 'factory', 'home_infra', 'worker', 'fleet'] as const;
export type Module = (typeof MODULES)[number];

export function moduleIndex(m: string): number {
  return MODULES.indexOf(m as Module);
}

/** Module event kinds written by ingestion (the sweeper and alerts add more). */
export const EVENT_TYPES = ['telemetry', 'heartbeat'] as const;
export type IngestEventType = (typeof EVENT_TYPES)[number];
