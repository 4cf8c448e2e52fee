import { describe, expect, it } from 'vitest';
import { compareRule, mayFire, type WatchedRules } from './compare.js';

describe('compareRule', () => {
  it.each([
    ['>', [false, false, true]], ['>=', [false, true, true]], ['<', [true, false, false]],
    ['<=', [true, true, false]], ['==', [false, true, false]], ['!=', [true, false, true]],
  ] as const)('applies %s at threshold - 0.001, threshold and threshold + 0.001', (op, expected) => {
    expect([9.999, 10, 10.001].map((v) => compareRule(v, op, 10))).toEqual(expected);
  });

  it('counts an unknown operator as possibly firing, so the database still evaluates it', () => {
    expect(compareRule(1, '~', 2)).toBe(true);
  });
});

describe('mayFire', () => {
  const rules: WatchedRules = new Map([['heart_rate', [{ operator: '>', threshold: 130 }, { operator: '<', threshold: 40 }]]]);
  it('is true when any rule on the metric fires, false when none does or the metric is not watched', () => {
    expect([mayFire(rules, 'heart_rate', 131), mayFire(rules, 'heart_rate', 39), mayFire(rules, 'heart_rate', 70), mayFire(rules, 'spo2', 50)])
      .toEqual([true, true, false, false]);
  });
});
