import { describe, expect, it } from 'vitest';
import { BinaryCopyWriter } from './copy-binary.js';

const HEADER = Buffer.concat([Buffer.from('PGCOPY\n', 'latin1'), Buffer.from([0xff, 0x0d, 0x0a, 0x00]), Buffer.alloc(8)]);
const TRAILER = Buffer.from([0xff, 0xff]);

/** The bytes between the 19-byte header and the 2-byte trailer. */
function encode(fill: (w: BinaryCopyWriter) => void, initialBytes?: number): Buffer {
  const w = new BinaryCopyWriter(initialBytes);
  fill(w);
  const out = w.finish();
  expect(out.subarray(0, 19)).toEqual(HEADER);
  expect(out.subarray(-2)).toEqual(TRAILER);
  return out.subarray(19, -2);
}

const int8Field = (v: bigint) => {
  const b = Buffer.alloc(12);
  b.writeInt32BE(8, 0);
  b.writeBigInt64BE(v, 4);
  return b;
};

describe('BinaryCopyWriter', () => {
  it('writes the 19-byte header (signature, flags, extension length) and the -1 trailer for no rows', () => {
    const out = new BinaryCopyWriter().finish();
    expect(out).toEqual(Buffer.concat([HEADER, TRAILER]));
    expect(out.length).toBe(21);
  });

  it('writes a row as its field count then length-prefixed fields', () => {
    const body = encode((w) => w.startRow(2).int4(-7).float8(21.5));
    const expected = Buffer.alloc(2 + 8 + 12);
    expected.writeInt16BE(2, 0);
    expected.writeInt32BE(4, 2); expected.writeInt32BE(-7, 6);
    expected.writeInt32BE(8, 10); expected.writeDoubleBE(21.5, 14);
    expect(body).toEqual(expected);
  });

  it('encodes int8 exactly for large, negative and boundary values', () => {
    const values = [0, 1, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 32 - 1, -(2 ** 32), -(2 ** 40) - 5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    const body = encode((w) => { for (const v of values) w.int8(v); });
    expect(body).toEqual(Buffer.concat(values.map((v) => int8Field(BigInt(v)))));
  });

  it('writes NULL as length -1 with no bytes, and NaN as NULL in float8OrNull', () => {
    const body = encode((w) => w.startRow(3).nullValue().float8OrNull(NaN).float8OrNull(-0.5));
    const expected = Buffer.alloc(2 + 4 + 4 + 12);
    expected.writeInt16BE(3, 0);
    expected.writeInt32BE(-1, 2);
    expected.writeInt32BE(-1, 6);
    expected.writeInt32BE(8, 10); expected.writeDoubleBE(-0.5, 14);
    expect(body).toEqual(expected);
  });

  it('encodes timestamptz as microseconds since 2000-01-01 UTC, before and after it', () => {
    const body = encode((w) => w.timestamptz(Date.UTC(2000, 0, 1)).timestamptz(Date.UTC(1999, 11, 31, 23, 59, 59, 999)).timestamptz(Date.UTC(2026, 2, 10, 12)));
    expect(body).toEqual(Buffer.concat([
      int8Field(0n), int8Field(-1000n), int8Field(BigInt(Date.UTC(2026, 2, 10, 12) - Date.UTC(2000, 0, 1)) * 1000n),
    ]));
  });

  it('writes text as its UTF-8 byte length then the bytes, and jsonb with the version byte', () => {
    const body = encode((w) => w.text('°C').jsonb('{"a":1}'));
    expect(body).toEqual(Buffer.concat([
      Buffer.from([0, 0, 0, 3]), Buffer.from('°C', 'utf8'),
      Buffer.from([0, 0, 0, 8, 1]), Buffer.from('{"a":1}', 'utf8'),
    ]));
  });

  it('grows its buffer from a tiny start without corrupting earlier rows', () => {
    const rows = 5000;
    const body = encode((w) => { for (let i = 0; i < rows; i++) w.startRow(2).int8(i * 1_000_003).text(`row-${i}`); }, 1);
    let pos = 0;
    for (let i = 0; i < rows; i++) {
      expect(body.readInt16BE(pos)).toBe(2);
      expect(body.readBigInt64BE(pos + 6)).toBe(BigInt(i * 1_000_003));
      const len = body.readInt32BE(pos + 14);
      expect(body.toString('utf8', pos + 18, pos + 18 + len)).toBe(`row-${i}`);
      pos += 18 + len;
    }
    expect(pos).toBe(body.length);
  });
});
