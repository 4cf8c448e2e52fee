// A webhook receiver on loopback for tests: records every delivery and answers with the status `answer` picks.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery { headers: http.IncomingHttpHeaders; body: string; json: any }

/** A webhook receiver on loopback that answers each delivery with the status `answer` picks. */
export class Receiver {
  readonly deliveries: Delivery[] = [];
  answer: (d: Delivery, index: number) => number = () => 200;
  private server!: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const d: Delivery = { headers: req.headers, body, json: JSON.parse(body) };
        this.deliveries.push(d);
        res.writeHead(this.answer(d, this.deliveries.length - 1)).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  of(type: string, alertId?: number): Delivery[] {
    return this.deliveries.filter((d) => d.json.type === type && (alertId === undefined || d.json.alert?.id === alertId));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
