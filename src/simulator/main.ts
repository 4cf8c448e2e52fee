// `npm run simulate -- --devices N`: a simulated fleet sending realistic readings to the real ingestion
// endpoint. Progress on stderr every 5 s; on SIGINT/SIGTERM (or --duration-s) it stops cleanly, prints the
// totals on stderr and a JSON summary on stdout. Tokens are never printed.
import { UserInputError } from '../auth/users.js';
import { ConfigError, loadConfig } from '../config/load.js';
import { createPool } from '../store/db.js';
import { openEmbeddedDatabase } from '../store/embedded.js';
import { migrate } from '../store/migrate.js';
import { parseSimulatorArgs, SimulatorUsageError, USAGE } from './args.js';
import { devicesFilePath, provisionDevices, readDevicesFile, renewDevice, resolveOwner, writeDevicesFile } from './fleet.js';
import { IngestClient } from './http-client.js';
import { FleetRunner, formatStats } from './runner.js';

const PROGRESS_EVERY_MS = 5000;
const log = (m: string) => process.stderr.write(`[simulate] ${m}\n`);

async function main(argv: string[]): Promise<number> {
  const opts = parseSimulatorArgs(argv);
  if (opts === 'help') { process.stdout.write(USAGE); return 0; }
  const config = loadConfig();
  const url = opts.url ?? `http://localhost:${config.port}`;

  // The CLI's database access: DATABASE_URL, else the running service's embedded server (or start it).
  const embedded = config.databaseUrl ? null : await openEmbeddedDatabase(config.dataDir, config.embeddedPgPort);
  const pool = createPool(config.databaseUrl ?? embedded!.url, 2);
  const client = new IngestClient(url, opts.concurrency);
  try {
    await migrate(pool);
    const owner = await resolveOwner(pool, opts.owner, config.adminEmail);
    const file = devicesFilePath(config.dataDir);
    const { devices, keep, stats } = await provisionDevices(pool, owner.id, opts.devices, readDevicesFile(file));
    let saved = keep;
    writeDevicesFile(file, saved);
    log(`${devices.length} devices of ${owner.email} (reused ${stats.reused}, token rotated ${stats.rotated}, created ${stats.created}); ` +
      `devices file ${file}`);
    log(`sending to ${url} every ${opts.intervalMs} ms per device, flag rate ${opts.flagRate}, at most ${opts.concurrency} in flight` +
      `${opts.durationS ? `, for ${opts.durationS} s` : '; Ctrl-C stops'}`);
    await warnIfUnreachable(url);

    let writes = Promise.resolve();
    const runner: FleetRunner = new FleetRunner(devices, client, {
      intervalMs: opts.intervalMs, flagRate: opts.flagRate, seed: opts.seed, log,
      renew: async (device) => {
        const renewed = await renewDevice(pool, owner.id, device);
        // The file always holds the working token; writes are queued so two renewals never interleave.
        saved = saved.map((d) => (d.id === device.id ? renewed : d));
        if (!saved.some((d) => d.id === renewed.id)) saved.push(renewed);
        writes = writes.then(() => writeDevicesFile(file, saved));
        await writes;
        return renewed;
      },
    });

    const startedAt = Date.now();
    let lastSent = 0;
    const progress = setInterval(() => {
      const s = runner.stats;
      const rate = (s.sent - lastSent) / (PROGRESS_EVERY_MS / 1000);
      lastSent = s.sent;
      log(`${Math.round((Date.now() - startedAt) / 1000)} s: ${formatStats(s)}; ${rate.toFixed(1)} req/s, in flight ${client.inFlight}, waiting ${client.queued}`);
    }, PROGRESS_EVERY_MS);
    const stop = (why: string) => { log(`${why}: stopping (clearing raised flags, waiting for requests in flight)`); runner.stop(); };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    const timer = opts.durationS ? setTimeout(() => stop(`${opts.durationS} s elapsed`), opts.durationS * 1000) : null;

    await runner.run();
    clearInterval(progress);
    if (timer) clearTimeout(timer);
    await writes;
    const s = runner.stats;
    const seconds = (Date.now() - startedAt) / 1000;
    log(`stopped after ${seconds.toFixed(1)} s: ${formatStats(s)}`);
    process.stdout.write(`${JSON.stringify({
      devices: devices.length, owner: owner.email, seconds: Math.round(seconds * 10) / 10,
      sent: s.sent, ok: s.ok, errors: s.errors, retried: s.retried, dropped: s.dropped,
      flags_raised: s.flagsRaised, flags_cleared: s.flagsCleared, tokens_renewed: s.tokensRenewed,
    })}\n`);
    if (s.sent > 0 && s.ok === 0) { log(`no reading was accepted by ${url}: is the service running there?`); return 1; }
    return 0;
  } finally {
    client.close();
    await pool.end();
    if (embedded?.owned) await embedded.stop();
  }
}

async function warnIfUnreachable(url: string): Promise<void> {
  try {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
  } catch {
    log(`warning: ${url}/healthz does not answer; readings will be retried (is the service running?)`);
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  if (err instanceof SimulatorUsageError) { process.stderr.write(`${err.message}\n\n${USAGE}`); process.exit(2); }
  if (err instanceof UserInputError || err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`Error: ${(err as Error).message ?? String(err)}\n`);
  process.exit(1);
});
