import fs from 'node:fs';
import { createDevice, checkModule, deleteDevice, rotateDeviceToken } from '../auth/device-registry.js';
import { generateToken, hashToken } from '../auth/device-tokens.js';
import { createUser, disableUser, enableUser, findUserId, listUsers, setUserPassword, type Role } from '../auth/users.js';
import type { Pool } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import * as q from '../store/queries.js';
import { CliUsageError, parseFlags, positiveInt, progress, required } from './args.js';
import { RULE_COMMANDS } from './rule-commands.js';
import { WEBHOOK_COMMANDS } from './webhook-commands.js';

type Command = (pool: Pool, flags: Record<string, string>) => Promise<unknown>;

const BULK_CHUNK = 1000;

export const COMMANDS: Record<string, { usage: string; run: Command }> = {
  migrate: {
    usage: 'migrate',
    run: async (pool) => ({ migrated: true, storage: await migrate(pool) }),
  },
  'user:create': {
    usage: 'user:create --email E --password P [--role admin|user]',
    run: (pool, f) => createUser(pool, required(f, 'email'), required(f, 'password'), (f.role ?? 'user') as Role),
  },
  'user:disable': {
    usage: 'user:disable --email E',
    run: async (pool, f) => ({ ...await disableUser(pool, required(f, 'email')), disabled: true }),
  },
  'user:enable': {
    usage: 'user:enable --email E',
    run: async (pool, f) => ({ ...await enableUser(pool, required(f, 'email')), disabled: false }),
  },
  'user:set-password': {
    usage: 'user:set-password --email E --password P',
    run: (pool, f) => setUserPassword(pool, required(f, 'email'), required(f, 'password')),
  },
  'user:list': {
    usage: 'user:list',
    run: (pool) => listUsers(pool),
  },
  'device:create': {
    usage: 'device:create --owner E --name N --module M',
    run: async (pool, f) => createDevice(pool, await findUserId(pool, required(f, 'owner')), required(f, 'name'), required(f, 'module')),
  },
  'device:rotate-token': {
    usage: 'device:rotate-token --id ID',
    run: (pool, f) => rotateDeviceToken(pool, positiveInt(f, 'id')),
  },
  'device:delete': {
    usage: 'device:delete --id ID',
    run: (pool, f) => deleteDevice(pool, positiveInt(f, 'id')),
  },
  'device:list': {
    usage: 'device:list [--owner E]',
    run: async (pool, f) => (await pool.query(q.listDevices, [f.owner ?? null])).rows,
  },
  'device:bulk-create': {
    usage: 'device:bulk-create --owner E --module M --count N --out FILE',
    run: async (pool, f) => {
      const ownerId = await findUserId(pool, required(f, 'owner'));
      const module = checkModule(required(f, 'module'));
      const count = positiveInt(f, 'count');
      const out = required(f, 'out');
      // Tokens are written as each chunk commits, so a failure part-way leaves a file matching the database.
      const fd = fs.openSync(out, 'w', 0o600);
      try {
        fs.writeSync(fd, 'id,name,token\n');
        const stamp = Date.now().toString(36);
        for (let done = 0; done < count;) {
          const n = Math.min(BULK_CHUNK, count - done);
          const names = Array.from({ length: n }, (_, i) => `${module}-${stamp}-${done + i + 1}`);
          const tokens = names.map(() => generateToken());
          const res = await pool.query<{ id: number; name: string }>(q.insertDevicesBulk, [ownerId, names, module, tokens.map(hashToken)]);
          const byName = new Map(names.map((name, i) => [name, tokens[i]]));
          fs.writeSync(fd, res.rows.map((r) => `${r.id},${r.name},${byName.get(r.name)}\n`).join(''));
          done += n;
          progress(done, count);
        }
      } finally {
        fs.closeSync(fd);
      }
      return { created: count, module, out };
    },
  },
  ...RULE_COMMANDS,
  ...WEBHOOK_COMMANDS,
};

export function usage(): string {
  return `Usage: npm run -s cli -- <command> [flags]\n${Object.values(COMMANDS).map((c) => `  ${c.usage}`).join('\n')}\n`;
}

export function findCommand(name: string | undefined): Command {
  const cmd = name ? COMMANDS[name] : undefined;
  if (!cmd) throw new CliUsageError(name ? `Unknown command "${name}".` : 'No command given.');
  return cmd.run;
}

export { parseFlags };
