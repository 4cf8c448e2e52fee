// The firing condition of a rule, `value <operator> threshold`, as sql/005's alert_compare computes it. The
// ingest worker uses it to flag readings that may fire, so the engine's fast path can skip the others
// (sql/007); the database still decides every alert.
export type RuleOperator = '>' | '>=' | '<' | '<=' | '==' | '!=';

export function compareRule(value: number, operator: string, threshold: number): boolean {
  switch (operator) {
    case '>': return value > threshold;
    case '>=': return value >= threshold;
    case '<': return value < threshold;
    case '<=': return value <= threshold;
    case '==': return value === threshold;
    case '!=': return value !== threshold;
    // An operator this build does not know: treat the reading as possibly firing, and let SQL decide.
    default: return true;
  }
}

/** Enabled rules' conditions by metric name, as the worker caches them. */
export type WatchedRules = Map<string, ReadonlyArray<{ operator: string; threshold: number }>>;

/** Whether any enabled rule on this metric fires on the value (ignoring module, device and owner narrowing: a superset). */
export function mayFire(rules: WatchedRules, metric: string, value: number): boolean {
  const list = rules.get(metric);
  return list !== undefined && list.some((r) => compareRule(value, r.operator, r.threshold));
}
