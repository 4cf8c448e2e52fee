// One keep-alive connection pool to the service, with at most `concurrency` requests in flight: a device's
// reading waits its turn instead of opening yet another socket.
import http from 'node:http';
import https from 'node:https';

export interface PostResult {
  /** HTTP status; 0 when the request failed before any answer (refused, reset, timed out); -1 when cancelled unsent. */
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
  private waiting: ((go: boolean) => void)[] = [];
  inFlight = 0;

  constructor(baseUrl: string, private readonly concurrency: number) {
    this.target = new URL('/api/telemetry-ingest', baseUrl);
    this.lib = this.target.protocol === 'https:' ? https : http;
    this.agent = new this.lib.Agent({ keepAlive: true, maxSockets: concurrency });
  }

  /** Requests waiting for a free slot: more than a few means the service is slower than the fleet. */
  get queued(): number { return this.waiting.length; }

  /** Resolves true with a slot held, or false when cancelWaiting() was called first. */
  private acquire(): Promise<boolean> | boolean {
    if (this.inFlight < this.concurrency) { this.inFlight++; return true; }
    return new Promise<boolean>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next(true); else this.inFlight--;
  }

  /** On stop: the readings still waiting for a slot are not sent (their post() answers -1). */
  cancelWaiting(): void {
    for (const w of this.waiting.splice(0)) w(false);
  }

  /** POSTs one body with the device's token; never throws. The token goes only into the header. */
  async post(token: string, body: string): Promise<PostResult> {
    if (!(await this.acquire())) return { status: -1, retryAfterS: null, error: 'cancelled' };
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
