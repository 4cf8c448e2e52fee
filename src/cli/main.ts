// The admin command line: JSON on stdout, errors on stderr, non-zero exit on failure.
import { UserInputError } from '../auth/users.js';
import { ConfigError, loadConfig } from '../config/load.js';
import { createPool } from '../store/db.js';
import { openEmbeddedDatabase } from '../store/embedded.js';
import { migrate } from '../store/migrate.js';
import { CliUsageError } from './args.js';
import { findCommand, parseFlags, usage } from './commands.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === 'help') { process.stdout.write(usage()); return 0; }
  if (name === undefined) { process.stderr.write(`No command given.\n${usage()}`); return 2; }
  const command = findCommand(name);
  const flags = parseFlags(rest);
  const config = loadConfig();
  // Attaches to the embedded server while the service runs; otherwise starts it for this command only.
  const embedded = config.databaseUrl ? null : await openEmbeddedDatabase(config.dataDir, config.embeddedPgPort);
  const pool = createPool(config.databaseUrl ?? embedded!.url, 2);
  if (embedded?.owned) {
    // Interrupted, the CLI still stops the server it started.
    const stop = () => { void embedded.stop().finally(() => process.exit(130)); };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  try {
    if (name !== 'migrate') await migrate(pool);
    const result = await command(pool, flags);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } finally {
    await pool.end();
    if (embedded?.owned) await embedded.stop();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  if (err instanceof CliUsageError) process.stderr.write(`${err.message}\n${usage()}`);
  else if (err instanceof UserInputError || err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`Error: ${(err as Error).message ?? String(err)}\n`);
  process.exit(1);
});
