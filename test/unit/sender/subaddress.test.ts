import { describe, expect, it } from 'vitest';
import { isSeparator, splitSubaddress, tagKey } from '../../../src/sender/subaddress.ts';

describe('splitSubaddress', () => {
  it.each<{ local: string; separator: string | null; expected: { base: string; tag: string } | null }>([
    { local: 'inbox+invoices', separator: '+', expected: { base: 'inbox', tag: 'invoices' } },
    { local: 'Inbox+Invoices', separator: '+', expected: { base: 'Inbox', tag: 'Invoices' } },
    // Several separators: the first one splits, the rest belong to the tag (Postfix, Gmail).
    { local: 'inbox+a+b', separator: '+', expected: { base: 'inbox', tag: 'a+b' } },
    // A separator at the end: the base, with an empty tag (routed as the base without one).
    { local: 'inbox+', separator: '+', expected: { base: 'inbox', tag: '' } },
    // A local part that starts with the separator has no base: not a subaddress.
    { local: '+invoices', separator: '+', expected: null },
    { local: '++', separator: '+', expected: null },
    { local: 'inbox', separator: '+', expected: null },
    // Turned off: nothing is a subaddress.
    { local: 'inbox+invoices', separator: null, expected: null },
    { local: 'inbox-invoices', separator: '-', expected: { base: 'inbox', tag: 'invoices' } },
    { local: 'inbox+invoices', separator: '-', expected: null },
    { local: 'first.last+x', separator: '+', expected: { base: 'first.last', tag: 'x' } },
  ])('$local with $separator → $expected', ({ local, separator, expected }) => {
    expect(splitSubaddress(local, separator)).toEqual(expected);
  });
});

describe('isSeparator', () => {
  it.each(['+', '-', '_', '=', '#', '~', '&', "'", '`', '{', '|'])('takes %s', (text) => {
    expect(isSeparator(text)).toBe(true);
  });

  it.each(['', '.', '@', 'a', '1', ' ', '"', '\\', '++', '+-', '(', ',', ';', 'ü'])('refuses %j', (text) => {
    expect(isSeparator(text)).toBe(false);
  });
});

describe('tagKey', () => {
  it('compares tags without case', () => {
    expect(tagKey('Invoices')).toBe(tagKey('INVOICES'));
    expect(tagKey('invoices')).not.toBe(tagKey('invoice'));
  });
});
