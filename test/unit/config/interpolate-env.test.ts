// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax is what these strings test.
import { describe, expect, it } from 'vitest';
import { interpolate } from '../../../src/config/interpolate-env.ts';

describe('interpolate', () => {
  it.each([
    { text: 'plain', env: {}, value: 'plain' },
    { text: '${A}', env: { A: 'x' }, value: 'x' },
    { text: '${A}${B}', env: { A: 'x', B: 'y' }, value: 'xy' },
    { text: '${A}', env: { A: '' }, value: '' },
    { text: '${A:-d}', env: {}, value: 'd' },
    { text: '${A:-d}', env: { A: '' }, value: 'd' },
    { text: '${A:-}', env: {}, value: '' },
    { text: '${A:-a:-b c}', env: {}, value: 'a:-b c' },
    { text: '$${A}', env: { A: 'x' }, value: '${A}' },
    { text: '$$${A}', env: { A: 'x' }, value: '$${A}' },
    { text: '$A $', env: { A: 'x' }, value: '$A $' },
    // a value is never interpolated again
    { text: '${A}', env: { A: '${B}', B: 'no' }, value: '${B}' },
  ])('$text with $env → $value', ({ text, env, value }) => {
    expect(interpolate(text, env)).toEqual({ ok: true, value });
  });

  it.each([
    { text: '${A}', problems: ['environment variable A is not set'] },
    {
      text: '${A} ${B}',
      problems: ['environment variable A is not set', 'environment variable B is not set'],
    },
    { text: '${}', problems: ['"${}" is not a reference'] },
    { text: '${A B}', problems: ['"${A B}" is not a reference'] },
    { text: 'x ${A', problems: ['"${" is not closed by "}"'] },
  ])('$text → $problems', ({ text, problems }) => {
    const result = interpolate(text, {});
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(problems.length);
    for (const [index, problem] of problems.entries()) expect(result.problems[index]).toContain(problem);
  });
});
