import { Ajv } from 'ajv';

// The structure of an ingest body. Value rules (numbers only, name pattern, ranges) live in normalise.ts,
// because non-numeric metrics are skipped and counted rather than rejected.
const recordedAt = { type: ['string', 'number'] } as const;
const unit = { type: 'string', maxLength: 32 } as const;

export const INGEST_BODY_SCHEMA = {
  type: 'object',
  properties: {
    data: { type: 'object' },
    readings: {
      type: 'array',
      items: {
        type: 'object',
        required: ['metric_name'],
        properties: { metric_name: { type: 'string' }, unit, recorded_at: recordedAt },
      },
    },
    metric_name: { type: 'string' },
    unit,
    recorded_at: recordedAt,
    gps: {
      type: 'object',
      required: ['lat', 'lng'],
      properties: {
        lat: { type: 'number' }, lng: { type: 'number' },
        altitude_m: { type: 'number' }, speed_kmh: { type: 'number' },
        heading_deg: { type: 'number' }, accuracy_m: { type: 'number' },
      },
    },
  },
} as const;

// Compiled once at module load, never per request.
const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const validate = ajv.compile(INGEST_BODY_SCHEMA);

/** Returns null when the body's structure is valid, else a short description of the first problem. */
export function checkIngestBodyShape(body: unknown): string | null {
  if (validate(body)) return null;
  const err = validate.errors?.[0];
  if (!err) return 'is not valid';
  const where = err.instancePath ? err.instancePath.slice(1).replace(/\//g, '.') : 'body';
  return `field ${where} ${err.message ?? 'is not valid'}`;
}
