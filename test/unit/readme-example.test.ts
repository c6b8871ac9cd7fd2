import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const repo = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/**
 * The README's examples marked `<!-- example: FILE -->` are test files that run: each code
 * block must be that file, verbatim, so the example a reader copies is one that passes.
 */
describe('README examples', () => {
  const readme = repo('README.md');
  const examples = [...readme.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)];

  it('marks at least the ingest-gateway/testing example', () => {
    expect(examples.map((match) => match[1])).toContain('test/integration/testing-library-example.test.ts');
  });

  it.each(examples.map((match) => [match[1] ?? '', match[2] ?? '']))(
    '%s is the README block verbatim',
    (file, block) => {
      expect(block).toBe(repo(file));
    },
  );
});
