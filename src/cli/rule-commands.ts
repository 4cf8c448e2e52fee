// The rule:* commands: flags become the same fields the mobile API takes, checked by src/alerts/rules.ts.
import {
  CLI_OPERATOR, createRule, deleteRule, listRulesByOwner, readRuleChanges, updateRule,
  type Result, type RuleChanges, type RuleFields,
} from '../alerts/rules.js';
import { findUserId, UserInputError } from '../auth/users.js';
import type { Pool } from '../store/db.js';
import { CliUsageError, positiveInt } from './args.js';

type Command = (pool: Pool, flags: Record<string, string>) => Promise<unknown>;

const FLAG_OF: Record<keyof RuleFields, string> = {
  metric_name: 'metric', operator: 'operator', threshold: 'threshold', clear_threshold: 'clear-threshold',
  for_count: 'for-count', severity: 'severity', module: 'module', device_id: 'device', owner_id: 'owner', enabled: 'disabled',
};
const FIELD_OF = new Map(Object.entries(FLAG_OF).map(([field, flag]) => [flag, field as keyof RuleFields]));
const label = (field: keyof RuleFields) => `--${FLAG_OF[field]}`;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
const RULE_FLAGS = '--metric M --operator OP --threshold N [--clear-threshold N|none] [--for-count N] [--severity info|warning|critical] [--module M|none] [--device ID|none] [--owner EMAIL|none] [--disabled]';

/** `none` clears an optional field; numbers are parsed strictly ("12abc" is refused, not read as 12). */
async function flagValue(pool: Pool, field: keyof RuleFields, v: string): Promise<unknown> {
  const nullable = field === 'clear_threshold' || field === 'module' || field === 'device_id' || field === 'owner_id';
  if (nullable && v === 'none') return null;
  switch (field) {
    case 'owner_id': return findUserId(pool, v);
    case 'enabled':
      if (v !== 'true' && v !== 'false') throw new UserInputError(`--disabled takes no value (or true or false); got "${v}".`);
      return v === 'false';
    case 'device_id':
      if (!/^\d{1,16}$/.test(v)) throw new UserInputError(`--device must be a device id (a positive whole number) or none; got "${v}".`);
      return Number(v);
    case 'threshold': case 'clear_threshold': case 'for_count':
      if (!NUMBER.test(v) || !Number.isFinite(Number(v))) throw new UserInputError(`${label(field)} must be a finite number${nullable ? ' or none' : ''}; got "${v}".`);
      return Number(v);
    default: return v;
  }
}

/** The rule fields among the flags; every other flag but `allowed` is refused, so a misspelt one is not ignored. */
async function ruleChanges(pool: Pool, flags: Record<string, string>, allowed: string[] = []): Promise<RuleChanges> {
  const raw: Record<string, unknown> = {};
  for (const [flag, v] of Object.entries(flags)) {
    const field = FIELD_OF.get(flag);
    if (field) raw[field] = await flagValue(pool, field, v);
    else if (!allowed.includes(flag)) throw new CliUsageError(`Unknown flag --${flag}.`);
  }
  return unwrap(readRuleChanges(raw, label));
}

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new UserInputError(result.failure.message);
  return result.value;
}

function onlyId(command: string, flags: Record<string, string>): number {
  if (Object.keys(flags).some((k) => k !== 'id')) throw new CliUsageError(`${command} takes only --id.`);
  return positiveInt(flags, 'id');
}

const setEnabled = (command: string, enabled: boolean): Command => async (pool, f) =>
  unwrap(await updateRule(pool, CLI_OPERATOR, onlyId(command, f), { enabled }, label));

export const RULE_COMMANDS: Record<string, { usage: string; run: Command }> = {
  'rule:create': {
    usage: `rule:create ${RULE_FLAGS}`,
    run: async (pool, f) => unwrap(await createRule(pool, CLI_OPERATOR, await ruleChanges(pool, f), label)),
  },
  'rule:list': {
    usage: 'rule:list [--owner EMAIL|none]',
    run: async (pool, f) => {
      for (const flag of Object.keys(f)) if (flag !== 'owner') throw new CliUsageError(`Unknown flag --${flag}.`);
      if (f.owner === undefined) return listRulesByOwner(pool, 'all');
      return listRulesByOwner(pool, f.owner === 'none' ? null : await findUserId(pool, f.owner));
    },
  },
  'rule:update': {
    usage: 'rule:update --id ID [rule:create\'s flags]',
    run: async (pool, f) => {
      const id = positiveInt(f, 'id');
      const changes = await ruleChanges(pool, f, ['id']);
      if (Object.keys(changes).length === 0) throw new CliUsageError('Nothing to change: give at least one of rule:create\'s flags.');
      return unwrap(await updateRule(pool, CLI_OPERATOR, id, changes, label));
    },
  },
  'rule:delete': {
    usage: 'rule:delete --id ID',
    run: async (pool, f) => unwrap(await deleteRule(pool, CLI_OPERATOR, onlyId('rule:delete', f))),
  },
  'rule:enable': { usage: 'rule:enable --id ID', run: setEnabled('rule:enable', true) },
  'rule:disable': { usage: 'rule:disable --id ID', run: setEnabled('rule:disable', false) },
};
