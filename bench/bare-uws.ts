// The reference server: uWS reading each POST body to the end and answering 200 with a small JSON body,
// with none of the service's work (no auth, parsing, batching or database). Run as a child by run.ts.
import { loadUws } from '../src/http/uws.js';

const uws = loadUws();
const port = Number(process.env.PORT ?? 0);
const ANSWER = '{"ok":true,"status":"ok","inserted":10,"skipped":0,"device_id":1}';

const app = uws.App()
  .post('/*', (res) => {
    let aborted = false;
    const chunks: Buffer[] = [];
    res.onAborted(() => { aborted = true; });
    res.onData((chunk, isLast) => {
      // uWS reuses the chunk's memory after this callback: copy it, as the service's body reader does.
      chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
      if (!isLast || aborted) return;
      Buffer.concat(chunks);
      res.cork(() => { res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(ANSWER); });
    });
  })
  .get('/*', (res) => { res.end('ok'); });

app.listen('127.0.0.1', port, (socket) => {
  if (!socket) { process.stderr.write(`bare uWS: cannot listen on 127.0.0.1:${port}\n`); process.exit(1); }
});
process.once('SIGTERM', () => process.exit(0));
