import { describe, expect, it } from 'vitest';
import { OnceForms } from './once-forms.js';

describe('OnceForms', () => {
  it('accepts an id once, refuses its repeat, and accepts it again after release', () => {
    const forms = new OnceForms();
    const id = forms.issue();
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(forms.claim(id)).toBe(true);
    expect(forms.claim(id)).toBe(false);
    forms.release(id);
    expect(forms.claim(id)).toBe(true);
  });

  it('lets a form without an id, or with a malformed one, through every time', () => {
    const forms = new OnceForms();
    expect(forms.claim(null)).toBe(true);
    expect(forms.claim(null)).toBe(true);
    expect(forms.claim('short')).toBe(true);
    expect(forms.claim('short')).toBe(true);
  });

  it('forgets an id after its TTL and keeps at most maxIds ids', () => {
    let clock = 0;
    const forms = new OnceForms(1000, 3, () => clock);
    const [a, b, c, d] = [forms.issue(), forms.issue(), forms.issue(), forms.issue()];
    expect(forms.claim(a)).toBe(true);
    clock = 999;
    expect(forms.claim(a)).toBe(false);
    clock = 1000;
    expect(forms.claim(a)).toBe(true); // expired, claimed afresh at 1000
    expect(forms.claim(b)).toBe(true);
    expect(forms.claim(c)).toBe(true);
    expect(forms.claim(d)).toBe(true); // the fourth id pushes out the oldest (a)
    expect(forms.claim(a)).toBe(true);
    expect(forms.claim(d)).toBe(false);
  });
});
