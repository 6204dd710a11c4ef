import { describe, expect, it } from 'vitest';
import { Form } from './form.js';

describe('a posted form', () => {
  it('a form keeps repeated fields and prototype-named ones as plain fields', () => {
    const f = Form.parse('scope=news&scope=sources&__proto__=x&constructor=y&name=a+b%26c');
    expect(f.all('scope')).toEqual(['news', 'sources']);
    expect(f.one('__proto__')).toBe('x');
    expect(f.one('constructor')).toBe('y');
    expect(f.one('name')).toBe('a b&c');
    expect(f.one('toString')).toBeUndefined();
    expect(() => f.one('scope')).toThrow(/sent more than once/);
    expect(() => f.only('scope', 'name')).toThrow(/unknown form field "__proto__"/);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});
