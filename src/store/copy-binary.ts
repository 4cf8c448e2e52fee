// Encodes rows in PostgreSQL's binary COPY format into one growing Buffer, so a whole batch
// goes to the COPY stream in a few large writes instead of one write per row.

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const TWO_32 = 4294967296;

export class BinaryCopyWriter {
  private buf: Buffer;
  private pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(initialBytes, 64));
    SIGNATURE.copy(this.buf, 0);
    this.buf.writeInt32BE(0, 11); // flags
    this.buf.writeInt32BE(0, 15); // header extension length
    this.pos = 19;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  startRow(fields: number): this {
    this.ensure(2);
    this.buf.writeInt16BE(fields, this.pos);
    this.pos += 2;
    return this;
  }

  nullValue(): this {
    this.ensure(4);
    this.buf.writeInt32BE(-1, this.pos);
    this.pos += 4;
    return this;
  }

  /** int8 from a JS number holding an integer below 2^53. */
  int8(v: number): this {
    this.ensure(12);
    const hi = Math.floor(v / TWO_32);
    this.buf.writeInt32BE(8, this.pos);
    this.buf.writeInt32BE(hi, this.pos + 4);
    this.buf.writeUInt32BE(v - hi * TWO_32, this.pos + 8);
    this.pos += 12;
    return this;
  }

  int4(v: number): this {
    this.ensure(8);
    this.buf.writeInt32BE(4, this.pos);
    this.buf.writeInt32BE(v, this.pos + 4);
    this.pos += 8;
    return this;
  }

  float8(v: number): this {
    this.ensure(12);
    this.buf.writeInt32BE(8, this.pos);
    this.buf.writeDoubleBE(v, this.pos + 4);
    this.pos += 12;
    return this;
  }

  /** A float8 column where NaN stands for NULL. */
  float8OrNull(v: number): this {
    return Number.isNaN(v) ? this.nullValue() : this.float8(v);
  }

  /** timestamptz from epoch milliseconds: microseconds since 2000-01-01 UTC. */
  timestamptz(epochMs: number): this {
    return this.int8((epochMs - PG_EPOCH_MS) * 1000);
  }

  /** Text from bytes already encoded once (dictionary entries). */
  textBytes(bytes: Buffer): this {
    this.ensure(4 + bytes.length);
    this.buf.writeInt32BE(bytes.length, this.pos);
    bytes.copy(this.buf, this.pos + 4);
    this.pos += 4 + bytes.length;
    return this;
  }

  text(s: string): this {
    return this.textBytes(Buffer.from(s, 'utf8'));
  }

  /** jsonb binary form: a version byte (1) then the JSON text. */
  jsonb(json: string): this {
    const bytes = Buffer.from(json, 'utf8');
    this.ensure(5 + bytes.length);
    this.buf.writeInt32BE(bytes.length + 1, this.pos);
    this.buf[this.pos + 4] = 1;
    bytes.copy(this.buf, this.pos + 5);
    this.pos += 5 + bytes.length;
    return this;
  }

  /** Appends the trailer and returns the encoded bytes. */
  finish(): Buffer {
    this.ensure(2);
    this.buf.writeInt16BE(-1, this.pos);
    this.pos += 2;
    return this.buf.subarray(0, this.pos);
  }
}
