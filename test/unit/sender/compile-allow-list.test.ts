import { describe, expect, it } from 'vitest';
import { AllowListRuleError, compileAllowList } from '../../../src/sender/compile-allow-list.ts';
import { type NormalizedAddress, normalizeAddress } from '../../../src/sender/normalize-address.ts';

function address(text: string): NormalizedAddress {
  const normalized = normalizeAddress(text);
  if (normalized === null) throw new Error(`test address ${text} does not normalise`);
  return normalized;
}

describe('compileAllowList', () => {
  it.each([
    { rules: undefined, label: 'absent' },
    { rules: null, label: 'null' },
    { rules: [], label: 'empty' },
  ])('$label admits anyone', ({ rules }) => {
    const admits = compileAllowList(rules);
    expect(admits(address('m@evil.test'))).toBe(true);
  });

  it.each([
    // rule, sender, admitted
    ['*@acme.example', 'a@acme.example', true],
    ['*@acme.example', 'a@ACME.example', true],
    ['*@acme.example', 'ANN@ACME.EXAMPLE', true],
    ['*@acme.example', 'ann@acme.example.', true],
    ['*@acme.example', 'a/b@acme.example', true],
    ['*@acme.example', '"ann@x"@acme.example', true],
    ['*@acme.example', 'a@sub.acme.example', false],
    ['*@acme.example', 'a@acme.example.evil', false],
    ['*@acme.example', 'a@evilacme.example', false],
    ['*@acme.example', 'acme.example@evil.test', false],
    ['*@acme.example', '"ann@acme.example"@evil.test', false],
    ['*@ACME.Example.', 'a@acme.example', true],
    ['ap@partner.example', 'AP@Partner.Example', true],
    ['ap@partner.example', 'ap2@partner.example', false],
    ['ap@partner.example', 'xap@partner.example', false],
    ['a?@partner.example', 'ab@partner.example', true],
    ['a?@partner.example', 'abc@partner.example', false],
    ['[ab]*@partner.example', 'bob@partner.example', true],
    ['[ab]*@partner.example', 'carl@partner.example', false],
    ['a\\*@partner.example', 'a*@partner.example', true],
    ['a\\*@partner.example', 'ab@partner.example', false],
    ['a/*@partner.example', 'a/b@partner.example', true],
    // IDN rule, sender in either form
    ['*@bücher.example', 'a@xn--bcher-kva.example', true],
    ['*@bücher.example', 'a@BÜCHER.example', true],
    ['*@xn--bcher-kva.example', 'a@bücher.example', true],
    ['*@bücher.example', 'a@bucher.example', false],
    // wildcards in the domain stay within it
    ['*@*.acme.example', 'a@sub.acme.example', true],
    ['*@*.acme.example', 'a@x.y.acme.example', true],
    ['*@*.acme.example', 'a@acme.example', false],
    ['*@*.acme.example', 'a@evilacme.example', false],
    ['*@*.bücher.example', 'a@mail.xn--bcher-kva.example', true],
    ['*@acme.exampl?', 'a@acme.examplE', true],
    ['*@*', 'a@acme.example', true],
  ])('%s vs %s → %s', (rule, sender, admitted) => {
    expect(compileAllowList([rule])(address(sender))).toBe(admitted);
  });

  it('admits a sender any one rule matches', () => {
    const admits = compileAllowList(['*@acme.example', 'ap@partner.example']);
    expect(admits(address('ap@partner.example'))).toBe(true);
    expect(admits(address('bob@acme.example'))).toBe(true);
    expect(admits(address('bob@partner.example'))).toBe(false);
  });

  it.each([
    ['!*@a.example', 'negation'],
    ['#x@a.example', 'comments'],
    ['*@{a,b}.example', 'brace'],
    ['{a,b}@a.example', 'brace'],
    ['+(a|b)@a.example', 'extglob'],
    ['@(a)@a.example', 'extglob'],
    ['**@a.example', '**'],
    ['*@**', '**'],
    ['noatsign', 'no "@"'],
    ['', 'empty'],
    ['a@', 'nothing after'],
    ['@a.example', 'nothing before'],
    ['a@b@c.example', '2 "@"'],
    [' *@a.example', 'whitespace'],
    ['*@a.example\u0000', 'control'],
    ['*@[ab].example', 'domain pattern'],
    ['*@*ü.example', 'domain pattern'],
    ['*@a..example', 'not a hostname'],
    ['*@192.0.2.1', 'not a hostname'],
    ['*@a_b.example', 'not a hostname'],
  ])('refuses %j at compile time (%s)', (rule, why) => {
    const compile = () => compileAllowList(['*@ok.example', rule]);
    expect(compile).toThrow(AllowListRuleError);
    expect(compile).toThrow(why);
    expect(compile).toThrow(JSON.stringify(rule));
  });

  it('names the rule and the reason on the error', () => {
    try {
      compileAllowList(['!*@a.example']);
      expect.unreachable('compileAllowList should have thrown');
    } catch (error) {
      expect(error).toBeInstanceOf(AllowListRuleError);
      if (!(error instanceof AllowListRuleError)) return;
      expect(error.rule).toBe('!*@a.example');
      expect(error.reason).toMatch(/negation/);
    }
  });
});
