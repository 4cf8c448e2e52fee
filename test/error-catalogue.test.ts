import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allErrors } from '../src/errors.js';

/** The rows of the README's "### Errors" table as CODE -> status. */
function documentedErrors(): Map<string, number> {
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('### Errors')[1]?.split('\n## ')[0] ?? '';
  return new Map([...section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]));
}

describe('the error catalogue', () => {
  it('documents every error code in the README table with its HTTP status', () => {
    const documented = documentedErrors();
    const wrong = allErrors().filter(({ code, status }) => documented.get(code) !== status);
    expect(wrong).toEqual([]);
  });

  it('lists no code in the README that the service does not have', () => {
    const codes = allErrors().map((e) => e.code);
    expect([...documentedErrors().keys()].filter((c) => !codes.includes(c))).toEqual([]);
  });
});
