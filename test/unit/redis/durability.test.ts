import { describe, expect, it } from 'vitest';
import {
  assessDurability,
  assessNodes,
  type RedisFacts,
  supportsWaitAof,
} from '../../../src/redis/durability.ts';

const facts = (config: Record<string, string> | null, version = '7.2.4'): RedisFacts => ({ config, version });
const safe = { 'maxmemory-policy': 'noeviction', appendonly: 'yes', appendfsync: 'everysec' };
const defaults = { allowEviction: false, waitAof: false };

describe('assessDurability', () => {
  it('starts without warnings on noeviction with AOF everysec', () => {
    const { durability, refusal } = assessDurability(facts(safe), defaults);
    expect(refusal).toBeNull();
    expect(durability).toMatchObject({
      aof: 'everysec',
      maxmemoryPolicy: 'noeviction',
      waitAof: false,
      warnings: [],
    });
  });

  it.each(['allkeys-lru', 'volatile-ttl', 'allkeys-random'])(
    'refuses to start on maxmemory-policy %s',
    (policy) => {
      const { refusal } = assessDurability(facts({ ...safe, 'maxmemory-policy': policy }), defaults);
      expect(refusal).toMatch(new RegExp(`maxmemory-policy is ${policy}.*redis\\.allowEviction`));
    },
  );

  it('starts with a warning when eviction is explicitly allowed', () => {
    const { durability, refusal } = assessDurability(facts({ ...safe, 'maxmemory-policy': 'allkeys-lru' }), {
      ...defaults,
      allowEviction: true,
    });
    expect(refusal).toBeNull();
    expect(durability.warnings).toEqual([expect.stringContaining('allowed by redis.allowEviction')]);
  });

  it.each([
    [{ appendonly: 'yes', appendfsync: 'always' }, 'always'],
    [{ appendonly: 'yes', appendfsync: 'everysec' }, 'everysec'],
    [{ appendonly: 'yes', appendfsync: 'no' }, 'no'],
    [{ appendonly: 'no', appendfsync: 'everysec' }, 'off'],
  ])('reports AOF %o as %s', (aofSettings, aof) => {
    expect(assessDurability(facts({ ...safe, ...aofSettings }), defaults).durability.aof).toBe(aof);
  });

  it('warns that AOF off loses accepted mail on restart', () => {
    const { durability } = assessDurability(facts({ ...safe, appendonly: 'no' }), defaults);
    expect(durability.warnings).toEqual([expect.stringMatching(/^AOF is off/)]);
  });

  it('waits for the AOF on Redis 7.2 and later', () => {
    expect(assessDurability(facts(safe, '7.2.0'), { ...defaults, waitAof: true }).durability.waitAof).toBe(
      true,
    );
  });

  it('says at start that an older Redis has no WAITAOF', () => {
    const { durability, refusal } = assessDurability(facts(safe, '7.0.15'), { ...defaults, waitAof: true });
    expect(refusal).toBeNull();
    expect(durability.waitAof).toBe(false);
    expect(durability.warnings).toEqual([expect.stringContaining('Redis 7.0.15 has no WAITAOF')]);
  });

  it('does not guess when CONFIG is not allowed', () => {
    const { durability, refusal } = assessDurability(facts(null), defaults);
    expect(refusal).toBeNull();
    expect(durability).toMatchObject({ aof: 'unknown', maxmemoryPolicy: 'unknown' });
    expect(durability.warnings[0]).toMatch(/CONFIG GET is not allowed/);
  });

  it.each([
    ['7.0.15', false],
    ['7.2.0', true],
    ['7.4.1', true],
    ['8.0.0', true],
    ['6.2.14', false],
    ['unknown', false],
  ])('supportsWaitAof(%s) is %s', (version, expected) => {
    expect(supportsWaitAof(version)).toBe(expected);
  });
});

describe('assessDurability with waitAof and AOF off', () => {
  it('does not wait for an fsync that cannot come, and says so', () => {
    const { durability } = assessDurability(
      {
        config: { 'maxmemory-policy': 'noeviction', appendonly: 'no', appendfsync: 'everysec' },
        version: '7.2.4',
      },
      { allowEviction: false, waitAof: true },
    );
    expect(durability.waitAof).toBe(false);
    expect(durability.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('redis.waitAof needs AOF on')]),
    );
  });
});

describe('assessNodes (a Redis Cluster: every node)', () => {
  const node = (name: string, config: Record<string, string> | null, version = '7.2.4'): RedisFacts => ({
    config,
    version,
    node: name,
  });

  it('is assessDurability itself for the one server', () => {
    const one = facts({ ...safe, appendonly: 'no' });
    expect(assessNodes([one], defaults)).toEqual(assessDurability(one, defaults));
  });

  it('reports the weakest AOF and says each warning once, naming its nodes', () => {
    const { durability, refusal } = assessNodes(
      [
        node('a:1', { ...safe, appendfsync: 'always' }),
        node('b:2', { ...safe, appendonly: 'no' }),
        node('c:3', { ...safe, appendonly: 'no' }),
      ],
      defaults,
    );
    expect(refusal).toBeNull();
    expect(durability).toMatchObject({ aof: 'off', maxmemoryPolicy: 'noeviction', version: '7.2.4' });
    expect(durability.warnings).toEqual([expect.stringMatching(/^AOF is off: .* \(on b:2, c:3\)$/)]);
  });

  it('refuses when any node may evict, naming it', () => {
    const { refusal, durability } = assessNodes(
      [node('a:1', safe), node('b:2', { ...safe, 'maxmemory-policy': 'allkeys-lru' })],
      defaults,
    );
    expect(refusal).toMatch(/^Redis maxmemory-policy is allkeys-lru: .* \(on b:2\)$/);
    expect(durability.maxmemoryPolicy).toBe('noeviction, allkeys-lru');
  });

  it('waits for WAITAOF only when every node has it', () => {
    const waiting = { ...defaults, waitAof: true };
    expect(assessNodes([node('a:1', safe), node('b:2', safe)], waiting).durability.waitAof).toBe(true);
    const mixed = assessNodes([node('a:1', safe), node('b:2', safe, '7.0.15')], waiting).durability;
    expect(mixed.waitAof).toBe(false);
    expect(mixed.version).toBe('7.2.4, 7.0.15');
    expect(mixed.warnings).toEqual([expect.stringMatching(/Redis 7\.0\.15 has no WAITAOF.* \(on b:2\)$/)]);
  });

  it('warns once for nodes that do not allow CONFIG', () => {
    const { durability } = assessNodes([node('a:1', null), node('b:2', null)], defaults);
    expect(durability.aof).toBe('unknown');
    expect(durability.warnings).toEqual([
      expect.stringMatching(/^CONFIG GET is not allowed.* \(on a:1, b:2\)$/),
    ]);
  });
});
