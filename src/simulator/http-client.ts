// One keep-alive connection pool to the service, with at most `concurrency` requests in flight: a device's
// reading waits its turn instead of opening yet another socket.
import http from 'node:http';
import https from 'node:https';

export interface PostResult {
  /** HTTP status, or 0 when the request failed before any answer (refused, reset, timed out). */
  status: number;
  /** Retry-After in seconds, when the answer had one. */
  retryAfterS: number | null;
  error: string | null;
}

const REQUEST_TIMEOUT_MS = 30_000;

export class IngestClient {
  private readonly agent: http.Agent;
  private readonly target: URL;
  private readonly lib: typeof http | typeof https;
  private waiting: (() => void)[] = [];
  inFlight = 0;

  constructor(baseUrl: string, private readonly concurrency: number) {
    this.target = new URL('/api/telemetry-ingest', baseUrl);
    this.lib = this.target.protocol === 'https:' ? https : http;
    this.agent = new this.lib.Agent({ keepAlive: true, maxSockets: concurrency });
  }

  private async acquire(): Promise<void> {
    if (this.inFlight < this.concurrency) { this.inFlight++; return; }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next(); else this.inFlight--;
  }

  /** POSTs one body with the device's token; never throws. The token goes only into the header. */
  async post(token: string, body: string): Promise<PostResult> {
    await this.acquire();
    try {
      return await new Promise<PostResult>((resolve) => {
        const req = this.lib.request(this.target, {
          method: 'POST', agent: this.agent, timeout: REQUEST_TIMEOUT_MS,
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Authorization: `Bearer ${token}` },
        }, (res) => {
          res.resume(); // the body is not needed; reading it frees the socket for the next request
          res.once('end', () => {
            const ra = Number(res.headers['retry-after']);
            resolve({ status: res.statusCode ?? 0, retryAfterS: Number.isFinite(ra) && ra >= 0 ? ra : null, error: null });
          });
          res.once('error', (err) => resolve({ status: 0, retryAfterS: null, error: err.message }));
        });
        req.once('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
        req.once('error', (err) => resolve({ status: 0, retryAfterS: null, error: (err as NodeJS.ErrnoException).code ?? err.message }));
        req.end(body);
      });
    } finally {
      this.release();
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
