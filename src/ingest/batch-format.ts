import type { NormalisedBody } from './normalise.js';

// A batch crosses to a worker as columns in typed arrays (transferred, not copied) plus two small
// string dictionaries, never as an array of objects: structured-cloning objects would cost the main thread.
//
//   readings: time | device | value | name index | unit index (-1 = none)   one slot per reading
//   events:   device | time | readings | skipped | type | module | token index | has GPS   one slot per request
//   Readings and GPS fixes are stored in request order, so a request's rows can be found (and left out).
//   gps:      8 doubles per fix: time, device, lat, lng, altitude, speed, heading, accuracy (NaN = null)

export interface BatchPayload {
  readingCount: number;
  rTime: Float64Array;
  rDevice: Float64Array;
  rValue: Float64Array;
  rName: Uint32Array;
  rUnit: Int32Array;
  names: string[];
  units: string[];
  eventCount: number;
  eDevice: Float64Array;
  eTime: Float64Array;
  eReadings: Int32Array;
  eSkipped: Int32Array;
  eType: Uint8Array;
  eModule: Uint8Array;
  /** Index into `tokens`: the hash of the token each request presented, re-checked at commit. */
  eToken: Uint32Array;
  eGps: Uint8Array;
  tokens: string[];
  gpsCount: number;
  gps: Float64Array;
}

export const GPS_STRIDE = 8;

function grow<T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  let size = a.length * 2;
  while (size < need) size *= 2;
  const next = new (a.constructor as new (n: number) => T)(size);
  next.set(a);
  return next;
}

/** Accumulates requests on the main thread; build() hands over the arrays and the builder starts afresh. */
export class BatchBuilder {
  private p!: BatchPayload;
  private nameIndex = new Map<string, number>();
  private unitIndex = new Map<string, number>();
  private tokenIndex = new Map<string, number>();

  constructor(private readonly initialSlots = 256) {
    this.reset();
  }

  private reset(): void {
    const n = this.initialSlots;
    this.p = {
      readingCount: 0, rTime: new Float64Array(n), rDevice: new Float64Array(n), rValue: new Float64Array(n),
      rName: new Uint32Array(n), rUnit: new Int32Array(n), names: [], units: [],
      eventCount: 0, eDevice: new Float64Array(64), eTime: new Float64Array(64), eReadings: new Int32Array(64),
      eSkipped: new Int32Array(64), eType: new Uint8Array(64), eModule: new Uint8Array(64),
      eToken: new Uint32Array(64), eGps: new Uint8Array(64), tokens: [],
      gpsCount: 0, gps: new Float64Array(GPS_STRIDE * 8),
    };
    this.nameIndex.clear();
    this.unitIndex.clear();
    this.tokenIndex.clear();
  }

  get readingCount(): number { return this.p.readingCount; }
  get eventCount(): number { return this.p.eventCount; }

  private intern(map: Map<string, number>, list: string[], s: string): number {
    let i = map.get(s);
    if (i === undefined) { i = list.length; list.push(s); map.set(s, i); }
    return i;
  }

  /** Adds one request: its readings (none for a heartbeat), its GPS fix and its module event. */
  add(deviceId: number, moduleIdx: number, eventType: number, receivedAtMs: number, body: NormalisedBody | null, tokenHash: string): void {
    const p = this.p;
    if (body) {
      const n = body.values.length;
      const need = p.readingCount + n;
      p.rTime = grow(p.rTime, need); p.rDevice = grow(p.rDevice, need); p.rValue = grow(p.rValue, need);
      p.rName = grow(p.rName, need); p.rUnit = grow(p.rUnit, need);
      for (let i = 0; i < n; i++) {
        const at = p.readingCount + i;
        p.rTime[at] = body.times[i];
        p.rDevice[at] = deviceId;
        p.rValue[at] = body.values[i];
        p.rName[at] = this.intern(this.nameIndex, p.names, body.names[i]);
        const unit = body.units[i];
        p.rUnit[at] = unit === null ? -1 : this.intern(this.unitIndex, p.units, unit);
      }
      p.readingCount = need;
      if (body.gps) {
        p.gps = grow(p.gps, (p.gpsCount + 1) * GPS_STRIDE);
        const g = body.gps;
        p.gps.set([g.timeMs, deviceId, g.lat, g.lng, g.altitudeM ?? NaN, g.speedKmh ?? NaN, g.headingDeg ?? NaN, g.accuracyM ?? NaN], p.gpsCount * GPS_STRIDE);
        p.gpsCount++;
      }
    }
    const e = p.eventCount;
    const need = e + 1;
    p.eDevice = grow(p.eDevice, need); p.eTime = grow(p.eTime, need); p.eReadings = grow(p.eReadings, need);
    p.eSkipped = grow(p.eSkipped, need); p.eType = grow(p.eType, need); p.eModule = grow(p.eModule, need);
    p.eToken = grow(p.eToken, need); p.eGps = grow(p.eGps, need);
    p.eDevice[e] = deviceId;
    p.eTime[e] = receivedAtMs;
    p.eReadings[e] = body ? body.values.length : 0;
    p.eSkipped[e] = body ? body.skipped : 0;
    p.eType[e] = eventType;
    p.eModule[e] = moduleIdx;
    p.eToken[e] = this.intern(this.tokenIndex, p.tokens, tokenHash);
    p.eGps[e] = body?.gps ? 1 : 0;
    p.eventCount = need;
  }

  /** Returns the payload and the buffers to transfer, and starts an empty batch. */
  build(): { payload: BatchPayload; transferList: ArrayBuffer[] } {
    const payload = this.p;
    this.reset();
    const transferList = [payload.rTime, payload.rDevice, payload.rValue, payload.rName, payload.rUnit,
      payload.eDevice, payload.eTime, payload.eReadings, payload.eSkipped, payload.eType, payload.eModule,
      payload.eToken, payload.eGps, payload.gps]
      .map((a) => a.buffer as ArrayBuffer);
    return { payload, transferList };
  }
}

/**
 * A copy of the payload holding only the requests for which keep(event) is true, with their readings and
 * GPS fixes. Used by a worker to commit a batch without the requests whose token was revoked meanwhile.
 */
export function keepRequests(p: BatchPayload, keep: (event: number) => boolean): BatchPayload {
  const b = new BatchBuilder();
  let r = 0;
  let g = 0;
  for (let e = 0; e < p.eventCount; e++) {
    const n = p.eReadings[e];
    const hasGps = p.eGps[e] === 1;
    if (keep(e)) {
      let body: NormalisedBody | null = null;
      if (n > 0 || hasGps) { // a telemetry request always has readings; a heartbeat has none
        body = { times: [], names: [], values: [], units: [], skipped: p.eSkipped[e], gps: null };
        for (let i = r; i < r + n; i++) {
          body.times.push(p.rTime[i]); body.names.push(p.names[p.rName[i]]); body.values.push(p.rValue[i]);
          body.units.push(p.rUnit[i] < 0 ? null : p.units[p.rUnit[i]]);
        }
        if (hasGps) {
          const o = g * GPS_STRIDE;
          const nul = (v: number) => (Number.isNaN(v) ? null : v);
          body.gps = { timeMs: p.gps[o], lat: p.gps[o + 2], lng: p.gps[o + 3], altitudeM: nul(p.gps[o + 4]),
            speedKmh: nul(p.gps[o + 5]), headingDeg: nul(p.gps[o + 6]), accuracyM: nul(p.gps[o + 7]) };
        }
      }
      b.add(p.eDevice[e], p.eModule[e], p.eType[e], p.eTime[e], body, p.tokens[p.eToken[e]]);
    }
    r += n;
    if (hasGps) g++;
  }
  return b.build().payload;
}
